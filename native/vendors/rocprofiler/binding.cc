// The agent's rocprofiler-sdk binding: AMD ROCm's tool API (librocprofiler-sdk.so), ROCtracer's successor.
//
// rocprofiler-sdk differs from ROCtracer where it matters here:
// - A tool registers: rocprofiler_force_configure (the agent loads before HIP/HSA initialise) calls our configure,
//   whose initialize creates contexts, a buffer and the services. Services can only be configured then, never
//   later, so everything is configured at load and a session only starts and stops a context.
// - Two contexts: one for code objects, started at load, because kernels register their symbols when their code
//   object loads, usually before any session; one for the buffer services, started and stopped with the session.
// - The buffer callback gets an array of record headers (category, kind, payload pointer) and the count of records
//   dropped since the last call. Each payload starts with its own size: records are copied by it.
// - Kernel dispatch records carry a kernel id, not a name: the code-object callback announces id -> name, and the
//   copy of a dispatch record gets that name as its string, so the capture decoder names kernels as it names
//   CUPTI's and ROCtracer's.
// - The external id is inside each record's correlation id (external.value), not a record of its own: for every
//   record that carries one, the copy is preceded by an fp_rps_external_record (mirror.h) the decoder reads as an
//   external correlation. The torch id is pushed as id + 1, since 0 is both a valid torch id and the SDK's "none".
// - Agent ids are handles (node id plus a per-process offset), not device indices: a device-index names frame maps
//   them to the process's GPU ordinals, in the order the SDK lists its GPU agents.
// - Timestamps are CLOCK_BOOTTIME: calibration pairs (rocprofiler_get_timestamp, CLOCK_REALTIME) are recorded at
//   start and stop. Correlation ids are 64-bit.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "decode.h"
#include "mirror.h"
#include "../../agent/agent.h"

