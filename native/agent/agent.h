// What the vendor-neutral part of libflagprof_agent.so (agent.cc) shares with the per-vendor bindings
// (native/vendors/<key>/binding.cc): the capture file, diagnostics, the activity-buffer pool, the records-frame
// builder, and the interface each vendor implements. Nothing here is exported from the library.
#pragma once

#include <dlfcn.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../tracer/device_tracer.h"
#include "../tracer/fpc_format.h"
#include "../vendors/vendors.h"

namespace flagprof::agent {

namespace fpc = flagprof::fpc;

// One DeviceTracer per vendor activity API (native/vendors/<key>/binding.cc), chosen once
// per process by MakeDeviceTracer(). The vendor file does what is vendor-specific (arming at load, the session,
// correlation ids); this base does what every vendor shares: the DeviceTracer session over the capture, whose
// drain() decodes what was recorded since start() with the same decoder the extension uses.
class VendorTracer : public DeviceTracer {
 public:
  virtual const char* name() const = 0;  // "CUPTI", "MSPTI", "ROCtracer"
  virtual uint32_t fpcVendor() const = 0;
  virtual uint32_t apiVersion() const = 0;
  // The activity-API function whose file names the bound library (dladdr).
  virtual void* anchorSymbol() const = 0;
  // Registers the buffer callbacks and arms the device kinds (before the first device context).
  virtual void armAtLoad() = 0;
  virtual bool armed() const = 0;
  virtual std::string notArmedReason() const = 0;
  // The clock pair of the capture header: (vendor clock, realtime) taken now.
  virtual void clockPair(uint64_t& vendorNs, uint64_t& realtime) = 0;
  // Arms RUNTIME/API and EXTERNAL_CORRELATION; 0, or -1 with `error` set (one line).
  virtual int startSession(std::string& error) = 0;
  // Disarms them and flushes every buffer the vendor holds.
  virtual void stopSession() = 0;
  // Push/pop of the torch id on the calling thread (pop with a real out-address: seed §MSPTI).
  virtual int pushExternal(uint64_t id, std::string& error) = 0;
  virtual int popExternal(std::string& error) = 0;
  // At process exit, once (atexit): what the vendor needs before the process ends (MSPTI: unsubscribe, then flush).
  virtual void shutdown() {}

  // DeviceTracer, the same for every vendor (agent.cc).
  bool available() const final;
  void start() final;
  void stop() final;
  std::vector<DeviceEvent> drain() final;
  void pushCorrelation(uint64_t id) final;
  void popCorrelation() final;
  int deviceCount() const final;
};

// The binding for `lib` when it exports that vendor's activity API, else nullptr (and `missing` says why):
// `bind_<key>` for each vendor of the table, in native/vendors/<key>/binding.cc.
#define FLAGPROF_DECLARE_BINDING(key) std::unique_ptr<VendorTracer> bind_##key(void* lib, std::string& missing);
FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_DECLARE_BINDING)
#undef FLAGPROF_DECLARE_BINDING

constexpr size_t kBufferSize = 8u << 20;
// Buffers written at load so the vendor never fills fresh pages on a launching thread: it delivers buffers on
// its own thread, so one is always in flight while the next fills; two cover that, and reuse covers the rest.
constexpr size_t kWarmBuffers = 2;
constexpr size_t kPooledBuffers = 4;

struct State {
  std::mutex mutex;  // file and pending frames
  std::unique_ptr<DeviceTracer> tracer;  // the process's one tracer (MakeDeviceTracer at load)
  VendorTracer* vendor = nullptr;         // the same object when a vendor library is bound, else nullptr
  std::string libraryPath;
  // The bound library was in the process's link map before the agent loaded it (preloaded, or linked by the
  // program): read from /proc/self/maps, never from the LD_PRELOAD string, which may name a file that did not load.
  bool loadedAtStart = false;
  std::string loadError;
  bool traceOn = false;
  int fd = -1;
  std::string path;
  std::string context;  // frames written outside sessions (device records, load lines): the head of every capture
  size_t headerBytes = 0;      // the capture's header and library frame
  uint64_t sessionOffset = 0;  // where the frames of the current session begin
  std::atomic<bool> started{false};
  // Records are copied from start() until the final flush of stop() has delivered them; before, they would fall
  // outside the capture window anyway, so a loaded-but-idle agent costs only the vendor's own recording.
  std::atomic<bool> copying{false};
  std::mutex poolMutex;
  std::vector<void*> pool;  // completed buffers, reused: the first write to a fresh page costs a fault
  std::atomic<bool> warnedLayout{false}, warnedBound{false}, warnedAlloc{false};
  std::atomic<uint64_t> kernels{0}, memcpys{0}, memsets{0}, runtimes{0}, drivers{0}, externals{0}, devices{0};
  std::atomic<uint64_t> dropped{0}, rejected{0};
};

State& state();

// The capture (agent.cc): open the launcher's file, or at start() an in-memory one when none is open; start and
// stop the session; decode the current session back into DeviceEvents.
struct DrainCounts {
  uint64_t records = 0, events = 0, dropped = 0, badFrames = 0, malformed = 0;
};
int openCapture(const char* capturePath, std::string& error);
int startCapture(std::string& error);
void stopCapture();
int drainCapture(const std::function<void(const DeviceEvent&)>& visit, DrainCounts& counts, std::string& error);
// The tracer name the accelerator is traced by ("CUPTI", ..., "none"), nullptr for an unknown accelerator.
const char* acceleratorTracer(const char* accelerator);

