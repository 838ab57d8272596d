// What every vendor's record parser produces: the fields of one activity record, vendor layout already read.
// Shared so that one capture decoder serves every vendor (the parse function is its template argument).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "device_tracer.h"

namespace flagprof {

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

// Times are in the vendor clock.
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
  // the graph and node that launched it (CUPTI Kernel5 on); 0 for a kernel launched directly
  uint32_t graphId = 0;
  uint64_t graphNodeId = 0;
  // memcpy / memset
  uint64_t bytes = 0;
  uint8_t copyKind = 0, srcKind = 0, dstKind = 0;
  uint32_t memsetValue = 0;
  uint16_t memoryKind = 0;
  uint8_t isAsync = 0;
  // external correlation
  uint32_t externalKind = 0;
  uint64_t externalId = 0;
  // Vendors with 64-bit correlation ids (MSPTI, ROCtracer, rocprofiler-sdk): the id was past 2^32 - 1 and was
  // folded into 1 .. 2^32 - 1 (setWideCorrelation).
  bool correlationWrapped = false;
};

// A device's limits, from the vendors that report them (CUPTI and the CUPTI-compatible ones): the occupancy
// estimate of their kernels needs them.
struct DeviceProperties {
  uint32_t id = 0;
  uint32_t numMultiprocessors = 0, threadsPerWarp = 32;
  uint32_t maxWarpsPerMultiprocessor = 0, maxBlocksPerMultiprocessor = 0;
  uint32_t maxSharedMemoryPerMultiprocessor = 0, maxRegistersPerMultiprocessor = 0;
  uint32_t maxRegistersPerBlock = 0, maxThreadsPerBlock = 0;
  uint32_t computeCapabilityMajor = 0, computeCapabilityMinor = 0;
};

// What the whole capture tells the decoder beyond single records, whatever the vendor: its external
// correlations, device properties and the API names the agent resolved after the flush (names frames).
struct DecodeContext {
  std::unordered_map<uint32_t, int64_t> externalByCorrelation;  // from EXTERNAL_CORRELATION records
  std::unordered_map<uint32_t, DeviceProperties> devices;       // from DEVICE records
  std::unordered_map<uint32_t, std::string> driverNames;        // names frames of the driver domain (1)
  std::unordered_map<uint32_t, std::string> runtimeNames;       // names frames of the other domains
  std::unordered_map<uint32_t, uint32_t> deviceIndex;           // device id in records -> the process's index
};

// What an event's metadata needs besides its record: the device it ran on, when the capture described it, and
// the record's second string (an MSPTI kernel's type), when it has one.
struct EventContext {
  const DeviceProperties* device = nullptr;
  std::string_view detail;
};

// A field of a record at a byte offset (records are copied bytes: no alignment assumed).
template <typename T>
inline T loadAt(const uint8_t* record, size_t offset) {
  T v;
  std::memcpy(&v, record + offset, sizeof(T));
  return v;
}

// A 64-bit vendor correlation id into the 32-bit columns, never 0 (the columns' "none"): ids up to 2^32 - 1 are
// kept, larger ones folded into 1 .. 2^32 - 1 (((id - 1) mod (2^32 - 1)) + 1; correlationWrapped). The vendors
// number correlations one by one, so the ids of one capture span far fewer than 2^32 - 1 values and stay unique
// after the fold, and a launch's records, which share an id, still pair: no record loses its correlation.
inline void setWideCorrelation(ParsedRecord& r, uint64_t id) {
  r.correlationWrapped = id > 0xffffffffull;
  r.correlation = r.correlationWrapped ? uint32_t((id - 1) % 0xffffffffull + 1) : uint32_t(id);
}

// Event for plausible times; start == end == 0 is the vendors' "no timing"; a negative or hour-long span means the
// layout does not match the library that wrote the record.
inline RecordClass checkTiming(const ParsedRecord& r) {
  constexpr uint64_t kHourNs = 3600ull * 1000000000ull;
  if (r.start == 0 && r.end == 0) return RecordClass::NoTiming;
  if (r.end < r.start || r.end - r.start > kHourNs) return RecordClass::Implausible;
  return RecordClass::Event;
}

// Shortest text that reads back as the same double.
inline std::string doubleText(double value) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, res.ptr);
}

// The fields a copy or memset carries under Kineto's names on every vendor that reports them as device, stream
// and size: "device", "stream", "bytes", "memory bandwidth (GB/s)" (bytes per ns is GB/s).
inline void appendTransferMetadata(const ParsedRecord& r, std::map<std::string, std::string>& m) {
  m["device"] = std::to_string(r.device);
  m["stream"] = std::to_string(r.stream);
  m["bytes"] = std::to_string(r.bytes);
  const uint64_t duration = r.end - r.start;
  m["memory bandwidth (GB/s)"] = doubleText(duration ? double(r.bytes) / double(duration) : 0.0);
}

}  // namespace flagprof