namespace flagprof::agent {


namespace {

// The rocprofiler-sdk C ABI as used here (rocprofiler_status_t and the kind enums are ints; ids are one-word
// structs passed by value, as the SDK's are).
struct RocprofilerApi {
  int (*getVersion)(uint32_t*, uint32_t*, uint32_t*) = nullptr;
  int (*forceConfigure)(fp_rps_configure_func) = nullptr;
  int (*createContext)(fp_rps_context_id*) = nullptr;
  int (*startContext)(fp_rps_context_id) = nullptr;
  int (*stopContext)(fp_rps_context_id) = nullptr;
  int (*createBuffer)(fp_rps_context_id, size_t, size_t, uint32_t, fp_rps_buffer_callback, void*,
                      fp_rps_buffer_id*) = nullptr;
  int (*flushBuffer)(fp_rps_buffer_id) = nullptr;
  int (*configureBufferTracing)(fp_rps_context_id, uint32_t, const int32_t*, size_t, fp_rps_buffer_id) = nullptr;
  int (*configureCallbackTracing)(fp_rps_context_id, uint32_t, const int32_t*, size_t,
                                  fp_rps_callback_tracing_callback, void*) = nullptr;
  int (*getTimestamp)(uint64_t*) = nullptr;
  int (*getThreadId)(uint64_t*) = nullptr;
  int (*pushExternal)(fp_rps_context_id, uint64_t, fp_rps_user_data) = nullptr;
  int (*popExternal)(fp_rps_context_id, uint64_t, fp_rps_user_data*) = nullptr;
  int (*operationName)(uint32_t, int32_t, const char**, uint64_t*) = nullptr;
  int (*queryAgents)(uint32_t, fp_rps_query_agents_callback, size_t, void*) = nullptr;
};

// What the SDK's callbacks (plain C function pointers) reach: one rocprofiler-sdk binding per process.
RocprofilerApi api;
uint32_t version = 0;  // major * 10000 + minor * 100 + patch
fp_rps_context_id codeObjectContext{FP_RPS_CONTEXT_NONE}, sessionContext{FP_RPS_CONTEXT_NONE};
fp_rps_buffer_id buffer{0};
bool configured = false;  // our initialize ran
int createResult = -1, bufferResult = -1, kernelResult = -1, copyResult = -1, hipResult = -1, codeObjectResult = -1;
std::atomic<uint64_t> seenApi[kSeenIds / 64] = {};

// Kernel id -> name, filled by the code-object callback (any thread) and read by the buffer callback (the SDK's
// thread). Node-based: a name's address, the frame's string key, stays put as entries are added.
std::mutex kernelMutex;
std::unordered_map<uint64_t, std::string> kernelNames;
std::atomic<bool> warnedCallbackLayout{false};

constexpr size_t kMaxRecord = 4096;  // larger than any record the SDK writes: a bigger size means garbage

void layoutWarning(const char* what) {
  flagprof::agent::layoutWarning("Q8", "rocprofiler-sdk", "version", version,
                                 "the librocprofiler-sdk.so of the running ROCm", what);
}

uint64_t threadId() {
  uint64_t tid = 0;
  if (api.getThreadId && api.getThreadId(&tid) == FP_RPS_STATUS_SUCCESS) return tid;
  return uint64_t(syscall(SYS_gettid));  // what the SDK's thread ids are
}

// The code-object service's callback. The record comes by value, in the layout of the library's version (mirror.h):
// the kind asked for (CODE_OBJECT) is found where that layout puts it.
void codeObjectCallback(fp_rps_callback_record record, fp_rps_user_data*, void*) {
  const uint8_t* raw = reinterpret_cast<const uint8_t*>(&record);
  uint32_t kind, phase;
  int32_t operation;
  void* payload;
  std::memcpy(&kind, raw + offsetof(fp_rps_callback_record_v0, kind), 4);
  std::memcpy(&operation, raw + offsetof(fp_rps_callback_record_v0, operation), 4);
  if (kind == FP_RPS_CALLBACK_TRACING_CODE_OBJECT && (operation == FP_RPS_CODE_OBJECT_LOAD ||
                                                      operation == FP_RPS_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER)) {
    std::memcpy(&phase, raw + offsetof(fp_rps_callback_record_v0, phase), 4);
    std::memcpy(&payload, raw + offsetof(fp_rps_callback_record_v0, payload), sizeof payload);
  } else if (record.kind == FP_RPS_CALLBACK_TRACING_CODE_OBJECT) {
    operation = record.operation;
    phase = record.phase;
    payload = record.payload;
  } else {
    if (!warnedCallbackLayout.exchange(true)) layoutWarning("code-object callback record layout unknown");
    return;
  }
  if (operation != FP_RPS_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER || phase != FP_RPS_CALLBACK_PHASE_LOAD || !payload)
    return;
  // Names stay after an unload: dispatches of the kernel may still be in the buffer.
  fp_rps_kernel_symbol_data symbol;
  std::memcpy(&symbol, payload, sizeof symbol);
  if (!symbol.kernel_name) return;
  std::string name(symbol.kernel_name, strnlen(symbol.kernel_name, 1 << 16));
  std::lock_guard<std::mutex> lock(kernelMutex);
  kernelNames.try_emplace(symbol.kernel_id, std::move(name));
}

const std::string* kernelName(uint64_t kernelId) {
  std::lock_guard<std::mutex> lock(kernelMutex);
  auto it = kernelNames.find(kernelId);
  return it == kernelNames.end() ? nullptr : &it->second;
}

void bufferCompleted(fp_rps_context_id, fp_rps_buffer_id, fp_rps_record_header** headers, size_t count, void*,
                     uint64_t dropCount) {
  State& s = state();
  diagnostic("Q7", true, false, "[flagos] rocprofiler-sdk buffer callback invoked, records=%zu, dropped=%llu", count,
             static_cast<unsigned long long>(dropCount));
  if (!s.copying.load(std::memory_order_acquire) || s.fd < 0) return;  // before the session
  RecordsFrame& frame = RecordsFrame::forThisThread();
  if (!headers) count = 0;  // a delivery of drops only
  // Begun even for no records: write() without begin() would repeat this thread's previous frame.
  const size_t copiedBytes = count * 96;
  if (!frame.begin(copiedBytes)) return;
  uint64_t lost = 0;
  uint64_t kernels = 0, memcpys = 0, runtimes = 0, externals = 0;
  uint64_t lastExternal = 0;  // a launch's API and device records share one id: one external record for both
  for (size_t i = 0; i < count; ++i) {
    const fp_rps_record_header* h = headers[i];
    if (!h || h->u.ck.category != FP_RPS_BUFFER_CATEGORY_TRACING || !h->payload) continue;
    const uint32_t kind = h->u.ck.kind;
    if (kind != FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH && kind != FP_RPS_BUFFER_TRACING_MEMORY_COPY &&
        kind != FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API)
      continue;
    const uint8_t* rec = static_cast<const uint8_t*>(h->payload);
    uint64_t size;
    std::memcpy(&size, rec, 8);
    flagprof::ParsedRecord parsed;
    const flagprof::RecordClass cls =
        size >= 16 && size <= kMaxRecord ? flagprof::rocprofiler::parseRecord(rec, size_t(size), parsed)
                                         : flagprof::RecordClass::Malformed;
    if (cls == flagprof::RecordClass::Malformed || cls == flagprof::RecordClass::Implausible) {
      layoutWarning(cls == flagprof::RecordClass::Malformed ? "record size unexpected" : "timestamps implausible");
      s.rejected++;
      if (cls == flagprof::RecordClass::Malformed) continue;
    }
    // The correlation id sits at the same place in the three kinds (right after kind and operation).
    fp_rps_async_correlation_id correlation;
    std::memcpy(&correlation, rec + offsetof(fp_rps_kernel_dispatch_record, correlation_id), sizeof correlation);
    if (correlation.external.value != 0 && correlation.internal != lastExternal) {
      fp_rps_external_record e{sizeof(fp_rps_external_record), FP_RPS_FLAGPROF_EXTERNAL_KIND, 0, correlation.internal,
                               correlation.external.value - 1};
      if (frame.record(&e, sizeof e, kNoString)) {
        externals++;
        lastExternal = correlation.internal;
      } else {
        lost++;
      }
    }
    uint32_t string = kNoString;
    bool stored = true;
    if (kind == FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH) {
      kernels++;
      uint64_t kernelId;
      std::memcpy(&kernelId, rec + offsetof(fp_rps_kernel_dispatch_record, dispatch_info.kernel_id), 8);
      if (const std::string* name = kernelName(kernelId))
        stored = frame.string(name, string, [&](std::string& out) { out = *name; });
    } else if (kind == FP_RPS_BUFFER_TRACING_MEMORY_COPY) {
      memcpys++;
    } else {
      runtimes++;
      markSeen(seenApi, parsed.cbid);
    }
    if (!stored || !frame.record(rec, size_t(size), string)) lost++;
  }
  s.kernels += kernels;
  s.memcpys += memcpys;
  s.runtimes += runtimes;
  s.externals += externals;
  frame.write();
  if (lost && !s.warnedAlloc.exchange(true))
    diagnostic("Q9", false, true,
               "[flagos] rocprofiler-sdk activity buffer allocation failed (%zu bytes) copying records into the "
               "capture; records are dropped while memory is short and the capture is incomplete",
               copiedBytes);
  const uint64_t dropped = dropCount + lost;
  if (dropped) {
    s.dropped += dropped;
    std::string d;
    fpc::put32(d, 0);
    fpc::put32(d, 0);
    fpc::put64(d, dropped);
    emitFrame(fpc::FrameDropped, d);
  }
}

// The GPU agents in the SDK's order are the process's devices 0, 1, ...: a device-index names frame maps the
// handles records carry to those ordinals.
int collectAgents(uint32_t, const void** agents, size_t count, void* out) {
  auto& gpus = *static_cast<std::vector<uint64_t>*>(out);
  for (size_t i = 0; i < count; ++i) {
    if (!agents[i]) continue;
    fp_rps_agent_head head;
    std::memcpy(&head, agents[i], sizeof head);
    if (head.type == FP_RPS_AGENT_TYPE_GPU) gpus.push_back(head.id.handle);
  }
  return FP_RPS_STATUS_SUCCESS;
}

void deviceMap() {
  if (!api.queryAgents) return;
  std::vector<uint64_t> gpus;
  int r = api.queryAgents(FP_RPS_AGENT_INFO_VERSION_0, collectAgents, sizeof(fp_rps_agent_head), &gpus);
  if (r != FP_RPS_STATUS_SUCCESS || gpus.empty()) {
    diagnostic("Q10", true, false, "[flagos] rocprofiler_query_available_agents returned %d (%zu GPU agents)", r,
               gpus.size());
    return;
  }
  std::vector<uint32_t> ids;
  for (uint64_t gpu : gpus) ids.push_back(uint32_t(gpu));
  emitDeviceIndices(ids);
}

// The tool's initialize: runs inside rocprofiler_force_configure (or at the SDK's own initialisation).
int toolInitialize(fp_rps_client_finalize, void*) {
  configured = true;
  createResult = api.createContext(&codeObjectContext);
  if (createResult == FP_RPS_STATUS_SUCCESS) createResult = api.createContext(&sessionContext);
  if (createResult != FP_RPS_STATUS_SUCCESS) {
    diagnostic("Q11", true, false, "[flagos] rocprofiler_create_context failed: %d", createResult);
    return -1;
  }
  codeObjectResult = api.configureCallbackTracing(codeObjectContext, FP_RPS_CALLBACK_TRACING_CODE_OBJECT, nullptr, 0,
                                                  codeObjectCallback, nullptr);
  bufferResult = api.createBuffer(sessionContext, kBufferSize, kBufferSize - kBufferSize / 8,
                                  FP_RPS_BUFFER_POLICY_LOSSLESS, bufferCompleted, nullptr, &buffer);
  if (bufferResult != FP_RPS_STATUS_SUCCESS) {
    diagnostic("Q11", true, false, "[flagos] rocprofiler_create_buffer failed: %d", bufferResult);
    return -1;
  }
  kernelResult = api.configureBufferTracing(sessionContext, FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH, nullptr, 0, buffer);
  copyResult = api.configureBufferTracing(sessionContext, FP_RPS_BUFFER_TRACING_MEMORY_COPY, nullptr, 0, buffer);
  hipResult = api.configureBufferTracing(sessionContext, FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API, nullptr, 0, buffer);
  deviceMap();
  // Kernel symbols register as code objects load, from now on.
  if (codeObjectResult == FP_RPS_STATUS_SUCCESS) codeObjectResult = api.startContext(codeObjectContext);
  return 0;
}

void toolFinalize(void*) {}

fp_rps_tool_configure_result* toolConfigure(uint32_t, const char*, uint32_t, fp_rps_client_id* client) {
  static fp_rps_tool_configure_result result{sizeof(fp_rps_tool_configure_result), toolInitialize, toolFinalize,
                                             nullptr};
  if (client) client->name = "flagos-profiler";
  return &result;
}

class RocprofilerDeviceTracer final : public VendorTracer {
 public:
  const char* name() const override { return "rocprofiler-sdk"; }
  uint32_t fpcVendor() const override { return flagprof::rocprofiler::Records::kId; }
  uint32_t apiVersion() const override { return version; }
  void* anchorSymbol() const override { return reinterpret_cast<void*>(api.forceConfigure); }
  bool armed() const override {
    return configureResult_ == FP_RPS_STATUS_SUCCESS && configured && createResult == FP_RPS_STATUS_SUCCESS &&
           bufferResult == FP_RPS_STATUS_SUCCESS && kernelResult == FP_RPS_STATUS_SUCCESS;
  }
  std::string notArmedReason() const override {
    if (configureResult_ != FP_RPS_STATUS_SUCCESS)
      return "rocprofiler_force_configure failed with " + std::to_string(configureResult_) +
             " (too late: the ROCm runtime initialised before the agent loaded)";
    if (!configured) return "rocprofiler_force_configure returned without initialising the tool";
    if (createResult != FP_RPS_STATUS_SUCCESS) return "rocprofiler_create_context failed with " + std::to_string(createResult);
    if (bufferResult != FP_RPS_STATUS_SUCCESS) return "rocprofiler_create_buffer failed with " + std::to_string(bufferResult);
    return "rocprofiler_configure_buffer_tracing_service(KERNEL_DISPATCH) failed with " + std::to_string(kernelResult);
  }

