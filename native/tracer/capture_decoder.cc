#include "capture_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <sys/mman.h>

#include "fpc_format.h"
#include "../vendors/vendors.h"

namespace flagprof {

namespace {

template <typename T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

constexpr uint32_t kNoString = 0xffffffffu;
constexpr uint32_t kDenseCorrelationLimit = 1u << 26;

bool knownFrameType(uint32_t type) { return type >= fpc::FrameRecords && type <= fpc::FrameEnd; }

// A frame is valid when its type is known, it fits the file and its crc matches.
bool frameValidAt(const uint8_t* data, size_t size, size_t offset) {
  if (size - offset < fpc::kFrameOverhead) return false;
  const uint32_t type = load<uint32_t>(data + offset);
  const uint32_t length = load<uint32_t>(data + offset + 4);
  if (!knownFrameType(type) || length > size - offset - fpc::kFrameOverhead) return false;
  return fpc::crc32(data + offset, 8 + size_t(length)) == load<uint32_t>(data + offset + 8 + length);
}

// Correlation id -> torch id + 1 (0 = none). CUPTI numbers correlations 1, 2, 3..., so a table indexed by id is
// dense; it lives in a mapping reserved once and filled with zero pages on demand, so it never reallocates,
// copies or zero-fills as ids grow.
class ExternalTable {
 public:
  static constexpr size_t kCapacity = kDenseCorrelationLimit;
  ExternalTable() {
    void* p = ::mmap(nullptr, kCapacity * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<uint64_t*>(p);
#ifdef MADV_HUGEPAGE
    ::madvise(p, kCapacity * sizeof(uint64_t), MADV_HUGEPAGE);  // a fault per 2 MiB of ids, not per 4 KiB
#endif
  }
  ~ExternalTable() {
    if (data_) ::munmap(data_, kCapacity * sizeof(uint64_t));
  }
  ExternalTable(const ExternalTable&) = delete;
  ExternalTable& operator=(const ExternalTable&) = delete;

  // False when the id does not fit the table (the caller keeps it in a map instead).
  bool set(uint32_t correlation, int64_t externalId) {
    if (!data_ || correlation >= kCapacity) return false;
    if (correlation >= populated_) {
      populated_ = std::min(kCapacity, size_t(correlation) + (size_t(1) << 19));
      populate(data_ + correlation, data_ + populated_);
    }
    data_[correlation] = uint64_t(externalId) + 1;
    if (correlation >= limit_) limit_ = size_t(correlation) + 1;
    return true;
  }
  bool get(uint32_t correlation, int64_t& externalId) const {
    if (correlation >= limit_) return false;
    const uint64_t v = data_[correlation];
    if (v == 0) return false;
    externalId = int64_t(v - 1);
    return true;
  }

 private:
  uint64_t* data_ = nullptr;
  size_t limit_ = 0;  // one past the largest id set: reads beyond it would only fault in zero pages
  size_t populated_ = 0;
};

// Each vendor's `Records` traits (native/vendors/<key>/decode.h) are resolved at compile time: the CUPTI path pays
// no call or branch for the other vendors.
template <typename Vendor>
class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size, DecodedCapture& out, DecodeOptions options)
      : data_(data),
        size_(size),
        out_(out),
        locations_(options.recordLocations),
        streamedFrame_(std::max<uint32_t>(options.streamedFrameBytes, 1)) {}

