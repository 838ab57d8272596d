// CUPTI activity records -> DeviceEvents. Every CUPTI layout fact is in cupti_mirror.h and this file.
#include "decode.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "mirror.h"

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define FLAGPROF_HAVE_CUPTI_HEADERS 1
// The mirrors must match the vendor's own header wherever it is installed: a drift here would decode
// garbage silently, so it fails the build instead.
#define FP_SAME_OFFSET(mirror, real, field) \
  static_assert(offsetof(mirror, field) == offsetof(real, field), #real "." #field " moved")
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, registersPerThread);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, start);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, end);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, deviceId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, contextId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, streamId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, gridX);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, gridY);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, gridZ);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, blockX);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, blockY);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, blockZ);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, staticSharedMemory);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, dynamicSharedMemory);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, correlationId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, name);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, queued);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, graphNodeId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel10, graphId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel5, graphId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel9, graphId);
static_assert(sizeof(fp_cupti_kernel10) == sizeof(CUpti_ActivityKernel10), "Kernel10 size");
// Older kernel versions: the fields read here sit at the same offsets.
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel4, start);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel4, correlationId);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel4, name);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel4, queued);
FP_SAME_OFFSET(fp_cupti_kernel10, CUpti_ActivityKernel9, queued);
static_assert(sizeof(CUpti_ActivityKernel4) == 144 && sizeof(CUpti_ActivityKernel8) == 200 &&
                  sizeof(CUpti_ActivityKernel9) == 208,
              "older kernel record sizes");
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, copyKind);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, srcKind);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, dstKind);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, bytes);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, start);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, end);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, deviceId);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, contextId);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, streamId);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy6, correlationId);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy, correlationId);
FP_SAME_OFFSET(fp_cupti_memcpy6, CUpti_ActivityMemcpy5, correlationId);
static_assert(sizeof(fp_cupti_memcpy6) == sizeof(CUpti_ActivityMemcpy6), "Memcpy6 size");
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, value);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, bytes);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, start);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, end);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, deviceId);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, contextId);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, streamId);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, correlationId);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset4, memoryKind);
FP_SAME_OFFSET(fp_cupti_memset4, CUpti_ActivityMemset, memoryKind);
static_assert(sizeof(fp_cupti_memset4) == sizeof(CUpti_ActivityMemset4), "Memset4 size");
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, cbid);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, start);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, end);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, processId);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, threadId);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, correlationId);
FP_SAME_OFFSET(fp_cupti_api, CUpti_ActivityAPI, returnValue);
static_assert(sizeof(fp_cupti_api) == sizeof(CUpti_ActivityAPI), "API size");
FP_SAME_OFFSET(fp_cupti_external_correlation, CUpti_ActivityExternalCorrelation, externalKind);
FP_SAME_OFFSET(fp_cupti_external_correlation, CUpti_ActivityExternalCorrelation, externalId);
FP_SAME_OFFSET(fp_cupti_external_correlation, CUpti_ActivityExternalCorrelation, correlationId);
static_assert(sizeof(fp_cupti_external_correlation) == sizeof(CUpti_ActivityExternalCorrelation), "ExtCorr size");
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, numThreadsPerWarp);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, numMultiprocessors);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxWarpsPerMultiprocessor);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxBlocksPerMultiprocessor);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxSharedMemoryPerMultiprocessor);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxRegistersPerMultiprocessor);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxRegistersPerBlock);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, maxThreadsPerBlock);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, computeCapabilityMajor);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, id);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice5, name);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice4, id);
FP_SAME_OFFSET(fp_cupti_device5, CUpti_ActivityDevice3, id);
static_assert(sizeof(fp_cupti_device5) == sizeof(CUpti_ActivityDevice5), "Device5 size");
static_assert(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == FP_CUPTI_KIND_CONCURRENT_KERNEL &&
                  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION == FP_CUPTI_KIND_EXTERNAL_CORRELATION &&
                  CUPTI_ACTIVITY_KIND_RUNTIME == FP_CUPTI_KIND_RUNTIME && CUPTI_ACTIVITY_KIND_DRIVER == FP_CUPTI_KIND_DRIVER &&
                  CUPTI_ACTIVITY_KIND_MEMCPY == FP_CUPTI_KIND_MEMCPY && CUPTI_ACTIVITY_KIND_MEMSET == FP_CUPTI_KIND_MEMSET &&
                  CUPTI_ACTIVITY_KIND_DEVICE == FP_CUPTI_KIND_DEVICE && CUPTI_ACTIVITY_KIND_KERNEL == FP_CUPTI_KIND_KERNEL,
              "activity kind numbers");