  void armAtLoad() override {
    State& s = state();
    uint32_t major = 0, minor = 0, patch = 0;
    if (api.getVersion && api.getVersion(&major, &minor, &patch) == FP_RPS_STATUS_SUCCESS)
      version = major * 10000 + minor * 100 + patch;
    // One number, as the other vendors' bound lines print theirs: 601 is 0.6.1.
    diagnostic("Q0", true, false, "[flagos] bound rocprofiler_force_configure -> %s (rocprofiler-sdk version %u)",
               s.libraryPath.c_str(), version);
    configureResult_ = api.forceConfigure(toolConfigure);
    diagnostic("Q1", true, false,
               "[flagos] rocprofiler_force_configure returned %d; contexts %d, buffer %d, code objects %d, "
               "KERNEL_DISPATCH %d, MEMORY_COPY %d, HIP_RUNTIME_API %d",
               configureResult_, createResult, bufferResult, codeObjectResult, kernelResult, copyResult, hipResult);
  }

  void clockPair(uint64_t& vendorNs, uint64_t& realtime) override { clockPairNow(api.getTimestamp, vendorNs, realtime); }

  int startSession(std::string& error) override {
    State& s = state();
    calibrate(1, api.getTimestamp, "Q6", "rocprofiler-sdk ");
    // Leftovers from before the session go out first, uncopied.
    int flush = api.flushBuffer(buffer);
    sessionFrame(1);
    s.copying.store(true, std::memory_order_release);
    int start = api.startContext(sessionContext);
    diagnostic("Q4", true, false,
               "[flagos] rocprofiler-sdk setup results: CONTEXT=%d, BUFFER=%d, CODE_OBJECT=%d, KERNEL_DISPATCH=%d, "
               "MEMORY_COPY=%d, HIP_RUNTIME_API=%d, START=%d, FLUSH=%d",
               createResult, bufferResult, codeObjectResult, kernelResult, copyResult, hipResult, start, flush);
    if (start != FP_RPS_STATUS_SUCCESS) {
      s.copying.store(false, std::memory_order_release);
      error = "rocprofiler_start_context failed with " + std::to_string(start);
      return -1;
    }
    if (hipResult != FP_RPS_STATUS_SUCCESS || copyResult != FP_RPS_STATUS_SUCCESS)
      diagnostic("Q12", false, true,
                 "[flagos] rocprofiler-sdk %s tracing is unavailable (status %d): the capture has no %s",
                 hipResult != FP_RPS_STATUS_SUCCESS ? "HIP runtime API" : "memory copy",
                 hipResult != FP_RPS_STATUS_SUCCESS ? hipResult : copyResult,
                 hipResult != FP_RPS_STATUS_SUCCESS ? "HIP API calls" : "memory copies");
    diagnostic("Q2", true, false, "[flagos] rocprofiler-sdk session started");
    return 0;
  }

