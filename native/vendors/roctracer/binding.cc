// The agent's ROCtracer binding: AMD ROCm's activity API (libroctracer64.so), also what Hygon DCU's ROCm stack
// ships.
//
// ROCtracer differs from CUPTI where it matters here:
// - The memory pool owns its buffers: the callback gets a range [begin, end) of records to read, stepped with
//   roctracer_next_record, and nothing to hand back.
// - Every record is one 64-byte activity_record_t; the domain (HIP_OPS device work, HIP_API calls, EXT_API
//   external ids) says which fields the unions hold. A kernel's name is a pointer into the runtime, copied while
//   the buffer is alive; API calls carry an op id, named with roctracer_op_string after the final flush.
// - Timestamps are the HSA system clock: calibration pairs (roctracer_get_timestamp, CLOCK_REALTIME) are
//   recorded at start and stop, as for CUPTI.
// - Correlation ids are 64-bit (the decoder keeps those above 2^32 - 1 without a correlation).
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>

#include "decode.h"
#include "mirror.h"
#include "../../agent/agent.h"

namespace flagprof::agent {

namespace {

// The ROCtracer C ABI as used here (roctracer_status_t and activity_domain_t are ints; pools are opaque).
struct RoctracerApi {
  uint32_t (*versionMajor)() = nullptr;
  uint32_t (*versionMinor)() = nullptr;
  int (*getTimestamp)(uint64_t*) = nullptr;
  int (*openPool)(const fp_roc_properties*, void**) = nullptr;
  int (*enableDomain)(uint32_t, void*) = nullptr;
  int (*disableDomain)(uint32_t) = nullptr;
  int (*flush)(void*) = nullptr;
  int (*nextRecord)(const void*, const void**) = nullptr;
  const char* (*opString)(uint32_t, uint32_t, uint32_t) = nullptr;
  int (*pushExternal)(uint64_t) = nullptr;
  int (*popExternal)(uint64_t*) = nullptr;
};

// What the pool callback (a plain C function pointer) reaches: one ROCtracer binding per process.
RoctracerApi api;
uint32_t version = 0;  // major * 100 + minor
void* pool = nullptr;
std::atomic<uint64_t> seenApi[kSeenIds / 64] = {};

void layoutWarning(const char* what) {
  flagprof::agent::layoutWarning("R34", "ROCtracer", "version", version, "the libroctracer64.so of the running ROCm", what);
}

void bufferCompleted(const char* begin, const char* end, void* /*arg*/) {
  State& s = state();
  const size_t validSize = begin && end > begin ? size_t(end - begin) : 0;
  diagnostic("R32", true, false, "[flagos] ROCtracer buffer callback invoked, validSize=%zu", validSize);
  if (!s.copying.load(std::memory_order_acquire) || s.fd < 0 || validSize == 0) return;  // before the session
  RecordsFrame& frame = RecordsFrame::forThisThread();
  if (!frame.begin(validSize)) return;
  constexpr size_t kSize = sizeof(fp_roc_record);
  uint64_t lost = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0, runtimes = 0, externals = 0;
  size_t bound = validSize / kSize + 1;  // only a runaway iterator reaches this
  const char* at = begin;
  while (at + kSize <= end) {
    if (bound-- == 0) {
      if (!s.warnedBound.exchange(true))
        diagnostic("R35", false, true,
                   "[flagos] ROCtracer buffer hit the per-buffer record bound (%zu) for %zu bytes; the tail of the "
                   "buffer is missing from the capture",
                   validSize / kSize + 1, validSize);
      break;
    }
    const uint8_t* rec = reinterpret_cast<const uint8_t*>(at);
    flagprof::ParsedRecord parsed;
    const flagprof::RecordClass cls = flagprof::roctracer::parseRecord(rec, kSize, parsed);
    if (cls == flagprof::RecordClass::Implausible) {
      layoutWarning("timestamps or device id implausible");
      s.rejected++;
    }
    uint32_t domain, op;
    std::memcpy(&domain, rec + offsetof(fp_roc_record, domain), 4);
    std::memcpy(&op, rec + offsetof(fp_roc_record, op), 4);
    uint32_t string = kNoString;
    bool stored = true, keep = cls != flagprof::RecordClass::Ignored;
    if (domain == FP_ROC_DOMAIN_HIP_OPS && op == FP_ROC_HIP_OP_DISPATCH) {
      kernels++;
      const char* name;
      std::memcpy(&name, rec + FP_ROC_OFF_BYTES, sizeof name);
      if (name)
        stored = frame.string(name, string, [&](std::string& out) { out.assign(name, strnlen(name, 1 << 16)); });
    } else if (cls == flagprof::RecordClass::Event && parsed.kind == flagprof::EventKind::Memcpy) {
      memcpys++;
    } else if (cls == flagprof::RecordClass::Event && parsed.kind == flagprof::EventKind::Memset) {
      memsets++;
    } else if (domain == FP_ROC_DOMAIN_HIP_API) {
      runtimes++;
      markSeen(seenApi, op);
    } else if (cls == flagprof::RecordClass::ExternalCorrelation) {
      externals++;
    }
    if (keep && (!stored || !frame.record(rec, kSize, string))) lost++;
    const void* next = nullptr;
    if (api.nextRecord && api.nextRecord(at, &next) == FP_ROC_SUCCESS && next > static_cast<const void*>(at))
      at = static_cast<const char*>(next);
    else
      at += kSize;
  }
  s.kernels += kernels;
  s.memcpys += memcpys;
  s.memsets += memsets;
  s.runtimes += runtimes;
  s.externals += externals;
  frame.write();
  if (lost) {
    if (!s.warnedAlloc.exchange(true))
      diagnostic("R36", false, true,
                 "[flagos] ROCtracer activity buffer allocation failed (%zu bytes) copying records into the capture; "
                 "records are dropped while memory is short and the capture is incomplete",
                 validSize + validSize / 2);
    s.dropped += lost;
    std::string d;
    fpc::put32(d, 0);
    fpc::put32(d, 0);
    fpc::put64(d, lost);
    emitFrame(fpc::FrameDropped, d);
  }
}

class RoctracerDeviceTracer final : public VendorTracer {
 public:
  const char* name() const override { return "ROCtracer"; }
  uint32_t fpcVendor() const override { return flagprof::roctracer::Records::kId; }
  uint32_t apiVersion() const override { return version; }
  void* anchorSymbol() const override { return reinterpret_cast<void*>(api.enableDomain); }
  bool armed() const override { return openResult_ == FP_ROC_SUCCESS && enableOps_ == FP_ROC_SUCCESS; }
  std::string notArmedReason() const override {
    if (openResult_ != FP_ROC_SUCCESS) return "roctracer_open_pool_expl failed with " + std::to_string(openResult_);
    return "roctracer_enable_domain_activity_expl(HIP_OPS) failed with " + std::to_string(enableOps_);
  }

