// The agent's MSPTI binding: Huawei Ascend CANN's activity API (libmspti.so).
//
// MSPTI differs from CUPTI where it matters here:
// - msptiActivityGetNextRecord keeps its position in a thread_local and ignores the record passed in, so each
//   buffer is drained to the iterator's own end on the thread that delivered it, even when nothing more can be
//   copied: stopping early would leave the next buffer on that thread starting mid-way.
// - msptiActivityPopExternalCorrelationId(kind, NULL) fails on CANN 9.0 without popping: a real address is passed.
// - Timestamps are CLOCK_REALTIME already: no calibration pairs are recorded.
// - API records carry their name (no callback id) and kernels two strings (name and type), copied with the
//   record while the buffer is alive; fpc_format.h says how a kernel's two strings are stored.
// - Memcpy and memset records need libmspti.so preloaded at process start (CANN interposes the ACL calls); when
//   those kinds are refused the session goes on without them and says so (M5, M6), and, when the library was not
//   in the process's link map before the agent loaded it, why (A24: run with --preload).
// - Device ids are the physical ones: with ASCEND_RT_VISIBLE_DEVICES set, the agent writes the map to the
//   process's device indices (a names frame of the device-index domain) and the decoder applies it.
// - At exit the subscriber unsubscribes, then flushes: a process that ends subscribed leaves records behind.
#include <dlfcn.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "decode.h"
#include "mirror.h"
#include "../../agent/agent.h"

