// libflagprof_agent.so: the capture side of the shared tracer. This file is the vendor-neutral part: which
// vendor library to bind, the .fpc file, diagnostics, buffers, and the C ABI the Python launcher calls through
// ctypes (open/start/stop/push/pop/close). Each vendor's binding (native/vendors/<key>/binding.cc) does the rest;
// which vendors there are, their libraries and accelerators, is the vendor table's (native/vendors/vendors.h).
//
// Loaded by the Python launcher before torch touches a device: the constructor binds the vendor library,
// registers the buffer callbacks (they must precede the first device context) and arms only the device kinds;
// runtime/API and external-correlation records are armed at start() (arming them at load slowed a launch-bound
// workload by 22%). Each completed buffer is copied, records verbatim plus the strings they point to, into one
// crc-protected frame of the .fpc file while the buffer is still alive (on the vendor's delivery thread, so the
// launching thread pays only the vendor's own recording).
#include "agent.h"

#include "../tracer/capture_decoder.h"
#include "../tracer/tracer_abi.h"
#include "../vendors/vendors.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <optional>
#include <vector>

#define FLAGPROF_EXPORT extern "C" __attribute__((visibility("default")))

namespace flagprof::agent {

State& state() {
  static State* s = new State();  // never destroyed: vendor threads may call back during exit
  return *s;
}

uint64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

thread_local std::string lastError;

std::string trim(const char* s) {
  if (s == nullptr) return {};
  std::string v(s);
  size_t b = v.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = v.find_last_not_of(" \t\r\n");
  return v.substr(b, e - b + 1);
}

// Frames written outside a session (device records, load-time lines) are kept for every later capture too: a
// capture opened after an earlier one closed still needs the device properties its kernels are decoded with.
constexpr size_t kContextLimit = 4u << 20;

void keepContextLocked(State& s, const char* bytes, size_t size) {
  if (s.copying.load(std::memory_order_acquire) || s.context.size() + size > kContextLimit) return;
  s.context.append(bytes, size);
}

// Writes a whole frame with one write() so a kill leaves whole frames or a truncated last one, which the
// decoder reports and skips. Into the open capture only (a capture's head, its end frame): never context.
void writeRawLocked(State& s, const std::string& frame) {
  if (s.fd < 0) return;
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

void writeWholeFrameLocked(State& s, const std::string& frame) {
  keepContextLocked(s, frame.data(), frame.size());
  writeRawLocked(s, frame);
}

int fail(const std::string& message) {
  lastError = message;
  return -1;
}

}  // namespace

void emitFrame(uint32_t type, const std::string& payload) {
  State& s = state();
  std::string frame = fpc::frame(type, payload);
  std::lock_guard<std::mutex> lock(s.mutex);
  writeWholeFrameLocked(s, frame);
}

void writeFrameLocked(State& s, iovec* iov, int count) {
  if (!s.copying.load(std::memory_order_acquire))
    for (int i = 0; i < count; ++i) keepContextLocked(s, static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
  if (s.fd < 0) return;
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

void emitDeviceIndices(const std::vector<uint32_t>& ids) {
  if (ids.empty()) return;
  std::string payload;
  fpc::put32(payload, fpc::kDeviceIndexDomain);
  fpc::put32(payload, uint32_t(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string index = std::to_string(i);
    fpc::put32(payload, ids[i]);
    fpc::put32(payload, uint32_t(index.size()));
    payload += index;
  }
  emitFrame(fpc::FrameNames, payload);
}

void sessionFrame(uint32_t event) {
  std::string payload;
  fpc::put32(payload, event);
  fpc::put32(payload, 0);
  fpc::put64(payload, realtimeNs());
  emitFrame(fpc::FrameSession, payload);
}

void sessionSummary() {
  State& s = state();
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
}

void* takeBuffer(const char* vendorName, const char* allocationCode) {
  State& s = state();
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
    diagnostic(allocationCode, false, true,
               "[flagos] %s activity buffer allocation failed (%zu bytes); records are dropped while memory is "
               "short and the capture is incomplete",
               vendorName, kBufferSize);
  }
  return p;
}

void giveBackBuffer(void* buffer) {
  State& s = state();
  if (buffer) {
    std::lock_guard<std::mutex> lock(s.poolMutex);
    if (s.pool.size() < kPooledBuffers) {
      s.pool.push_back(buffer);
      buffer = nullptr;
    }
  }
  free(buffer);
}

void warmBuffers() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.poolMutex);
  for (size_t i = 0; i < kWarmBuffers; ++i) {
    void* p = nullptr;
    if (posix_memalign(&p, 8, kBufferSize) != 0) break;
    for (size_t at = 0; at < kBufferSize; at += 4096) static_cast<volatile char*>(p)[at] = 0;
    s.pool.push_back(p);
  }
}

RecordsFrame& RecordsFrame::forThisThread() {
  thread_local RecordsFrame frame;
  return frame;
}

bool RecordsFrame::begin(size_t expected) {
  head_.clear();
  records_.clear();
  strings_.clear();
  stringCount_ = recordCount_ = 0;
  lastKey_ = nullptr;
  lastIndex_ = 0;
  if (expected) records_.reserve(expected + expected / 2);  // 8 bytes more per record of >= 24: one allocation
  return head_.put32(fpc::FrameRecords) && head_.put32(0) && head_.put32(0);  // length, string count: at the end
}

void RecordsFrame::write() {
  if (!recordCount_) return;
  head_.put32(recordCount_);  // reserved with the last string
  const uint32_t length = uint32_t(head_.size - 8 + records_.size);
  std::memcpy(head_.data + 4, &length, 4);
  std::memcpy(head_.data + 8, &stringCount_, 4);
  uint32_t crc = fpc::crc32(records_.data, records_.size, fpc::crc32(head_.data, head_.size));
  iovec iov[3] = {{head_.data, head_.size}, {records_.data, records_.size}, {&crc, sizeof crc}};
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  writeFrameLocked(s, iov, 3);
}

void layoutWarning(const char* code, const char* vendor, const char* versionWord, uint32_t version, const char* hint,
                   const char* what) {
  State& s = state();
  if (s.warnedLayout.exchange(true)) return;
  diagnostic(code, false, true, "[flagos] %s activity records failed the layout self-check (%s).", vendor, what);
  diagnostic(code, false, true, "[flagos]   bound %s: %s (%s %u)", vendor,
             s.libraryPath.empty() ? "<unknown>" : s.libraryPath.c_str(), versionWord, version);
  diagnostic(code, false, true, "[flagos]   Records that fail the check are dropped and counted; the rest of the capture is kept.");
  diagnostic(code, false, true, "[flagos]   The record layout this agent mirrors does not match the library it bound.");
  diagnostic(code, false, true, "[flagos]   Point FLAGOS_TRACER_LIBRARY at %s.", hint);
}

void markSeen(std::atomic<uint64_t>* bits, uint32_t id) {
  if (id >= kSeenIds) return;
  const uint64_t bit = 1ull << (id % 64);
  // Almost always already set: a plain load spares the locked read-modify-write per record.
  if (!(bits[id / 64].load(std::memory_order_relaxed) & bit)) bits[id / 64].fetch_or(bit, std::memory_order_relaxed);
}

void emitNames(uint32_t domain, const std::atomic<uint64_t>* seen, const std::function<const char*(uint32_t)>& nameOf) {
  std::string payload, entries;
  uint32_t count = 0;
  for (uint32_t id = 0; id < kSeenIds; ++id) {
    if (!(seen[id / 64].load(std::memory_order_relaxed) & (1ull << (id % 64)))) continue;
    const char* name = nameOf(id);
    if (name == nullptr) continue;
    fpc::put32(entries, id);
    fpc::put32(entries, uint32_t(strlen(name)));
    entries += name;
    count++;
  }
  if (!count) return;
  fpc::put32(payload, domain);
  fpc::put32(payload, count);
  payload += entries;
  emitFrame(fpc::FrameNames, payload);
}

void clockPairNow(int (*getTimestamp)(uint64_t*), uint64_t& vendorNs, uint64_t& realtime) {
  vendorNs = 0;
  if (getTimestamp) getTimestamp(&vendorNs);
  realtime = realtimeNs();
}

void calibrate(uint32_t phase, int (*getTimestamp)(uint64_t*), const char* code, const char* label) {
  uint64_t vendor = 0;
  int result = -1;
  const uint64_t before = realtimeNs();
  if (getTimestamp) result = getTimestamp(&vendor);
  const uint64_t after = realtimeNs();
  const uint64_t realtime = before + (after - before) / 2;
  diagnostic(code, true, false, "[flagos] %sclock sample result=%d vendor=%llu realtime=%llu", label, result,
             (unsigned long long)vendor, (unsigned long long)realtime);
  if (result != 0 || vendor == 0) return;
  std::string payload;
  fpc::put32(payload, phase);
  fpc::put32(payload, 0);
  fpc::put64(payload, vendor);
  fpc::put64(payload, realtime);
  emitFrame(fpc::FrameCalibration, payload);
}

namespace {

using BindFn = std::unique_ptr<VendorTracer> (*)(void*, std::string&);

// Each vendor row with its binding, in table order (native/vendors/vendors.h).
struct Vendor {
  const VendorRow& row;
  BindFn bind;
};
#define FLAGPROF_AGENT_VENDOR(key) Vendor{*vendorByKey(#key), bind_##key},
const Vendor kBindings[] = {FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_AGENT_VENDOR)};
#undef FLAGPROF_AGENT_VENDOR

bool exports(void* lib, const VendorRow& row) {
  for (const char* symbol : row.recognisedBy)
    if (symbol && dlsym(lib, symbol)) return true;
  return false;
}

// "CUPTI, MSPTI or ROCtracer": every vendor the table has, for messages.
std::string vendorLabels() {
  std::string text;
  for (size_t i = 0; i < kVendorCount; ++i)
    text += std::string(i == 0 ? "" : i + 1 == kVendorCount ? " or " : ", ") + kVendors[i].label;
  return text;
}

// The binding for a library that exports one vendor's activity API.
std::unique_ptr<VendorTracer> bindAny(void* lib, std::string& missing) {
  for (const Vendor& v : kBindings)
    if (exports(lib, v.row)) return v.bind(lib, missing);
  missing = "no " + vendorLabels() + " activity symbols are exported";
  return nullptr;
}

// Exactly one tracer per accelerator (seed §1.4): a row's accelerators (vendors.h, checked at compile time), or
// the unavailable tracer with its reason for the accelerators without one, never a neighbour's tracer.
struct Accelerator {
  std::string name;
  const Vendor* vendor = nullptr;  // nullptr: the unavailable tracer
};

std::vector<Accelerator> accelerators() {
  std::vector<Accelerator> all;
  for (const Vendor& v : kBindings)
    for (const char* a : v.row.accelerators)
      if (a) all.push_back({a, &v});
  for (const char* a : kAcceleratorsWithoutTracer) all.push_back({a, nullptr});
  return all;
}

std::optional<Accelerator> findAccelerator(const std::string& name) {
  for (const Accelerator& a : accelerators())
    if (name == a.name) return a;
  return std::nullopt;
}

// Whether a row may trace the chosen accelerator: its own row, or a row superseding it (rocprofiler-sdk for ROCm).
bool allowsRow(const Accelerator* only, const VendorRow& row) {
  return only == nullptr || &only->vendor->row == &row ||
         (row.supersedes && std::string_view(row.supersedes) == only->vendor->row.key);
}
bool allows(const Accelerator* only, const Vendor& v) { return allowsRow(only, v.row); }

// "rocprofiler-sdk or ROCtracer": the APIs that may trace an accelerator, in search order.
std::string tracerLabels(const Accelerator& a) {
  std::string text;
  for (const VendorRow& row : kVendors)
    if (allowsRow(&a, row)) text += (text.empty() ? "" : " or ") + std::string(row.label);
  return text;
}

// The files mapped into the process now (the link map as /proc/self/maps shows it).
std::vector<std::string> mappedFiles() {
  std::vector<std::string> files;
  FILE* maps = fopen("/proc/self/maps", "re");
  if (!maps) return files;
  char line[4096];
  while (fgets(line, sizeof line, maps)) {
    const char* path = strchr(line, '/');
    if (!path) continue;
    std::string file(path);
    while (!file.empty() && (file.back() == '\n' || file.back() == ' ')) file.pop_back();
    if (files.empty() || files.back() != file) files.push_back(std::move(file));
  }
  fclose(maps);
  return files;
}

bool sameFile(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::unique_ptr<VendorTracer> loadVendor(State& s, const Accelerator* only) {
  const std::vector<std::string> mappedBefore = mappedFiles();
  std::unique_ptr<VendorTracer> vendor;
  std::string tried;
  std::string override = trim(getenv("FLAGOS_TRACER_LIBRARY"));
  if (!override.empty()) {
    void* lib = dlopen(override.c_str(), RTLD_NOW | RTLD_GLOBAL);
    std::string missing;
    if (lib && (vendor = bindAny(lib, missing)) && only && !allowsRow(only, *vendorById(vendor->fpcVendor()))) {
      missing = std::string("it exports ") + vendor->name() + ", but FLAGOS_ACCELERATOR=" + only->name +
                " is traced by " + tracerLabels(*only);
      vendor.reset();
    }
    if (vendor) {
      s.libraryPath = override;
    } else {
      const std::string err = lib ? missing : (dlerror() ?: "unknown error");
      // Every vendor's override, so the agent's own prefix (torch_fl's CUPTI shim prints it as
      // [flagos-cupti-shim]).
      diagnostic("S1", false, true, "[flagos] FLAGOS_TRACER_LIBRARY=%s could not be loaded: %s", override.c_str(),
                 err.c_str());
      tried += "FLAGOS_TRACER_LIBRARY=" + override + " (" + err + "); ";
    }
  }
  if (!vendor) {
    // A library the process already loaded (a vendor's torch extension links it) is the one to use.
    void* self = dlopen(nullptr, RTLD_NOW);
    std::string missing;
    for (const Vendor& v : kBindings) {
      if (!self || !allows(only, v) || !exports(self, v.row)) continue;
      if ((vendor = v.bind(self, missing))) {
        s.libraryPath = "<process image>";
        break;
      }
    }
  }
  for (const Vendor& v : kBindings) {
    if (vendor) break;
    if (!allows(only, v)) continue;
    // The vendor's own override first (FLAGOS_TOPSPTI_LIBRARY), as its integration looks it up.
    const std::string own = v.row.libraryEnv ? trim(getenv(v.row.libraryEnv)) : std::string();
    std::array<const char*, 5> candidates{own.empty() ? nullptr : own.c_str()};
    std::copy(v.row.sonames.begin(), v.row.sonames.end(), candidates.begin() + 1);
    for (const char* soname : candidates) {
      if (vendor) break;
      if (!soname) continue;
      void* lib = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
      std::string missing;
      if (lib && (vendor = v.bind(lib, missing))) {
        s.libraryPath = soname;
      } else {
        const std::string err =
            lib ? (missing.empty() ? std::string("required ") + v.row.label + " activity symbols are missing" : missing)
                : (dlerror() ?: "unknown error");
        tried += std::string(soname) + " (" + err + "); ";
      }
    }
  }
  if (!vendor) {
    if (tried.size() >= 2) tried.resize(tried.size() - 2);
    s.loadError = only ? "no " + tracerLabels(*only) + " library for FLAGOS_ACCELERATOR=" +
                             only->name + " could be loaded; tried " + tried
                       : "no vendor activity library could be loaded (" + vendorLabels() + "); tried " + tried;
    // Each vendor's line once (the CUPTI family shares one).
    std::vector<std::string_view> printed;
    for (const Vendor& v : kBindings) {
      if (!allows(only, v) || !v.row.unavailableLine ||
          std::find(printed.begin(), printed.end(), v.row.unavailableLine) != printed.end())
        continue;
      printed.push_back(v.row.unavailableLine);
      diagnostic(v.row.unavailableCode, true, false, "%s", v.row.unavailableLine);
    }
    return nullptr;
  }
  // dladdr names the file the symbol actually came from.
  Dl_info info{};
  if (dladdr(vendor->anchorSymbol(), &info) && info.dli_fname) s.libraryPath = info.dli_fname;
  s.loadedAtStart = s.libraryPath == "<process image>" ||
                    std::any_of(mappedBefore.begin(), mappedBefore.end(),
                                [&](const std::string& f) { return sameFile(f, s.libraryPath); });
  return vendor;
}

}  // namespace

// FLAGOS_ACCELERATOR (when set) names the accelerator and so the one tracer family to bind; unset, the first
// activity library that loads decides. Called once, at load.
std::unique_ptr<DeviceTracer> makeDeviceTracer(State& s) {
  std::string accelerator = trim(getenv("FLAGOS_ACCELERATOR"));
  for (char& c : accelerator) c = char(tolower(static_cast<unsigned char>(c)));
  std::optional<Accelerator> chosen;
  if (!accelerator.empty()) {
    chosen = findAccelerator(accelerator);
    if (!chosen) {
      std::string known;
      for (const Accelerator& a : accelerators()) known += (known.empty() ? "" : ", ") + a.name;
      s.loadError = "FLAGOS_ACCELERATOR=" + accelerator + " is not an accelerator this agent knows (" + known + ")";
      diagnostic("E2", false, true, "[flagos] %s", s.loadError.c_str());
      return std::make_unique<UnavailableDeviceTracer>();
    }
    if (chosen->vendor == nullptr) {
      s.loadError = "no activity-API tracer is built for FLAGOS_ACCELERATOR=" + chosen->name +
                    ": device activity is not recorded (CPU profiling continues)";
      diagnostic("E3", true, false, "[flagos] %s", s.loadError.c_str());
      return std::make_unique<UnavailableDeviceTracer>();
    }
  }
  const Accelerator* only = chosen ? &*chosen : nullptr;
  std::unique_ptr<VendorTracer> vendor = loadVendor(s, only);
  if (!vendor) return std::make_unique<UnavailableDeviceTracer>();
  s.vendor = vendor.get();
  return vendor;
}

const char* acceleratorTracer(const char* accelerator) {
  const std::optional<Accelerator> a = findAccelerator(accelerator ? accelerator : "");
  if (!a) return nullptr;
  return a->vendor ? a->vendor->row.label : "none";
}

namespace {

__attribute__((constructor)) void agentLoad() {
  State& s = state();
  std::string trace = trim(getenv("FLAGOS_TRACE"));
  std::string lower;
  for (char c : trace) lower.push_back(char(tolower(static_cast<unsigned char>(c))));
  // A vendor's own switch (FLAGOS_TOPSPTI_DEBUG=1) means what FLAGOS_TRACE=1 means.
  bool vendorDebug = false;
  for (const VendorRow& row : kVendors)
    if (row.debugEnv && trim(getenv(row.debugEnv)) == "1") vendorDebug = true;
  if (vendorDebug || lower == "1" || lower == "true" || lower == "on" || lower == "yes") {
    s.traceOn = true;
  } else if (!(lower.empty() || lower == "0" || lower == "false" || lower == "off" || lower == "no")) {
    diagnostic("E1", false, true, "[flagos] FLAGOS_TRACE: \"%s\" is not a boolean; using the default", trace.c_str());
  }
  s.tracer = makeDeviceTracer(s);
  if (!s.vendor) return;
  s.vendor->armAtLoad();
  if (s.vendor->armed()) warmBuffers();
  atexit([] {
    if (state().vendor) state().vendor->shutdown();
  });
}

// The platform the process says it runs on, for the checks' capability rows: FLAGOS_ACCELERATOR when it names
// one, else PPU's SDK (PPU_SDK or PPU_HOME set, or /usr/local/PPU_SDK present), as torch_fl's platform detection
// reads it. PPU's CUPTI-compatible library is named and behaves as NVIDIA's, so nothing in its records says PPU.
void detectPlatform(std::string& platform, std::string& reason) {
  std::string accelerator = trim(getenv("FLAGOS_ACCELERATOR"));
  for (char& c : accelerator) c = char(tolower(static_cast<unsigned char>(c)));
  if (!accelerator.empty() && accelerator != "cpu" && findAccelerator(accelerator)) {
    platform = accelerator;
    reason = "FLAGOS_ACCELERATOR=" + accelerator;
    return;
  }
  struct stat st{};
  for (const char* variable : {"PPU_SDK", "PPU_HOME"})
    if (!trim(getenv(variable)).empty()) {
      platform = "ppu";
      reason = std::string(variable) + " is set";
      return;
    }
  if (::stat("/usr/local/PPU_SDK", &st) == 0 && S_ISDIR(st.st_mode)) {
    platform = "ppu";
    reason = "/usr/local/PPU_SDK is installed";
  }
}

// Writes the capture's head (header, library, what was produced before) into `fd`; the caller holds s.mutex.
void openLocked(State& s, int fd, const std::string& path) {
  uint64_t vendorNs = 0, realtime = 0;
  s.vendor->clockPair(vendorNs, realtime);
  std::string head =
      fpc::header(s.vendor->fpcVendor(), s.vendor->apiVersion(), uint32_t(getpid()), vendorNs, realtime);
  std::string library;
  fpc::put32(library, uint32_t(s.libraryPath.size()));
  library += s.libraryPath;
  std::string platform, reason;
  detectPlatform(platform, reason);
  if (!platform.empty()) {
    fpc::put32(library, uint32_t(platform.size()));
    library += platform;
    fpc::put32(library, uint32_t(reason.size()));
    library += reason;
  }
  head += fpc::frame(fpc::FrameLibrary, library);
  s.headerBytes = head.size();
  head += s.context;  // load-time diagnostics and device records, from before this capture too
  s.fd = fd;
  s.path = path;
  writeRawLocked(s, head);
}

}  // namespace

int openCapture(const char* capturePath, std::string& error) {
  State& s = state();
  if (!s.vendor) return error = s.loadError, -1;
  if (!s.vendor->armed()) return error = s.vendor->notArmedReason() + " (" + s.libraryPath + ")", -1;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fd >= 0) return error = "a capture is already open: " + s.path, -1;
  // Read and write: drain() decodes the session back from the same file.
  int fd = ::open(capturePath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return error = std::string(capturePath) + ": " + strerror(errno), -1;
  openLocked(s, fd, capturePath);
  return 0;
}

int startCapture(std::string& error) {
  State& s = state();
  if (!s.vendor) return error = s.loadError, -1;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.fd < 0) {
      // A profiler session without the launcher (torch.profiler over the Kineto adaptor): the capture lives in
      // memory, so the session still reads back through the one decoder.
      if (!s.vendor->armed()) return error = s.vendor->notArmedReason() + " (" + s.libraryPath + ")", -1;
      int fd = memfd_create("flagprof-capture", MFD_CLOEXEC);
      if (fd < 0) return error = std::string("in-memory capture: ") + strerror(errno), -1;
      openLocked(s, fd, "<memory>");
    }
  }
  if (s.started.exchange(true)) return 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    off_t end = ::lseek(s.fd, 0, SEEK_END);
    s.sessionOffset = end > 0 ? uint64_t(end) : s.headerBytes;
  }
  diagnostic("A20", true, false, "[flagos] %s device tracer session start", s.vendor->name());
  if (s.vendor->startSession(error) != 0) {
    s.started = false;
    return -1;
  }
  return 0;
}

