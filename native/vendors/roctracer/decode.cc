// ROCtracer activity records -> ParsedRecords. Every ROCtracer layout fact is in roctracer_mirror.h and this file.
#include "decode.h"

#include "mirror.h"

#include <algorithm>
#include <climits>

#if __has_include(<roctracer.h>)
#include <roctracer.h>
// Wherever the vendor's header is installed, the mirror must match it: a drift would decode garbage silently.
static_assert(sizeof(fp_roc_record) == sizeof(activity_record_t), "activity_record_t size");
static_assert(offsetof(fp_roc_record, op) == offsetof(activity_record_t, op), "activity_record_t.op moved");
static_assert(offsetof(fp_roc_record, correlation_id) == offsetof(activity_record_t, correlation_id),
              "activity_record_t.correlation_id moved");
static_assert(offsetof(fp_roc_record, begin_ns) == offsetof(activity_record_t, begin_ns), "begin_ns moved");
static_assert(offsetof(fp_roc_record, end_ns) == offsetof(activity_record_t, end_ns), "end_ns moved");
static_assert(FP_ROC_OFF_DEVICE == offsetof(activity_record_t, device_id), "device_id moved");
static_assert(FP_ROC_OFF_QUEUE == offsetof(activity_record_t, queue_id), "queue_id moved");
static_assert(FP_ROC_OFF_PROCESS == offsetof(activity_record_t, process_id), "process_id moved");
static_assert(FP_ROC_OFF_THREAD == offsetof(activity_record_t, thread_id), "thread_id moved");
static_assert(FP_ROC_OFF_EXTERNAL == offsetof(activity_record_t, external_id), "external_id moved");
static_assert(FP_ROC_OFF_BYTES == offsetof(activity_record_t, bytes) &&
                  FP_ROC_OFF_BYTES == offsetof(activity_record_t, kernel_name),
              "bytes / kernel_name moved");
static_assert(ACTIVITY_DOMAIN_HIP_OPS == FP_ROC_DOMAIN_HIP_OPS && ACTIVITY_DOMAIN_HIP_API == FP_ROC_DOMAIN_HIP_API &&
                  ACTIVITY_DOMAIN_EXT_API == FP_ROC_DOMAIN_EXT_API,
              "activity domain numbers");
static_assert(sizeof(fp_roc_properties) == sizeof(roctracer_properties_t) &&
                  offsetof(fp_roc_properties, buffer_callback_fun) ==
                      offsetof(roctracer_properties_t, buffer_callback_fun),
              "roctracer_properties_t layout");
#endif