static_assert(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 == FP_CUPTI_EXTERNAL_KIND_CUSTOM0, "CUSTOM0");
#endif

static_assert(sizeof(fp_cupti_kernel10) == 216 && sizeof(fp_cupti_memcpy6) == 96 && sizeof(fp_cupti_memset4) == 88 &&
                  sizeof(fp_cupti_api) == 40 && sizeof(fp_cupti_external_correlation) == 24 &&
                  sizeof(fp_cupti_device5) == 184,
              "mirror sizes");

namespace flagprof::cupti {

namespace {

#define FP_LOAD(rec, type, field) loadAt<decltype(type::field)>(rec, offsetof(type, field))

const char* const kCopyKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
const char* const kMemoryKinds[] = {"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"};

template <size_t N>
const char* label(const char* const (&table)[N], unsigned value) {
  return value < N ? table[value] : "Unknown";
}

// Kineto prints these as floats (shortest form: 6.5454545); values beyond float range stay doubles.
std::string floatText(double wide) {
  if (!(std::fabs(wide) <= 3.0e38)) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, wide);
    return std::string(buf, res.ptr);
  }
  const float value = float(wide);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, res.ptr);
}

}  // namespace

RecordClass parseRecord(const uint8_t* rec, size_t size, ParsedRecord& r) {
  if (size < 8) return RecordClass::Malformed;
  uint32_t kind = loadAt<uint32_t>(rec, 0);
  // The fields every event has are always written, so a decoder may reuse one ParsedRecord for a whole capture
  // instead of zeroing a fresh one per record (which cost more than the parse).
  r.start = r.end = 0;
  r.correlation = r.device = r.context = r.stream = r.process = r.thread = r.cbid = r.returnValue = 0;
  r.graphId = 0;
  r.graphNodeId = 0;
  switch (kind) {
    case FP_CUPTI_KIND_KERNEL:
    case FP_CUPTI_KIND_CONCURRENT_KERNEL: {
      if (size < 144) return RecordClass::Malformed;  // Kernel4 is the oldest layout with these offsets
      using K = fp_cupti_kernel10;
      r.kind = EventKind::Kernel;
      r.registersPerThread = FP_LOAD(rec, K, registersPerThread);
      r.start = FP_LOAD(rec, K, start);
      r.end = FP_LOAD(rec, K, end);
      r.device = FP_LOAD(rec, K, deviceId);
      r.context = FP_LOAD(rec, K, contextId);
      r.stream = FP_LOAD(rec, K, streamId);
      r.grid[0] = FP_LOAD(rec, K, gridX);
      r.grid[1] = FP_LOAD(rec, K, gridY);
      r.grid[2] = FP_LOAD(rec, K, gridZ);
      r.block[0] = FP_LOAD(rec, K, blockX);
      r.block[1] = FP_LOAD(rec, K, blockY);
      r.block[2] = FP_LOAD(rec, K, blockZ);
      r.staticSharedMemory = FP_LOAD(rec, K, staticSharedMemory);
      r.dynamicSharedMemory = FP_LOAD(rec, K, dynamicSharedMemory);
      r.correlation = FP_LOAD(rec, K, correlationId);
      r.queued = FP_LOAD(rec, K, queued);
      // A kernel a graph launch replayed: Kernel5 on (160 bytes and more) say which graph and node; 0 otherwise.
      r.graphId = size >= 160 ? FP_LOAD(rec, K, graphId) : 0;
      r.graphNodeId = size >= 160 ? FP_LOAD(rec, K, graphNodeId) : 0;
      return checkTiming(r);
    }
    case FP_CUPTI_KIND_MEMCPY: {
      if (size < 64) return RecordClass::Malformed;
      using M = fp_cupti_memcpy6;
      r.kind = EventKind::Memcpy;
      r.copyKind = FP_LOAD(rec, M, copyKind);
      r.srcKind = FP_LOAD(rec, M, srcKind);
      r.dstKind = FP_LOAD(rec, M, dstKind);
      r.bytes = FP_LOAD(rec, M, bytes);
      r.start = FP_LOAD(rec, M, start);
      r.end = FP_LOAD(rec, M, end);
      r.device = FP_LOAD(rec, M, deviceId);
      r.context = FP_LOAD(rec, M, contextId);
      r.stream = FP_LOAD(rec, M, streamId);
      r.correlation = FP_LOAD(rec, M, correlationId);
      return checkTiming(r);
    }
    case FP_CUPTI_KIND_MEMSET: {
      if (size < 64) return RecordClass::Malformed;
      using S = fp_cupti_memset4;
      r.kind = EventKind::Memset;
      r.memsetValue = FP_LOAD(rec, S, value);
      r.bytes = FP_LOAD(rec, S, bytes);
      r.start = FP_LOAD(rec, S, start);
      r.end = FP_LOAD(rec, S, end);
      r.device = FP_LOAD(rec, S, deviceId);
      r.context = FP_LOAD(rec, S, contextId);
      r.stream = FP_LOAD(rec, S, streamId);
      r.correlation = FP_LOAD(rec, S, correlationId);
      r.memoryKind = FP_LOAD(rec, S, memoryKind);
      return checkTiming(r);
    }
    case FP_CUPTI_KIND_RUNTIME:
    case FP_CUPTI_KIND_DRIVER: {
      if (size < sizeof(fp_cupti_api)) return RecordClass::Malformed;
      using A = fp_cupti_api;
      r.kind = kind == FP_CUPTI_KIND_RUNTIME ? EventKind::Runtime : EventKind::Driver;
      r.cbid = FP_LOAD(rec, A, cbid);
      r.start = FP_LOAD(rec, A, start);
      r.end = FP_LOAD(rec, A, end);
      r.process = FP_LOAD(rec, A, processId);
      r.thread = FP_LOAD(rec, A, threadId);
      r.correlation = FP_LOAD(rec, A, correlationId);
      r.returnValue = FP_LOAD(rec, A, returnValue);
      return checkTiming(r);
    }
    case FP_CUPTI_KIND_EXTERNAL_CORRELATION: {
      if (size < sizeof(fp_cupti_external_correlation)) return RecordClass::Malformed;
      using E = fp_cupti_external_correlation;
      r.externalKind = FP_LOAD(rec, E, externalKind);
      r.externalId = FP_LOAD(rec, E, externalId);
      r.correlation = FP_LOAD(rec, E, correlationId);
      // Kineto pushes CUSTOM0 for ops and CUSTOM1 for user annotations; anything else means the layout is off.
      if (r.externalKind != FP_CUPTI_EXTERNAL_KIND_CUSTOM0 && r.externalKind != FP_CUPTI_EXTERNAL_KIND_CUSTOM1)
        return RecordClass::Implausible;
      return RecordClass::ExternalCorrelation;
    }
    case FP_CUPTI_KIND_DEVICE:
      return size >= 152 ? RecordClass::Device : RecordClass::Malformed;
    default:
      return RecordClass::Ignored;
  }
}

