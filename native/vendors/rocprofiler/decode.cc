// rocprofiler-sdk buffer-tracing records -> ParsedRecords. Every rocprofiler-sdk layout fact is in mirror.h and
// this file.
#include "decode.h"

#include "mirror.h"

#if __has_include(<rocprofiler-sdk/rocprofiler.h>)
#include <rocprofiler-sdk/rocprofiler.h>
// Wherever the vendor's header is installed, the mirror must match it: a drift would decode garbage silently.
static_assert(offsetof(fp_rps_kernel_dispatch_record, correlation_id) ==
                      offsetof(rocprofiler_buffer_tracing_kernel_dispatch_record_t, correlation_id) &&
                  offsetof(fp_rps_kernel_dispatch_record, thread_id) ==
                      offsetof(rocprofiler_buffer_tracing_kernel_dispatch_record_t, thread_id) &&
                  offsetof(fp_rps_kernel_dispatch_record, start_timestamp) ==
                      offsetof(rocprofiler_buffer_tracing_kernel_dispatch_record_t, start_timestamp) &&
                  offsetof(fp_rps_kernel_dispatch_record, end_timestamp) ==
                      offsetof(rocprofiler_buffer_tracing_kernel_dispatch_record_t, end_timestamp) &&
                  offsetof(fp_rps_kernel_dispatch_record, dispatch_info) ==
                      offsetof(rocprofiler_buffer_tracing_kernel_dispatch_record_t, dispatch_info),
              "kernel_dispatch_record_t moved");
static_assert(sizeof(fp_rps_kernel_dispatch_info) == sizeof(rocprofiler_kernel_dispatch_info_t) &&
                  offsetof(fp_rps_kernel_dispatch_info, agent_id) == offsetof(rocprofiler_kernel_dispatch_info_t, agent_id) &&
                  offsetof(fp_rps_kernel_dispatch_info, queue_id) == offsetof(rocprofiler_kernel_dispatch_info_t, queue_id) &&
                  offsetof(fp_rps_kernel_dispatch_info, kernel_id) == offsetof(rocprofiler_kernel_dispatch_info_t, kernel_id) &&
                  offsetof(fp_rps_kernel_dispatch_info, workgroup_size) ==
                      offsetof(rocprofiler_kernel_dispatch_info_t, workgroup_size) &&
                  offsetof(fp_rps_kernel_dispatch_info, grid_size) == offsetof(rocprofiler_kernel_dispatch_info_t, grid_size),
              "kernel_dispatch_info_t moved");
static_assert(offsetof(fp_rps_memory_copy_record, thread_id) ==
                      offsetof(rocprofiler_buffer_tracing_memory_copy_record_t, thread_id) &&
                  offsetof(fp_rps_memory_copy_record, start_timestamp) ==
                      offsetof(rocprofiler_buffer_tracing_memory_copy_record_t, start_timestamp) &&
                  offsetof(fp_rps_memory_copy_record, dst_agent_id) ==
                      offsetof(rocprofiler_buffer_tracing_memory_copy_record_t, dst_agent_id) &&
                  offsetof(fp_rps_memory_copy_record, bytes) == offsetof(rocprofiler_buffer_tracing_memory_copy_record_t, bytes),
              "memory_copy_record_t moved");
// The HIP API record has the layout of whichever correlation id the installed SDK has.
static_assert(sizeof(rocprofiler_buffer_tracing_hip_api_record_t) ==
                  (sizeof(rocprofiler_correlation_id_t) == 24 ? sizeof(fp_rps_hip_api_record) : sizeof(fp_rps_hip_api_record_v0)),
              "hip_api_record_t size");
static_assert(offsetof(rocprofiler_buffer_tracing_hip_api_record_t, thread_id) ==
                  (sizeof(rocprofiler_correlation_id_t) == 24 ? offsetof(fp_rps_hip_api_record, thread_id)
                                                              : offsetof(fp_rps_hip_api_record_v0, thread_id)),
              "hip_api_record_t.thread_id moved");
static_assert(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API == FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API &&
                  ROCPROFILER_BUFFER_TRACING_MEMORY_COPY == FP_RPS_BUFFER_TRACING_MEMORY_COPY &&
                  ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH == FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH &&
                  ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT == FP_RPS_CALLBACK_TRACING_CODE_OBJECT &&
                  ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER == FP_RPS_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER,
              "tracing kind numbers");