void stopCapture() {
  State& s = state();
  if (!s.started.exchange(false)) return;
  s.vendor->stopSession();
  sessionSummary();
}

int drainCapture(const std::function<void(const DeviceEvent&)>& visit, DrainCounts& counts, std::string& error) {
  State& s = state();
  if (!s.vendor) return error = s.loadError, -1;
  // The whole capture is decoded: what came before the session (device properties, API names) is context its
  // records need. Only the records of frames written since start() are this session's events.
  std::vector<uint8_t> bytes;
  uint64_t from = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.fd < 0) return 0;
    off_t end = ::lseek(s.fd, 0, SEEK_END);
    if (end < 0) return error = std::string("capture: ") + strerror(errno), -1;
    from = std::max<uint64_t>(s.sessionOffset, s.headerBytes);
    bytes.resize(size_t(end));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pread(s.fd, bytes.data() + done, bytes.size() - done, off_t(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return error = std::string("capture ") + s.path + ": could not be read back", -1;
      done += size_t(n);
    }
  }
  DecodedCapture capture;
  if (!decodeCapture(bytes.data(), bytes.size(), capture, error)) return -1;
  counts.records = capture.counts.records;
  counts.dropped = capture.counts.dropped;
  counts.badFrames = capture.counts.badFrames;
  counts.malformed = capture.counts.malformed;
  for (size_t i = 0; i < capture.size(); ++i) {
    if (capture.recordOffset[i] < from) continue;
    counts.events++;
    visit(eventAt(capture, i, bytes.data()));
  }
  diagnostic("A21", true, false, "[flagos] %s device tracer drain: %llu records, %llu events, dropped %llu",
             s.vendor->name(), (unsigned long long)counts.records, (unsigned long long)counts.events,
             (unsigned long long)counts.dropped);
  return 0;
}

