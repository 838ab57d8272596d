// The agent's binding for the CUPTI family: NVIDIA CUPTI and the vendor libraries with CUPTI's C ABI and record
// layouts under their own function names (MetaX MCPTI). One template, instantiated per vendor by its binding.cc
// with a Flavour: the function-name prefix, record sizes, how API names are asked for, whether the vendor's
// iterator can be trusted. API names are resolved after the final flush, never inside a buffer callback (MCPTI
// deadlocks there).
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "../../agent/agent.h"
#include "decode.h"
#include "mirror.h"

namespace flagprof::agent::cupti_family {

// The CUPTI C ABI as used here (CUptiResult is an int enum; CUPTIAPI is empty on Linux).
using BufferRequestFn = void (*)(uint8_t**, size_t*, size_t*);
using BufferCompleteFn = void (*)(void*, uint32_t, uint8_t*, size_t, size_t);
struct CuptiApi {
  int (*getVersion)(uint32_t*) = nullptr;
  int (*getTimestamp)(uint64_t*) = nullptr;
  int (*registerCallbacks)(BufferRequestFn, BufferCompleteFn) = nullptr;
  int (*enable)(int) = nullptr;
  int (*disable)(int) = nullptr;
  int (*flushAll)(uint32_t) = nullptr;
  int (*getNextRecord)(uint8_t*, size_t, void**) = nullptr;
  int (*getNumDroppedRecords)(void*, uint32_t, size_t*) = nullptr;
  int (*pushExternal)(int, uint64_t) = nullptr;
  int (*popExternal)(int, uint64_t*) = nullptr;
  int (*getName)(int, uint32_t, const char**) = nullptr;  // cuptiGetCallbackName(domain, ...) or the flavour's
  int (*setThreadIdType)(int) = nullptr;
  // CUPTI's callback API, for a vendor without external correlation (kExternalByCallback).
  int (*subscribe)(void**, void (*)(void*, int, uint32_t, const void*), void*) = nullptr;
  int (*unsubscribe)(void*) = nullptr;
  int (*enableDomain)(uint32_t, void*, int) = nullptr;
};

constexpr uint32_t kFlushForced = 1;  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
constexpr int kThreadIdSystem = 1;    // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: matches Kineto's tids

// One vendor of the family. Flavour: kLabel ("CUPTI"), kPrefix ("cupti"), kId, kNameFunction (the function that
// names an API id), nameArgument(driver) (its first argument: CUPTI's callback domain, MCPTI's activity kind),
// recordSize(kind, apiVersion), kDeviceRecords (the vendor reports DEVICE records), kScan (walk buffers by record
// size instead of through the vendor's iterator), kHint (what FLAGOS_TRACER_LIBRARY should point at),
// kExternalByCallback (the vendor has no external-correlation API: torch's ids are taken at API enter, below),
// kDeviceAttribute / kDeviceCount (for a vendor without DEVICE records, its runtime's cudaDeviceGetAttribute and
// cudaGetDeviceCount under their names, or nullptr: the device properties occupancy needs, below).
template <class Flavour>
struct Family {
// What the buffer callbacks (plain C function pointers) reach: one binding per vendor per process.
static inline CuptiApi api;
static inline uint32_t version = 0;
static inline std::atomic<uint64_t> seenRuntime[kSeenIds / 64] = {}, seenDriver[kSeenIds / 64] = {};

static std::string fn(const char* suffix) { return std::string(Flavour::kPrefix) + suffix; }

static void layoutWarning(const char* what) {
  flagprof::agent::layoutWarning("C16", Flavour::kLabel, "API version", version, Flavour::kHint, what);
}

// The next record of a buffer. The vendor's iterator, or for a vendor whose iterator can go stale (MCPTI after
// external-correlation records) an own scan: records lie 8-byte aligned, each as long as its kind's size; a
// candidate whose kind has no size is skipped 8 bytes at a time (resynchronising on the next known kind).
static bool nextRecord(uint8_t* buffer, size_t validSize, void*& record, size_t& resynced) {
  if constexpr (!Flavour::kScan) {
    return api.getNextRecord(buffer, validSize, &record) == 0;
  } else {
    size_t at = 0;
    if (record) {
      uint32_t kind;
      std::memcpy(&kind, record, 4);
      at = size_t(static_cast<uint8_t*>(record) - buffer) + ((Flavour::recordSize(kind, version) + 7) & ~size_t(7));
    }
    while (at + 8 <= validSize) {
      uint32_t kind;
      std::memcpy(&kind, buffer + at, 4);
      const size_t size = Flavour::recordSize(kind, version);
      if (size != 0 && at + size <= validSize) {
        record = buffer + at;
        return true;
      }
      resynced++;
      at += 8;
    }
    return false;
  }
}

static void bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
  diagnostic("C13", true, false, "[flagos] CUPTI bufferRequested callback invoked");
  void* p = takeBuffer(Flavour::kLabel, "C18");
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferSize : 0;
  *maxRecords = 0;
}

static void bufferCompleted(void* context, uint32_t streamId, uint8_t* buffer, size_t /*size*/, size_t validSize) {
  State& s = state();
  diagnostic("C14", true, false, "[flagos] CUPTI bufferCompleted callback invoked, validSize=%zu", validSize);
  const bool capturing = s.fd >= 0 && s.copying.load(std::memory_order_acquire);  // device records always kept
  RecordsFrame& frame = RecordsFrame::forThisThread();
  bool room = frame.begin(capturing ? validSize : 0);
  uint64_t lost = 0;  // records that found no memory to be copied into
  uint64_t kernels = 0, devices = 0, memcpys = 0, memsets = 0, runtimes = 0, drivers = 0, externals = 0;
  void* record = nullptr;
  const uint8_t* end = buffer + validSize;
  // At most validSize/4 records fit in a buffer: a bound that cannot truncate, only stop a runaway iterator.
  size_t bound = validSize / 4;
  size_t resynced = 0;
  while (room && buffer && validSize && nextRecord(buffer, validSize, record, resynced)) {
    if (bound-- == 0) {
      if (!s.warnedBound.exchange(true))
        diagnostic("C17", false, true,
                   "[flagos] processBuffer hit the per-buffer record bound (%zu) for buffer size %zu bytes; the tail of "
                   "the buffer is missing from the capture",
                   validSize / 4, validSize);
      break;
    }
    const uint8_t* rec = static_cast<const uint8_t*>(record);
    uint32_t kind;
    std::memcpy(&kind, rec, 4);
    size_t size = Flavour::recordSize(kind, version);
    if (size == 0) continue;  // a kind this tracer does not decode
    if (rec + size > end) {
      layoutWarning("record overruns the buffer");
      s.rejected++;
      break;
    }
    if (!capturing && kind != FP_CUPTI_KIND_DEVICE) continue;
    ParsedRecord parsed;
    auto cls = flagprof::cupti::parseRecord(rec, size, parsed);
    if (cls == flagprof::cupti::RecordClass::Implausible) {
      layoutWarning(kind == FP_CUPTI_KIND_EXTERNAL_CORRELATION ? "external correlation kind unexpected"
                                                              : "timestamps implausible");
      s.rejected++;
    }
    uint32_t string = kNoString;
    const char* pointed = nullptr;
    if (kind == FP_CUPTI_KIND_CONCURRENT_KERNEL || kind == FP_CUPTI_KIND_KERNEL) {
      std::memcpy(&pointed, rec + offsetof(fp_cupti_kernel10, name), sizeof pointed);
      kernels++;
    } else if (kind == FP_CUPTI_KIND_DEVICE) {
      std::memcpy(&pointed, rec + offsetof(fp_cupti_device5, name), sizeof pointed);
      devices++;
    } else if (kind == FP_CUPTI_KIND_MEMCPY) {
      memcpys++;
    } else if (kind == FP_CUPTI_KIND_MEMSET) {
      memsets++;
    } else if (kind == FP_CUPTI_KIND_RUNTIME) {
      runtimes++;
      markSeen(seenRuntime, parsed.cbid);
    } else if (kind == FP_CUPTI_KIND_DRIVER) {
      drivers++;
      markSeen(seenDriver, parsed.cbid);
    } else if (kind == FP_CUPTI_KIND_EXTERNAL_CORRELATION) {
      externals++;
    }
    if (pointed && !frame.string(pointed, string, [&](std::string& out) { out.assign(pointed, strnlen(pointed, 1 << 16)); })) {
      lost++;
      continue;
    }
    if (!frame.record(rec, size, string)) lost++;
  }
  s.kernels += kernels;
  s.devices += devices;
  s.memcpys += memcpys;
  s.memsets += memsets;
  s.runtimes += runtimes;
  s.drivers += drivers;
  s.externals += externals;
  frame.write();
  if constexpr (Flavour::kExternalByCallback) writePending();
  if (resynced && !warnedResync_.exchange(true))
    diagnostic("A23", false, true,
               "[flagos] %s buffer: skipped %zu bytes that were not a record (8 at a time) and resynchronised on the "
               "next record; the records around them were kept",
               Flavour::kLabel, resynced * 8);
  if (lost && !s.warnedAlloc.exchange(true)) {
    diagnostic("C18", false, true,
               "[flagos] CUPTI activity buffer allocation failed (%zu bytes) copying records into the capture; records "
               "are dropped while memory is short and the capture is incomplete",
               validSize + validSize / 2);
  }
  size_t dropped = 0;
  if (api.getNumDroppedRecords && api.getNumDroppedRecords(context, streamId, &dropped) == 0) dropped += lost;
  else dropped = lost;
  if (dropped) {
    s.dropped += dropped;
    std::string d;
    fpc::put32(d, uint32_t(reinterpret_cast<uintptr_t>(context)));
    fpc::put32(d, streamId);
    fpc::put64(d, dropped);
    emitFrame(fpc::FrameDropped, d);
  }
  giveBackBuffer(buffer);
}

static inline std::atomic<bool> warnedResync_{false};

// A vendor that writes no DEVICE records (MCPTI) still has its runtime's device attributes (MetaX's compatibility
// runtime: wcudaDeviceGetAttribute, cudaDeviceAttr numbering, seed 001). At session start, with the process using
// the device, the agent asks them for each device and writes one DEVICE record each in CUPTI's layout, so the
// decoder estimates occupancy as it does from CUPTI's own. A runtime not loaded, or one refusing the attributes
// occupancy needs, writes none: kernels then carry no occupancy, as before.
static void writeDeviceRecords() {
  if constexpr (Flavour::kDeviceAttribute != nullptr) {
    using Attribute = int (*)(int*, int, int);
    using Count = int (*)(int*);
    const auto attribute = reinterpret_cast<Attribute>(dlsym(RTLD_DEFAULT, Flavour::kDeviceAttribute));
    const auto count = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, Flavour::kDeviceCount));
    if (!attribute) return;
    int devices = 1;
    if (count && (count(&devices) != 0 || devices < 1 || devices > 64)) return;
    RecordsFrame& frame = RecordsFrame::forThisThread();
    bool room = frame.begin(size_t(devices) * (sizeof(fp_cupti_device5) + 8));
    int written = 0;
    for (int device = 0; room && device < devices; ++device) {
      // cudaDeviceAttr: MaxThreadsPerBlock 1, MaxSharedMemoryPerBlock 8, WarpSize 10, MaxRegistersPerBlock 12,
      // MultiProcessorCount 16, MaxThreadsPerMultiProcessor 39, ComputeCapabilityMajor 75 / Minor 76,
      // MaxSharedMemoryPerMultiprocessor 81, MaxRegistersPerMultiprocessor 82, MaxBlocksPerMultiprocessor 106.
      auto get = [&](int which, uint32_t& out) {
        int v = 0;
        if (attribute(&v, which, device) != 0 || v < 0) return false;
        out = uint32_t(v);
        return true;
      };
      fp_cupti_device5 d{};
      d.kind = FP_CUPTI_KIND_DEVICE;
      d.id = uint32_t(device);
      uint32_t threadsPerSm = 0;
      const bool essential = get(10, d.numThreadsPerWarp) && d.numThreadsPerWarp > 0 && get(16, d.numMultiprocessors) &&
                             get(39, threadsPerSm) && get(106, d.maxBlocksPerMultiprocessor);
      if (!essential) continue;
      d.maxWarpsPerMultiprocessor = threadsPerSm / d.numThreadsPerWarp;
      get(1, d.maxThreadsPerBlock);
      get(8, d.maxSharedMemoryPerBlock);
      get(12, d.maxRegistersPerBlock);
      get(75, d.computeCapabilityMajor);
      get(76, d.computeCapabilityMinor);
      get(81, d.maxSharedMemoryPerMultiprocessor);
      get(82, d.maxRegistersPerMultiprocessor);
      if (!frame.record(&d, sizeof d, kNoString)) room = false;
      else written++;
    }
    if (room && written) frame.write();
    state().devices += uint64_t(written);
    diagnostic("A27", true, false, "[flagos] %s device properties from %s: %d of %d devices", Flavour::kLabel,
               Flavour::kDeviceAttribute, written, devices);
  }
}

