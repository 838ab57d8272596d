#include "fpc_format.h"

namespace flagprof::fpc {

namespace {
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum x86-64 (SSE4.2) and ARMv8 compute in
// hardware, so checking every frame costs little next to decoding it. Software fallback: slicing by 8.
struct Crc32cTable {
  uint32_t entries[8][256];
  Crc32cTable() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
      entries[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int t = 1; t < 8; ++t) entries[t][i] = (entries[t - 1][i] >> 8) ^ entries[0][entries[t - 1][i] & 0xff];
  }
};

uint32_t crc32cSoftware(const uint8_t* p, size_t size, uint32_t crc) {
  // Function-local: the agent's load-time constructor may write frames before namespace statics exist.
  static const Crc32cTable table;
  const auto& t = table.entries;
  while (size >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size--) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// One crc32 instruction chain runs at a third of the instruction's throughput (3-cycle latency), so long inputs
// are checksummed as three interleaved lanes of kLane bytes. The lanes' CRCs are joined with
// crc(c, A|B) = shift_|B|(crc(c, A)) ^ crc(0, B), where shift_n (the register after n zero bytes) is linear
// and applied through four byte tables.
constexpr size_t kLane = 4096;

struct LaneShift {
  uint32_t table[4][256];
  __attribute__((target("sse4.2"))) LaneShift() {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; ++bit) {
      uint64_t c = uint64_t(1) << bit;
      for (size_t k = 0; k < kLane / 8; ++k) c = __builtin_ia32_crc32di(c, 0);
      basis[bit] = uint32_t(c);
    }
    for (int byte = 0; byte < 4; ++byte)
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t out = 0;
        for (int bit = 0; bit < 8; ++bit)
          if (v & (1u << bit)) out ^= basis[byte * 8 + bit];
        table[byte][v] = out;
      }
  }
  uint32_t operator()(uint32_t c) const {
    return table[0][c & 0xff] ^ table[1][(c >> 8) & 0xff] ^ table[2][(c >> 16) & 0xff] ^ table[3][c >> 24];
  }
};

__attribute__((target("sse4.2"))) uint32_t crc32cHardware(const uint8_t* p, size_t size, uint32_t crc) {
  uint64_t c = crc;
  if (size >= 3 * kLane) {
    static const LaneShift shift;  // function-local: see crc32cSoftware
    while (size >= 3 * kLane) {
      uint64_t c1 = 0, c2 = 0;
      for (size_t i = 0; i < kLane; i += 8) {
        uint64_t v0, v1, v2;
        std::memcpy(&v0, p + i, 8);
        std::memcpy(&v1, p + kLane + i, 8);
        std::memcpy(&v2, p + 2 * kLane + i, 8);
        c = __builtin_ia32_crc32di(c, v0);
        c1 = __builtin_ia32_crc32di(c1, v1);
        c2 = __builtin_ia32_crc32di(c2, v2);
      }
      c = shift(shift(uint32_t(c)) ^ uint32_t(c1)) ^ uint32_t(c2);
      p += 3 * kLane;
      size -= 3 * kLane;
    }
  }
  while (size >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    size -= 8;
  }
  uint32_t c32 = uint32_t(c);
  while (size--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}

bool haveHardwareCrc() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif
}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (haveHardwareCrc()) return ~crc32cHardware(p, size, ~crc);
#endif
  return ~crc32cSoftware(p, size, ~crc);
}

std::string header(uint32_t vendor, uint32_t apiVersion, uint32_t pid, uint64_t vendorNs, uint64_t realtimeNs) {
  std::string h(kMagic, sizeof kMagic);
  put16(h, kFormatVersion);
  put16(h, static_cast<uint16_t>(kHeaderSize));
  put32(h, vendor);
  put32(h, apiVersion);
  put32(h, pid);
  put64(h, vendorNs);
  put64(h, realtimeNs);
  h.append(20, '\0');
  put32(h, crc32(h.data(), h.size()));
  return h;
}

std::string frame(uint32_t type, std::string_view payload) {
  std::string f;
  f.reserve(payload.size() + kFrameOverhead);
  put32(f, type);
  put32(f, static_cast<uint32_t>(payload.size()));
  f.append(payload.data(), payload.size());
  put32(f, crc32(f.data(), f.size()));
  return f;
}

}  // namespace flagprof::fpc
