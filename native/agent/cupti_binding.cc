// The agent's CUPTI binding: NVIDIA CUPTI and the CUPTI-compatible vendor libraries (same C ABI, same records).
// API names are resolved after the final flush, never inside a buffer callback (some vendors deadlock there).
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>

#include "../tracer/cupti_decode.h"
#include "../tracer/cupti_mirror.h"
#include "agent.h"

namespace flagprof::agent {

namespace {

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
  int (*getCallbackName)(int, uint32_t, const char**) = nullptr;
  int (*setThreadIdType)(int) = nullptr;
};

constexpr uint32_t kFlushForced = 1;  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
constexpr int kThreadIdSystem = 1;    // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: matches Kineto's tids

// What the buffer callbacks (plain C function pointers) reach: there is one CUPTI binding per process.
CuptiApi api;
uint32_t version = 0;
std::atomic<uint64_t> seenRuntime[kSeenIds / 64] = {}, seenDriver[kSeenIds / 64] = {};

void layoutWarning(const char* what) {
  flagprof::agent::layoutWarning("C16", "CUPTI", "API version", version, "the CUPTI that belongs to the running CUDA runtime", what);
}

void bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
  diagnostic("C13", true, false, "[flagos] CUPTI bufferRequested callback invoked");
  void* p = takeBuffer("CUPTI", "C18");
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferSize : 0;
  *maxRecords = 0;
}

void bufferCompleted(void* context, uint32_t streamId, uint8_t* buffer, size_t /*size*/, size_t validSize) {
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
  while (room && buffer && validSize && api.getNextRecord(buffer, validSize, &record) == 0) {
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
    size_t size = flagprof::cupti::recordSize(kind, version);
    if (size == 0) continue;  // a kind this tracer does not decode
    if (rec + size > end) {
      layoutWarning("record overruns the buffer");
      s.rejected++;
      break;
    }
    if (!capturing && kind != FP_CUPTI_KIND_DEVICE) continue;
    flagprof::cupti::ParsedRecord parsed;
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

void resolveNames(int domain, std::atomic<uint64_t>* seen) {
  if (!api.getCallbackName) return;
  emitNames(uint32_t(domain), seen, [domain](uint32_t id) -> const char* {
    const char* name = nullptr;
    return api.getCallbackName(domain, id, &name) == 0 ? name : nullptr;
  });
}

class CuptiDeviceTracer final : public VendorTracer {
 public:
  const char* name() const override { return "CUPTI"; }
  uint32_t fpcVendor() const override { return fpc::VendorCupti; }
  uint32_t apiVersion() const override { return version; }
  void* anchorSymbol() const override { return reinterpret_cast<void*>(api.registerCallbacks); }
  bool armed() const override { return registerResult_ == 0; }
  std::string notArmedReason() const override {
    return "cuptiActivityRegisterCallbacks failed with " + std::to_string(registerResult_);
  }

  void armAtLoad() override {
    State& s = state();
    if (api.getVersion) api.getVersion(&version);
    diagnostic("S2", true, false, "[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks -> %s (CUPTI API version %u)",
               s.libraryPath.c_str(), version);
    if (api.setThreadIdType) api.setThreadIdType(kThreadIdSystem);
    diagnostic("C2", true, false, "[flagos] Registering CUPTI activity callbacks...");
    registerResult_ = api.registerCallbacks(bufferRequested, bufferCompleted);
    diagnostic("C3", true, false, "[flagos] ActivityRegisterCallbacks result: %d", registerResult_);
    enableKernel_ = api.enable(FP_CUPTI_KIND_CONCURRENT_KERNEL);
    enableMemcpy_ = api.enable(FP_CUPTI_KIND_MEMCPY);
    enableMemset_ = api.enable(FP_CUPTI_KIND_MEMSET);
    const int enableDevice = api.enable(FP_CUPTI_KIND_DEVICE);  // device properties, for occupancy
    diagnostic("C4", true, false,
               "[flagos] init ActivityEnable CONCURRENT_KERNEL=%d KERNEL=skipped MEMCPY=%d MEMSET=%d DEVICE=%d "
               "(RUNTIME/EXTERNAL_CORRELATION deferred to start())",
               enableKernel_, enableMemcpy_, enableMemset_, enableDevice);
  }

  void clockPair(uint64_t& vendorNs, uint64_t& realtime) override { clockPairNow(api.getTimestamp, vendorNs, realtime); }

  int startSession(std::string& error) override {
    State& s = state();
    calibrate(1, api.getTimestamp, "C6", "");
    diagnostic("C7", true, false, "[flagos] CuptiDeviceTracer::start() called");
    // Leftovers from before the session go out first, uncopied (only device properties are kept from them).
    int flush = api.flushAll(kFlushForced);
    diagnostic("C9", true, false, "[flagos] Initial ActivityFlushAll result: %d", flush);
    sessionFrame(1);
    s.copying.store(true, std::memory_order_release);
    int runtime = api.enable(FP_CUPTI_KIND_RUNTIME);
    int external = api.enable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
    diagnostic("C8", true, false,
               "[flagos] Activity setup results: CALLBACKS=%d, CONCURRENT_KERNEL=%d, KERNEL=skipped, MEMCPY=%d, "
               "MEMSET=%d, RUNTIME=%d, EXTERNAL_CORRELATION=%d",
               registerResult_, enableKernel_, enableMemcpy_, enableMemset_, runtime, external);
    if (runtime != 0) {
      error = "cuptiActivityEnable(RUNTIME) failed with " + std::to_string(runtime);
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
    s.copying.store(false, std::memory_order_release);
    api.disable(FP_CUPTI_KIND_RUNTIME);
    api.disable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
    calibrate(2, api.getTimestamp, "C6", "");
    // Only now, with every buffer delivered, ask the vendor for names.
    resolveNames(FP_CUPTI_CB_DOMAIN_RUNTIME_API, seenRuntime);
    resolveNames(FP_CUPTI_CB_DOMAIN_DRIVER_API, seenDriver);
  }

  int pushExternal(uint64_t id, std::string& error) override {
    if (!api.pushExternal) {
      error = "the vendor library has no cuptiActivityPushExternalCorrelationId";
      return -1;
    }
    int r = api.pushExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, id);
    if (r != 0) error = "cuptiActivityPushExternalCorrelationId failed with " + std::to_string(r);
    return r == 0 ? 0 : -1;
  }

  int popExternal(std::string& error) override {
    if (!api.popExternal) {
      error = "the vendor library has no cuptiActivityPopExternalCorrelationId";
      return -1;
    }
    uint64_t last = 0;  // a real address: some vendors fail on NULL without unwinding the stack
    int r = api.popExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, &last);
    if (r != 0) error = "cuptiActivityPopExternalCorrelationId failed with " + std::to_string(r);
    return r == 0 ? 0 : -1;
  }

 private:
  int registerResult_ = -1, enableKernel_ = -1, enableMemcpy_ = -1, enableMemset_ = -1;
};

}  // namespace

