// The .fpc capture file: a fixed header, then append-only frames {type, length, payload, crc32}, each written
// with one write() so that a process killed at any point leaves a prefix that still decodes.
// All integers little-endian.
//
// Checksums are CRC-32C (Castagnoli).
//
// Header (64 bytes): magic "FLAGPCAP" | u16 format version | u16 header size | u32 vendor | u32 vendor API
// version | u32 pid | u64 vendor clock | u64 realtime clock (one calibration pair taken at open) |
// 20 reserved bytes | u32 crc32c of the 60 bytes before it.
//
// Frame: u32 type | u32 payload length | payload | u32 crc32c of (type, length, payload).
//
// Vendors: the header's vendor field says whose records the records frames carry and which decoder reads them;
// the ids are the vendor table's (native/vendors/vendors.h), never reused.
// MSPTI (2) was added without a new format version: frames are laid out as for CUPTI (1), so version-1 CUPTI
// captures decode unchanged and a reader that predates MSPTI rejects vendor 2 by name. What differs is only what
// a record's string is: an MSPTI API record's string is its API name (MSPTI has no callback ids), and a kernel
// record, which points to two strings (name and type), stores both in one string-table entry: the name, a NUL
// byte, the type. Names never contain NUL, so the split is unambiguous, and identical pairs share one entry.
// MSPTI timestamps are already CLOCK_REALTIME: its header's clock pair is (realtime, realtime) and its captures
// carry no calibration frames.
// ROCtracer (3) was added the same way. Its records are ROCtracer's 64-byte activity_record_t verbatim; a kernel
// record's string is the kernel name its pointer held (copied while the buffer was alive), as for CUPTI. A
// dispatch record whose launch the agent saw through the HIP API callback is followed by 32 bytes of its own (u32
// magic "FDIM", u32 dynamic shared memory, u32 grid xyz in blocks, u32 block xyz: vendors/roctracer/mirror.h),
// joined by correlation id when the buffer was delivered; a record without them is the plain 64 bytes. API
// records carry a HIP API id (op), resolved with roctracer_op_string after the final flush and written as a names
// frame whose domain is ACTIVITY_DOMAIN_HIP_API (3). Timestamps are the HSA system clock: the header pair and the
// calibration frames (roctracer_get_timestamp, CLOCK_REALTIME) map them, as for CUPTI.
// MetaX MCPTI (4), Moore Threads MUPTI (5) and Enflame TOPSPTI (6) are CUPTI clones: CUPTI's record layouts at one
// version per kind (their mirrors give the sizes), names frames in CUPTI's domains (1 driver, 2 runtime) from the
// vendor's own name function, their clocks mapped by the calibration pairs. TOPSPTI has no external-correlation
// records of its own: the agent writes CUPTI-layout ones (kind 39) from its API-enter callback. For MCPTI the agent
// writes CUPTI-layout DEVICE records (kind 8) from MetaX's runtime attributes.
// rocprofiler-sdk (7): records are the SDK's buffer-tracing records verbatim (each starts with its u64 size; a HIP
// API record is 56 or 64 bytes by SDK version); a dispatch's string is its kernel name from the code-object
// service; the torch id an SDK record carries inside its correlation id is written by the agent as its own
// 32-byte record before it ({u64 size, u32 kind 0x464C4558, u32 0, u64 internal id, u64 torch id}); HIP API
// names come in a names frame of domain 5 (HIP_RUNTIME_API); device ids are mapped by a device-index names frame;
// timestamps are CLOCK_BOOTTIME, mapped by the calibration pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace flagprof::fpc {

inline constexpr char kMagic[8] = {'F', 'L', 'A', 'G', 'P', 'C', 'A', 'P'};
inline constexpr uint16_t kFormatVersion = 1;
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kFrameOverhead = 12;  // type + length + crc32

inline constexpr uint32_t kDeviceIndexDomain = 256;

enum FrameType : uint32_t {
  // u32 string count, {u32 length, bytes}*, u32 record count, {u32 size, u32 string index or ~0u, bytes}*.
  // Records are the vendor's bytes verbatim; the string is what the record pointed to (a kernel name; for MSPTI
  // also an API name, and a kernel's name and type joined by a NUL byte: see above).
  FrameRecords = 1,
  // u32 callback domain (CUPTI: 1 driver, 2 runtime; ROCtracer: 3 HIP API), u32 count, {u32 id, u32 length,
  // bytes}*: API names resolved after the flush. Domain kDeviceIndexDomain maps the device ids records carry to
  // the process's device indices (the name is the index in decimal): MSPTI's ids are physical.
  FrameNames = 2,
  // u32 phase (0 open, 1 start, 2 stop), u32 0, u64 vendor clock, u64 realtime clock.
  FrameCalibration = 3,
  // u32 event (1 start, 2 stop), u32 0, u64 realtime ns: the capture window.
  FrameSession = 4,
  // u8 severity (0 info, 1 warning), u8 gated (1 = only with FLAGOS_TRACE on), u16 code length,
  // u32 text length, u64 realtime ns, code, text (the stderr line without its newline).
  FrameDiagnostic = 5,
  // u32 context, u32 stream, u64 records the vendor dropped (buffer full).
  FrameDropped = 6,
  // u32 length, bytes: the vendor library that was bound; then, where the process said it, u32 length, bytes: the
  // platform (a row of the checks' capability table: "ppu"), and u32 length, bytes: what said so.
  FrameLibrary = 7,
  // u64 realtime ns: written by close(); its absence means the process stopped before closing.
  FrameEnd = 8,
};

// CRC-32C of the bytes (hardware-assisted where the CPU has it).
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

inline void put32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
inline void put64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
inline void put16(std::string& out, uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); }

std::string header(uint32_t vendor, uint32_t apiVersion, uint32_t pid, uint64_t vendorNs, uint64_t realtimeNs);
// Wraps a payload into a complete frame (type, length, payload, crc).
std::string frame(uint32_t type, std::string_view payload);

}  // namespace flagprof::fpc