  void stopSession() override {
    State& s = state();
    sessionFrame(2);
    // Stopped first: records of work already enqueued still arrive (the SDK keeps the contexts a dispatch was
    // enqueued under), and the flush delivers them.
    api.stopContext(sessionContext);
    int flush = api.flushBuffer(buffer);
    s.copying.store(false, std::memory_order_release);
    if (flush != FP_RPS_STATUS_SUCCESS)
      diagnostic("Q5", false, true, "[flagos] rocprofiler_flush_buffer returned %d: the last records may be missing",
                 flush);
    calibrate(2, api.getTimestamp, "Q6", "rocprofiler-sdk ");
    // Only now, with every buffer delivered, ask the library for names.
    if (api.operationName)
      emitNames(FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API, seenApi, [](uint32_t op) -> const char* {
        const char* name = nullptr;
        uint64_t length = 0;
        return api.operationName(FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API, int32_t(op), &name, &length) ==
                       FP_RPS_STATUS_SUCCESS
                   ? name
                   : nullptr;
      });
    diagnostic("Q3", true, false, "[flagos] rocprofiler-sdk session stopped");
  }

  int pushExternal(uint64_t id, std::string& error) override {
    if (!api.pushExternal) {
      error = "the vendor library has no rocprofiler_push_external_correlation_id";
      return -1;
    }
    fp_rps_user_data value;
    value.value = id + 1;  // 0 is the SDK's "no external id", and a valid torch id
    int r = api.pushExternal(sessionContext, threadId(), value);
    if (r != FP_RPS_STATUS_SUCCESS) error = "rocprofiler_push_external_correlation_id failed with " + std::to_string(r);
    return r == FP_RPS_STATUS_SUCCESS ? 0 : -1;
  }