// ---- DeviceTracer, the same for every vendor ----

bool VendorTracer::available() const { return armed(); }

void VendorTracer::start() {
  std::string error;
  if (startCapture(error) != 0) diagnostic("A22", false, true, "[flagos] device tracer start failed: %s", error.c_str());
}

void VendorTracer::stop() { stopCapture(); }

std::vector<DeviceEvent> VendorTracer::drain() {
  std::vector<DeviceEvent> events;
  DrainCounts counts;
  std::string error;
  if (drainCapture([&](const DeviceEvent& e) { events.push_back(e); }, counts, error) != 0)
    diagnostic("A22", false, true, "[flagos] device tracer drain failed: %s", error.c_str());
  return events;
}

void VendorTracer::pushCorrelation(uint64_t id) {
  std::string error;
  if (pushExternal(id, error) != 0) diagnostic("A22", true, true, "[flagos] %s", error.c_str());
}

void VendorTracer::popCorrelation() {
  std::string error;
  if (popExternal(error) != 0) diagnostic("A22", true, true, "[flagos] %s", error.c_str());
}

int VendorTracer::deviceCount() const {
  const uint64_t seen = state().devices.load();
  return seen > 0 ? int(seen) : (armed() ? 1 : 0);
}

}  // namespace flagprof::agent

