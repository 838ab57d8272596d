// The decode side of a CUPTI clone: a vendor whose records have CUPTI's layouts at the one version per kind it
// ships (MetaX MCPTI, Moore Threads MUPTI, Enflame TOPSPTI), read by CUPTI's record parser, and whose callback ids
// are its own namespace: a runtime or driver record is named only from the names frames the agent wrote after the
// final flush (the vendor's name function), never from CUDA's cbid table, and an id nobody named gets the vendor's
// generic label, its numeric cbid kept in the metadata. A vendor's decode.h gives its CloneTraits and derives its
// Records from CloneRecords.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "../../tracer/parsed_record.h"
#include "decode.h"
#include "mirror.h"

namespace flagprof::cupti {

struct CloneTraits {
  uint32_t id;                          // the capture header's vendor id
  size_t kernel, memcpy, memset;        // the record sizes the vendor emits (API 40 and external correlation 24)
  bool external;                        // external-correlation records exist in its captures
  const char* runtimeName;              // the label of a runtime call nobody named
  const char* driverName;
};

template <const CloneTraits& T>
struct CloneRecords {
  static constexpr uint32_t kId = T.id;
  static constexpr bool kNamesFromStrings = false;
  static constexpr bool kKernelType = false;
  static constexpr bool kCoalesceRuntime = false;
  static constexpr bool kWideCorrelation = false;

  // The size of the record the vendor emits for a kind (0 = a kind the agent does not copy).
  static size_t recordSize(uint32_t kind) {
    switch (kind) {
      case FP_CUPTI_KIND_KERNEL:
      case FP_CUPTI_KIND_CONCURRENT_KERNEL: return T.kernel;
      case FP_CUPTI_KIND_MEMCPY: return T.memcpy;
      case FP_CUPTI_KIND_MEMSET: return T.memset;
      case FP_CUPTI_KIND_RUNTIME:
      case FP_CUPTI_KIND_DRIVER: return sizeof(fp_cupti_api);
      case FP_CUPTI_KIND_EXTERNAL_CORRELATION: return T.external ? sizeof(fp_cupti_external_correlation) : 0;
      default: return 0;
    }
  }
  // A size other than the one the vendor emits for its kind is Malformed (a scanning binding resynchronises on
  // such candidates).
  static RecordClass parse(const uint8_t* rec, size_t size, ParsedRecord& r) {
    if (size < 4) return RecordClass::Malformed;
    const uint32_t kind = loadAt<uint32_t>(rec, 0);
    // The vendor writes no DEVICE records; the agent writes one per device from the vendor's runtime
    // (MetaX's wcudaDeviceGetAttribute), in CUPTI's layout, for occupancy.
    if (kind == FP_CUPTI_KIND_DEVICE) return size >= sizeof(fp_cupti_device5) ? RecordClass::Device : RecordClass::Malformed;
    const size_t expected = recordSize(kind);
    if (expected == 0) return RecordClass::Ignored;
    if (size != expected) return RecordClass::Malformed;
    return cupti::parseRecord(rec, size, r);
  }
  static bool parseDevice(const uint8_t* rec, size_t size, DeviceProperties& d) {
    return cupti::parseDeviceRecord(rec, size, d);
  }
  static std::string memcpyName(const ParsedRecord& r) { return cupti::memcpyName(r); }
  static std::string memsetName(const ParsedRecord& r) { return cupti::memsetName(r); }
  static std::string callName(const ParsedRecord& r, const DecodeContext& context) {
    const bool driver = r.kind == EventKind::Driver;
    const auto& names = driver ? context.driverNames : context.runtimeNames;
    auto it = names.find(r.cbid);
    if (it != names.end()) return it->second;
    return driver ? T.driverName : T.runtimeName;
  }
  static void metadata(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e,
                       std::map<std::string, std::string>& out) {
    cupti::appendMetadata(r, ext, e.device, out);
  }
  static void metadataJson(const ParsedRecord& r, std::optional<int64_t> ext, const EventContext& e, std::string& out) {
    cupti::appendMetadataJson(r, ext, e.device, out);
  }
};

}  // namespace flagprof::cupti