// A vendor without an external-correlation API (TOPSPTI, seed 000 §GCU): push/pop keep torch's ids on a
// thread-local stack, and the API-enter callback, on the launching thread, pairs the call's vendor correlation id
// with the id on top. The pairs go into the capture as CUPTI external-correlation records, so the decoder links
// them as it links every vendor's; they are written in batches, and with every delivered buffer, so a crash loses
// at most the pairs of work whose records were not delivered either. Device records never depend on the callback:
// a release that delivers none still gets its kernels, without External ids (A25 says so).
static inline thread_local std::vector<uint64_t> externalStack;
static inline std::mutex pendingMutex;
static inline std::vector<fp_cupti_external_correlation> pending;
static inline std::atomic<uint64_t> apiCallbacks{0}, pushedIds{0};
static constexpr size_t kPendingBatch = 512;

static void writePendingLocked() {
  if (pending.empty()) return;
  RecordsFrame& frame = RecordsFrame::forThisThread();
  bool room = frame.begin(pending.size() * (sizeof(fp_cupti_external_correlation) + 8));
  for (const fp_cupti_external_correlation& r : pending)
    if (room && !frame.record(&r, sizeof r, kNoString)) room = false;
  if (room) frame.write();
  pending.clear();
}

static void writePending() {
  std::lock_guard<std::mutex> lock(pendingMutex);
  writePendingLocked();
}

