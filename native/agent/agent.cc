// libflagprof_agent.so: the capture side of the shared tracer for CUPTI-compatible vendor libraries.
//
// Loaded by the Python launcher before torch touches a device: the constructor binds the vendor library
// and registers the buffer callbacks (they must precede the first device context) and arms only the device
// kinds. RUNTIME and EXTERNAL_CORRELATION are armed at start() (arming them at load slowed a launch-bound
// workload by 22%). Each completed buffer is copied, records verbatim plus the strings they point to, into
// one crc-protected frame of the .fpc file while the buffer is still alive (on the vendor's delivery thread, so
// the launching thread pays only the vendor's own recording). API names are resolved after the
// final flush, never inside a buffer callback (some vendors deadlock there).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../tracer/cupti_decode.h"
#include "../tracer/cupti_mirror.h"
#include "../tracer/fpc_format.h"

#define FLAGPROF_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

namespace fpc = flagprof::fpc;

// The CUPTI C ABI as used here (CUptiResult is an int enum; CUPTIAPI is empty on Linux).
using BufferRequestFn = void (*)(uint8_t**, size_t*, size_t*);
using BufferCompleteFn = void (*)(void*, uint32_t, uint8_t*, size_t, size_t);
struct Cupti {
  int (*getVersion)(uint32_t*) = nullptr;
  int (*getTimestamp)(uint64_t*) = nullptr;
  int (*registerCallbacks)(BufferRequestFn, BufferCompleteFn) = nullptr;
  int (*enable)(int) = nullptr;
  int (*disable)(int) = nullptr;
  int (*flushAll)(uint32_t) = nullptr;
  int (*getNextRecord)(uint8_t*, size_t, void**) = nullptr;
  int (*getNumDroppedRecords)(void*, uint32_t, size_t*) = nullptr;
  int (*pushExternal)(int, uint64_t) = nullptr;
  int (*popExternal)(int, uint64_t*) = nullptr;
  int (*getCallbackName)(int, uint32_t, const char**) = nullptr;
  int (*setThreadIdType)(int) = nullptr;
};

constexpr uint32_t kFlushForced = 1;       // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
constexpr int kThreadIdSystem = 1;         // CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM: matches Kineto's tids
constexpr size_t kBufferSize = 8u << 20;
// Buffers written at load so the vendor never fills fresh pages on a launching thread: it delivers buffers on
// its own thread, so one is always in flight while the next fills; two cover that, and reuse covers the rest.
constexpr size_t kWarmBuffers = 2;
constexpr size_t kPooledBuffers = 4;
constexpr size_t kSeenIds = 4096;

struct State {
  std::mutex mutex;  // file and pending frames
  Cupti api;
  void* library = nullptr;
  std::string libraryPath;
  std::string loadError;
  uint32_t apiVersion = 0;
  bool traceOn = false;
  bool armed = false;
  int registerResult = -1, enableKernel = -1, enableMemcpy = -1, enableMemset = -1, enableDevice = -1;
  int fd = -1;
  std::string path;
  std::string pending;  // frames produced before open()
  std::atomic<bool> started{false};
  // Records are copied from start() until the final flush of stop() has delivered them; before, they would fall
  // outside the capture window anyway, so a loaded-but-idle agent costs only the vendor's own recording.
  std::atomic<bool> copying{false};
  std::mutex poolMutex;
  std::vector<void*> pool;  // completed buffers, reused: the first write to a fresh page costs a fault
  std::atomic<bool> warnedLayout{false}, warnedBound{false}, warnedAlloc{false};
  std::atomic<uint64_t> kernels{0}, memcpys{0}, memsets{0}, runtimes{0}, drivers{0}, externals{0}, devices{0};
  std::atomic<uint64_t> dropped{0}, rejected{0};
  std::atomic<uint64_t> seenRuntime[kSeenIds / 64] = {}, seenDriver[kSeenIds / 64] = {};
};

State& state() {
  static State* s = new State();  // never destroyed: vendor threads may call back during exit
  return *s;
}

thread_local std::string lastError;

uint64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string trim(const char* s) {
  if (s == nullptr) return {};
  std::string v(s);
  size_t b = v.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = v.find_last_not_of(" \t\r\n");
  return v.substr(b, e - b + 1);
}