static_assert(ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE == FP_RPS_MEMORY_COPY_HOST_TO_DEVICE &&
                  ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST == FP_RPS_MEMORY_COPY_DEVICE_TO_HOST &&
                  ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE == FP_RPS_MEMORY_COPY_DEVICE_TO_DEVICE,
              "memory copy operation numbers");
static_assert(sizeof(fp_rps_record_header) == sizeof(rocprofiler_record_header_t) &&
                  offsetof(fp_rps_record_header, payload) == offsetof(rocprofiler_record_header_t, payload),
              "record_header_t layout");
static_assert(sizeof(rocprofiler_callback_tracing_record_t) ==
                  (sizeof(rocprofiler_correlation_id_t) == 24 ? sizeof(fp_rps_callback_record) : sizeof(fp_rps_callback_record_v0)),
              "callback_tracing_record_t size");
static_assert(offsetof(fp_rps_kernel_symbol_data, kernel_name) ==
                  offsetof(rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t, kernel_name),
              "kernel_symbol_register_data_t.kernel_name moved");
#endif

namespace flagprof::rocprofiler {

namespace {

// Copy directions, indexed by ParsedRecord::copyKind (the SDK's operation numbers).
const char* const kCopyNames[] = {"Memcpy", "Memcpy HtoH (Host -> Host)", "Memcpy HtoD (Host -> Device)",
                                  "Memcpy DtoH (Device -> Host)", "Memcpy DtoD (Device -> Device)"};
const char* const kCopyLabels[] = {"Unknown", "HtoH", "HtoD", "DtoH", "DtoD"};
constexpr uint8_t kCopyKindCount = sizeof kCopyNames / sizeof kCopyNames[0];

std::string triple(const int32_t v[3]) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
}

}  // namespace

