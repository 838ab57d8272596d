// rocprofiler-sdk (AMD ROCm, ROCtracer's successor) decode side: pure functions from raw buffer-tracing record
// bytes to the ParsedRecord every vendor produces, plus the names and metadata of its events. Every
// rocprofiler-sdk layout fact is in mirror.h and decode.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "../../tracer/device_tracer.h"
#include "../../tracer/parsed_record.h"
#include "../roctracer/decode.h"

namespace flagprof::rocprofiler {

using flagprof::DecodeContext;
using flagprof::DeviceProperties;
using flagprof::EventContext;

// Reads one record, as the agent copied it (the SDK's payload bytes, `size` first). KERNEL_DISPATCH becomes a
// kernel (device = the agent handle, mapped to the process's GPU index by the capture's device-index names frame;
// stream = queue id), MEMORY_COPY a memcpy (direction from the operation), HIP_RUNTIME_API a Runtime event with
// the HIP API id as its cbid; the agent's own external record (FP_RPS_FLAGPROF_EXTERNAL_KIND) an external
// correlation. Every other kind is Ignored. Correlation ids are 64-bit (setWideCorrelation).
RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out);

// HIP API ids are HIP's under both AMD APIs: an id no names frame resolved gets ROCtracer's label ("hipRuntime",
// the numeric id kept in the metadata as "cid").
using roctracer::kGenericRuntimeName;

// "Memcpy HtoD (Host -> Device)": as Kineto names ROCm copies. rocprofiler-sdk reports no fills (a hipMemset is
// a blit kernel dispatch); memsetName only labels what no record produces.
std::string memcpyName(const ParsedRecord& r);
std::string memsetName(const ParsedRecord& r);

// The runtime call's name: what the agent resolved with rocprofiler_query_buffer_tracing_kind_operation_name
// after the final flush, or the label (as ROCtracer's).
using roctracer::runtimeName;

// The metadata of an event under the names Kineto's ROCm traces use ("device", "stream", "correlation",
// "External id", "kind", "grid", "block", "bytes", "memory bandwidth (GB/s)"; runtime calls "cid").
void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::map<std::string, std::string>& out);
// The same as a JSON object, byte for byte what appendMetadata followed by appendMetadataJson(map) print.
void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string& out);

// What the capture decoder needs from rocprofiler-sdk: a kernel record's string is its kernel name (the agent
// attaches the name the code-object service registered for its kernel id), as for CUPTI and ROCtracer; API
// calls carry a HIP API id resolved by a names frame written after the final flush; correlation ids are 64-bit.
struct Records {
  static constexpr uint32_t kId = 7;
  static constexpr bool kNamesFromStrings = false;
  static constexpr bool kKernelType = false;
  static constexpr bool kCoalesceRuntime = false;  // one HIP API record per call
  static constexpr bool kWideCorrelation = true;
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) { return parseRecord(rec, size, r); }
  static bool parseDevice(const uint8_t*, size_t, DeviceProperties&) { return false; }
  static std::string memcpyName(const ParsedRecord& r) { return rocprofiler::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return rocprofiler::memsetName(r); }
  static std::string callName(const ParsedRecord& r, const DecodeContext& c) { return runtimeName(r.cbid, c.runtimeNames); }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext&,
                       std::map<std::string, std::string>& out) {
    appendMetadata(r, ext, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext&, std::string& out) {
    appendMetadataJson(r, ext, out);
  }
};

}  // namespace flagprof::rocprofiler