static void apiCallback(void*, int, uint32_t, const void* data) {
  if (!data) return;
  int32_t site;
  std::memcpy(&site, data, 4);
  if (site != 0) return;  // API enter only
  apiCallbacks.fetch_add(1, std::memory_order_relaxed);
  if (externalStack.empty() || !state().copying.load(std::memory_order_acquire)) return;
  fp_cupti_external_correlation r{};
  r.kind = FP_CUPTI_KIND_EXTERNAL_CORRELATION;
  r.externalKind = FP_CUPTI_EXTERNAL_KIND_CUSTOM0;
  r.externalId = externalStack.back();
  std::memcpy(&r.correlationId, static_cast<const uint8_t*>(data) + 64, 4);  // CUpti_CallbackData.correlationId
  std::lock_guard<std::mutex> lock(pendingMutex);
  pending.push_back(r);
  if (pending.size() >= kPendingBatch) writePendingLocked();
}

// Names frames carry CUPTI's domains (1 driver, 2 runtime) for every vendor: that is what the decoder reads.
static void resolveNames(bool driver, std::atomic<uint64_t>* seen) {
  if (!api.getName) return;
  const int argument = Flavour::nameArgument(driver);
  emitNames(driver ? FP_CUPTI_CB_DOMAIN_DRIVER_API : FP_CUPTI_CB_DOMAIN_RUNTIME_API, seen,
            [argument](uint32_t id) -> const char* {
              const char* name = nullptr;
              return api.getName(argument, id, &name) == 0 ? name : nullptr;
            });
}