// Writes a whole frame with one write() so a kill leaves whole frames or a truncated last one, which the
// decoder reports and skips.
void writeFrameLocked(State& s, const std::string& frame) {
  if (s.fd < 0) {
    s.pending += frame;
    return;
  }
  const char* p = frame.data();
  size_t left = frame.size();
  while (left > 0) {
    ssize_t n = ::write(s.fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= size_t(n);
  }
}

void emitFrame(uint32_t type, const std::string& payload) {
  State& s = state();
  std::string frame = fpc::frame(type, payload);
  std::lock_guard<std::mutex> lock(s.mutex);
  writeFrameLocked(s, frame);
}

// writeFrameLocked for a frame in pieces: one writev(), so the same whole-or-truncated guarantee holds.
void writeFrameLocked(State& s, iovec* iov, int count) {
  if (s.fd < 0) {
    for (int i = 0; i < count; ++i) s.pending.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
    return;
  }
  while (count > 0) {
    ssize_t n = ::writev(s.fd, iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t done = size_t(n);
    while (count > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
}

// A growable byte buffer that keeps its capacity across completions and appends without zero-filling first.
// Allocation failure is reported, never thrown: this runs inside the vendor's C callback.
struct Bytes {
  char* data = nullptr;
  size_t size = 0, capacity = 0;
  ~Bytes() { free(data); }
  void clear() { size = 0; }
  bool reserve(size_t n) {
    if (n <= capacity) return true;
    size_t c = capacity ? capacity : 4096;
    while (c < n) c *= 2;
    char* p = static_cast<char*>(realloc(data, c));
    if (p == nullptr) return false;
    data = p;
    capacity = c;
    return true;
  }
  char* grow(size_t n) {  // room for n more bytes, for the caller to fill; nullptr when memory is short
    if (size + n > capacity && !reserve(size + n)) return nullptr;
    char* p = data + size;
    size += n;
    return p;
  }
  bool put32(uint32_t v) { return append(&v, 4); }
  bool append(const void* p, size_t n) {
    char* out = grow(n);
    if (out) std::memcpy(out, p, n);
    return out != nullptr;
  }
};

// A diagnostic: one stderr line (gated ones only with FLAGOS_TRACE on) and the same line as a structured frame.
void diagnostic(const char* code, bool gated, bool warning, const char* fmt, ...) {
  State& s = state();
  if (gated && !s.traceOn) return;
  char text[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  fprintf(stderr, "%s\n", text);
  std::string payload;
  payload.push_back(char(warning ? 1 : 0));
  payload.push_back(char(gated ? 1 : 0));
  fpc::put16(payload, uint16_t(strlen(code)));
  fpc::put32(payload, uint32_t(strlen(text)));
  fpc::put64(payload, realtimeNs());
  payload += code;
  payload += text;
  emitFrame(fpc::FrameDiagnostic, payload);
}

void calibrate(uint32_t phase) {
  State& s = state();
  uint64_t vendor = 0;
  int result = -1;
  const uint64_t before = realtimeNs();
  if (s.api.getTimestamp) result = s.api.getTimestamp(&vendor);
  const uint64_t after = realtimeNs();
  const uint64_t realtime = before + (after - before) / 2;
  diagnostic("C6", true, false, "[flagos] clock sample result=%d vendor=%llu realtime=%llu", result,
             (unsigned long long)vendor, (unsigned long long)realtime);
  if (result != 0 || vendor == 0) return;
  std::string payload;
  fpc::put32(payload, phase);
  fpc::put32(payload, 0);
  fpc::put64(payload, vendor);
  fpc::put64(payload, realtime);
  emitFrame(fpc::FrameCalibration, payload);
}

void markSeen(std::atomic<uint64_t>* bits, uint32_t id) {
  if (id >= kSeenIds) return;
  const uint64_t bit = 1ull << (id % 64);
  // Almost always already set: a plain load spares the locked read-modify-write per record.
  if (!(bits[id / 64].load(std::memory_order_relaxed) & bit)) bits[id / 64].fetch_or(bit, std::memory_order_relaxed);
}

void layoutWarning(const char* what) {
  State& s = state();
  if (s.warnedLayout.exchange(true)) return;
  diagnostic("C16", false, true, "[flagos] CUPTI activity records failed the layout self-check (%s).", what);
  diagnostic("C16", false, true, "[flagos]   bound CUPTI: %s (API version %u)",
             s.libraryPath.empty() ? "<unknown>" : s.libraryPath.c_str(), s.apiVersion);
  diagnostic("C16", false, true, "[flagos]   Records that fail the check are dropped and counted; the rest of the capture is kept.");
  diagnostic("C16", false, true, "[flagos]   The record layout this agent mirrors does not match the library it bound.");
  diagnostic("C16", false, true, "[flagos]   Point FLAGOS_TRACER_LIBRARY at the CUPTI that belongs to the running CUDA runtime.");
}

void bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
  State& s = state();
  diagnostic("C13", true, false, "[flagos] CUPTI bufferRequested callback invoked");
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.poolMutex);
    if (!s.pool.empty()) {
      p = s.pool.back();
      s.pool.pop_back();
    }
  }
  if (p == nullptr && posix_memalign(&p, 8, kBufferSize) != 0) p = nullptr;
  if (p == nullptr && !s.warnedAlloc.exchange(true)) {
    diagnostic("C18", false, true,
               "[flagos] CUPTI activity buffer allocation failed (%zu bytes); records are dropped while memory is "
               "short and the capture is incomplete",
               kBufferSize);
  }
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferSize : 0;
  *maxRecords = 0;
}

void bufferCompleted(void* context, uint32_t streamId, uint8_t* buffer, size_t /*size*/, size_t validSize) {
  State& s = state();
  diagnostic("C14", true, false, "[flagos] CUPTI bufferCompleted callback invoked, validSize=%zu", validSize);
  const bool capturing = s.fd >= 0 && s.copying.load(std::memory_order_acquire);  // device records always kept
  // The frame goes out in two pieces plus its crc: `head` (type, length, string table, record count) and
  // `records` ({size, string index, bytes}*), so each record's bytes are copied once, straight from the buffer.
  thread_local Bytes head, records;
  thread_local std::unordered_map<const char*, uint32_t> stringIndex;
  head.clear();
  records.clear();
  stringIndex.clear();
  if (capturing) records.reserve(validSize + validSize / 2);  // 8 bytes more per record of >= 24: one allocation
  bool room = head.put32(fpc::FrameRecords) && head.put32(0) && head.put32(0);  // length, string count: at the end
  uint32_t stringCount = 0, recordCount = 0;
  uint64_t lost = 0;  // records that found no memory to be copied into
  uint64_t kernels = 0, devices = 0, memcpys = 0, memsets = 0, runtimes = 0, drivers = 0, externals = 0;
  const char* lastPointed = nullptr;  // consecutive launches of one kernel share its name
  uint32_t lastString = 0;
  void* record = nullptr;
  const uint8_t* end = buffer + validSize;
  // At most validSize/4 records fit in a buffer: a bound that cannot truncate, only stop a runaway iterator.
  size_t bound = validSize / 4;
  while (room && buffer && validSize && s.api.getNextRecord(buffer, validSize, &record) == 0) {
    if (bound-- == 0) {
      if (!s.warnedBound.exchange(true))
        diagnostic("C17", false, true,
                   "[flagos] processBuffer hit the per-buffer record bound (%zu) for buffer size %zu bytes; the tail of "
                   "the buffer is missing from the capture",
                   validSize / 4, validSize);
      break;
    }
    const uint8_t* rec = static_cast<const uint8_t*>(record);
    uint32_t kind;
    std::memcpy(&kind, rec, 4);
    size_t size = flagprof::cupti::recordSize(kind, s.apiVersion);
    if (size == 0) continue;  // a kind this tracer does not decode
    if (rec + size > end) {
      layoutWarning("record overruns the buffer");
      s.rejected++;
      break;
    }
    if (!capturing && kind != FP_CUPTI_KIND_DEVICE) continue;
    flagprof::cupti::ParsedRecord parsed;
    auto cls = flagprof::cupti::parseRecord(rec, size, parsed);
    if (cls == flagprof::cupti::RecordClass::Implausible) {
      layoutWarning(kind == FP_CUPTI_KIND_EXTERNAL_CORRELATION ? "external correlation kind unexpected"
                                                              : "timestamps implausible");
      s.rejected++;
    }
    uint32_t string = 0xffffffffu;
    const char* pointed = nullptr;
    if (kind == FP_CUPTI_KIND_CONCURRENT_KERNEL || kind == FP_CUPTI_KIND_KERNEL) {
      std::memcpy(&pointed, rec + offsetof(fp_cupti_kernel10, name), sizeof pointed);
      kernels++;
    } else if (kind == FP_CUPTI_KIND_DEVICE) {
      std::memcpy(&pointed, rec + offsetof(fp_cupti_device5, name), sizeof pointed);
      devices++;
    } else if (kind == FP_CUPTI_KIND_MEMCPY) {
      memcpys++;
    } else if (kind == FP_CUPTI_KIND_MEMSET) {
      memsets++;
    } else if (kind == FP_CUPTI_KIND_RUNTIME) {
      runtimes++;
      markSeen(s.seenRuntime, parsed.cbid);
    } else if (kind == FP_CUPTI_KIND_DRIVER) {
      drivers++;
      markSeen(s.seenDriver, parsed.cbid);
    } else if (kind == FP_CUPTI_KIND_EXTERNAL_CORRELATION) {
      externals++;
    }
    if (pointed) {
      if (pointed != lastPointed) {
        auto it = stringIndex.find(pointed);
        if (it == stringIndex.end()) {
          const size_t n = strnlen(pointed, 1 << 16);
          if (!head.reserve(head.size + 4 + n + 4)) {  // the string and the record count after it
            lost++;
            continue;
          }
          head.put32(uint32_t(n));
          head.append(pointed, n);
          it = stringIndex.emplace(pointed, stringCount++).first;
        }
        lastPointed = pointed;
        lastString = it->second;
      }
      string = lastString;
    }
    char* out = records.grow(8 + size);
    if (out == nullptr) {
      lost++;
      continue;
    }
    const uint32_t meta[2] = {uint32_t(size), string};
    std::memcpy(out, meta, 8);
    std::memcpy(out + 8, rec, size);
    recordCount++;
  }
  s.kernels += kernels;
  s.devices += devices;
  s.memcpys += memcpys;
  s.memsets += memsets;
  s.runtimes += runtimes;
  s.drivers += drivers;
  s.externals += externals;
  if (recordCount) {
    head.put32(recordCount);
    const uint32_t length = uint32_t(head.size - 8 + records.size);
    std::memcpy(head.data + 4, &length, 4);
    std::memcpy(head.data + 8, &stringCount, 4);
    uint32_t crc = fpc::crc32(records.data, records.size, fpc::crc32(head.data, head.size));
    iovec iov[3] = {{head.data, head.size}, {records.data, records.size}, {&crc, sizeof crc}};
    std::lock_guard<std::mutex> lock(s.mutex);
    writeFrameLocked(s, iov, 3);
  }
  if (lost && !s.warnedAlloc.exchange(true)) {
    diagnostic("C18", false, true,
               "[flagos] CUPTI activity buffer allocation failed (%zu bytes) copying records into the capture; records "
               "are dropped while memory is short and the capture is incomplete",
               validSize + validSize / 2);
  }
  size_t dropped = 0;
  if (s.api.getNumDroppedRecords && s.api.getNumDroppedRecords(context, streamId, &dropped) == 0) dropped += lost;
  else dropped = lost;
  if (dropped) {
    s.dropped += dropped;
    std::string d;
    fpc::put32(d, uint32_t(reinterpret_cast<uintptr_t>(context)));
    fpc::put32(d, streamId);
    fpc::put64(d, dropped);
    emitFrame(fpc::FrameDropped, d);
  }
  if (buffer) {
    std::lock_guard<std::mutex> lock(s.poolMutex);
    if (s.pool.size() < kPooledBuffers) {
      s.pool.push_back(buffer);
      buffer = nullptr;
    }
  }
  free(buffer);
}

template <typename F>
bool bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

bool bindLibrary(State& s, void* lib) {
  Cupti a;
  bind(lib, "cuptiGetVersion", a.getVersion);
  bind(lib, "cuptiGetTimestamp", a.getTimestamp);
  bind(lib, "cuptiActivityGetNumDroppedRecords", a.getNumDroppedRecords);
  bind(lib, "cuptiActivityPushExternalCorrelationId", a.pushExternal);
  bind(lib, "cuptiActivityPopExternalCorrelationId", a.popExternal);
  bind(lib, "cuptiGetCallbackName", a.getCallbackName);
  bind(lib, "cuptiSetThreadIdType", a.setThreadIdType);
  const bool required = bind(lib, "cuptiActivityRegisterCallbacks", a.registerCallbacks) &
                        bind(lib, "cuptiActivityEnable", a.enable) & bind(lib, "cuptiActivityDisable", a.disable) &
                        bind(lib, "cuptiActivityFlushAll", a.flushAll) &
                        bind(lib, "cuptiActivityGetNextRecord", a.getNextRecord);
  if (!required) return false;
  s.api = a;
  s.library = lib;
  return true;
}

void loadVendor(State& s) {
  std::string tried;
  std::string override = trim(getenv("FLAGOS_TRACER_LIBRARY"));
  if (!override.empty()) {
    void* lib = dlopen(override.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib && bindLibrary(s, lib)) {
      s.libraryPath = override;
    } else {
      const char* err = lib ? "required CUPTI activity symbols are missing" : dlerror();
      diagnostic("S1", false, true, "[flagos-cupti-shim] FLAGOS_TRACER_LIBRARY=%s could not be loaded: %s",
                 override.c_str(), err ? err : "unknown error");
      tried += "FLAGOS_TRACER_LIBRARY=" + override + " (" + (err ? err : "unknown error") + "); ";
    }
  }
  if (!s.library) {
    void* self = dlopen(nullptr, RTLD_NOW);
    if (self && dlsym(self, "cuptiActivityRegisterCallbacks") && bindLibrary(s, self)) s.libraryPath = "<process image>";
  }
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if (s.library) break;
    void* lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (lib && bindLibrary(s, lib)) {
      s.libraryPath = name;
    } else {
      const char* err = lib ? "required CUPTI activity symbols are missing" : dlerror();
      tried += std::string(name) + " (" + (err ? err : "unknown error") + "); ";
    }
  }
  if (!s.library) {
    if (tried.size() >= 2) tried.resize(tried.size() - 2);
    s.loadError = "no CUPTI-compatible library could be loaded; tried " + tried;
    diagnostic("C1", true, false, "[flagos] CUPTI not available, tracer not armed");
    return;
  }
  // dladdr names the file the symbol actually came from.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(s.api.registerCallbacks), &info) && info.dli_fname) s.libraryPath = info.dli_fname;
  if (s.api.getVersion) s.api.getVersion(&s.apiVersion);
  diagnostic("S2", true, false, "[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks -> %s (CUPTI API version %u)",
             s.libraryPath.c_str(), s.apiVersion);
}

__attribute__((constructor)) void agentLoad() {
  State& s = state();
  std::string trace = trim(getenv("FLAGOS_TRACE"));
  std::string lower;
  for (char c : trace) lower.push_back(char(tolower(static_cast<unsigned char>(c))));
  if (lower == "1" || lower == "true" || lower == "on" || lower == "yes") {
    s.traceOn = true;
  } else if (!(lower.empty() || lower == "0" || lower == "false" || lower == "off" || lower == "no")) {
    diagnostic("E1", false, true, "[flagos] FLAGOS_TRACE: \"%s\" is not a boolean; using the default", trace.c_str());
  }
  loadVendor(s);
  if (!s.library) return;
  if (s.api.setThreadIdType) s.api.setThreadIdType(kThreadIdSystem);
  diagnostic("C2", true, false, "[flagos] Registering CUPTI activity callbacks...");
  s.registerResult = s.api.registerCallbacks(bufferRequested, bufferCompleted);
  diagnostic("C3", true, false, "[flagos] ActivityRegisterCallbacks result: %d", s.registerResult);
  s.enableKernel = s.api.enable(FP_CUPTI_KIND_CONCURRENT_KERNEL);
  s.enableMemcpy = s.api.enable(FP_CUPTI_KIND_MEMCPY);
  s.enableMemset = s.api.enable(FP_CUPTI_KIND_MEMSET);
  s.enableDevice = s.api.enable(FP_CUPTI_KIND_DEVICE);  // device properties, for occupancy
  diagnostic("C4", true, false,
             "[flagos] init ActivityEnable CONCURRENT_KERNEL=%d KERNEL=skipped MEMCPY=%d MEMSET=%d DEVICE=%d "
             "(RUNTIME/EXTERNAL_CORRELATION deferred to start())",
             s.enableKernel, s.enableMemcpy, s.enableMemset, s.enableDevice);
  s.armed = s.registerResult == 0;
  if (!s.armed) return;
  std::lock_guard<std::mutex> lock(s.poolMutex);
  for (size_t i = 0; i < kWarmBuffers; ++i) {
    void* p = nullptr;
    if (posix_memalign(&p, 8, kBufferSize) != 0) break;
    for (size_t at = 0; at < kBufferSize; at += 4096) static_cast<volatile char*>(p)[at] = 0;
    s.pool.push_back(p);
  }
}

void resolveNames(int domain, std::atomic<uint64_t>* seen) {
  State& s = state();
  if (!s.api.getCallbackName) return;
  std::string payload, entries;
  uint32_t count = 0;
  for (uint32_t id = 0; id < kSeenIds; ++id) {
    if (!(seen[id / 64].load(std::memory_order_relaxed) & (1ull << (id % 64)))) continue;
    const char* name = nullptr;
    if (s.api.getCallbackName(domain, id, &name) != 0 || name == nullptr) continue;
    fpc::put32(entries, id);
    fpc::put32(entries, uint32_t(strlen(name)));
    entries += name;
    count++;
  }
  if (!count) return;
  fpc::put32(payload, uint32_t(domain));
  fpc::put32(payload, count);
  payload += entries;
  emitFrame(fpc::FrameNames, payload);
}

void session(uint32_t event) {
  std::string payload;
  fpc::put32(payload, event);
  fpc::put32(payload, 0);
  fpc::put64(payload, realtimeNs());
  emitFrame(fpc::FrameSession, payload);
}

int fail(const std::string& message) {
  lastError = message;
  return -1;
}

}  // namespace