bool exportsCupti(void* lib) { return dlsym(lib, "cuptiActivityRegisterCallbacks") != nullptr; }

std::unique_ptr<VendorTracer> bindCupti(void* lib, std::string& missing) {
  CuptiApi a;
  bind(lib, "cuptiGetVersion", a.getVersion);
  bind(lib, "cuptiGetTimestamp", a.getTimestamp);
  bind(lib, "cuptiActivityGetNumDroppedRecords", a.getNumDroppedRecords);
  bind(lib, "cuptiActivityPushExternalCorrelationId", a.pushExternal);
  bind(lib, "cuptiActivityPopExternalCorrelationId", a.popExternal);
  bind(lib, "cuptiGetCallbackName", a.getCallbackName);
  bind(lib, "cuptiSetThreadIdType", a.setThreadIdType);
  const bool required = bind(lib, "cuptiActivityRegisterCallbacks", a.registerCallbacks) &
                        bind(lib, "cuptiActivityEnable", a.enable) & bind(lib, "cuptiActivityDisable", a.disable) &
                        bind(lib, "cuptiActivityFlushAll", a.flushAll) &
                        bind(lib, "cuptiActivityGetNextRecord", a.getNextRecord);
  if (!required) {
    missing = "required CUPTI activity symbols are missing";
    return nullptr;
  }
  api = a;
  return std::make_unique<CuptiDeviceTracer>();
}

}  // namespace flagprof::agent