bool parseDeviceRecord(const uint8_t* rec, size_t size, DeviceProperties& d) {
  if (size < 152 || loadAt<uint32_t>(rec, 0) != FP_CUPTI_KIND_DEVICE) return false;
  using D = fp_cupti_device5;
  d.id = FP_LOAD(rec, D, id);
  d.numMultiprocessors = FP_LOAD(rec, D, numMultiprocessors);
  d.threadsPerWarp = FP_LOAD(rec, D, numThreadsPerWarp);
  d.maxWarpsPerMultiprocessor = FP_LOAD(rec, D, maxWarpsPerMultiprocessor);
  d.maxBlocksPerMultiprocessor = FP_LOAD(rec, D, maxBlocksPerMultiprocessor);
  d.maxSharedMemoryPerMultiprocessor = FP_LOAD(rec, D, maxSharedMemoryPerMultiprocessor);
  d.maxRegistersPerMultiprocessor = FP_LOAD(rec, D, maxRegistersPerMultiprocessor);
  d.maxRegistersPerBlock = FP_LOAD(rec, D, maxRegistersPerBlock);
  d.maxThreadsPerBlock = FP_LOAD(rec, D, maxThreadsPerBlock);
  d.computeCapabilityMajor = FP_LOAD(rec, D, computeCapabilityMajor);
  d.computeCapabilityMinor = FP_LOAD(rec, D, computeCapabilityMinor);
  return true;
}

