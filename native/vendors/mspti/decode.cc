// MSPTI activity records -> DeviceEvents. Every MSPTI layout fact is in mspti_mirror.h and this file.
#include "decode.h"

#include <charconv>
#include <cstring>
#include <limits>

#include "mirror.h"

#if __has_include(<mspti_activity.h>)
#include <mspti_activity.h>
// Wherever the vendor's header is installed, the mirror must match it: a drift would decode garbage silently.
#define FP_SAME_MSPTI_OFFSET(mirror, real, field) \
  static_assert(offsetof(mirror, field) == offsetof(real, field), #real "." #field " moved")
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, start);
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, end);
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, ds);
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, correlationId);
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, type);
FP_SAME_MSPTI_OFFSET(fp_mspti_kernel, msptiActivityKernel, name);
static_assert(sizeof(fp_mspti_kernel) == sizeof(msptiActivityKernel), "msptiActivityKernel size");
FP_SAME_MSPTI_OFFSET(fp_mspti_api, msptiActivityApi, start);
FP_SAME_MSPTI_OFFSET(fp_mspti_api, msptiActivityApi, pt);
FP_SAME_MSPTI_OFFSET(fp_mspti_api, msptiActivityApi, correlationId);
FP_SAME_MSPTI_OFFSET(fp_mspti_api, msptiActivityApi, name);
static_assert(sizeof(fp_mspti_api) == sizeof(msptiActivityApi), "msptiActivityApi size");
FP_SAME_MSPTI_OFFSET(fp_mspti_memcpy, msptiActivityMemcpy, copyKind);
FP_SAME_MSPTI_OFFSET(fp_mspti_memcpy, msptiActivityMemcpy, bytes);
FP_SAME_MSPTI_OFFSET(fp_mspti_memcpy, msptiActivityMemcpy, deviceId);
FP_SAME_MSPTI_OFFSET(fp_mspti_memcpy, msptiActivityMemcpy, correlationId);
FP_SAME_MSPTI_OFFSET(fp_mspti_memcpy, msptiActivityMemcpy, isAsync);
static_assert(sizeof(fp_mspti_memcpy) == sizeof(msptiActivityMemcpy), "msptiActivityMemcpy size");
FP_SAME_MSPTI_OFFSET(fp_mspti_memset, msptiActivityMemset, value);
FP_SAME_MSPTI_OFFSET(fp_mspti_memset, msptiActivityMemset, deviceId);
FP_SAME_MSPTI_OFFSET(fp_mspti_memset, msptiActivityMemset, correlationId);
FP_SAME_MSPTI_OFFSET(fp_mspti_memset, msptiActivityMemset, isAsync);
static_assert(sizeof(fp_mspti_memset) == sizeof(msptiActivityMemset), "msptiActivityMemset size");
FP_SAME_MSPTI_OFFSET(fp_mspti_external_correlation, msptiActivityExternalCorrelation, externalId);
FP_SAME_MSPTI_OFFSET(fp_mspti_external_correlation, msptiActivityExternalCorrelation, correlationId);
static_assert(MSPTI_ACTIVITY_KIND_KERNEL == FP_MSPTI_KIND_KERNEL && MSPTI_ACTIVITY_KIND_API == FP_MSPTI_KIND_API &&
                  MSPTI_ACTIVITY_KIND_MEMSET == FP_MSPTI_KIND_MEMSET && MSPTI_ACTIVITY_KIND_MEMCPY == FP_MSPTI_KIND_MEMCPY &&
                  MSPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION == FP_MSPTI_KIND_EXTERNAL_CORRELATION,
              "MSPTI activity kind numbers");
static_assert(MSPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 == FP_MSPTI_EXTERNAL_KIND_CUSTOM0, "CUSTOM0");
#endif

