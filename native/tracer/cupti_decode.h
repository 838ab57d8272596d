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

namespace flagprof::cupti {

// What a record is, once its kind and size have been checked.
enum class RecordClass : uint8_t {
  Event,                // kernel, memcpy, memset, runtime or driver: becomes a DeviceEvent
  ExternalCorrelation,  // the bridge from the vendor correlation id to the torch id
  Device,               // device properties (for occupancy)
  Ignored,              // a kind the tracer does not decode
  NoTiming,             // start == end == 0: the vendor's "timing unavailable"
  Implausible,          // end < start or longer than an hour: the layout does not match the library
  Malformed,            // too short for its kind
};

// The fields of one record, vendor layout already read. Times are in the vendor clock.
struct ParsedRecord {
  EventKind kind = EventKind::Kernel;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0, device = 0, context = 0, stream = 0;
  uint32_t process = 0, thread = 0, cbid = 0, returnValue = 0;
  // kernel
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint16_t registersPerThread = 0;
  int32_t staticSharedMemory = 0, dynamicSharedMemory = 0;
  uint64_t queued = 0;
  // memcpy / memset
  uint64_t bytes = 0;
  uint8_t copyKind = 0, srcKind = 0, dstKind = 0;
  uint32_t memsetValue = 0;
  uint16_t memoryKind = 0;
  // external correlation
  uint32_t externalKind = 0;
  uint64_t externalId = 0;
};

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

// The whole decode of one event record: kind, times (vendor clock), ids, demangled name, metadata.
// Returns nothing for records that are not events.
std::optional<DeviceEvent> decodeRecord(const uint8_t* record, size_t size, std::string_view pointedName,
                                        const DecodeContext& context);

// The event name for a parsed record; `pointedName` is the kernel name string the record pointed to.
std::string eventName(const ParsedRecord& r, std::string_view pointedName, const DecodeContext& context);

}  // namespace flagprof::cupti