using flagprof::agent::State;
using flagprof::agent::fail;
using flagprof::agent::lastError;
using flagprof::agent::state;
namespace fpc = flagprof::fpc;

FLAGPROF_EXPORT const char* flagprof_agent_last_error(void) { return lastError.c_str(); }

FLAGPROF_EXPORT int flagprof_agent_open(const char* capturePath) {
  std::string error;
  return flagprof::agent::openCapture(capturePath, error) == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT int flagprof_agent_start(void) {
  State& s = state();
  if (s.fd < 0) return fail("start() before open()");
  std::string error;
  return flagprof::agent::startCapture(error) == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT int flagprof_agent_stop(void) {
  flagprof::agent::stopCapture();
  return 0;
}

FLAGPROF_EXPORT int flagprof_agent_push_correlation(uint64_t id) {
  State& s = state();
  if (!s.vendor) return fail(s.loadError);
  std::string error;
  return s.vendor->pushExternal(id, error) == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT int flagprof_agent_pop_correlation(void) {
  State& s = state();
  if (!s.vendor) return fail(s.loadError);
  std::string error;
  return s.vendor->popExternal(error) == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT int flagprof_agent_close(void) {
  State& s = state();
  flagprof_agent_stop();
  std::string end;
  fpc::put64(end, flagprof::agent::realtimeNs());
  std::string frame = fpc::frame(fpc::FrameEnd, end);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.fd < 0) return fail("close() without an open capture");
  flagprof::agent::writeRawLocked(s, frame);
  ::fsync(s.fd);
  ::close(s.fd);
  s.fd = -1;
  return 0;
}

FLAGPROF_EXPORT const char* flagprof_agent_library(void) { return state().libraryPath.c_str(); }

// ---- The tracer ABI (tracer_abi.h): the Kineto adaptor built against the user's torch reaches the one tracer ----

FLAGPROF_EXPORT int flagprof_tracer_abi(void) { return FLAGPROF_TRACER_ABI; }

FLAGPROF_EXPORT int flagprof_tracer_available(void) { return state().tracer && state().tracer->available() ? 1 : 0; }

FLAGPROF_EXPORT const char* flagprof_tracer_unavailable_reason(void) {
  State& s = state();
  static thread_local std::string reason;
  reason = !s.vendor ? s.loadError : s.vendor->armed() ? "" : s.vendor->notArmedReason() + " (" + s.libraryPath + ")";
  return reason.c_str();
}

FLAGPROF_EXPORT const char* flagprof_tracer_name(void) { return state().vendor ? state().vendor->name() : "none"; }

FLAGPROF_EXPORT const char* flagprof_tracer_for_accelerator(const char* accelerator) {
  return flagprof::agent::acceleratorTracer(accelerator);
}

FLAGPROF_EXPORT int flagprof_tracer_device_count(void) { return state().tracer ? state().tracer->deviceCount() : 0; }

FLAGPROF_EXPORT int flagprof_tracer_start(void) {
  std::string error;
  return flagprof::agent::startCapture(error) == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT int flagprof_tracer_stop(void) {
  flagprof::agent::stopCapture();
  return 0;
}

FLAGPROF_EXPORT int flagprof_tracer_push_correlation(uint64_t id) { return flagprof_agent_push_correlation(id); }

FLAGPROF_EXPORT int flagprof_tracer_pop_correlation(void) { return flagprof_agent_pop_correlation(); }

FLAGPROF_EXPORT int flagprof_tracer_drain(flagprof_tracer_visit visit, void* context, flagprof_tracer_drain_info* info) {
  flagprof::agent::DrainCounts counts;
  std::string error;
  std::vector<const char*> keys, values;
  int r = flagprof::agent::drainCapture(
      [&](const flagprof::DeviceEvent& e) {
        flagprof_tracer_event out{};
        out.kind = uint32_t(e.kind);
        out.start_ns = e.start_ns;
        out.end_ns = e.end_ns;
        out.correlation_id = e.correlation_id;
        out.has_external_id = e.external_correlation_id.has_value() ? 1 : 0;
        out.external_id = e.external_correlation_id.value_or(0);
        out.device = e.device;
        out.stream = e.stream;
        out.thread_id = e.thread_id;
        out.name = e.name.c_str();
        keys.clear();
        values.clear();
        for (const auto& [key, value] : e.metadata) {
          keys.push_back(key.c_str());
          values.push_back(value.c_str());
        }
        out.metadata_count = keys.size();
        out.metadata_keys = keys.data();
        out.metadata_values = values.data();
        visit(context, &out);
      },
      counts, error);
  if (info) {
    info->records = counts.records;
    info->events = counts.events;
    info->dropped = counts.dropped;
    info->layout_mismatches = counts.malformed;
    info->bad_frames = counts.badFrames;
    info->vendor = flagprof_tracer_name();
  }
  return r == 0 ? 0 : fail(error);
}

FLAGPROF_EXPORT const char* flagprof_tracer_last_error(void) { return lastError.c_str(); }