  int popExternal(std::string& error) override {
    if (!api.popExternal) {
      error = "the vendor library has no rocprofiler_pop_external_correlation_id";
      return -1;
    }
    fp_rps_user_data last;
    last.value = 0;
    int r = api.popExternal(sessionContext, threadId(), &last);
    if (r != FP_RPS_STATUS_SUCCESS) error = "rocprofiler_pop_external_correlation_id failed with " + std::to_string(r);
    return r == FP_RPS_STATUS_SUCCESS ? 0 : -1;
  }

 private:
  int configureResult_ = -1;
};

}  // namespace

std::unique_ptr<VendorTracer> bind_rocprofiler(void* lib, std::string& missing) {
  RocprofilerApi a;
  bind(lib, "rocprofiler_get_version", a.getVersion);
  bind(lib, "rocprofiler_get_thread_id", a.getThreadId);
  bind(lib, "rocprofiler_push_external_correlation_id", a.pushExternal);
  bind(lib, "rocprofiler_pop_external_correlation_id", a.popExternal);
  bind(lib, "rocprofiler_query_buffer_tracing_kind_operation_name", a.operationName);
  bind(lib, "rocprofiler_query_available_agents", a.queryAgents);
  const bool required = bind(lib, "rocprofiler_force_configure", a.forceConfigure) &
                        bind(lib, "rocprofiler_create_context", a.createContext) &
                        bind(lib, "rocprofiler_start_context", a.startContext) &
                        bind(lib, "rocprofiler_stop_context", a.stopContext) &
                        bind(lib, "rocprofiler_create_buffer", a.createBuffer) &
                        bind(lib, "rocprofiler_flush_buffer", a.flushBuffer) &
                        bind(lib, "rocprofiler_configure_buffer_tracing_service", a.configureBufferTracing) &
                        bind(lib, "rocprofiler_configure_callback_tracing_service", a.configureCallbackTracing) &
                        bind(lib, "rocprofiler_get_timestamp", a.getTimestamp);
  if (!required) {
    missing = "required rocprofiler-sdk symbols are missing (rocprofiler_force_configure, rocprofiler_create_context, "
              "rocprofiler_start_context, rocprofiler_stop_context, rocprofiler_create_buffer, "
              "rocprofiler_flush_buffer, rocprofiler_configure_buffer_tracing_service, "
              "rocprofiler_configure_callback_tracing_service, rocprofiler_get_timestamp)";
    return nullptr;
  }
  api = a;
  return std::make_unique<RocprofilerDeviceTracer>();
}

}  // namespace flagprof::agent