class Tracer final : public VendorTracer {
 public:
  const char* name() const override { return Flavour::kLabel; }
  uint32_t fpcVendor() const override { return Flavour::kId; }
  uint32_t apiVersion() const override { return version; }
  void* anchorSymbol() const override { return reinterpret_cast<void*>(api.registerCallbacks); }
  bool armed() const override { return registerResult_ == 0; }
  std::string notArmedReason() const override {
    return fn("ActivityRegisterCallbacks failed with ") + std::to_string(registerResult_);
  }

  void armAtLoad() override {
    State& s = state();
    if (api.getVersion) api.getVersion(&version);
    diagnostic("S2", true, false, "[flagos-cupti-shim] bound %sActivityRegisterCallbacks -> %s (%s API version %u)",
               Flavour::kPrefix, s.libraryPath.c_str(), Flavour::kLabel, version);
    if (api.setThreadIdType) api.setThreadIdType(kThreadIdSystem);
    diagnostic("C2", true, false, "[flagos] Registering CUPTI activity callbacks...");
    registerResult_ = api.registerCallbacks(bufferRequested, bufferCompleted);
    diagnostic("C3", true, false, "[flagos] ActivityRegisterCallbacks result: %d", registerResult_);
    enableKernel_ = api.enable(FP_CUPTI_KIND_CONCURRENT_KERNEL);
    enableMemcpy_ = api.enable(FP_CUPTI_KIND_MEMCPY);
    enableMemset_ = api.enable(FP_CUPTI_KIND_MEMSET);
    // Device properties, for occupancy, from the vendors that report them.
    const int enableDevice = Flavour::kDeviceRecords ? api.enable(FP_CUPTI_KIND_DEVICE) : -1;
    diagnostic("C4", true, false,
               "[flagos] init ActivityEnable CONCURRENT_KERNEL=%d KERNEL=skipped MEMCPY=%d MEMSET=%d DEVICE=%d "
               "(RUNTIME/EXTERNAL_CORRELATION deferred to start())",
               enableKernel_, enableMemcpy_, enableMemset_, enableDevice);
    if constexpr (Flavour::kExternalByCallback) {
      int subscribed = -1, domain = -1;
      if (api.subscribe) subscribed = api.subscribe(&subscriber_, apiCallback, nullptr);
      if (subscribed == 0 && api.enableDomain) domain = api.enableDomain(1, subscriber_, FP_CUPTI_CB_DOMAIN_RUNTIME_API);
      diagnostic("A26", true, false,
                 "[flagos] %s has no external-correlation API: torch ids are taken at API enter (%sSubscribe=%d, "
                 "EnableDomain(RUNTIME)=%d)",
                 Flavour::kLabel, Flavour::kPrefix, subscribed, domain);
    }
  }