FLAGPROF_EXPORT const char* flagprof_agent_last_error(void) { return lastError.c_str(); }

FLAGPROF_EXPORT int flagprof_agent_open(const char* capturePath) {
  State& s = state();
  if (!s.library) return fail(s.loadError);
  if (!s.armed) return fail("cuptiActivityRegisterCallbacks failed with " + std::to_string(s.registerResult) + " (" + s.libraryPath + ")");
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fd >= 0) return fail("a capture is already open: " + s.path);
  int fd = ::open(capturePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(std::string(capturePath) + ": " + strerror(errno));
  uint64_t vendor = 0;
  if (s.api.getTimestamp) s.api.getTimestamp(&vendor);
  std::string head = fpc::header(fpc::VendorCupti, s.apiVersion, uint32_t(getpid()), vendor, realtimeNs());
  std::string library;
  fpc::put32(library, uint32_t(s.libraryPath.size()));
  library += s.libraryPath;
  head += fpc::frame(fpc::FrameLibrary, library);
  head += s.pending;  // load-time diagnostics and device records
  s.pending.clear();
  s.fd = fd;
  s.path = capturePath;
  writeFrameLocked(s, head);
  return 0;
}

FLAGPROF_EXPORT int flagprof_agent_start(void) {
  State& s = state();
  if (s.fd < 0) return fail("start() before open()");
  if (s.started.exchange(true)) return 0;
  calibrate(1);
  diagnostic("C7", true, false, "[flagos] CuptiDeviceTracer::start() called");
  // Leftovers from before the session go out first, uncopied (only device properties are kept from them).
  int flush = s.api.flushAll(kFlushForced);
  diagnostic("C9", true, false, "[flagos] Initial ActivityFlushAll result: %d", flush);
  session(1);
  s.copying.store(true, std::memory_order_release);
  int runtime = s.api.enable(FP_CUPTI_KIND_RUNTIME);
  int external = s.api.enable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
  diagnostic("C8", true, false,
             "[flagos] Activity setup results: CALLBACKS=%d, CONCURRENT_KERNEL=%d, KERNEL=skipped, MEMCPY=%d, "
             "MEMSET=%d, RUNTIME=%d, EXTERNAL_CORRELATION=%d",
             s.registerResult, s.enableKernel, s.enableMemcpy, s.enableMemset, runtime, external);
  if (runtime != 0) return fail("cuptiActivityEnable(RUNTIME) failed with " + std::to_string(runtime));
  return 0;
}