size_t recordSize(uint32_t kind, uint32_t apiVersion) {
  // CUPTI emits the newest record version of its own release. API versions: CUDA 12.x reports 18..24,
  // CUDA 13 switched to 130000-style numbers (CUPTI_API_VERSION 130001 ships Kernel10).
  const bool cuda13 = apiVersion >= 130000;
  switch (kind) {
    case FP_CUPTI_KIND_KERNEL:
    case FP_CUPTI_KIND_CONCURRENT_KERNEL: return cuda13 ? 216 : (apiVersion >= 18 ? 208 : 200);
    case FP_CUPTI_KIND_MEMCPY: return cuda13 ? 96 : 88;
    case FP_CUPTI_KIND_MEMSET: return cuda13 ? 88 : 80;
    case FP_CUPTI_KIND_RUNTIME:
    case FP_CUPTI_KIND_DRIVER: return sizeof(fp_cupti_api);
    case FP_CUPTI_KIND_EXTERNAL_CORRELATION: return sizeof(fp_cupti_external_correlation);
    case FP_CUPTI_KIND_DEVICE: return cuda13 ? 184 : 176;
    default: return 0;
  }
}

const char* runtimeApiName(uint32_t cbid) {
  switch (cbid) {
#define X(id, name) \
  case id: return name;
#include "generated/cupti_runtime_cbid_names.inc"
#undef X
    default: return nullptr;
  }
}

std::string memcpyName(const ParsedRecord& r) {
  std::string name = "Memcpy ";
  name += label(kCopyKinds, r.copyKind);
  name += " (";
  name += label(kMemoryKinds, r.srcKind);
  name += " -> ";
  name += label(kMemoryKinds, r.dstKind);
  name += ")";
  return name;
}

std::string memsetName(const ParsedRecord& r) {
  return std::string("Memset (") + label(kMemoryKinds, r.memoryKind) + ")";
}

Occupancy estimateOccupancy(const ParsedRecord& k, const DeviceProperties* d) {
  Occupancy o;
  if (d == nullptr || d->numMultiprocessors == 0 || d->maxWarpsPerMultiprocessor == 0) return o;
  const uint64_t warpSize = d->threadsPerWarp ? d->threadsPerWarp : 32;
  if (warpSize > 1024) return o;  // not a device record this tracer understands
  const double gridSize = double(k.grid[0]) * k.grid[1] * k.grid[2];
  const double threads = double(k.block[0]) * k.block[1] * k.block[2];
  o.known = true;
  o.blocksPerSm = gridSize / d->numMultiprocessors;
  o.warpsPerSm = o.blocksPerSm * threads / double(warpSize);
  if (!(threads >= 1 && threads <= double(1 << 20))) return o;
  const uint64_t threadsPerBlock = uint64_t(threads);
  // The limits cudaOccMaxActiveBlocksPerMultiprocessor applies: warps, blocks, registers, shared memory.
  const uint64_t warpsPerBlock = (threadsPerBlock + warpSize - 1) / warpSize;
  uint64_t active = d->maxWarpsPerMultiprocessor / warpsPerBlock;
  if (d->maxBlocksPerMultiprocessor) active = std::min<uint64_t>(active, d->maxBlocksPerMultiprocessor);
  if (k.registersPerThread > 0 && d->maxRegistersPerMultiprocessor) {
    const uint64_t regsPerWarp = (uint64_t(k.registersPerThread) * warpSize + 255) / 256 * 256;
    const uint64_t regsPerBlock = regsPerWarp * warpsPerBlock;
    if (d->maxRegistersPerBlock && regsPerBlock > d->maxRegistersPerBlock) {
      active = 0;
    } else {
      active = std::min<uint64_t>(active, d->maxRegistersPerMultiprocessor / regsPerBlock);
    }
  }
  const int64_t shared = int64_t(k.staticSharedMemory) + k.dynamicSharedMemory;
  if (shared > 0 && d->maxSharedMemoryPerMultiprocessor) {
    const uint64_t perBlock = (uint64_t(shared) + 127) / 128 * 128;
    active = std::min<uint64_t>(active, d->maxSharedMemoryPerMultiprocessor / perBlock);
  }
  const double blocks = std::min(o.blocksPerSm, double(active));
  const double maxThreads = double(d->maxWarpsPerMultiprocessor) * double(warpSize);
  o.achievedPercent = blocks * threads / maxThreads * 100.0;
  return o;
}