  void run() {
    size_t offset = fpc::kHeaderSize;
    // A rough upper bound keeps the columns from reallocating on large captures.
    resizeColumns(std::min<size_t>(size_ / 48 + 16, size_t(1) << 28));
    bool sawEnd = false;
    while (offset < size_) {
      const size_t left = size_ - offset;
      if (left < fpc::kFrameOverhead) {
        note("warning", "frame-truncated", "frame at offset " + std::to_string(offset) + ": " + std::to_string(left) +
                                               " trailing bytes are too short for a frame (truncated capture)",
             offset);
        break;
      }
      const uint32_t type = load<uint32_t>(data_ + offset);
      const uint32_t length = load<uint32_t>(data_ + offset + 4);
      if (length > left - fpc::kFrameOverhead) {
        note("warning", "frame-length",
             "frame at offset " + std::to_string(offset) + ": length " + std::to_string(length) +
                 " runs past the end of the file (truncated capture); decoded the frames before it",
             offset);
        out_.counts.badFrames++;
        // A damaged length in the middle of a good file: look for the next intact frame.
        size_t next = resync(offset + 1);
        if (next == size_) break;
        offset = next;
        continue;
      }
      const uint8_t* payload = data_ + offset + 8;
      const uint32_t crc = load<uint32_t>(payload + length);
      const bool intact = type == fpc::FrameRecords && length >= streamedFrame_
                              ? streamedRecords(payload, length, offset, crc)
                              : fpc::crc32(data_ + offset, 8 + size_t(length)) == crc;
      if (!intact) {
        out_.counts.badFrames++;
        note("warning", "frame-crc",
             "frame at offset " + std::to_string(offset) + ": crc32c mismatch (type " + std::to_string(type) +
                 ", length " + std::to_string(length) + "); frame skipped",
             offset);
        const size_t byLength = offset + fpc::kFrameOverhead + length;
        offset = (byLength == size_ || frameValidAt(data_, size_, byLength)) ? byLength : resync(offset + 1);
        continue;
      }
      out_.counts.frames++;
      if (type == fpc::FrameEnd) sawEnd = true;
      if (!(type == fpc::FrameRecords && length >= streamedFrame_)) frame(type, payload, length, offset);
      offset += fpc::kFrameOverhead + length;
    }
    resizeColumns(n_);
    out_.closed = sawEnd;
    if (!sawEnd) {
      note("info", "no-end",
           "the capture has no closing frame: the process stopped before close(); the frames before that point "
           "were decoded",
           -1);
    }
    if (out_.counts.dropped) {
      note("warning", "dropped",
           "the vendor dropped " + std::to_string(out_.counts.dropped) +
               " activity records (buffers full): the device timeline has gaps",
           -1);
    }
    finish();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  DecodedCapture& out_;
  const bool locations_;
  const uint32_t streamedFrame_;
  std::vector<std::string_view> frameStrings_;
  std::vector<uint32_t> frameStringName_;
  std::vector<uint32_t> frameStringDetail_;  // MSPTI kernel type per string entry
  std::unordered_map<std::string, uint32_t> kernelNames_;
  std::unordered_map<std::string, uint32_t> rawNames_;  // MSPTI API names and kernel types, kept as written
  std::unordered_map<uint32_t, uint32_t> copyNames_;
  ExternalTable denseExternal_;
  ParsedRecord parsed_;  // reused: see parseRecord
  bool warnedImplausible_ = false, warnedMalformed_ = false, warnedWrapped_ = false;

  // Columns are sized once to the most events the file can hold (an event record takes at least 48 bytes with
  // its entry header) and written through plain pointers: push_back would re-read every column's end pointer
  // after each one-byte store, which may alias anything.
  struct Cursor {
    uint8_t* kind;
    uint64_t *start, *end, *recordOffset;
    uint32_t *correlation, *device, *stream, *thread, *process, *name, *cbid, *recordSize;
  } at_{};
  size_t n_ = 0, capacity_ = 0;

  void resizeColumns(size_t n) {
    auto& o = out_;
    o.kind.resize(n);
    o.start.resize(n);
    o.end.resize(n);
    o.correlation.resize(n);
    o.device.resize(n);
    o.stream.resize(n);
    o.thread.resize(n);
    o.process.resize(n);
    o.name.resize(n);
    o.cbid.resize(n);
    if (locations_) {
      o.recordOffset.resize(n);
      o.recordSize.resize(n);
    }
    if constexpr (Vendor::kKernelType) o.detail.resize(n, kNoString);
    at_ = {o.kind.data(),   o.start.data(),  o.end.data(),    o.recordOffset.data(), o.correlation.data(),
           o.device.data(), o.stream.data(), o.thread.data(), o.process.data(),      o.name.data(),
           o.cbid.data(),   o.recordSize.data()};
    capacity_ = n;
    populated_ = std::min(populated_, n);
  }

  // Faults the columns in a chunk ahead of the writer (see populate()).
  size_t populated_ = 0;
  void populateAhead() {
    const size_t from = populated_, to = std::min(capacity_, populated_ + (size_t(1) << 18));
    auto range = [&](auto* column) { populate(column + from, column + to); };
    range(at_.kind), range(at_.start), range(at_.end), range(at_.correlation), range(at_.device);
    range(at_.stream), range(at_.thread), range(at_.process), range(at_.name), range(at_.cbid);
    if (locations_) range(at_.recordOffset), range(at_.recordSize);
    populated_ = to;
  }

  void note(const char* severity, const char* code, std::string message, int64_t offset) {
    CaptureDiagnostic d;
    d.severity = severity;
    d.code = code;
    d.message = std::move(message);
    d.offset = offset;
    out_.diagnostics.push_back(std::move(d));
  }

  size_t resync(size_t from) {
    // Bounded scan so a hostile file cannot make decoding quadratic.
    size_t budget = size_t(64) << 20;
    for (size_t o = from; o + fpc::kFrameOverhead <= size_; ++o) {
      const uint32_t type = load<uint32_t>(data_ + o);
      if (!knownFrameType(type)) continue;
      const uint32_t length = load<uint32_t>(data_ + o + 4);
      if (length > size_ - o - fpc::kFrameOverhead) continue;
      if (budget < length) return size_;
      budget -= length;
      if (frameValidAt(data_, size_, o)) {
        note("info", "resync", "decoding resumed at the intact frame at offset " + std::to_string(o), int64_t(o));
        return o;
      }
    }
    return size_;
  }

  uint32_t intern(std::string name) {
    out_.names.push_back(std::move(name));
    return uint32_t(out_.names.size() - 1);
  }

  void frame(uint32_t type, const uint8_t* p, uint32_t length, size_t offset) {
    switch (type) {
      case fpc::FrameRecords: records(p, length, offset); break;
      case fpc::FrameNames: namesFrame(p, length, offset); break;
      case fpc::FrameCalibration:
        if (length >= 24) out_.calibration.emplace_back(load<uint64_t>(p + 8), load<uint64_t>(p + 16));
        break;
      case fpc::FrameSession:
        if (length >= 16) {
          const uint32_t event = load<uint32_t>(p);
          const uint64_t ns = load<uint64_t>(p + 8);
          if (event == 1) out_.windowStart = ns;
          if (event == 2) out_.windowStop = ns;
        }
        break;
      case fpc::FrameDiagnostic: diagnosticFrame(p, length, offset); break;
      case fpc::FrameDropped:
        if (length >= 16) out_.counts.dropped += load<uint64_t>(p + 8);
        break;
      case fpc::FrameLibrary:
        if (length >= 4) {
          const uint32_t n = load<uint32_t>(p);
          if (n <= length - 4) out_.library.assign(reinterpret_cast<const char*>(p + 4), n);
          // Optional: the platform and its reason (older captures end after the library).
          size_t at = 4 + size_t(n);
          std::string* fields[] = {&out_.platform, &out_.platformReason};
          for (std::string* field : fields) {
            if (n > length - 4 || at + 4 > length) break;
            const uint32_t m = load<uint32_t>(p + at);
            if (m > length - at - 4) break;
            field->assign(reinterpret_cast<const char*>(p + at + 4), m);
            at += 4 + size_t(m);
          }
        }
        break;
      default: break;
    }
  }

  void malformedFrame(size_t offset, const char* what) {
    out_.counts.badFrames++;
    note("warning", "frame-content", "frame at offset " + std::to_string(offset) + ": " + what + "; rest of frame skipped",
         int64_t(offset));
  }

  void diagnosticFrame(const uint8_t* p, uint32_t length, size_t offset) {
    if (length < 16) return malformedFrame(offset, "diagnostic frame too short");
    const uint8_t severity = p[0];
    const uint8_t gated = p[1];
    const uint16_t codeLength = load<uint16_t>(p + 2);
    const uint32_t textLength = load<uint32_t>(p + 4);
    if (size_t(codeLength) + textLength > length - 16) return malformedFrame(offset, "diagnostic lengths overrun");
    CaptureDiagnostic d;
    d.severity = severity ? "warning" : "info";
    d.gated = gated != 0;
    d.realtimeNs = load<uint64_t>(p + 8);
    d.code.assign(reinterpret_cast<const char*>(p + 16), codeLength);
    d.message.assign(reinterpret_cast<const char*>(p + 16 + codeLength), textLength);
    d.fromCapture = true;
    out_.diagnostics.push_back(std::move(d));
  }

  void namesFrame(const uint8_t* p, uint32_t length, size_t offset) {
    if (length < 8) return malformedFrame(offset, "names frame too short");
    const uint32_t domain = load<uint32_t>(p);
    const uint32_t count = load<uint32_t>(p + 4);
    size_t at = 8;
    if (domain == fpc::kDeviceIndexDomain) return deviceIndexFrame(p, length, offset, count);
    auto& table = domain == FP_CUPTI_CB_DOMAIN_DRIVER_API_ID ? out_.context.driverNames : out_.context.runtimeNames;
    for (uint32_t i = 0; i < count; ++i) {
      if (length - at < 8) return malformedFrame(offset, "names frame entry overruns");
      const uint32_t id = load<uint32_t>(p + at);
      const uint32_t n = load<uint32_t>(p + at + 4);
      at += 8;
      if (n > length - at) return malformedFrame(offset, "names frame entry overruns");
      std::string name(reinterpret_cast<const char*>(p + at), n);
      // Kineto shows names without the _v<version> suffix the vendor resolver appends.
      size_t v = name.rfind("_v");
      if (v != std::string::npos && name.size() - v >= 6 &&
          std::all_of(name.begin() + v + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        name.resize(v);
      table[id] = std::move(name);
      at += n;
    }
  }

  static constexpr uint32_t FP_CUPTI_CB_DOMAIN_DRIVER_API_ID = 1;

  void deviceIndexFrame(const uint8_t* p, uint32_t length, size_t offset, uint32_t count) {
    size_t at = 8;
    for (uint32_t i = 0; i < count; ++i) {
      if (length - at < 8) return malformedFrame(offset, "device index frame entry overruns");
      const uint32_t id = load<uint32_t>(p + at);
      const uint32_t n = load<uint32_t>(p + at + 4);
      at += 8;
      if (n > length - at || n == 0 || n > 9) return malformedFrame(offset, "device index frame entry overruns");
      uint32_t index = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint8_t c = p[at + k];
        if (c < '0' || c > '9') return malformedFrame(offset, "device index is not a number");
        index = index * 10 + (c - '0');
      }
      out_.context.deviceIndex[id] = index;
      at += n;
    }
  }

  void setExternal(uint32_t correlation, int64_t externalId) {
    // Dense while ids stay near the record count (CUPTI numbers them 1, 2, 3...); a map for anything else, so a
    // stray huge id cannot make the decoder allocate gigabytes.
    if (correlation < 16 * out_.counts.records + 65536 && denseExternal_.set(correlation, externalId)) return;
    out_.context.externalByCorrelation[correlation] = externalId;
  }

  // Large records frames are decoded while their checksum is computed, a window ahead of the decoder: each
  // byte then comes from memory once (the checksum pulls it into cache for the decoder) instead of twice.
  // What the frame did is undone if the checksum fails; external correlations and device records it carries
  // are applied only once it has passed.
  static constexpr size_t kCheckWindow = 64 * 1024;
  const uint8_t* checkedTo_ = nullptr;  // the checksum covers the frame up to here
  const uint8_t* frameEnd_ = nullptr;
  uint32_t runningCrc_ = 0;
  bool deferring_ = false;
  std::vector<std::pair<uint32_t, int64_t>> pendingExternal_;
  std::vector<DeviceProperties> pendingDevices_;

  void checkUpTo(const uint8_t* to) {
    while (checkedTo_ < to) {
      const uint8_t* next = frameEnd_ - checkedTo_ > ptrdiff_t(kCheckWindow) ? checkedTo_ + kCheckWindow : frameEnd_;
      runningCrc_ = fpc::crc32(checkedTo_, size_t(next - checkedTo_), runningCrc_);
      checkedTo_ = next;
    }
  }

  bool streamedRecords(const uint8_t* payload, uint32_t length, size_t offset, uint32_t expected) {
    const size_t events = n_, diagnostics = out_.diagnostics.size();
    const CaptureCounts counts = out_.counts;
    const bool warnedImplausible = warnedImplausible_, warnedMalformed = warnedMalformed_;
    const bool warnedWrapped = warnedWrapped_;
    checkedTo_ = data_ + offset;
    frameEnd_ = payload + length;
    runningCrc_ = 0;
    deferring_ = true;
    pendingExternal_.clear();
    pendingDevices_.clear();
    records(payload, length, offset);
    checkUpTo(frameEnd_);
    deferring_ = false;
    checkedTo_ = frameEnd_ = nullptr;
    if (runningCrc_ != expected) {
      n_ = events;
      out_.counts = counts;
      out_.diagnostics.resize(diagnostics);
      warnedImplausible_ = warnedImplausible;
      warnedMalformed_ = warnedMalformed;
      warnedWrapped_ = warnedWrapped;
      return false;
    }
    for (const auto& [correlation, externalId] : pendingExternal_) setExternal(correlation, externalId);
    for (const auto& d : pendingDevices_) out_.context.devices[d.id] = d;
    return true;
  }

  void records(const uint8_t* p, uint32_t length, size_t frameOffset) {
    const size_t payloadOffset = frameOffset + 8;
    if (length < 4) return malformedFrame(frameOffset, "records frame too short");
    const uint32_t stringCount = load<uint32_t>(p);
    size_t at = 4;
    if (stringCount > (length - at) / 4) return malformedFrame(frameOffset, "string table overruns");
    frameStrings_.clear();
    frameStringName_.assign(stringCount, kNoString);
    if constexpr (Vendor::kKernelType) frameStringDetail_.assign(stringCount, kNoString);
    for (uint32_t i = 0; i < stringCount; ++i) {
      if (length - at < 4) return malformedFrame(frameOffset, "string table overruns");
      const uint32_t n = load<uint32_t>(p + at);
      at += 4;
      if (n > length - at) return malformedFrame(frameOffset, "string table overruns");
      frameStrings_.emplace_back(reinterpret_cast<const char*>(p + at), n);
      at += n;
    }
    if (length - at < 4) return malformedFrame(frameOffset, "record count missing");
    const uint32_t recordCount = load<uint32_t>(p + at);
    at += 4;
    for (uint32_t i = 0; i < recordCount; ++i) {
      if (length - at < 8) return malformedFrame(frameOffset, "record overruns the frame");
      const uint32_t size = load<uint32_t>(p + at);
      const uint32_t stringIndex = load<uint32_t>(p + at + 4);
      at += 8;
      if (size > length - at) return malformedFrame(frameOffset, "record overruns the frame");
      if (deferring_ && p + at + size > checkedTo_) checkUpTo(p + at + size);
      record(p + at, size, stringIndex, payloadOffset + at);
      at += size;
    }
  }

  void record(const uint8_t* rec, uint32_t size, uint32_t stringIndex, size_t offset) {
    auto& c = out_.counts;
    c.records++;
    ParsedRecord& r = parsed_;
    const RecordClass cls = Vendor::parse(rec, size, r);
    if constexpr (Vendor::kWideCorrelation) {
      if (r.correlationWrapped) correlationWrapped(r, offset);
    }
    switch (cls) {
      case RecordClass::Event: break;
      case RecordClass::ExternalCorrelation:
        c.externalCorrelation++;
        if constexpr (Vendor::kWideCorrelation) {
          if (r.correlation == 0) return;  // no usable id (0 is the vendor's "invalid", or it did not fit)
        }
        if (r.externalId <= uint64_t(std::numeric_limits<int64_t>::max())) {
          if (deferring_) {
            pendingExternal_.emplace_back(r.correlation, int64_t(r.externalId));
          } else {
            setExternal(r.correlation, int64_t(r.externalId));
          }
        }
        return;
      case RecordClass::Device: {
        DeviceProperties d;
        if (Vendor::parseDevice(rec, size, d)) {
          if (deferring_) {
            pendingDevices_.push_back(d);
          } else {
            out_.context.devices[d.id] = d;
          }
        }
        c.deviceRecords++;
        return;
      }
      case RecordClass::Ignored: c.ignored++; return;
      case RecordClass::NoTiming: c.noTiming++; return;
      case RecordClass::Implausible:
        c.implausible++;
        if (!warnedImplausible_) {
          warnedImplausible_ = true;
          note("warning", "layout",
               "activity record at offset " + std::to_string(offset) +
                   " failed the layout self-check (timestamps or external-correlation kind implausible): the record "
                   "layout does not match the vendor library that wrote it; such records are dropped and counted",
               int64_t(offset));
        }
        return;
      case RecordClass::Malformed:
        c.malformed++;
        if (!warnedMalformed_) {
          warnedMalformed_ = true;
          note("warning", "record-size",
               "activity record at offset " + std::to_string(offset) + " is too short for its kind (" +
                   std::to_string(size) + " bytes); such records are skipped and counted",
               int64_t(offset));
        }
        return;
    }
    uint32_t nameIndex = 0, detailIndex = kNoString;
    switch (r.kind) {
      case EventKind::Kernel: {
        c.kernel++;
        if constexpr (Vendor::kKernelType) {
          kernelWithType(stringIndex, nameIndex, detailIndex);
        } else if (stringIndex < frameStrings_.size()) {
          uint32_t& cached = frameStringName_[stringIndex];
          if (cached == kNoString) {
            std::string raw(frameStrings_[stringIndex]);
            auto it = kernelNames_.find(raw);
            if (it == kernelNames_.end()) it = kernelNames_.emplace(raw, intern(demangle(raw))).first;
            cached = it->second;
          }
          nameIndex = cached;
        } else {
          nameIndex = copyName(0xfffffffeu, [] { return std::string("kernel"); });
        }
        break;
      }
      case EventKind::Memcpy:
        c.memcpy++;
        nameIndex = copyName((1u << 24) | (uint32_t(r.copyKind) << 16) | (uint32_t(r.srcKind) << 8) | r.dstKind,
                             [&] { return Vendor::memcpyName(r); });
        break;
      case EventKind::Memset:
        c.memset++;
        nameIndex = copyName((2u << 24) | r.memoryKind, [&] { return Vendor::memsetName(r); });
        break;
      case EventKind::Runtime:
        c.runtime++;
        // CUPTI: named after the whole file is read (names frames come last); MSPTI: the record names itself.
        if constexpr (Vendor::kNamesFromStrings) nameIndex = runtimeFromString(stringIndex);
        break;
      case EventKind::Driver: c.driver++; break;
    }
    if (n_ == capacity_) resizeColumns(capacity_ * 2);
    if (n_ == populated_) populateAhead();
    const size_t i = n_++;
    at_.kind[i] = uint8_t(r.kind);
    at_.start[i] = r.start;
    at_.end[i] = r.end;
    at_.correlation[i] = r.correlation;
    at_.device[i] = r.device;
    at_.stream[i] = r.stream;
    at_.thread[i] = r.thread;
    // A vendor whose records name no process (rocprofiler-sdk) recorded the capturing one.
    at_.process[i] = r.process ? r.process : out_.pid;
    at_.name[i] = nameIndex;
    at_.cbid[i] = r.cbid;
    if (locations_) {
      at_.recordOffset[i] = offset;
      at_.recordSize[i] = size;
    }
    if constexpr (Vendor::kKernelType) out_.detail[i] = detailIndex;
  }

  void correlationWrapped(const ParsedRecord&, size_t offset) {
    out_.counts.correlationWrapped++;
    if (!warnedWrapped_) {
      warnedWrapped_ = true;
      note("info", "correlation-wrap",
           "activity record at offset " + std::to_string(offset) +
               " carries a correlation id above 4294967295: such ids are folded into 1 .. 2^32 - 1 (unique "
               "within a capture, which spans far fewer ids) and counted",
           int64_t(offset));
    }
  }

  uint32_t rawName(std::string_view raw) {
    std::string key(raw);
    auto it = rawNames_.find(key);
    if (it == rawNames_.end()) it = rawNames_.emplace(key, intern(key)).first;
    return it->second;
  }

  // MSPTI kernels: the entry holds the name and the type (fpc_format.h); both are interned once per entry.
  void kernelWithType(uint32_t stringIndex, uint32_t& nameIndex, uint32_t& detailIndex) {
    if (stringIndex >= frameStrings_.size()) {
      nameIndex = copyName(0xfffffffeu, [] { return std::string("kernel"); });
      return;
    }
    uint32_t& cached = frameStringName_[stringIndex];
    if (cached == kNoString) {
      const auto s = Vendor::kernelStrings(frameStrings_[stringIndex]);
      if (s.name.empty()) {
        cached = copyName(0xfffffffeu, [] { return std::string("kernel"); });
      } else {
        std::string raw(s.name);
        auto it = kernelNames_.find(raw);
        if (it == kernelNames_.end()) it = kernelNames_.emplace(raw, intern(demangle(raw))).first;
        cached = it->second;
      }
      frameStringDetail_[stringIndex] = s.type.empty() ? kNoString : rawName(s.type);
    }
    nameIndex = cached;
    detailIndex = frameStringDetail_[stringIndex];
  }

  uint32_t runtimeFromString(uint32_t stringIndex) {
    if (stringIndex >= frameStrings_.size() || frameStrings_[stringIndex].empty())
      return copyName(0xfffffffdu, [] { return Vendor::callName(ParsedRecord{}, DecodeContext{}); });
    uint32_t& cached = frameStringName_[stringIndex];
    if (cached == kNoString) cached = rawName(frameStrings_[stringIndex]);
    return cached;
  }

  template <typename F>
  uint32_t copyName(uint32_t key, F make) {
    auto it = copyNames_.find(key);
    if (it != copyNames_.end()) return it->second;
    uint32_t index = intern(make());
    copyNames_.emplace(key, index);
    return index;
  }

  void finish() {
    auto& o = out_;
    const size_t n = o.size();
    // Clock: the vendor clock mapped to realtime through the calibration pairs (offset, and rate when the
    // pairs span long enough for it to mean something).
    double slope = 1.0;
    int64_t offset = 0;
    uint64_t base = 0;
    if (!o.calibration.empty()) {
      const auto& first = o.calibration.size() > 1 ? o.calibration[1] : o.calibration[0];
      const auto& last = o.calibration.back();
      base = first.first;
      offset = int64_t(first.second - first.first);
      if (last.first > first.first + 100000000ull) {
        const double span = double(last.first - first.first);
        const double s = double(int64_t(last.second - first.second)) / span;
        // A pair is read to within the few microseconds between its two clock reads (more on a loaded machine):
        // a rate closer to 1 than 20 us over the span, or 10 ppm, is that error, not the clocks' (on the same clock,
        // it would stretch every duration by it); a device clock's own rate is far beyond it.
        const double resolution = std::max(1.0e-5, 20000.0 / span);
        if (s > 0.9 && s < 1.1 && std::abs(s - 1.0) > resolution) slope = s;
      }
    }
    const bool affine = slope != 1.0;
    std::vector<uint32_t> runtimeNames, driverNames;
    o.external.resize(n);  // every element is written below
    populate(o.external.data(), o.external.data() + n);
    for (size_t i = 0; i < n; ++i) {
      if (offset != 0 || affine) {
        // Unsigned arithmetic throughout: hostile calibration values must wrap, not overflow.
        auto map = [&](uint64_t t) -> uint64_t {
          if (!affine) return t + uint64_t(offset);
          const double d = double(int64_t(t - base)) * slope;
          const int64_t delta = d >= 9.0e18 ? INT64_MAX : d <= -9.0e18 ? INT64_MIN : int64_t(d);
          return base + uint64_t(offset) + uint64_t(delta);
        };
        o.start[i] = map(o.start[i]);
        o.end[i] = map(o.end[i]);
      }
      const uint32_t corr = o.correlation[i];
      int64_t ext = kNoExternalId;
      if (!denseExternal_.get(corr, ext) && !o.context.externalByCorrelation.empty()) {
        auto it = o.context.externalByCorrelation.find(corr);
        if (it != o.context.externalByCorrelation.end()) ext = it->second;
      }
      o.external[i] = ext;
      if (!o.context.deviceIndex.empty()) {
        auto index = o.context.deviceIndex.find(o.device[i]);
        if (index != o.context.deviceIndex.end()) o.device[i] = index->second;
      }
      if constexpr (Vendor::kNamesFromStrings) continue;
      const uint8_t kind = o.kind[i];
      if (kind == uint8_t(EventKind::Runtime) || kind == uint8_t(EventKind::Driver)) {
        auto& cache = kind == uint8_t(EventKind::Runtime) ? runtimeNames : driverNames;
        const uint32_t cbid = o.cbid[i];
        if (cbid < 65536) {
          if (cbid >= cache.size()) cache.resize(cbid + 1, kNoString);
          if (cache[cbid] == kNoString) cache[cbid] = nameFor(EventKind(kind), cbid);
          o.name[i] = cache[cbid];
        } else {
          o.name[i] = nameFor(EventKind(kind), cbid);
        }
      }
    }
    if constexpr (Vendor::kCoalesceRuntime) coalesceRuntime();
  }

  // MSPTI reports a launch more than once (the operator's API record and the runtime's, RUNTIME_API and ACL_API):
  // one correlation id, several runtime events. Only one may carry it, or a device event has several launches
  // and its flow several starts. Kept (seed 000): for a kernel the launch API, for a copy or a fill the copy or
  // set API, else the first; the others keep their External id but no correlation, and are counted.
  void coalesceRuntime() {
    auto& o = out_;
    const size_t n = o.size();
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; ++i)
      if (o.kind[i] == uint8_t(EventKind::Runtime) && o.correlation[i]) {
        lo = std::min(lo, o.correlation[i]);
        hi = std::max(hi, o.correlation[i]);
      }
    if (lo > hi) return;
    // Dense while ids stay near the event count (they are numbered one by one); a map for anything else.
    const bool dense = uint64_t(hi - lo) < 4 * uint64_t(n) + 1024;
    std::vector<uint32_t> firstDense(dense ? size_t(hi - lo) + 1 : 0, kNoString);
    std::unordered_map<uint32_t, uint32_t> firstSparse;
    std::unordered_map<uint32_t, std::vector<uint32_t>> repeated;  // correlation -> its runtime events
    for (size_t i = 0; i < n; ++i) {
      if (o.kind[i] != uint8_t(EventKind::Runtime) || !o.correlation[i]) continue;
      const uint32_t c = o.correlation[i];
      uint32_t& first = dense ? firstDense[c - lo] : firstSparse.try_emplace(c, kNoString).first->second;
      if (first == kNoString) {
        first = uint32_t(i);
        continue;
      }
      auto& group = repeated[c];
      if (group.empty()) group.push_back(first);
      group.push_back(uint32_t(i));
    }
    if (repeated.empty()) return;
    std::unordered_map<uint32_t, uint8_t> deviceKind;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t k = o.kind[i];
      if ((k == uint8_t(EventKind::Kernel) || k == uint8_t(EventKind::Memcpy) || k == uint8_t(EventKind::Memset)) &&
          repeated.count(o.correlation[i]))
        deviceKind.emplace(o.correlation[i], k);
    }
    for (auto& [correlation, group] : repeated) {
      auto kind = deviceKind.find(correlation);
      const char* want = kind == deviceKind.end()              ? nullptr
                         : kind->second == uint8_t(EventKind::Kernel) ? "Launch"
                         : kind->second == uint8_t(EventKind::Memcpy) ? "Memcpy"
                                                                      : "Memset";
      uint32_t keep = group.front();
      if (want)
        for (uint32_t i : group)
          if (o.names[o.name[i]].find(want) != std::string::npos) {
            keep = i;
            break;
          }
      for (uint32_t i : group)
        if (i != keep) {
          o.correlation[i] = 0;
          o.counts.runtimeCoalesced++;
        }
    }
    note("info", "runtime-coalesced",
         std::to_string(o.counts.runtimeCoalesced) +
             " runtime records shared their launch's correlation id with another: each launch keeps one (the "
             "launch, copy or set API), the others keep their External id without a correlation",
         -1);
  }