RecordClass parseRecord(const uint8_t* rec, size_t size, ParsedRecord& r) {
  if (size < 16) return RecordClass::Malformed;
  // The record's own size field, not the frame's, says which fields it has; a record claiming more than was
  // copied is cut short.
  const uint64_t declared = loadAt<uint64_t>(rec, offsetof(fp_rps_kernel_dispatch_record, size));
  const uint32_t kind = loadAt<uint32_t>(rec, offsetof(fp_rps_kernel_dispatch_record, kind));
  const uint32_t op = loadAt<uint32_t>(rec, offsetof(fp_rps_kernel_dispatch_record, operation));
  if (declared > size) return RecordClass::Malformed;
  r.correlation = r.device = r.context = r.stream = r.process = r.thread = r.cbid = r.returnValue = 0;
  r.grid[0] = r.grid[1] = r.grid[2] = r.block[0] = r.block[1] = r.block[2] = 0;
  r.bytes = 0;
  r.copyKind = 0;
  r.memoryKind = 0;
  switch (kind) {
    case FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH: {
      if (declared < sizeof(fp_rps_kernel_dispatch_record)) return RecordClass::Malformed;
      r.kind = EventKind::Kernel;
      setWideCorrelation(r, loadAt<uint64_t>(rec, offsetof(fp_rps_kernel_dispatch_record, correlation_id.internal)));
      r.thread = uint32_t(loadAt<uint64_t>(rec, offsetof(fp_rps_kernel_dispatch_record, thread_id)));
      r.start = loadAt<uint64_t>(rec, offsetof(fp_rps_kernel_dispatch_record, start_timestamp));
      r.end = loadAt<uint64_t>(rec, offsetof(fp_rps_kernel_dispatch_record, end_timestamp));
      constexpr size_t info = offsetof(fp_rps_kernel_dispatch_record, dispatch_info);
      // Agent handles are the node id plus a per-process offset (small numbers): the device-index frame maps them.
      r.device = uint32_t(loadAt<uint64_t>(rec, info + offsetof(fp_rps_kernel_dispatch_info, agent_id)));
      r.stream = uint32_t(loadAt<uint64_t>(rec, info + offsetof(fp_rps_kernel_dispatch_info, queue_id)));
      for (int i = 0; i < 3; ++i) {
        r.grid[i] = int32_t(loadAt<uint32_t>(rec, info + offsetof(fp_rps_kernel_dispatch_info, grid_size) + 4 * i));
        r.block[i] = int32_t(loadAt<uint32_t>(rec, info + offsetof(fp_rps_kernel_dispatch_info, workgroup_size) + 4 * i));
      }
      r.staticSharedMemory = int32_t(loadAt<uint32_t>(rec, info + offsetof(fp_rps_kernel_dispatch_info, group_segment_size)));
      return checkTiming(r);
    }
    case FP_RPS_BUFFER_TRACING_MEMORY_COPY: {
      if (declared < sizeof(fp_rps_memory_copy_record)) return RecordClass::Malformed;
      r.kind = EventKind::Memcpy;
      setWideCorrelation(r, loadAt<uint64_t>(rec, offsetof(fp_rps_memory_copy_record, correlation_id.internal)));
      r.thread = uint32_t(loadAt<uint64_t>(rec, offsetof(fp_rps_memory_copy_record, thread_id)));
      r.start = loadAt<uint64_t>(rec, offsetof(fp_rps_memory_copy_record, start_timestamp));
      r.end = loadAt<uint64_t>(rec, offsetof(fp_rps_memory_copy_record, end_timestamp));
      r.bytes = loadAt<uint64_t>(rec, offsetof(fp_rps_memory_copy_record, bytes));
      r.copyKind = op < kCopyKindCount ? uint8_t(op) : 0;
      // The device a copy belongs to: the GPU end of it (the source of a device-to-host copy).
      const size_t agent = op == FP_RPS_MEMORY_COPY_DEVICE_TO_HOST ? offsetof(fp_rps_memory_copy_record, src_agent_id)
                                                                   : offsetof(fp_rps_memory_copy_record, dst_agent_id);
      r.device = uint32_t(loadAt<uint64_t>(rec, agent));
      return checkTiming(r);
    }
    case FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API: {
      // 56 bytes before the correlation id grew `ancestor`, 64 after: the timestamps follow it.
      const bool ancestor = declared >= sizeof(fp_rps_hip_api_record);
      if (declared < sizeof(fp_rps_hip_api_record_v0)) return RecordClass::Malformed;
      r.kind = EventKind::Runtime;
      r.cbid = op;
      setWideCorrelation(r, loadAt<uint64_t>(rec, offsetof(fp_rps_hip_api_record, correlation_id.internal)));
      r.start = loadAt<uint64_t>(rec, ancestor ? offsetof(fp_rps_hip_api_record, start_timestamp)
                                               : offsetof(fp_rps_hip_api_record_v0, start_timestamp));
      r.end = loadAt<uint64_t>(rec, ancestor ? offsetof(fp_rps_hip_api_record, end_timestamp)
                                             : offsetof(fp_rps_hip_api_record_v0, end_timestamp));
      r.thread = uint32_t(loadAt<uint64_t>(rec, ancestor ? offsetof(fp_rps_hip_api_record, thread_id)
                                                         : offsetof(fp_rps_hip_api_record_v0, thread_id)));
      return checkTiming(r);
    }
    case FP_RPS_FLAGPROF_EXTERNAL_KIND:
      if (declared < sizeof(fp_rps_external_record)) return RecordClass::Malformed;
      setWideCorrelation(r, loadAt<uint64_t>(rec, offsetof(fp_rps_external_record, internal)));
      r.externalId = loadAt<uint64_t>(rec, offsetof(fp_rps_external_record, external));
      r.externalKind = 0;
      return RecordClass::ExternalCorrelation;
    default:
      return RecordClass::Ignored;
  }
}

std::string memcpyName(const ParsedRecord& r) { return kCopyNames[r.copyKind < kCopyKindCount ? r.copyKind : 0]; }

std::string memsetName(const ParsedRecord&) { return "Memset (Device)"; }

void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::map<std::string, std::string>& m) {
  if (externalId) m["External id"] = std::to_string(*externalId);
  m["correlation"] = std::to_string(r.correlation);
  switch (r.kind) {
    case EventKind::Kernel:
      m["device"] = std::to_string(r.device);
      m["stream"] = std::to_string(r.stream);
      m["kind"] = "Dispatch Kernel";
      m["grid"] = triple(r.grid);
      m["block"] = triple(r.block);
      break;
    case EventKind::Memcpy:
    case EventKind::Memset:
      appendTransferMetadata(r, m);
      m["kind"] = kCopyLabels[r.copyKind < kCopyKindCount ? r.copyKind : 0];
      break;
    case EventKind::Runtime:
    case EventKind::Driver:
      m["cid"] = std::to_string(r.cbid);
      m["cbid"] = m["cid"];  // as ROCtracer's: Kineto's key and the contract's (roctracer/decode.cc)
      break;
  }
}

void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string& out) {
  // A handful of fields per event: the map keeps the two forms identical by construction.
  std::map<std::string, std::string> m;
  appendMetadata(r, externalId, m);
  flagprof::appendMetadataJson(out, m);
}

}  // namespace flagprof::rocprofiler