void appendMetadata(const ParsedRecord& r, std::optional<int64_t> externalId, const DeviceProperties* device,
                    std::map<std::string, std::string>& m) {
  if (externalId) m["External id"] = std::to_string(*externalId);
  m["correlation"] = std::to_string(r.correlation);
  switch (r.kind) {
    case EventKind::Kernel: {
      m["queued"] = std::to_string(r.queued);
      m["device"] = std::to_string(r.device);
      m["context"] = std::to_string(r.context);
      m["stream"] = std::to_string(r.stream);
      m["registers per thread"] = std::to_string(r.registersPerThread);
      m["shared memory"] = std::to_string(int64_t(r.staticSharedMemory) + r.dynamicSharedMemory);
      m["grid"] = "[" + std::to_string(r.grid[0]) + ", " + std::to_string(r.grid[1]) + ", " + std::to_string(r.grid[2]) + "]";
      m["block"] =
          "[" + std::to_string(r.block[0]) + ", " + std::to_string(r.block[1]) + ", " + std::to_string(r.block[2]) + "]";
      // Kineto's keys, written only for graph kernels (as for the other optional fields).
      if (r.graphId) {
        m["graph id"] = std::to_string(r.graphId);
        m["graph node id"] = std::to_string(r.graphNodeId);
      }
      // Only from recorded device properties: omitted, never invented.
      Occupancy o = estimateOccupancy(r, device);
      if (o.known) {
        m["blocks per SM"] = floatText(o.blocksPerSm);
        m["warps per SM"] = floatText(o.warpsPerSm);
        m["est. achieved occupancy %"] = std::to_string(int64_t(std::clamp(o.achievedPercent, -1e15, 1e15)));
      }
      break;
    }
    case EventKind::Memcpy:
    case EventKind::Memset: {
      m["device"] = std::to_string(r.device);
      m["context"] = std::to_string(r.context);
      m["stream"] = std::to_string(r.stream);
      m["bytes"] = std::to_string(r.bytes);
      const uint64_t duration = r.end - r.start;
      // bytes per ns is GB/s.
      m["memory bandwidth (GB/s)"] = doubleText(duration ? double(r.bytes) / double(duration) : 0.0);
      if (r.kind == EventKind::Memset) m["value"] = std::to_string(r.memsetValue);
      break;
    }
    case EventKind::Runtime:
    case EventKind::Driver:
      m["cbid"] = std::to_string(r.cbid);
      break;
  }
}

namespace {

// Writes a metadata object field by field, keys in the order std::map sorts them (what appendMetadata plus
// appendMetadataJson print), into a stack buffer appended to `out` once: a decode of millions of events would
// otherwise build a map of strings per event.
class MetadataWriter {
 public:
  explicit MetadataWriter(std::string& out) : out_(out) { *at_++ = '{'; }
  ~MetadataWriter() {
    *at_++ = '}';
    out_.append(buf_, size_t(at_ - buf_));
  }