  void shutdown() override {
    if constexpr (Flavour::kExternalByCallback) {
      if (subscriber_ && api.unsubscribe) api.unsubscribe(subscriber_);
      subscriber_ = nullptr;
    }
  }

  void clockPair(uint64_t& vendorNs, uint64_t& realtime) override { clockPairNow(api.getTimestamp, vendorNs, realtime); }

  int startSession(std::string& error) override {
    State& s = state();
    calibrate(1, api.getTimestamp, "C6", "");
    diagnostic("C7", true, false, "[flagos] CuptiDeviceTracer::start() called");
    // Leftovers from before the session go out first, uncopied (only device properties are kept from them).
    int flush = api.flushAll(kFlushForced);
    diagnostic("C9", true, false, "[flagos] Initial ActivityFlushAll result: %d", flush);
    writeDeviceRecords();
    sessionFrame(1);
    s.copying.store(true, std::memory_order_release);
    int runtime = api.enable(FP_CUPTI_KIND_RUNTIME);
    int external = api.enable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
    diagnostic("C8", true, false,
               "[flagos] Activity setup results: CALLBACKS=%d, CONCURRENT_KERNEL=%d, KERNEL=skipped, MEMCPY=%d, "
               "MEMSET=%d, RUNTIME=%d, EXTERNAL_CORRELATION=%d",
               registerResult_, enableKernel_, enableMemcpy_, enableMemset_, runtime, external);
    if (runtime != 0) {
      error = fn("ActivityEnable(RUNTIME) failed with ") + std::to_string(runtime);
      return -1;
    }
    return 0;
  }