namespace flagprof::agent {

namespace {

// The MSPTI C ABI as used here (msptiResult and the kind enums are ints).
using BufferRequestFn = void (*)(uint8_t**, size_t*, size_t*);
using BufferCompleteFn = void (*)(uint8_t*, size_t, size_t);
struct MsptiApi {
  int (*getVersion)(uint32_t*) = nullptr;
  int (*getStructSize)(int, uint32_t, size_t*) = nullptr;
  int (*subscribe)(void**, void*, void*) = nullptr;
  int (*unsubscribe)(void*) = nullptr;
  int (*registerCallbacks)(BufferRequestFn, BufferCompleteFn) = nullptr;
  int (*enable)(int) = nullptr;
  int (*disable)(int) = nullptr;
  int (*flushAll)(uint32_t) = nullptr;
  int (*getNextRecord)(uint8_t*, size_t, void**) = nullptr;
  int (*getNumDroppedRecords)(void*, uint32_t, size_t*) = nullptr;
  int (*pushExternal)(int, uint64_t) = nullptr;
  int (*popExternal)(int, uint64_t*) = nullptr;
};

constexpr uint32_t kFlushAll = 1;
constexpr int kKinds = 16;

// What the buffer callbacks (plain C function pointers) reach: one MSPTI binding per process.
MsptiApi api;
uint32_t version = 0;
size_t recordSizes[kKinds] = {};  // per kind: what the library writes, at least what the mirror reads

void layoutWarning(const char* what) {
  flagprof::agent::layoutWarning("M16", "MSPTI", "version", version, "the libmspti.so of the running CANN", what);
}

void bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
  diagnostic("M13", true, false, "[flagos] MSPTI bufferRequested callback invoked");
  void* p = takeBuffer("MSPTI", "M18");
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferSize : 0;
  *maxRecords = 0;
}

const char* pointerAt(const uint8_t* rec, size_t offset) {
  const char* p;
  std::memcpy(&p, rec + offset, sizeof p);
  return p;
}

void bufferCompleted(uint8_t* buffer, size_t /*size*/, size_t validSize) {
  State& s = state();
  diagnostic("M14", true, false, "[flagos] MSPTI bufferCompleted callback invoked, validSize=%zu", validSize);
  const bool capturing = s.fd >= 0 && s.copying.load(std::memory_order_acquire);
  RecordsFrame& frame = RecordsFrame::forThisThread();
  bool copy = capturing && frame.begin(validSize);
  // A kernel's (name, type) pair gets one string entry; the key the frame dedups on is this map's node.
  thread_local std::map<std::pair<const char*, const char*>, char> pairs;
  pairs.clear();
  const char *lastName = nullptr, *lastType = nullptr;
  const void* lastPair = nullptr;
  uint64_t lost = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0, runtimes = 0, externals = 0;
  void* record = nullptr;
  const uint8_t* end = buffer + validSize;
  size_t bound = validSize / 4;  // records are at least 24 bytes: only a runaway iterator reaches this
  while (buffer && validSize && api.getNextRecord(buffer, validSize, &record) == FP_MSPTI_SUCCESS) {
    if (bound-- == 0) {
      if (!s.warnedBound.exchange(true))
        diagnostic("M17", false, true,
                   "[flagos] MSPTI buffer hit the per-buffer record bound (%zu) for buffer size %zu bytes; the tail of "
                   "the buffer is missing from the capture",
                   validSize / 4, validSize);
      break;
    }
    if (!copy) continue;  // drained all the same: the iterator's position is per thread
    const uint8_t* rec = static_cast<const uint8_t*>(record);
    uint32_t kind;
    std::memcpy(&kind, rec, 4);
    const size_t size = kind < kKinds ? recordSizes[kind] : 0;
    if (size == 0) continue;  // a kind this tracer does not decode
    if (rec < buffer || rec + size > end) {
      layoutWarning("record overruns the buffer");
      s.rejected++;
      copy = false;
      continue;
    }
    flagprof::ParsedRecord parsed;
    if (flagprof::mspti::parseRecord(rec, size, parsed) == flagprof::RecordClass::Implausible) {
      layoutWarning(kind == FP_MSPTI_KIND_EXTERNAL_CORRELATION ? "external correlation kind unexpected"
                                                              : "timestamps implausible");
      s.rejected++;
    }
    uint32_t string = kNoString;
    bool stored = true;
    if (kind == FP_MSPTI_KIND_KERNEL) {
      kernels++;
      const char* name = pointerAt(rec, offsetof(fp_mspti_kernel, name));
      const char* type = pointerAt(rec, offsetof(fp_mspti_kernel, type));
      if (name || type) {
        if (name != lastName || type != lastType || !lastPair) {
          lastPair = &*pairs.emplace(std::make_pair(name, type), 0).first;
          lastName = name;
          lastType = type;
        }
        stored = frame.string(lastPair, string, [&](std::string& out) {
          out = flagprof::mspti::joinKernelStrings(name ? std::string_view(name, strnlen(name, 1 << 16)) : std::string_view(),
                                                   type ? std::string_view(type, strnlen(type, 1 << 16)) : std::string_view());
        });
      }
    } else if (kind == FP_MSPTI_KIND_API) {
      runtimes++;
      const char* name = pointerAt(rec, offsetof(fp_mspti_api, name));
      if (name) stored = frame.string(name, string, [&](std::string& out) { out.assign(name, strnlen(name, 1 << 16)); });
    } else if (kind == FP_MSPTI_KIND_MEMCPY) {
      memcpys++;
    } else if (kind == FP_MSPTI_KIND_MEMSET) {
      memsets++;
    } else if (kind == FP_MSPTI_KIND_EXTERNAL_CORRELATION) {
      externals++;
    }
    if (!stored || !frame.record(rec, size, string)) lost++;
  }
  s.kernels += kernels;
  s.memcpys += memcpys;
  s.memsets += memsets;
  s.runtimes += runtimes;
  s.externals += externals;
  if (capturing) frame.write();
  if (lost && !s.warnedAlloc.exchange(true)) {
    diagnostic("M18", false, true,
               "[flagos] MSPTI activity buffer allocation failed (%zu bytes) copying records into the capture; records "
               "are dropped while memory is short and the capture is incomplete",
               validSize + validSize / 2);
  }
  size_t dropped = 0;
  if (api.getNumDroppedRecords && api.getNumDroppedRecords(nullptr, 0, &dropped) == FP_MSPTI_SUCCESS) dropped += lost;
  else dropped = lost;
  if (dropped) {
    s.dropped += dropped;
    std::string d;
    fpc::put32(d, 0);
    fpc::put32(d, 0);
    fpc::put64(d, dropped);
    emitFrame(fpc::FrameDropped, d);
  }
  giveBackBuffer(buffer);
}

class MsptiDeviceTracer final : public VendorTracer {
 public:
  const char* name() const override { return "MSPTI"; }
  uint32_t fpcVendor() const override { return flagprof::mspti::Records::kId; }
  uint32_t apiVersion() const override { return version; }
  void* anchorSymbol() const override { return reinterpret_cast<void*>(api.registerCallbacks); }
  bool armed() const override { return subscribeResult_ == FP_MSPTI_SUCCESS && registerResult_ == FP_MSPTI_SUCCESS; }
  std::string notArmedReason() const override {
    if (subscribeResult_ != FP_MSPTI_SUCCESS)
      return "msptiSubscribe failed with " + std::to_string(subscribeResult_) +
             (subscribeResult_ == FP_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS ? " (another MSPTI subscriber owns the process)" : "");
    return "msptiActivityRegisterCallbacks failed with " + std::to_string(registerResult_);
  }