  void armAtLoad() override {
    State& s = state();
    if (api.versionMajor && api.versionMinor) version = api.versionMajor() * 100 + api.versionMinor();
    diagnostic("R24", true, false, "[flagos] bound roctracer_enable_domain_activity_expl -> %s (ROCtracer version %u)",
               s.libraryPath.c_str(), version);
    fp_roc_properties properties{};
    properties.buffer_size = kBufferSize;
    properties.buffer_callback_fun = bufferCompleted;
    openResult_ = api.openPool(&properties, &pool);
    if (openResult_ != FP_ROC_SUCCESS) {
      diagnostic("R26", true, false, "[flagos] roctracer_open_pool_expl failed: %d", openResult_);
      return;
    }
    // Device work is recorded from load on, as CUPTI's kinds are: the first kernels of a session are not missed.
    enableOps_ = api.enableDomain(FP_ROC_DOMAIN_HIP_OPS, pool);
    if (enableOps_ != FP_ROC_SUCCESS)
      diagnostic("R27", true, false, "[flagos] roctracer_enable_domain_activity_expl(%d) returned %d",
                 FP_ROC_DOMAIN_HIP_OPS, enableOps_);
  }

  void clockPair(uint64_t& vendorNs, uint64_t& realtime) override { clockPairNow(api.getTimestamp, vendorNs, realtime); }