  void stopSession() override {
    State& s = state();
    diagnostic("C10", true, false, "[flagos] CuptiDeviceTracer::stop() called");
    sessionFrame(2);
    diagnostic("C11", true, false, "[flagos] Flushing CUPTI activities...");
    int flush = api.flushAll(kFlushForced);
    diagnostic("C12", true, false, "[flagos] ActivityFlushAll result: %d", flush);
    if constexpr (Flavour::kExternalByCallback) {
      writePending();
      if (pushedIds.load() > 0 && apiCallbacks.load() == 0)
        diagnostic("A25", false, true,
                   "[flagos] %s delivered no API callbacks during the session: device work is recorded, but without "
                   "External ids (torch ops own their device work by time alone)",
                   Flavour::kLabel);
    }
    s.copying.store(false, std::memory_order_release);
    api.disable(FP_CUPTI_KIND_RUNTIME);
    api.disable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
    calibrate(2, api.getTimestamp, "C6", "");
    // Only now, with every buffer delivered, ask the vendor for names.
    resolveNames(false, seenRuntime);
    resolveNames(true, seenDriver);
  }

  int pushExternal(uint64_t id, std::string& error) override {
    if constexpr (Flavour::kExternalByCallback) {
      externalStack.push_back(id);
      pushedIds.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    if (!api.pushExternal) {
      error = "the vendor library has no " + fn("ActivityPushExternalCorrelationId");
      return -1;
    }
    int r = api.pushExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, id);
    if (r != 0) error = fn("ActivityPushExternalCorrelationId failed with ") + std::to_string(r);
    return r == 0 ? 0 : -1;
  }

  int popExternal(std::string& error) override {
    if constexpr (Flavour::kExternalByCallback) {
      if (externalStack.empty()) return error = "pop_correlation() without a pushed id on this thread", -1;
      externalStack.pop_back();
      return 0;
    }
    if (!api.popExternal) {
      error = "the vendor library has no " + fn("ActivityPopExternalCorrelationId");
      return -1;
    }
    uint64_t last = 0;  // a real address: some vendors fail on NULL without unwinding the stack
    int r = api.popExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, &last);
    if (r != 0) error = fn("ActivityPopExternalCorrelationId failed with ") + std::to_string(r);
    return r == 0 ? 0 : -1;
  }

 private:
  int registerResult_ = -1, enableKernel_ = -1, enableMemcpy_ = -1, enableMemset_ = -1;
  void* subscriber_ = nullptr;
};

static std::unique_ptr<VendorTracer> bind(void* lib, std::string& missing) {
  CuptiApi a;
  auto bindFn = [&](const char* suffix, auto& f) { return flagprof::agent::bind(lib, fn(suffix).c_str(), f); };
  bindFn("GetVersion", a.getVersion);
  bindFn("GetTimestamp", a.getTimestamp);
  bindFn("ActivityGetNumDroppedRecords", a.getNumDroppedRecords);
  bindFn("ActivityPushExternalCorrelationId", a.pushExternal);
  bindFn("ActivityPopExternalCorrelationId", a.popExternal);
  flagprof::agent::bind(lib, Flavour::kNameFunction, a.getName);
  bindFn("SetThreadIdType", a.setThreadIdType);
  if constexpr (Flavour::kExternalByCallback) {
    bindFn("Subscribe", a.subscribe);
    bindFn("Unsubscribe", a.unsubscribe);
    bindFn("EnableDomain", a.enableDomain);
  }
  const bool required = bindFn("ActivityRegisterCallbacks", a.registerCallbacks) & bindFn("ActivityEnable", a.enable) &
                        bindFn("ActivityDisable", a.disable) & bindFn("ActivityFlushAll", a.flushAll) &
                        (Flavour::kScan || bindFn("ActivityGetNextRecord", a.getNextRecord));
  if (!required) {
    missing = std::string("required ") + Flavour::kLabel + " activity symbols are missing";
    return nullptr;
  }
  api = a;
  return std::make_unique<Tracer>();
}
};

}  // namespace flagprof::agent::cupti_family
