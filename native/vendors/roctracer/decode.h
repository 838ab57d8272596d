// ROCtracer (AMD ROCm, Hygon DCU) decode side: pure functions from raw activity-record bytes to the ParsedRecord
// every vendor produces, plus the names and metadata of its events. Every ROCtracer layout fact is in
// roctracer_mirror.h and roctracer_decode.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "../../tracer/device_tracer.h"
#include "../../tracer/parsed_record.h"

namespace flagprof::roctracer {

using flagprof::DecodeContext;
using flagprof::DeviceProperties;
using flagprof::EventContext;

// Reads one record. HIP_OPS dispatches become kernels, copies memcpys (memsets when the command is a buffer
// fill), HIP_API calls Runtime events with the HIP API id as their cbid; EXT_API external-id records are external
// correlations. Barriers, marks and every other domain are Ignored. A dispatch record the agent extended with its
// launch's dims (mirror.h: grid, block, dynamic shared memory, from the HIP API callback) carries them in
// ParsedRecord::grid / block / dynamicSharedMemory; without them grid[0] is 0. A 64-bit correlation id above
// 2^32 - 1 is folded into 32 bits (setWideCorrelation).
RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out);

// The size of every record ROCtracer writes (a dispatch the agent gave its launch dims is 32 bytes longer).
size_t recordSize();

// The label for a HIP API id no names frame resolved (the numeric id stays in the metadata as "cid").
inline constexpr const char* kGenericRuntimeName = "hipRuntime";

// "Memcpy HtoD (Host -> Device)", "Memset (Device)": as Kineto names ROCm copies.
std::string memcpyName(const ParsedRecord& r);
std::string memsetName(const ParsedRecord& r);

// The runtime call's name: what the agent resolved with roctracer_op_string after the flush, or the label.
std::string runtimeName(uint32_t op, const std::unordered_map<uint32_t, std::string>& resolved);

// The metadata of an event, values as JSON text, under the names Kineto's ROCm traces use ("device", "stream",
// "correlation", "External id", "kind", "bytes", "memory bandwidth (GB/s)"; runtime calls "cid", and "cbid" too,
// the key torch_fl's tracer and the DCU contract use). Kernels with launch dims also get "grid", "block" and
// "shared memory", written as CUPTI's decoder writes them.
void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::map<std::string, std::string>& out);
// The same as a JSON object, byte for byte what appendMetadata followed by appendMetadataJson(map) print.
void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string& out);

// What the capture decoder needs from ROCtracer: kernels point to their name as CUPTI's do; API calls carry a HIP
// API id resolved by a names frame (domain HIP_API) written after the final flush; correlation ids are 64-bit.
struct Records {
  static constexpr uint32_t kId = 3;
  static constexpr bool kNamesFromStrings = false;
  static constexpr bool kKernelType = false;
  static constexpr bool kCoalesceRuntime = false;  // several runtime records per launch
  static constexpr bool kWideCorrelation = true;
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) { return parseRecord(rec, size, r); }
  static bool parseDevice(const uint8_t*, size_t, DeviceProperties&) { return false; }
  static std::string memcpyName(const ParsedRecord& r) { return roctracer::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return roctracer::memsetName(r); }
  static std::string callName(const ParsedRecord& r, const DecodeContext& c) { return runtimeName(r.cbid, c.runtimeNames); }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext&,
                       std::map<std::string, std::string>& out) {
    appendMetadata(r, ext, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext&, std::string& out) {
    appendMetadataJson(r, ext, out);
  }
};

}  // namespace flagprof::roctracer
