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
// - Activity records carry no launch dims. As Kineto does, the HIP API callback (API enter of the launch calls)
//   reads grid, block and shared memory from the call's arguments; the dispatch record, delivered later with the
//   same correlation id, gets them appended (mirror.h) as it is copied into the capture: nothing is written per
//   launch, and the decoder reads each kernel's dims from its own record.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
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
  int (*enableCallback)(uint32_t, fp_roc_api_callback, void*) = nullptr;
  int (*disableCallback)(uint32_t) = nullptr;
};

// What the pool callback (a plain C function pointer) reaches: one ROCtracer binding per process.
RoctracerApi api;
uint32_t version = 0;  // major * 100 + minor
void* pool = nullptr;
std::atomic<uint64_t> seenApi[kSeenIds / 64] = {};

// ---- Launch dims from the HIP API callback.
//
// The callback runs on every HIP call of every thread: a call id is resolved to its launch layout once, by name
// (ids differ between ROCm releases), and every other call returns after one table read. Dims wait in a ring
// indexed by correlation id (ROCtracer numbers every HIP call one by one) until the dispatch record with that id is
// delivered; a slot says whose dims it holds, so a launch whose dims were overwritten (2^18 calls later, more than
// a full 8 MiB buffer of records) only loses them. A seqlock on the slot's id keeps a reader from a torn write.
enum LaunchLayout : uint8_t {
  kUnresolved = 0,
  kNotLaunch,
  kDim3,            // hipLaunchKernel, hipExtLaunchKernel: dim3 grid in blocks, size_t shared memory
  kDim3Cooperative,  // hipLaunchCooperativeKernel: the same with an unsigned int
  kModuleBlocks,     // hipModuleLaunchKernel: gridDimX..Z in blocks
  kModuleWorkItems,  // hipExtModuleLaunchKernel, hipHccModuleLaunchKernel: the global work size, in work-items
};

LaunchLayout layoutOfCall(const char* name) {
  if (!name) return kNotLaunch;
  std::string n(name);
  if (n.size() > 4 && n.compare(n.size() - 4, 4, "_spt") == 0) n.resize(n.size() - 4);  // per-thread stream
  if (n == "hipLaunchKernel" || n == "hipExtLaunchKernel") return kDim3;
  if (n == "hipLaunchCooperativeKernel") return kDim3Cooperative;
  if (n == "hipModuleLaunchKernel") return kModuleBlocks;
  if (n == "hipExtModuleLaunchKernel" || n == "hipHccModuleLaunchKernel") return kModuleWorkItems;
  return kNotLaunch;
}

struct LaunchSlot {
  std::atomic<uint64_t> correlation;
  std::atomic<uint32_t> dims[7];  // grid xyz, block xyz, shared memory
};
constexpr size_t kLaunchSlots = size_t(1) << 18;
LaunchSlot* launches = nullptr;  // calloc'd: pages are touched only as slots are used
std::atomic<uint8_t> callLayout[kSeenIds] = {};
std::atomic<uint64_t> launchesSeen{0}, kernelsJoined{0};
bool callbackEnabled = false;

void hipApiCallback(uint32_t domain, uint32_t cid, const void* data, void* /*arg*/) {
  if (domain != FP_ROC_DOMAIN_HIP_API || cid >= kSeenIds || !data) return;
  uint8_t layout = callLayout[cid].load(std::memory_order_relaxed);
  if (layout == kUnresolved) {
    layout = api.opString ? layoutOfCall(api.opString(FP_ROC_DOMAIN_HIP_API, cid, 0)) : kNotLaunch;
    callLayout[cid].store(layout, std::memory_order_relaxed);
  }
  if (layout == kNotLaunch) return;
  const auto* d = static_cast<const fp_roc_hip_api_data*>(data);
  if (d->phase != FP_ROC_API_PHASE_ENTER || d->correlation_id == 0 || !launches) return;
  uint32_t v[7];
  switch (layout) {
    case kDim3:
    case kDim3Cooperative: {
      const auto& a = d->args.hipLaunchKernel;
      v[0] = a.numBlocks.x, v[1] = a.numBlocks.y, v[2] = a.numBlocks.z;
      v[3] = a.dimBlocks.x, v[4] = a.dimBlocks.y, v[5] = a.dimBlocks.z;
      v[6] = layout == kDim3 ? uint32_t(std::min<size_t>(a.sharedMemBytes, UINT32_MAX))
                             : d->args.hipLaunchCooperativeKernel.sharedMemBytes;
      break;
    }
    case kModuleBlocks: {
      const auto& a = d->args.hipModuleLaunchKernel;
      v[0] = a.gridDimX, v[1] = a.gridDimY, v[2] = a.gridDimZ;
      v[3] = a.blockDimX, v[4] = a.blockDimY, v[5] = a.blockDimZ;
      v[6] = a.sharedMemBytes;
      break;
    }
    default: {
      // The global work size is in work-items: the grid in blocks, as CUDA's and hipLaunchKernel's, is the number
      // of work-groups, rounded up (HSA dispatches a partial last work-group).
      const auto& a = d->args.hipExtModuleLaunchKernel;
      const uint32_t global[3] = {a.globalWorkSizeX, a.globalWorkSizeY, a.globalWorkSizeZ};
      const uint32_t local[3] = {a.localWorkSizeX, a.localWorkSizeY, a.localWorkSizeZ};
      for (int i = 0; i < 3; ++i) {
        v[i] = local[i] ? uint32_t((uint64_t(global[i]) + local[i] - 1) / local[i]) : 0;
        v[3 + i] = local[i];
      }
      v[6] = uint32_t(std::min<size_t>(a.sharedMemBytes, UINT32_MAX));
      break;
    }
  }
  if (v[0] == 0) return;  // no launch has an empty grid: nothing to show
  LaunchSlot& slot = launches[d->correlation_id & (kLaunchSlots - 1)];
  slot.correlation.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (int i = 0; i < 7; ++i) slot.dims[i].store(v[i], std::memory_order_relaxed);
  slot.correlation.store(d->correlation_id, std::memory_order_release);
  launchesSeen.fetch_add(1, std::memory_order_relaxed);
}