  void armAtLoad() override {
    State& s = state();
    if (api.getVersion) api.getVersion(&version);
    for (uint32_t kind : {FP_MSPTI_KIND_KERNEL, FP_MSPTI_KIND_API, FP_MSPTI_KIND_MEMSET, FP_MSPTI_KIND_MEMCPY,
                          FP_MSPTI_KIND_EXTERNAL_CORRELATION}) {
      size_t size = flagprof::mspti::recordSize(kind), reported = 0;
      // A newer library may append fields: copy what it writes, as long as the mirrored part is there.
      if (api.getStructSize && api.getStructSize(int(kind), version, &reported) == FP_MSPTI_SUCCESS &&
          reported > size && reported <= 4096)
        size = reported;
      recordSizes[kind] = size;
    }
    diagnostic("M0", true, false, "[flagos] bound msptiActivityRegisterCallbacks -> %s (MSPTI version %u)",
               s.libraryPath.c_str(), version);
    deviceMap();
    if (api.subscribe) {
      subscribeResult_ = api.subscribe(&subscriber_, nullptr, nullptr);
      if (subscribeResult_ != FP_MSPTI_SUCCESS) {
        diagnostic("M2", true, false, "[flagos] msptiSubscribe failed: %d", subscribeResult_);
        return;
      }
    }
    registerResult_ = api.registerCallbacks(bufferRequested, bufferCompleted);
    if (registerResult_ != FP_MSPTI_SUCCESS) {
      diagnostic("M3", true, false, "[flagos] msptiActivityRegisterCallbacks failed: %d", registerResult_);
      return;
    }
    enableKernel_ = api.enable(FP_MSPTI_KIND_KERNEL);
    if (enableKernel_ != FP_MSPTI_SUCCESS)
      diagnostic("M4", true, false, "[flagos] msptiActivityEnable(%d) returned %d", FP_MSPTI_KIND_KERNEL, enableKernel_);
    enableMemcpy_ = api.enable(FP_MSPTI_KIND_MEMCPY);
    if (enableMemcpy_ != FP_MSPTI_SUCCESS) diagnostic("M5", true, false, "[flagos] MSPTI memcpy activity unavailable");
    enableMemset_ = api.enable(FP_MSPTI_KIND_MEMSET);
    if (enableMemset_ != FP_MSPTI_SUCCESS) diagnostic("M6", true, false, "[flagos] MSPTI memset activity unavailable");
    if ((enableMemcpy_ != FP_MSPTI_SUCCESS || enableMemset_ != FP_MSPTI_SUCCESS) && !s.loadedAtStart)
      diagnostic("A24", false, true,
                 "[flagos] MSPTI records memcpy and memset only when %s is loaded at process start, and it was not "
                 "in the process before the agent loaded it: profile with --preload %s (setting "
                 "flagos.profile.preload) to record them",
                 s.libraryPath.c_str(), s.libraryPath.c_str());
  }

  void shutdown() override {
    // Unsubscribe first, then flush: the records still held go to the callbacks (outside a session, dropped).
    if (subscriber_ && api.unsubscribe) api.unsubscribe(subscriber_);
    subscriber_ = nullptr;
    api.flushAll(kFlushAll);
  }

  void clockPair(uint64_t& vendorNs, uint64_t& realtime) override {
    realtime = realtimeNs();
    vendorNs = realtime;  // MSPTI's clock is CLOCK_REALTIME: the decoder maps nothing
  }

  int startSession(std::string& error) override {
    State& s = state();
    // Leftovers from before the session go out first, uncopied.
    int flush = api.flushAll(kFlushAll);
    sessionFrame(1);
    s.copying.store(true, std::memory_order_release);
    int apiKind = api.enable(FP_MSPTI_KIND_API);
    int external = api.enable(FP_MSPTI_KIND_EXTERNAL_CORRELATION);
    diagnostic("M9", true, false,
               "[flagos] MSPTI activity setup results: CALLBACKS=%d, KERNEL=%d, MEMCPY=%d, MEMSET=%d, API=%d, "
               "EXTERNAL_CORRELATION=%d, FLUSH=%d",
               registerResult_, enableKernel_, enableMemcpy_, enableMemset_, apiKind, external, flush);
    if (apiKind != FP_MSPTI_SUCCESS) {
      diagnostic("M4", true, false, "[flagos] msptiActivityEnable(%d) returned %d", FP_MSPTI_KIND_API, apiKind);
      error = "msptiActivityEnable(API) failed with " + std::to_string(apiKind);
      return -1;
    }
    if (external != FP_MSPTI_SUCCESS)
      diagnostic("M4", true, false, "[flagos] msptiActivityEnable(%d) returned %d", FP_MSPTI_KIND_EXTERNAL_CORRELATION,
                 external);
    diagnostic("M7", true, false, "[flagos] MSPTI session started");
    return 0;
  }