  uint32_t nameFor(EventKind kind, uint32_t cbid) {
    ParsedRecord r;
    r.kind = kind;
    r.cbid = cbid;
    std::string name = Vendor::callName(r, out_.context);
    return copyName((kind == EventKind::Runtime ? 3u << 24 : 4u << 24) ^ cbid ^ (cbid >> 24 << 30),
                    [&] { return name; });
  }
};

}  // namespace

bool decodeCapture(const uint8_t* data, size_t size, DecodedCapture& out, std::string& error, DecodeOptions options) {
  if (size < sizeof fpc::kMagic || std::memcmp(data, fpc::kMagic, sizeof fpc::kMagic) != 0) {
    error = "not a FlagOS capture (bad magic at offset 0; expected \"FLAGPCAP\")";
    return false;
  }
  if (size < fpc::kHeaderSize) {
    error = "capture header truncated at " + std::to_string(size) + " bytes (expected " +
            std::to_string(fpc::kHeaderSize) + ")";
    return false;
  }
  const uint16_t version = load<uint16_t>(data + 8);
  if (version != fpc::kFormatVersion) {
    error = "unsupported capture format version " + std::to_string(version) + " at offset 8 (this build reads version " +
            std::to_string(fpc::kFormatVersion) + ")";
    return false;
  }
  if (fpc::crc32(data, fpc::kHeaderSize - 4) != load<uint32_t>(data + fpc::kHeaderSize - 4)) {
    error = "capture header checksum mismatch at offset 60";
    return false;
  }
  out.formatVersion = version;
  out.vendor = load<uint32_t>(data + 12);
  out.apiVersion = load<uint32_t>(data + 16);
  out.pid = load<uint32_t>(data + 20);
  out.calibration.emplace_back(load<uint64_t>(data + 24), load<uint64_t>(data + 32));
  switch (out.vendor) {
#define FLAGPROF_DECODE_VENDOR(key)                                  \
  case key::Records::kId:                                            \
    Decoder<key::Records>(data, size, out, options).run();           \
    return true;
    FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_DECODE_VENDOR)
#undef FLAGPROF_DECODE_VENDOR
    default: {
      std::vector<const VendorRow*> rows;
      for (const VendorRow& v : kVendors) rows.push_back(&v);
      std::sort(rows.begin(), rows.end(), [](const VendorRow* a, const VendorRow* b) { return a->id < b->id; });
      std::string known;
      for (const VendorRow* v : rows)
        known += std::string(known.empty() ? "" : ", ") + v->label + " (" + std::to_string(v->id) + ")";
      error = "capture from vendor " + std::to_string(out.vendor) + " at offset 12: this build decodes " + known;
      return false;
    }
  }
}