FLAGPROF_EXPORT int flagprof_agent_stop(void) {
  State& s = state();
  if (!s.started.exchange(false)) return 0;
  diagnostic("C10", true, false, "[flagos] CuptiDeviceTracer::stop() called");
  session(2);
  diagnostic("C11", true, false, "[flagos] Flushing CUPTI activities...");
  int flush = s.api.flushAll(kFlushForced);
  diagnostic("C12", true, false, "[flagos] ActivityFlushAll result: %d", flush);
  s.copying.store(false, std::memory_order_release);
  s.api.disable(FP_CUPTI_KIND_RUNTIME);
  s.api.disable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
  calibrate(2);
  // Only now, with every buffer delivered, ask the vendor for names.
  resolveNames(FP_CUPTI_CB_DOMAIN_RUNTIME_API, s.seenRuntime);
  resolveNames(FP_CUPTI_CB_DOMAIN_DRIVER_API, s.seenDriver);
  const uint64_t device = s.kernels + s.memcpys + s.memsets;
  diagnostic("A4", true, false,
             "[flagos] session stop: copied kernel=%llu memcpy=%llu memset=%llu runtime=%llu driver=%llu "
             "external=%llu records, dropped %llu",
             (unsigned long long)s.kernels.load(), (unsigned long long)s.memcpys.load(),
             (unsigned long long)s.memsets.load(), (unsigned long long)s.runtimes.load(),
             (unsigned long long)s.drivers.load(), (unsigned long long)s.externals.load(),
             (unsigned long long)s.dropped.load());
  if (device > 0 && s.runtimes == 0 && s.drivers == 0) {
    diagnostic("A12", false, true,
               "[flagos] the capture holds %llu device records but no runtime records: device activity cannot be "
               "linked to the ops that launched it.",
               (unsigned long long)device);
    diagnostic("A12", false, true, "[flagos]   Device time per op will read 0; the device timeline itself is unaffected.");
  }
  return 0;
}