  template <typename Int>
  void integer(const char* key, Int value) {
    this->key(key);
    at_ = std::to_chars(at_, at_ + 24, value).ptr;
  }
  void triple(const char* key, const int32_t (&v)[3]) {
    this->key(key);
    *at_++ = '[';
    for (int i = 0; i < 3; ++i) {
      if (i) at_ = put(at_, ", ");
      at_ = std::to_chars(at_, at_ + 12, v[i]).ptr;
    }
    *at_++ = ']';
  }
  // Values that may not be JSON literals (a float printed as "inf") are quoted as the map path quotes them.
  void text(const char* key, const std::string& value) {
    this->key(key);
    std::string quoted;
    const std::string* v = &value;
    if (!metadataValueIsJsonLiteral(value)) {
      appendJsonString(quoted, value.data(), value.size());
      v = &quoted;
    }
    const size_t n = std::min(v->size(), size_t(buf_ + kText - at_));  // floats print in under 32 characters
    std::memcpy(at_, v->data(), n);
    at_ += n;
  }

 private:
  // 13 keys (under 200 bytes with quotes and separators) and their values (at most 24 characters each, 64 for
  // a quoted text) fit with room to spare.
  static constexpr size_t kText = 960;
  std::string& out_;
  char buf_[1024];
  char* at_ = buf_;
  bool first_ = true;

  static char* put(char* at, const char* text) {
    const size_t n = std::strlen(text);
    std::memcpy(at, text, n);
    return at + n;
  }
  void key(const char* k) {
    if (!first_) at_ = put(at_, ", ");
    first_ = false;
    *at_++ = '"';
    at_ = put(at_, k);  // fixed keys: nothing to escape
    at_ = put(at_, "\": ");
  }
};

}  // namespace

void appendMetadataJson(const ParsedRecord& r, std::optional<int64_t> externalId, const DeviceProperties* device,
                        std::string& out) {
  MetadataWriter w(out);
  if (externalId) w.integer("External id", *externalId);
  switch (r.kind) {
    case EventKind::Kernel: {
      const Occupancy o = estimateOccupancy(r, device);
      w.triple("block", r.block);
      if (o.known) w.text("blocks per SM", floatText(o.blocksPerSm));
      w.integer("context", r.context);
      w.integer("correlation", r.correlation);
      w.integer("device", r.device);
      if (o.known) w.integer("est. achieved occupancy %", int64_t(std::clamp(o.achievedPercent, -1e15, 1e15)));
      if (r.graphId) {
        w.integer("graph id", r.graphId);
        w.integer("graph node id", r.graphNodeId);
      }
      w.triple("grid", r.grid);
      w.integer("queued", r.queued);
      w.integer("registers per thread", r.registersPerThread);
      w.integer("shared memory", int64_t(r.staticSharedMemory) + r.dynamicSharedMemory);
      w.integer("stream", r.stream);
      if (o.known) w.text("warps per SM", floatText(o.warpsPerSm));
      break;
    }
    case EventKind::Memcpy:
    case EventKind::Memset: {
      const uint64_t duration = r.end - r.start;
      w.integer("bytes", r.bytes);
      w.integer("context", r.context);
      w.integer("correlation", r.correlation);
      w.integer("device", r.device);
      w.text("memory bandwidth (GB/s)", doubleText(duration ? double(r.bytes) / double(duration) : 0.0));
      w.integer("stream", r.stream);
      if (r.kind == EventKind::Memset) w.integer("value", r.memsetValue);
      break;
    }
    case EventKind::Runtime:
    case EventKind::Driver:
      w.integer("cbid", r.cbid);
      w.integer("correlation", r.correlation);
      break;
  }
}

std::string eventName(const ParsedRecord& r, std::string_view pointedName, const DecodeContext& context) {
  switch (r.kind) {
    case EventKind::Kernel:
      return pointedName.empty() ? std::string("kernel") : demangle(std::string(pointedName));
    case EventKind::Memcpy: return memcpyName(r);
    case EventKind::Memset: return memsetName(r);
    case EventKind::Runtime: {
      if (const char* name = runtimeApiName(r.cbid)) return name;
      auto it = context.runtimeNames.find(r.cbid);
      return it != context.runtimeNames.end() ? it->second : std::string(kGenericRuntimeName);
    }
    case EventKind::Driver: {
      auto it = context.driverNames.find(r.cbid);
      return it != context.driverNames.end() ? it->second : std::string(kGenericDriverName);
    }
  }
  return "unknown";
}

}  // namespace flagprof::cupti