namespace flagprof::roctracer {

namespace {

// Copy directions, indexed by ParsedRecord::copyKind.
enum CopyKind : uint8_t { CopyUnknown, CopyHtoD, CopyDtoH, CopyDtoD, CopyKindCount };
const char* const kCopyNames[CopyKindCount] = {"Memcpy", "Memcpy HtoD (Host -> Device)",
                                               "Memcpy DtoH (Device -> Host)", "Memcpy DtoD (Device -> Device)"};
const char* const kCopyLabels[CopyKindCount] = {"Unknown", "HtoD", "DtoH", "DtoD"};

uint8_t copyKindOf(uint32_t command) {
  switch (command) {
    case FP_ROC_KIND_HTOD:
    case FP_ROC_KIND_HTOD_2D: return CopyHtoD;
    case FP_ROC_KIND_DTOH:
    case FP_ROC_KIND_DTOH_2D: return CopyDtoH;
    case FP_ROC_KIND_DTOD:
    case FP_ROC_KIND_DTOD_2D: return CopyDtoD;
    default: return CopyUnknown;
  }
}

// The launch dims the agent appended to a dispatch record (mirror.h), else none: grid[0] stays 0, which no launch
// has, and the metadata leaves grid and block out.
void readLaunchDims(const uint8_t* rec, size_t size, ParsedRecord& r) {
  r.grid[0] = r.grid[1] = r.grid[2] = r.block[0] = r.block[1] = r.block[2] = 0;
  r.dynamicSharedMemory = 0;
  constexpr size_t kAt = sizeof(fp_roc_record);
  if (size < kAt + sizeof(fp_roc_launch_dims) ||
      loadAt<uint32_t>(rec, kAt + offsetof(fp_roc_launch_dims, magic)) != FP_ROC_LAUNCH_MAGIC)
    return;
  auto dim = [&](size_t offset) { return int32_t(std::min<uint32_t>(loadAt<uint32_t>(rec, kAt + offset), INT32_MAX)); };
  for (size_t i = 0; i < 3; ++i) {
    r.grid[i] = dim(offsetof(fp_roc_launch_dims, grid) + 4 * i);
    r.block[i] = dim(offsetof(fp_roc_launch_dims, block) + 4 * i);
  }
  r.dynamicSharedMemory = dim(offsetof(fp_roc_launch_dims, shared_memory));
}

}  // namespace

RecordClass parseRecord(const uint8_t* rec, size_t size, ParsedRecord& r) {
  if (size < sizeof(fp_roc_record)) return RecordClass::Malformed;
  const uint32_t domain = loadAt<uint32_t>(rec, offsetof(fp_roc_record, domain));
  const uint32_t kind = loadAt<uint32_t>(rec, offsetof(fp_roc_record, kind));
  const uint32_t op = loadAt<uint32_t>(rec, offsetof(fp_roc_record, op));
  r.correlation = r.device = r.context = r.stream = r.process = r.thread = r.cbid = r.returnValue = 0;
  r.start = loadAt<uint64_t>(rec, offsetof(fp_roc_record, begin_ns));
  r.end = loadAt<uint64_t>(rec, offsetof(fp_roc_record, end_ns));
  setWideCorrelation(r, loadAt<uint64_t>(rec, offsetof(fp_roc_record, correlation_id)));
  switch (domain) {
    case FP_ROC_DOMAIN_HIP_OPS: {
      if (op == FP_ROC_HIP_OP_DISPATCH) {
        r.kind = EventKind::Kernel;
        readLaunchDims(rec, size, r);
      } else if (op == FP_ROC_HIP_OP_COPY) {
        r.kind = kind == FP_ROC_KIND_FILL ? EventKind::Memset : EventKind::Memcpy;
        r.bytes = loadAt<uint64_t>(rec, FP_ROC_OFF_BYTES);
        r.copyKind = copyKindOf(kind);
      } else {
        return RecordClass::Ignored;  // barriers and markers: Kineto leaves them out too
      }
      // The device id is a signed int; a negative one means the layout is off.
      const int32_t device = loadAt<int32_t>(rec, FP_ROC_OFF_DEVICE);
      if (device < 0) return RecordClass::Implausible;
      r.device = uint32_t(device);
      r.stream = uint32_t(loadAt<uint64_t>(rec, FP_ROC_OFF_QUEUE));
      r.memoryKind = uint16_t(kind);  // the command type, for the "kind" field
      return checkTiming(r);
    }
    case FP_ROC_DOMAIN_HIP_API:
      r.kind = EventKind::Runtime;
      r.cbid = op;
      r.process = loadAt<uint32_t>(rec, FP_ROC_OFF_PROCESS);
      r.thread = loadAt<uint32_t>(rec, FP_ROC_OFF_THREAD);
      return checkTiming(r);
    case FP_ROC_DOMAIN_EXT_API:
      if (op != FP_ROC_EXT_OP_EXTERN_ID) return RecordClass::Ignored;
      r.externalId = loadAt<uint64_t>(rec, FP_ROC_OFF_EXTERNAL);
      return RecordClass::ExternalCorrelation;
    default:
      return RecordClass::Ignored;
  }
}

size_t recordSize() { return sizeof(fp_roc_record); }

std::string memcpyName(const ParsedRecord& r) { return kCopyNames[r.copyKind < CopyKindCount ? r.copyKind : 0]; }

std::string memsetName(const ParsedRecord&) { return "Memset (Device)"; }

std::string runtimeName(uint32_t op, const std::unordered_map<uint32_t, std::string>& resolved) {
  auto it = resolved.find(op);
  return it != resolved.end() && !it->second.empty() ? it->second : std::string(kGenericRuntimeName);
}

void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::map<std::string, std::string>& m) {
  if (externalId) m["External id"] = std::to_string(*externalId);
  m["correlation"] = std::to_string(r.correlation);
  switch (r.kind) {
    case EventKind::Kernel:
      m["device"] = std::to_string(r.device);
      m["stream"] = std::to_string(r.stream);
      m["kind"] = r.memoryKind == FP_ROC_KIND_TASK ? "Dispatch Task" : "Dispatch Kernel";
      // From the launch's HIP API call, as CUPTI's kernels carry them; ROCtracer knows no register count, and of
      // the shared memory only the launch's dynamic bytes.
      if (r.grid[0] > 0) {
        m["shared memory"] = std::to_string(r.dynamicSharedMemory);
        auto triple = [](const int32_t v[3]) {
          return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
        };
        m["grid"] = triple(r.grid);
        m["block"] = triple(r.block);
      }
      break;
    case EventKind::Memcpy:
    case EventKind::Memset: {
      appendTransferMetadata(r, m);
      m["kind"] = r.kind == EventKind::Memset ? "Fill Buffer" : kCopyLabels[r.copyKind < CopyKindCount ? r.copyKind : 0];
      break;
    }
    case EventKind::Runtime:
    case EventKind::Driver:
      // The HIP API id under both keys: "cid" as Kineto's ROCm traces name it, "cbid" as torch_fl's ROCtracer
      // tracer stamps it and the DCU row of the cross-backend contract asserts it (seed 000).
      m["cid"] = std::to_string(r.cbid);
      m["cbid"] = m["cid"];
      break;
  }
}

void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string& out) {
  // A handful of fields per event: the map keeps the two forms identical by construction.
  std::map<std::string, std::string> m;
  appendMetadata(r, externalId, m);
  flagprof::appendMetadataJson(out, m);
}

}  // namespace flagprof::roctracer
