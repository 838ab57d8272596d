// CUPTI decode side: pure functions from raw activity-record bytes (plus the strings the record pointed to,
// copied by the agent while the buffer was alive) to DeviceEvents. Record versions are recognised by size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "device_tracer.h"
#include "parsed_record.h"

namespace flagprof::cupti {

using flagprof::ParsedRecord;
using flagprof::RecordClass;

struct DeviceProperties {
  uint32_t id = 0;
  uint32_t numMultiprocessors = 0, threadsPerWarp = 32;
  uint32_t maxWarpsPerMultiprocessor = 0, maxBlocksPerMultiprocessor = 0;
  uint32_t maxSharedMemoryPerMultiprocessor = 0, maxRegistersPerMultiprocessor = 0;
  uint32_t maxRegistersPerBlock = 0, maxThreadsPerBlock = 0;
  uint32_t computeCapabilityMajor = 0, computeCapabilityMinor = 0;
};

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

struct DecodeContext {
  std::unordered_map<uint32_t, int64_t> externalByCorrelation;      // from EXTERNAL_CORRELATION records
  std::unordered_map<uint32_t, DeviceProperties> devices;           // from DEVICE records
  std::unordered_map<uint32_t, std::string> driverNames;           // resolved by the agent after the flush
  std::unordered_map<uint32_t, std::string> runtimeNamesFromLibrary;  // ids the generated table lacks
};

// The event name for a parsed record; `pointedName` is the kernel name string the record pointed to.
std::string eventName(const ParsedRecord& r, std::string_view pointedName, const DecodeContext& context);

}  // namespace flagprof::cupti