// The dims of the launch with this correlation id, when the callback saw it and its slot still holds it.
bool launchDims(uint64_t correlation, fp_roc_launch_dims& out) {
  if (!launches || correlation == 0) return false;
  LaunchSlot& slot = launches[correlation & (kLaunchSlots - 1)];
  if (slot.correlation.load(std::memory_order_acquire) != correlation) return false;
  uint32_t v[7];
  for (int i = 0; i < 7; ++i) v[i] = slot.dims[i].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.correlation.load(std::memory_order_relaxed) != correlation) return false;
  out.magic = FP_ROC_LAUNCH_MAGIC;
  std::memcpy(out.grid, v, 12);
  std::memcpy(out.block, v + 3, 12);
  out.shared_memory = v[6];
  return true;
}

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
  uint64_t kernels = 0, memcpys = 0, memsets = 0, runtimes = 0, externals = 0, joined = 0;
  // A dispatch record with its launch's dims appended (mirror.h).
  alignas(8) uint8_t withDims[sizeof(fp_roc_record) + sizeof(fp_roc_launch_dims)];
  size_t recordSize = kSize;
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
    const void* bytes = rec;
    recordSize = kSize;
    if (domain == FP_ROC_DOMAIN_HIP_OPS && op == FP_ROC_HIP_OP_DISPATCH) {
      kernels++;
      fp_roc_launch_dims dims;
      uint64_t correlation;
      std::memcpy(&correlation, rec + offsetof(fp_roc_record, correlation_id), 8);
      if (launchDims(correlation, dims)) {
        std::memcpy(withDims, rec, kSize);
        std::memcpy(withDims + kSize, &dims, sizeof dims);
        bytes = withDims;
        recordSize = sizeof withDims;
        joined++;
      }
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
    if (keep && (!stored || !frame.record(bytes, recordSize, string))) lost++;
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
  kernelsJoined += joined;
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
    enableLaunchCallback();
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
    if (callbackEnabled) {
      if (api.disableCallback) api.disableCallback(FP_ROC_DOMAIN_HIP_API);
      callbackEnabled = false;
      diagnostic("R39", true, false, "[flagos] ROCtracer launch dims: %llu launches seen, %llu kernels joined",
                 static_cast<unsigned long long>(launchesSeen.load()),
                 static_cast<unsigned long long>(kernelsJoined.load()));
    }
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

  // The HIP API callback for the session's launches; without it kernels carry no grid or block, said once.
  void enableLaunchCallback() {
    static std::atomic<bool> said{false};
    if (!api.enableCallback || !api.opString) {
      if (!said.exchange(true))
        diagnostic("R37", true, false,
                   "[flagos] ROCtracer has no %s: kernels carry no grid or block",
                   api.enableCallback ? "roctracer_op_string" : "roctracer_enable_domain_callback");
      return;
    }
    if (!launches) launches = static_cast<LaunchSlot*>(calloc(kLaunchSlots, sizeof(LaunchSlot)));
    const int r = launches ? api.enableCallback(FP_ROC_DOMAIN_HIP_API, hipApiCallback, nullptr) : -1;
    callbackEnabled = r == FP_ROC_SUCCESS;
    launchesSeen = 0;
    kernelsJoined = 0;
    if (!callbackEnabled && !said.exchange(true))
      diagnostic("R38", true, false,
                 "[flagos] roctracer_enable_domain_callback(HIP_API) returned %d: kernels carry no grid or block", r);
  }
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
  bind(lib, "roctracer_enable_domain_callback", a.enableCallback);  // optional: launch dims
  bind(lib, "roctracer_disable_domain_callback", a.disableCallback);
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