namespace flagprof::mspti {

namespace {

#define FP_MSPTI_LOAD(rec, type, field) loadAt<decltype(type::field)>(rec, offsetof(type, field))

const char* const kCopyKinds[FP_MSPTI_MEMCPY_KIND_COUNT] = {"Unknown", "HtoH", "HtoD", "DtoH", "DtoD", "Default"};

}  // namespace

RecordClass parseRecord(const uint8_t* rec, size_t size, ParsedRecord& r) {
  if (size < 8) return RecordClass::Malformed;
  const uint32_t kind = loadAt<uint32_t>(rec, 0);
  r.start = r.end = 0;
  r.correlation = r.device = r.context = r.stream = r.process = r.thread = r.cbid = r.returnValue = 0;
  r.correlationWrapped = false;
  switch (kind) {
    case FP_MSPTI_KIND_KERNEL: {
      if (size < sizeof(fp_mspti_kernel)) return RecordClass::Malformed;
      using K = fp_mspti_kernel;
      r.kind = EventKind::Kernel;
      r.start = FP_MSPTI_LOAD(rec, K, start);
      r.end = FP_MSPTI_LOAD(rec, K, end);
      r.device = loadAt<uint32_t>(rec, offsetof(K, ds));
      r.stream = loadAt<uint32_t>(rec, offsetof(K, ds) + 4);
      setWideCorrelation(r, FP_MSPTI_LOAD(rec, K, correlationId));
      return checkTiming(r);
    }
    case FP_MSPTI_KIND_API: {
      if (size < sizeof(fp_mspti_api)) return RecordClass::Malformed;
      using A = fp_mspti_api;
      r.kind = EventKind::Runtime;
      r.start = FP_MSPTI_LOAD(rec, A, start);
      r.end = FP_MSPTI_LOAD(rec, A, end);
      r.process = loadAt<uint32_t>(rec, offsetof(A, pt));
      r.thread = loadAt<uint32_t>(rec, offsetof(A, pt) + 4);
      setWideCorrelation(r, FP_MSPTI_LOAD(rec, A, correlationId));
      return checkTiming(r);
    }
    case FP_MSPTI_KIND_MEMCPY: {
      if (size < sizeof(fp_mspti_memcpy)) return RecordClass::Malformed;
      using M = fp_mspti_memcpy;
      r.kind = EventKind::Memcpy;
      const uint32_t copyKind = FP_MSPTI_LOAD(rec, M, copyKind);
      r.copyKind = uint8_t(copyKind < FP_MSPTI_MEMCPY_KIND_COUNT ? copyKind : 0);
      r.bytes = FP_MSPTI_LOAD(rec, M, bytes);
      r.start = FP_MSPTI_LOAD(rec, M, start);
      r.end = FP_MSPTI_LOAD(rec, M, end);
      r.device = FP_MSPTI_LOAD(rec, M, deviceId);
      r.stream = FP_MSPTI_LOAD(rec, M, streamId);
      setWideCorrelation(r, FP_MSPTI_LOAD(rec, M, correlationId));
      r.isAsync = FP_MSPTI_LOAD(rec, M, isAsync) ? 1 : 0;
      return checkTiming(r);
    }
    case FP_MSPTI_KIND_MEMSET: {
      if (size < sizeof(fp_mspti_memset)) return RecordClass::Malformed;
      using S = fp_mspti_memset;
      r.kind = EventKind::Memset;
      r.memsetValue = FP_MSPTI_LOAD(rec, S, value);
      r.bytes = FP_MSPTI_LOAD(rec, S, bytes);
      r.start = FP_MSPTI_LOAD(rec, S, start);
      r.end = FP_MSPTI_LOAD(rec, S, end);
      r.device = FP_MSPTI_LOAD(rec, S, deviceId);
      r.stream = FP_MSPTI_LOAD(rec, S, streamId);
      setWideCorrelation(r, FP_MSPTI_LOAD(rec, S, correlationId));
      r.isAsync = FP_MSPTI_LOAD(rec, S, isAsync) ? 1 : 0;
      return checkTiming(r);
    }
    case FP_MSPTI_KIND_EXTERNAL_CORRELATION: {
      if (size < sizeof(fp_mspti_external_correlation)) return RecordClass::Malformed;
      using E = fp_mspti_external_correlation;
      r.externalKind = FP_MSPTI_LOAD(rec, E, externalKind);
      r.externalId = FP_MSPTI_LOAD(rec, E, externalId);
      setWideCorrelation(r, FP_MSPTI_LOAD(rec, E, correlationId));
      // Only the custom kinds (CUSTOM0..CUSTOM2) are ever pushed; anything else means the layout is off.
      if (r.externalKind < FP_MSPTI_EXTERNAL_KIND_CUSTOM0 || r.externalKind > FP_MSPTI_EXTERNAL_KIND_CUSTOM0 + 2)
        return RecordClass::Implausible;
      return RecordClass::ExternalCorrelation;
    }
    default:
      return RecordClass::Ignored;
  }
}

size_t recordSize(uint32_t kind) {
  switch (kind) {
    case FP_MSPTI_KIND_KERNEL: return sizeof(fp_mspti_kernel);
    case FP_MSPTI_KIND_API: return sizeof(fp_mspti_api);
    case FP_MSPTI_KIND_MEMCPY: return sizeof(fp_mspti_memcpy);
    case FP_MSPTI_KIND_MEMSET: return sizeof(fp_mspti_memset);
    case FP_MSPTI_KIND_EXTERNAL_CORRELATION: return sizeof(fp_mspti_external_correlation);
    default: return 0;
  }
}

KernelStrings splitKernelStrings(std::string_view stored) {
  const size_t nul = stored.find('\0');
  if (nul == std::string_view::npos) return {stored, {}};
  return {stored.substr(0, nul), stored.substr(nul + 1)};
}

std::string joinKernelStrings(std::string_view name, std::string_view type) {
  std::string stored(name);
  stored.push_back('\0');
  stored.append(type);
  return stored;
}

std::string memcpyName(const ParsedRecord& r) {
  return std::string("Memcpy ") + kCopyKinds[r.copyKind < FP_MSPTI_MEMCPY_KIND_COUNT ? r.copyKind : 0];
}

std::string memsetName(const ParsedRecord&) { return "Memset"; }

void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::string_view kernelType,
                    std::map<std::string, std::string>& m) {
  if (externalId) m["External id"] = std::to_string(*externalId);
  m["correlation"] = std::to_string(r.correlation);
  switch (r.kind) {
    case EventKind::Kernel:
      m["device"] = std::to_string(r.device);
      m["stream"] = std::to_string(r.stream);
      if (!kernelType.empty()) m["Task Type"] = std::string(kernelType);  // quoted on output (not a JSON literal)
      break;
    case EventKind::Memcpy:
    case EventKind::Memset: {
      appendTransferMetadata(r, m);
      m["Async"] = r.isAsync ? "true" : "false";
      if (r.kind == EventKind::Memcpy) m["Copy Kind"] = kCopyKinds[r.copyKind < FP_MSPTI_MEMCPY_KIND_COUNT ? r.copyKind : 0];
      if (r.kind == EventKind::Memset) m["value"] = std::to_string(r.memsetValue);
      break;
    }
    case EventKind::Runtime:
    case EventKind::Driver:
      m["Thread Id"] = std::to_string(r.thread);
      break;
  }
}

void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string_view kernelType,
                        std::string& out) {
  // A handful of fields per event, and MSPTI captures are far smaller than the CUPTI ones the direct writer
  // was built for: the map keeps the two forms identical by construction.
  std::map<std::string, std::string> m;
  appendMetadata(r, externalId, kernelType, m);
  flagprof::appendMetadataJson(out, m);
}

}  // namespace flagprof::mspti