  int startSession(std::string& error) override {
    State& s = state();
    calibrate(1, api.getTimestamp, "R28", "ROCtracer ");
    // Leftovers from before the session go out first, uncopied.
    int flush = api.flush(pool);
    sessionFrame(1);
    s.copying.store(true, std::memory_order_release);
    int apiDomain = api.enableDomain(FP_ROC_DOMAIN_HIP_API, pool);
    int external = api.enableDomain(FP_ROC_DOMAIN_EXT_API, pool);
    diagnostic("R31", true, false,
               "[flagos] ROCtracer activity setup results: POOL=%d, HIP_OPS=%d, HIP_API=%d, EXT_API=%d, FLUSH=%d",
               openResult_, enableOps_, apiDomain, external, flush);
    if (apiDomain != FP_ROC_SUCCESS) {
      diagnostic("R27", true, false, "[flagos] roctracer_enable_domain_activity_expl(%d) returned %d",
                 FP_ROC_DOMAIN_HIP_API, apiDomain);
      error = "roctracer_enable_domain_activity_expl(HIP_API) failed with " + std::to_string(apiDomain);
      return -1;
    }
    if (external != FP_ROC_SUCCESS)
      diagnostic("R27", true, false, "[flagos] roctracer_enable_domain_activity_expl(%d) returned %d",
                 FP_ROC_DOMAIN_EXT_API, external);
    diagnostic("R29", true, false, "[flagos] ROCtracer session started");
    return 0;
  }

  void stopSession() override {
    State& s = state();
    sessionFrame(2);
    int flush = api.flush(pool);
    s.copying.store(false, std::memory_order_release);
    api.disableDomain(FP_ROC_DOMAIN_HIP_API);
    api.disableDomain(FP_ROC_DOMAIN_EXT_API);
    if (flush != FP_ROC_SUCCESS)
      diagnostic("R33", false, true, "[flagos] roctracer_flush_activity_expl returned %d: the last records may be missing",
                 flush);
    calibrate(2, api.getTimestamp, "R28", "ROCtracer ");
    // Only now, with every buffer delivered, ask the library for names.
    if (api.opString)
      emitNames(FP_ROC_DOMAIN_HIP_API, seenApi,
                [](uint32_t op) { return api.opString(FP_ROC_DOMAIN_HIP_API, op, 0); });
    diagnostic("R30", true, false, "[flagos] ROCtracer session stopped");
  }

  int pushExternal(uint64_t id, std::string& error) override {
    if (!api.pushExternal) {
      error = "the vendor library has no roctracer_activity_push_external_correlation_id";
      return -1;
    }
    int r = api.pushExternal(id);
    if (r != FP_ROC_SUCCESS) error = "roctracer_activity_push_external_correlation_id failed with " + std::to_string(r);
    return r == FP_ROC_SUCCESS ? 0 : -1;
  }

  int popExternal(std::string& error) override {
    if (!api.popExternal) {
      error = "the vendor library has no roctracer_activity_pop_external_correlation_id";
      return -1;
    }
    uint64_t last = 0;  // a real address, as for the other vendors
    int r = api.popExternal(&last);
    if (r != FP_ROC_SUCCESS) error = "roctracer_activity_pop_external_correlation_id failed with " + std::to_string(r);
    return r == FP_ROC_SUCCESS ? 0 : -1;
  }

 private:
  int openResult_ = -1, enableOps_ = -1;
};

}  // namespace

std::unique_ptr<VendorTracer> bind_roctracer(void* lib, std::string& missing) {
  RoctracerApi a;
  bind(lib, "roctracer_version_major", a.versionMajor);
  bind(lib, "roctracer_version_minor", a.versionMinor);
  bind(lib, "roctracer_next_record", a.nextRecord);  // an inline function in older headers: fixed stride then
  bind(lib, "roctracer_op_string", a.opString);
  bind(lib, "roctracer_activity_push_external_correlation_id", a.pushExternal);
  bind(lib, "roctracer_activity_pop_external_correlation_id", a.popExternal);
  const bool required = bind(lib, "roctracer_open_pool_expl", a.openPool) &
                        bind(lib, "roctracer_enable_domain_activity_expl", a.enableDomain) &
                        bind(lib, "roctracer_disable_domain_activity", a.disableDomain) &
                        bind(lib, "roctracer_flush_activity_expl", a.flush) &
                        bind(lib, "roctracer_get_timestamp", a.getTimestamp);
  if (!required) {
    missing = "required ROCtracer activity symbols are missing (roctracer_open_pool_expl, "
              "roctracer_enable_domain_activity_expl, roctracer_flush_activity_expl, roctracer_get_timestamp)";
    return nullptr;
  }
  api = a;
  return std::make_unique<RoctracerDeviceTracer>();
}

}  // namespace flagprof::agent
