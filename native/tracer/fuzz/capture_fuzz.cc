// libFuzzer target for the capture decoder (built with ASan/UBSan by the tests).
// Random bytes rarely carry valid checksums, which would keep the fuzzer at the header. So for most inputs the
// harness stamps a valid header and re-computes each frame's crc32 before decoding: the frame and record parsers
// then see arbitrary payloads. Inputs whose first byte is odd are decoded untouched (checksum paths). The
// repaired header keeps a vendor it already names and otherwise takes one of the vendor table's rows from the
// vendor field's first byte, so every vendor's record decoder is reached.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../capture_decoder.h"
#include "../fpc_format.h"
#include "../../vendors/vendors.h"

namespace fpc = flagprof::fpc;

static void repair(std::vector<uint8_t>& b) {
  if (b.size() < fpc::kHeaderSize) return;
  std::memcpy(b.data(), fpc::kMagic, sizeof fpc::kMagic);
  const uint16_t version = fpc::kFormatVersion;
  std::memcpy(b.data() + 8, &version, 2);
  uint32_t vendor;
  std::memcpy(&vendor, b.data() + 12, 4);
  if (!flagprof::vendorById(vendor)) vendor = flagprof::kVendors[b[12] % flagprof::kVendorCount].id;
  std::memcpy(b.data() + 12, &vendor, 4);
  uint32_t crc = fpc::crc32(b.data(), fpc::kHeaderSize - 4);
  std::memcpy(b.data() + fpc::kHeaderSize - 4, &crc, 4);
  size_t offset = fpc::kHeaderSize;
  while (b.size() - offset >= fpc::kFrameOverhead) {
    uint32_t type, length;
    std::memcpy(&type, b.data() + offset, 4);
    std::memcpy(&length, b.data() + offset + 4, 4);
    if (type < 1 || type > 8) type = 1 + type % 8;
    std::memcpy(b.data() + offset, &type, 4);
    if (length > b.size() - offset - fpc::kFrameOverhead) break;
    crc = fpc::crc32(b.data() + offset, 8 + size_t(length));
    std::memcpy(b.data() + offset + 8 + length, &crc, 4);
    offset += fpc::kFrameOverhead + length;
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (size == 0 || (data[0] & 1) == 0) repair(bytes);
  flagprof::DecodedCapture capture;
  std::string error;
  flagprof::DecodeOptions options;
  // Every other input takes the path large frames take: decoded while checksummed, undone on a mismatch.
  if (size > 1 && (data[1] & 1)) options.streamedFrameBytes = 1;
  if (!flagprof::decodeCapture(bytes.data(), bytes.size(), capture, error, options)) return 0;
  for (size_t i = 0; i < capture.size() && i < 256; ++i) {
    std::string json;
    flagprof::appendEventArgsJson(json, capture, i, bytes.data());
    flagprof::DeviceEvent event = flagprof::eventAt(capture, i, bytes.data());
    // The direct JSON writer must print exactly what the metadata map prints.
    std::string viaMap;
    flagprof::appendMetadataJson(viaMap, event.metadata);
    if (json != viaMap) __builtin_trap();
  }
  return 0;
}