FLAGPROF_EXPORT int flagprof_agent_push_correlation(uint64_t id) {
  State& s = state();
  if (!s.api.pushExternal) return fail("the vendor library has no cuptiActivityPushExternalCorrelationId");
  int r = s.api.pushExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, id);
  return r == 0 ? 0 : fail("cuptiActivityPushExternalCorrelationId failed with " + std::to_string(r));
}

FLAGPROF_EXPORT int flagprof_agent_pop_correlation(void) {
  State& s = state();
  if (!s.api.popExternal) return fail("the vendor library has no cuptiActivityPopExternalCorrelationId");
  uint64_t last = 0;  // a real address: some vendors fail on NULL without unwinding the stack
  int r = s.api.popExternal(FP_CUPTI_EXTERNAL_KIND_CUSTOM0, &last);
  return r == 0 ? 0 : fail("cuptiActivityPopExternalCorrelationId failed with " + std::to_string(r));
}

FLAGPROF_EXPORT int flagprof_agent_close(void) {
  State& s = state();
  flagprof_agent_stop();
  std::string end;
  fpc::put64(end, realtimeNs());
  std::string frame = fpc::frame(fpc::FrameEnd, end);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fd < 0) return fail("close() without an open capture");
  writeFrameLocked(s, frame);
  int r = ::fsync(s.fd) == 0 ? 0 : 0;
  ::close(s.fd);
  s.fd = -1;
  return r;
}

FLAGPROF_EXPORT const char* flagprof_agent_library(void) { return state().libraryPath.c_str(); }