namespace {
std::string_view kernelType(const DecodedCapture& c, size_t i) {
  if (i >= c.detail.size() || c.detail[i] >= c.names.size()) return {};
  return c.names[c.detail[i]];
}

EventContext eventContext(const DecodedCapture& c, size_t i, const ParsedRecord& r) {
  EventContext e;
  auto dev = c.context.devices.find(r.device);
  if (dev != c.context.devices.end()) e.device = &dev->second;
  e.detail = kernelType(c, i);
  return e;
}

// The record of event i, read again by its vendor's parser, and its vendor's metadata writer.
template <typename Write>
void withRecord(const DecodedCapture& c, size_t i, const uint8_t* data, Write write) {
  ParsedRecord r;
  switch (c.vendor) {
#define FLAGPROF_EVENT_VENDOR(key)                                                                     \
  case key::Records::kId:                                                                              \
    key::Records::parse(data + c.recordOffset[i], c.recordSize[i], r);                                 \
    r.device = c.device[i]; /* the process's device index (the decoder mapped physical ids) */         \
    write(r, eventContext(c, i, r), [](auto&&... args) { key::Records::metadata(args...); },           \
          [](auto&&... args) { key::Records::metadataJson(args...); });                                \
    return;
    FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_EVENT_VENDOR)
#undef FLAGPROF_EVENT_VENDOR
    default: return;  // decodeCapture refuses captures of other vendors
  }
}
}  // namespace

DeviceEvent eventAt(const DecodedCapture& c, size_t i, const uint8_t* data) {
  DeviceEvent e;
  e.kind = EventKind(c.kind[i]);
  e.start_ns = c.start[i];
  e.end_ns = c.end[i];
  e.correlation_id = c.correlation[i];
  if (c.external[i] != kNoExternalId) e.external_correlation_id = c.external[i];
  e.device = c.device[i];
  e.stream = c.stream[i];
  e.thread_id = c.thread[i];
  e.name = c.names[c.name[i]];
  withRecord(c, i, data, [&](const ParsedRecord& r, const EventContext& x, auto metadata, auto) {
    metadata(r, e.external_correlation_id, x, e.metadata);
  });
  return e;
}

void appendEventArgsJson(std::string& out, const DecodedCapture& c, size_t i, const uint8_t* data) {
  std::optional<int64_t> ext;
  if (c.external[i] != kNoExternalId) ext = c.external[i];
  withRecord(c, i, data, [&](const ParsedRecord& r, const EventContext& x, auto, auto metadataJson) {
    metadataJson(r, ext, x, out);
  });
}

}  // namespace flagprof