uint64_t realtimeNs();

// A diagnostic: one stderr line (gated ones only with FLAGOS_TRACE on) and the same line as a structured frame.
void diagnostic(const char* code, bool gated, bool warning, const char* fmt, ...) __attribute__((format(printf, 4, 5)));

void emitFrame(uint32_t type, const std::string& payload);
// A names frame of the device-index domain (fpc_format.h): the device id records carry, ids[i], is the process's
// device i. Nothing is written for no ids.
void emitDeviceIndices(const std::vector<uint32_t>& ids);
// Writes a frame in pieces with one writev() (whole frames or a truncated last one, never interleaved).
void writeFrameLocked(State& s, iovec* iov, int count);
// u32 event (1 start, 2 stop), the realtime now.
void sessionFrame(uint32_t event);
// A4 and A12: what was copied, and the warning when device records came without runtime records.
void sessionSummary();

// A vendor function by name; false when the library lacks it.
template <typename F>
bool bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

// The vendor's records failed the layout self-check: one warning (its continuation lines included) per process,
// under the vendor's `code`, naming the bound library and what to point FLAGOS_TRACER_LIBRARY at (`hint`).
void layoutWarning(const char* code, const char* vendor, const char* versionWord, uint32_t version, const char* hint,
                   const char* what);

// API ids seen in records, named only after the final flush (some vendors deadlock when asked inside a buffer
// callback). Ids at or above kSeenIds are not named.
constexpr size_t kSeenIds = 4096;
void markSeen(std::atomic<uint64_t>* bits, uint32_t id);
// One names frame for the ids marked in `seen`; `nameOf` gives nullptr for an id it cannot name.
void emitNames(uint32_t domain, const std::atomic<uint64_t>* seen, const std::function<const char*(uint32_t)>& nameOf);
// The capture header's clock pair for a vendor whose clock is not realtime (vendor 0 when it gives no time).
void clockPairNow(int (*getTimestamp)(uint64_t*), uint64_t& vendorNs, uint64_t& realtime);
// One (vendor clock, realtime) calibration frame, the realtime taken around the vendor's reading; `code` is the
// vendor's clock-sample line and `label` what its text starts with ("" for CUPTI's, "ROCtracer "). Nothing is
// written when the vendor gives no time.
void calibrate(uint32_t phase, int (*getTimestamp)(uint64_t*), const char* code, const char* label);

// Activity buffers for the vendor's request callback: pooled, 8-byte aligned, kBufferSize bytes (nullptr when
// memory is short, reported once under the vendor's diagnostic code). giveBackBuffer keeps a few for reuse and frees the rest.
void* takeBuffer(const char* vendorName, const char* allocationCode);
void giveBackBuffer(void* buffer);
// Fills the pool with written pages (called once callbacks are registered).
void warmBuffers();

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

// One records frame built on the vendor's delivery thread: `head` (type, length, string table, record count)
// and `records` ({size, string index, bytes}*), so each record's bytes are copied once, straight from the
// vendor's buffer. One per thread, its memory kept between buffers.
class RecordsFrame {
 public:
  static RecordsFrame& forThisThread();
  // Starts a frame; `expected` is the buffer's valid size (one allocation for the records).
  bool begin(size_t expected);
  // The string-table index of the string under `key` (a pointer the vendor handed out), adding it with `make`
  // (which appends the bytes to `out`) the first time; false when memory is short.
  template <typename Make>
  bool string(const void* key, uint32_t& index, Make make) {
    if (key == lastKey_) {
      index = lastIndex_;
      return true;
    }
    auto it = strings_.find(key);
    if (it == strings_.end()) {
      std::string bytes;
      make(bytes);
      if (!head_.reserve(head_.size + 4 + bytes.size() + 4)) return false;  // the string and the count after it
      head_.put32(uint32_t(bytes.size()));
      head_.append(bytes.data(), bytes.size());
      it = strings_.emplace(key, stringCount_++).first;
    }
    lastKey_ = key;
    lastIndex_ = it->second;
    index = lastIndex_;
    return true;
  }
  // Adds a record verbatim; false when memory is short.
  bool record(const void* bytes, size_t size, uint32_t stringIndex) {
    char* out = records_.grow(8 + size);
    if (out == nullptr) return false;
    const uint32_t meta[2] = {uint32_t(size), stringIndex};
    std::memcpy(out, meta, 8);
    std::memcpy(out + 8, bytes, size);
    recordCount_++;
    return true;
  }
  // Writes the frame when it holds records.
  void write();

 private:
  Bytes head_, records_;
  std::unordered_map<const void*, uint32_t> strings_;
  uint32_t stringCount_ = 0, recordCount_ = 0;
  const void* lastKey_ = nullptr;  // consecutive launches of one kernel share its name
  uint32_t lastIndex_ = 0;
};

constexpr uint32_t kNoString = 0xffffffffu;

}  // namespace flagprof::agent