  void stopSession() override {
    State& s = state();
    sessionFrame(2);
    int flush = api.flushAll(kFlushAll);
    s.copying.store(false, std::memory_order_release);
    api.disable(FP_MSPTI_KIND_API);
    api.disable(FP_MSPTI_KIND_EXTERNAL_CORRELATION);
    if (flush != FP_MSPTI_SUCCESS)
      diagnostic("M15", false, true, "[flagos] msptiActivityFlushAll returned %d: the last records may be missing", flush);
    diagnostic("M8", true, false, "[flagos] MSPTI session stopped");
  }

  int pushExternal(uint64_t id, std::string& error) override {
    if (!api.pushExternal) {
      error = "the vendor library has no msptiActivityPushExternalCorrelationId";
      return -1;
    }
    int r = api.pushExternal(FP_MSPTI_EXTERNAL_KIND_CUSTOM0, id);
    if (r != FP_MSPTI_SUCCESS) error = "msptiActivityPushExternalCorrelationId failed with " + std::to_string(r);
    return r == FP_MSPTI_SUCCESS ? 0 : -1;
  }

  int popExternal(std::string& error) override {
    if (!api.popExternal) {
      error = "the vendor library has no msptiActivityPopExternalCorrelationId";
      return -1;
    }
    uint64_t last = 0;  // CANN 9.0 refuses NULL here and leaves the stack as it was
    int r = api.popExternal(FP_MSPTI_EXTERNAL_KIND_CUSTOM0, &last);
    if (r != FP_MSPTI_SUCCESS) error = "msptiActivityPopExternalCorrelationId failed with " + std::to_string(r);
    return r == FP_MSPTI_SUCCESS ? 0 : -1;
  }

  // ASCEND_RT_VISIBLE_DEVICES="4,5": physical 4 is the process's device 0, 5 its device 1.
  static void deviceMap() {
    const char* visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (!visible || !*visible) return;
    std::vector<uint32_t> physical;
    for (const char* p = visible; *p;) {
      char* end = nullptr;
      const unsigned long id = strtoul(p, &end, 10);
      if (end == p) break;  // not a list of ids: map nothing rather than guess
      physical.push_back(uint32_t(id));
      p = *end == ',' ? end + 1 : end;
      if (*end != ',') break;
    }
    emitDeviceIndices(physical);
  }

 private:
  void* subscriber_ = nullptr;
  int subscribeResult_ = FP_MSPTI_SUCCESS, registerResult_ = -1;
  int enableKernel_ = -1, enableMemcpy_ = -1, enableMemset_ = -1;
};

}  // namespace

std::unique_ptr<VendorTracer> bind_mspti(void* lib, std::string& missing) {
  MsptiApi a;
  bind(lib, "msptiGetVersion", a.getVersion);
  bind(lib, "msptiActivityGetStructSize", a.getStructSize);
  bind(lib, "msptiSubscribe", a.subscribe);
  bind(lib, "msptiUnsubscribe", a.unsubscribe);
  bind(lib, "msptiActivityGetNumDroppedRecords", a.getNumDroppedRecords);
  bind(lib, "msptiActivityPushExternalCorrelationId", a.pushExternal);
  bind(lib, "msptiActivityPopExternalCorrelationId", a.popExternal);
  const bool required = bind(lib, "msptiActivityRegisterCallbacks", a.registerCallbacks) &
                        bind(lib, "msptiActivityEnable", a.enable) & bind(lib, "msptiActivityDisable", a.disable) &
                        bind(lib, "msptiActivityFlushAll", a.flushAll) &
                        bind(lib, "msptiActivityGetNextRecord", a.getNextRecord);
  if (!required) {
    missing = "required MSPTI activity symbols are missing";
    return nullptr;
  }
  api = a;
  return std::make_unique<MsptiDeviceTracer>();
}

}  // namespace flagprof::agent
