// MSPTI (Huawei Ascend) decode side: pure functions from raw activity-record bytes, plus the strings the record
// pointed to (copied by the agent while the buffer was alive), to the ParsedRecord / DeviceEvent every vendor
// produces. Every MSPTI layout fact is in mspti_mirror.h and mspti_decode.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "../../tracer/device_tracer.h"
#include "../../tracer/parsed_record.h"

namespace flagprof::mspti {

using flagprof::DecodeContext;
using flagprof::DeviceProperties;
using flagprof::EventContext;

// Reads one record: KERNEL, MEMCPY and MEMSET become device events, API records Runtime events (MSPTI has no
// driver records and no callback ids: the API record names itself). The common fields are always written.
// A 64-bit correlation id above 2^32 - 1 is folded into 32 bits (setWideCorrelation).
RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out);

// The size of the record the mirror describes for a kind (0 = a kind the agent does not copy).
size_t recordSize(uint32_t kind);

// A kernel record points to two strings, its name and its type. The agent stores them as one string-table entry,
// the name, a NUL byte, then the type (see fpc_format.h); a string without a NUL is a name alone.
struct KernelStrings {
  std::string_view name, type;
};
KernelStrings splitKernelStrings(std::string_view stored);
// The entry the agent writes for a kernel record's two strings.
std::string joinKernelStrings(std::string_view name, std::string_view type);

// The label for an API record whose name pointer was null or empty.
inline constexpr const char* kGenericRuntimeName = "AscendRuntime";

// "Memcpy HtoD", "Memset": MSPTI says which direction a copy went, not which memory kinds it touched.
std::string memcpyName(const ParsedRecord& r);
std::string memsetName(const ParsedRecord& r);

// The metadata of an event, values as JSON text: what MSPTI provides, under Kineto's names where every
// vendor's events have the field ("device", "stream", "correlation", "External id", "bytes",
// "memory bandwidth (GB/s)", "value": what the checks and views read) and under the names torch_npu's Ascend
// traces use for what only Ascend has ("Task Type", "Thread Id"; "Copy Kind" and "Async" in that style).
// Nothing MSPTI lacks (grid, block, occupancy) is written. `kernelType` is the kernel record's type string.
void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, std::string_view kernelType,
                    std::map<std::string, std::string>& out);
// The same as a JSON object, byte for byte what appendMetadata followed by appendMetadataJson(map) print.
void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, std::string_view kernelType,
                        std::string& out);

// What the capture decoder needs from MSPTI: API records name themselves, kernels point to a name and a type,
// correlation ids are 64-bit, no device records.
struct Records {
  static constexpr uint32_t kId = 2;
  static constexpr bool kNamesFromStrings = true;
  static constexpr bool kKernelType = true;
  static constexpr bool kCoalesceRuntime = true;  // several runtime records per launch
  static constexpr bool kWideCorrelation = true;
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) { return parseRecord(rec, size, r); }
  static bool parseDevice(const uint8_t*, size_t, DeviceProperties&) { return false; }
  static std::string memcpyName(const ParsedRecord& r) { return mspti::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return mspti::memsetName(r); }
  static std::string callName(const ParsedRecord&, const DecodeContext&) { return kGenericRuntimeName; }
  static KernelStrings kernelStrings(std::string_view stored) { return splitKernelStrings(stored); }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e,
                       std::map<std::string, std::string>& out) {
    appendMetadata(r, ext, e.detail, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e, std::string& out) {
    appendMetadataJson(r, ext, e.detail, out);
  }
};

}  // namespace flagprof::mspti
