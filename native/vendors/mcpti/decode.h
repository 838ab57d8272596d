// MetaX MCPTI decode side. MCPTI records have CUPTI's layouts (mirror.h pins the offsets), so CUPTI's record
// parser, copy names and metadata read them; what is MetaX's own is the callback-id namespace: a runtime or
// driver record is named only from the names frames the agent wrote after the final flush
// (mcptiActivityGetApiName), never from CUDA's cbid table, and an id nobody named is "mcRuntime" / "mcDriver"
// with its numeric cbid kept in the metadata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "../../tracer/parsed_record.h"
#include "../cupti/decode.h"

namespace flagprof::mcpti {

using flagprof::DecodeContext;
using flagprof::DeviceProperties;
using flagprof::EventContext;
using flagprof::ParsedRecord;
using flagprof::RecordClass;

inline constexpr const char* kGenericRuntimeName = "mcRuntime";
inline constexpr const char* kGenericDriverName = "mcDriver";

// The size of the record MCPTI emits for a kind (0 = a kind the agent does not copy).
size_t recordSize(uint32_t kind);

// Reads one record; a size other than the one MCPTI emits for its kind is Malformed (the agent's scanner
// resynchronises on such candidates, mirror.h).
RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out);

// The runtime or driver call's name from the names the agent resolved, else the generic label.
std::string callName(const ParsedRecord& r, const DecodeContext& context);

struct Records {
  static constexpr uint32_t kId = 4;
  static constexpr bool kNamesFromStrings = false;
  static constexpr bool kKernelType = false;
  static constexpr bool kCoalesceRuntime = false;  // several runtime records per launch
  static constexpr bool kWideCorrelation = false;
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) { return parseRecord(rec, size, r); }
  static bool parseDevice(const uint8_t*, size_t, DeviceProperties&) { return false; }
  static std::string memcpyName(const ParsedRecord& r) { return cupti::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return cupti::memsetName(r); }
  static std::string callName(const ParsedRecord& r, const DecodeContext& c) { return mcpti::callName(r, c); }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e,
                       std::map<std::string, std::string>& out) {
    cupti::appendMetadata(r, ext, e.device, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e, std::string& out) {
    cupti::appendMetadataJson(r, ext, e.device, out);
  }
};

}  // namespace flagprof::mcpti
