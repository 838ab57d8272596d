// Decodes a whole .fpc capture into columns of DeviceEvents (the addon hands them to the extension host as
// typed arrays without copying) plus counts and diagnostics, with the decoder of the vendor the header names
// (native/vendors/vendors.h; one decoder instance per vendor, chosen once per capture). Damaged frames are skipped and reported by
// offset; only a file that is not a capture at all (magic, version, header) is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "column.h"
#include "device_tracer.h"
#include "parsed_record.h"

namespace flagprof {

struct CaptureDiagnostic {
  std::string severity;  // "info" | "warning"
  std::string code;      // e.g. "frame-crc", "layout", or the tracer's own line id ("E1", "C8", ...)
  std::string message;   // one line
  int64_t offset = -1;   // byte offset in the capture, when the diagnostic is about the file
  uint64_t realtimeNs = 0;
  bool gated = false;        // printed only with FLAGOS_TRACE on
  bool fromCapture = false;  // recorded by the agent (vs. found while decoding)
};

struct CaptureCounts {
  uint64_t frames = 0, badFrames = 0, records = 0;
  uint64_t kernel = 0, memcpy = 0, memset = 0, runtime = 0, driver = 0;
  uint64_t externalCorrelation = 0, deviceRecords = 0, ignored = 0;
  uint64_t noTiming = 0, implausible = 0, malformed = 0;
  uint64_t dropped = 0;  // records the vendor reported as dropped
  // Records whose 64-bit vendor correlation id (MSPTI, ROCtracer, rocprofiler-sdk) was past 2^32 - 1: folded into
  // 1 .. 2^32 - 1 (parsed_record.h).
  uint64_t correlationWrapped = 0;
  // Runtime records that shared a launch's correlation id with another and gave it up (MSPTI, capture_decoder.cc).
  uint64_t runtimeCoalesced = 0;
};

inline constexpr int64_t kNoExternalId = std::numeric_limits<int64_t>::min();

struct DecodedCapture {
  uint16_t formatVersion = 0;
  uint32_t vendor = 0, apiVersion = 0, pid = 0;
  std::vector<std::pair<uint64_t, uint64_t>> calibration;  // (vendor clock, realtime) pairs
  std::optional<uint64_t> windowStart, windowStop;         // realtime ns of start() and stop()
  bool closed = false;
  std::string library;
  std::string platform, platformReason;  // as the agent detected them ("" when the process said nothing)

  // One entry per DeviceEvent, times in Unix epoch ns (vendor clock mapped through the calibration).
  Column<uint8_t> kind;
  Column<uint64_t> start, end;
  Column<uint32_t> correlation;
  Column<int64_t> external;  // kNoExternalId when absent (0 is a valid torch id)
  Column<uint32_t> device, stream, thread, process;
  Column<uint32_t> name;  // index into names
  Column<uint32_t> cbid;  // runtime/driver callback id, 0 otherwise
  Column<uint64_t> recordOffset;  // where the record's bytes start in the capture
  Column<uint32_t> recordSize;
  std::vector<std::string> names;
  // A second string per event, index into names or ~0u: the MSPTI kernel type. Empty for vendors whose
  // records point to one string (CUPTI).
  std::vector<uint32_t> detail;

  DecodeContext context;  // what the whole capture says beyond single records
  CaptureCounts counts;
  std::vector<CaptureDiagnostic> diagnostics;

  size_t size() const { return kind.size(); }
};

struct DecodeOptions {
  // Keep where each event's record lies (recordOffset, recordSize): eventAt and appendEventArgsJson need it.
  // Without it a decode writes 12 fewer bytes per event.
  bool recordLocations = true;
  // Records frames at least this long are decoded while their checksum is computed (undone if it fails);
  // shorter ones are checked first. Tests and the fuzz target lower it to reach both paths.
  uint32_t streamedFrameBytes = 256 * 1024;
};

// Returns false with a one-line reason (no file name) when the bytes are not a capture this build reads.
bool decodeCapture(const uint8_t* data, size_t size, DecodedCapture& out, std::string& error,
                   DecodeOptions options = {});

// The full DeviceEvent i (metadata included); `data` must be the bytes decodeCapture read, with record
// locations kept.
DeviceEvent eventAt(const DecodedCapture& capture, size_t i, const uint8_t* data);

// The event's metadata as a JSON object (non-literal values quoted).
void appendEventArgsJson(std::string& out, const DecodedCapture& capture, size_t i, const uint8_t* data);

}  // namespace flagprof
