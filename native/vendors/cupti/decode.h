// CUPTI decode side: pure functions from raw activity-record bytes (plus the strings the record pointed to,
// copied by the agent while the buffer was alive) to DeviceEvents. Record versions are recognised by size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../../tracer/device_tracer.h"
#include "../../tracer/parsed_record.h"

namespace flagprof::cupti {

using flagprof::ParsedRecord;
using flagprof::RecordClass;

using flagprof::DecodeContext;
using flagprof::DeviceProperties;
using flagprof::EventContext;

// Reads one record. `size` is the record's size as the agent copied it. The common fields (kind, times, ids,
// process, thread, cbid) are always written; the fields of other kinds keep what `out` held before.
RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out);
bool parseDeviceRecord(const uint8_t* record, size_t size, DeviceProperties& out);

// The record size the vendor library of this API version emits for a kind (0 = not a kind the agent copies).
size_t recordSize(uint32_t kind, uint32_t apiVersion);

// Runtime API name from the table generated out of cupti_runtime_cbid.h; nullptr when the table lacks the id.
const char* runtimeApiName(uint32_t cbid);
// The generic labels for ids no table names (the numeric cbid stays in the metadata).
inline constexpr const char* kGenericRuntimeName = "cudaRuntime";
inline constexpr const char* kGenericDriverName = "cudaDriver";

// "Memcpy HtoD (Pageable -> Device)", "Memset (Device)", as torch-cuda names them.
std::string memcpyName(const ParsedRecord& r);
std::string memsetName(const ParsedRecord& r);

// Kineto's estimate: blocks per SM, warps per SM, and the occupancy the limits of the device allow.
struct Occupancy {
  double blocksPerSm = 0, warpsPerSm = 0, achievedPercent = 0;
  bool known = false;
};
Occupancy estimateOccupancy(const ParsedRecord& kernel, const DeviceProperties* device);

// The metadata fields of the event as torch-cuda emits them (13 for kernels), values as JSON text.
void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, const DeviceProperties* device,
                    std::map<std::string, std::string>& out);

// The same metadata written straight out as a JSON object, byte for byte what appendMetadata followed by
// appendMetadataJson produce (the fuzz target checks this on every event it decodes).
void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, const DeviceProperties* device,
                        std::string& out);

// The event name for a parsed record; `pointedName` is the kernel name string the record pointed to.
std::string eventName(const ParsedRecord& r, std::string_view pointedName, const DecodeContext& context);

// What the capture decoder needs from CUPTI, resolved at compile time (capture_decoder.cc): one string per
// record, 32-bit correlation ids, runtime names from callback ids once the whole file is read.
struct Records {
  static constexpr uint32_t kId = 1;
  static constexpr bool kNamesFromStrings = false;
  static constexpr bool kKernelType = false;
  static constexpr bool kCoalesceRuntime = false;  // several runtime records per launch
  static constexpr bool kWideCorrelation = false;
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) { return parseRecord(rec, size, r); }
  static bool parseDevice(const uint8_t* rec, size_t size, DeviceProperties& d) { return parseDeviceRecord(rec, size, d); }
  static std::string memcpyName(const ParsedRecord& r) { return cupti::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return cupti::memsetName(r); }
  static std::string callName(const ParsedRecord& r, const DecodeContext& c) { return eventName(r, {}, c); }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e,
                       std::map<std::string, std::string>& out) {
    appendMetadata(r, ext, e.device, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e, std::string& out) {
    appendMetadataJson(r, ext, e.device, out);
  }
};

}  // namespace flagprof::cupti
