// Node-API binding over the shared tracer: decodeCapture(path, {args}) -> columns, strings, diagnostics.
// All decoding happens in native/tracer; this file only moves the results into JavaScript values.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <napi.h>
#include <string>

#include "../tracer/capture_decoder.h"
#include "kineto_scan.h"
#include "slice_order.h"
#include "../tracer/fpc_format.h"
#include "../vendors/vendors.h"

namespace {

using flagprof::DecodedCapture;

// A read-only mapping of the capture, released on every path out.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      error_ = std::strerror(errno);
      return;
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      error_ = std::strerror(errno);
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      error_ = "not a regular file";
      return;
    }
    size_ = size_t(st.st_size);
    if (size_ == 0) return;
    // Populated in one go: the decoder reads every byte, and faulting page by page costs more than decoding.
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, 0);
    if (p == MAP_FAILED) {
      error_ = std::strerror(errno);
      size_ = 0;
      return;
    }
    data_ = static_cast<const uint8_t*>(p);
    ::madvise(p, size_, MADV_SEQUENTIAL);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  const uint8_t* data() const { return data_ ? data_ : reinterpret_cast<const uint8_t*>(""); }
  size_t size() const { return size_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

// Hands a column to JavaScript without copying it; runtimes that refuse external memory (a V8 sandbox, as in
// Electron) get a copy instead.
template <typename Array, typename T>
Array adoptColumn(Napi::Env env, flagprof::Column<T>&& column) {
  const size_t n = column.size();
  if (n == 0) return Array::New(env, 0);
  auto* holder = new flagprof::Column<T>(std::move(column));
  const size_t bytes = n * sizeof(T);
  try {
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(
        env, holder->data(), bytes,
        [](Napi::Env finalizeEnv, void*, flagprof::Column<T>* h) {
          Napi::MemoryManagement::AdjustExternalMemory(finalizeEnv, -int64_t(h->size() * sizeof(T)));
          delete h;
        },
        holder);
    Napi::MemoryManagement::AdjustExternalMemory(env, int64_t(bytes));
    return Array::New(env, n, buffer, 0);
  } catch (const Napi::Error&) {
    Array array = Array::New(env, n);
    std::memcpy(array.Data(), holder->data(), bytes);
    delete holder;
    return array;
  }
}

// Rewrites epoch-ns timestamps in place as doubles relative to `base` (exact while |t - base| < 2^53 ns, 104
// days): the column's memory is reused rather than a second one faulted in.
void toRelativeInPlace(flagprof::Column<uint64_t>& times, uint64_t base) {
  for (uint64_t& t : times) {
    const double relative = double(int64_t(t - base));
    std::memcpy(&t, &relative, sizeof relative);
  }
}

// External ids in place as doubles, NaN where absent (0 is a valid torch id).
void externalInPlace(flagprof::Column<int64_t>& ids) {
  for (int64_t& id : ids) {
    const double value = id == flagprof::kNoExternalId ? NAN : double(id);
    std::memcpy(&id, &value, sizeof value);
  }
}

Napi::Value bigint(Napi::Env env, uint64_t value) { return Napi::BigInt::New(env, value); }

Napi::Object counts(Napi::Env env, const flagprof::CaptureCounts& c) {
  Napi::Object o = Napi::Object::New(env);
  auto set = [&](const char* key, uint64_t v) { o.Set(key, Napi::Number::New(env, double(v))); };
  set("frames", c.frames);
  set("badFrames", c.badFrames);
  set("records", c.records);
  set("kernel", c.kernel);
  set("memcpy", c.memcpy);
  set("memset", c.memset);
  set("runtime", c.runtime);
  set("driver", c.driver);
  set("externalCorrelation", c.externalCorrelation);
  set("deviceRecords", c.deviceRecords);
  set("ignored", c.ignored);
  set("noTiming", c.noTiming);
  set("implausible", c.implausible);
  set("malformed", c.malformed);
  set("dropped", c.dropped);
  set("correlationWrapped", c.correlationWrapped);
  set("runtimeCoalesced", c.runtimeCoalesced);
  return o;
}

Napi::Value DecodeCapture(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    throw Napi::TypeError::New(env, "decodeCapture(path: string, options?: { args?: boolean })");
  }
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  bool wantArgs = false;
  if (info.Length() > 1 && info[1].IsObject()) {
    Napi::Value v = info[1].As<Napi::Object>().Get("args");
    wantArgs = v.IsBoolean() && v.As<Napi::Boolean>().Value();
  }
  MappedFile file(path);
  if (!file.error().empty()) throw Napi::Error::New(env, path + ": cannot read the capture (" + file.error() + ")");

  DecodedCapture capture;
  std::string error;
  flagprof::DecodeOptions options;
  options.recordLocations = wantArgs;
  if (!flagprof::decodeCapture(file.data(), file.size(), capture, error, options)) {
    throw Napi::Error::New(env, path + ": " + error);
  }

  const size_t n = capture.size();
  uint64_t base = 0;
  if (capture.windowStart) {
    base = *capture.windowStart;
  } else if (n) {
    base = capture.start[0];
    for (uint64_t t : capture.start) base = std::min(base, t);
  }

  Napi::Object result = Napi::Object::New(env);
  result.Set("formatVersion", Napi::Number::New(env, capture.formatVersion));
  const flagprof::VendorRow* vendor = flagprof::vendorById(capture.vendor);
  result.Set("vendor", Napi::String::New(env, vendor ? vendor->key : "unknown"));
  result.Set("apiVersion", Napi::Number::New(env, capture.apiVersion));
  result.Set("pid", Napi::Number::New(env, capture.pid));
  result.Set("library", Napi::String::New(env, capture.library));
  result.Set("platform", Napi::String::New(env, capture.platform));
  result.Set("platformReason", Napi::String::New(env, capture.platformReason));
  result.Set("closed", Napi::Boolean::New(env, capture.closed));
  result.Set("baseNs", bigint(env, base));
  result.Set("windowStartNs", capture.windowStart ? bigint(env, *capture.windowStart) : env.Null());
  result.Set("windowStopNs", capture.windowStop ? bigint(env, *capture.windowStop) : env.Null());
  Napi::Array calibration = Napi::Array::New(env, capture.calibration.size());
  for (size_t i = 0; i < capture.calibration.size(); ++i) {
    Napi::Object pair = Napi::Object::New(env);
    pair.Set("vendorNs", bigint(env, capture.calibration[i].first));
    pair.Set("realtimeNs", bigint(env, capture.calibration[i].second));
    calibration.Set(uint32_t(i), pair);
  }
  result.Set("calibration", calibration);

  if (wantArgs) {
    // Each event's metadata as JSON text, back to back in one UTF-8 column; event i is
    // bytes[offsets[i], offsets[i + 1]). Both columns are handed over without copying.
    flagprof::Column<uint8_t> bytes;
    flagprof::Column<double> offsets;
    bytes.reserve(n * 160 + 64);
    offsets.resize(n + 1);
    flagprof::populate(offsets.data(), offsets.data() + offsets.size());
    std::string one;
    size_t populated = 0;
    for (size_t i = 0; i < n; ++i) {
      if (bytes.size() + 4096 > populated && bytes.capacity() > populated) {
        populated = std::min(bytes.capacity(), bytes.size() + (size_t(16) << 20));
        flagprof::populate(bytes.data() + bytes.size(), bytes.data() + populated);
      }
      offsets[i] = double(bytes.size());
      one.clear();
      flagprof::appendEventArgsJson(one, capture, i, file.data());
      bytes.insert(bytes.end(), one.begin(), one.end());
    }
    offsets[n] = double(bytes.size());
    Napi::Object argsObject = Napi::Object::New(env);
    argsObject.Set("bytes", adoptColumn<Napi::Uint8Array>(env, std::move(bytes)));
    argsObject.Set("offsets", adoptColumn<Napi::Float64Array>(env, std::move(offsets)));
    result.Set("args", argsObject);
  }

  result.Set("length", Napi::Number::New(env, double(n)));
  toRelativeInPlace(capture.start, base);
  toRelativeInPlace(capture.end, base);
  externalInPlace(capture.external);
  result.Set("start", adoptColumn<Napi::Float64Array>(env, std::move(capture.start)));
  result.Set("end", adoptColumn<Napi::Float64Array>(env, std::move(capture.end)));
  result.Set("externalId", adoptColumn<Napi::Float64Array>(env, std::move(capture.external)));
  result.Set("correlation", adoptColumn<Napi::Uint32Array>(env, std::move(capture.correlation)));
  result.Set("kind", adoptColumn<Napi::Uint8Array>(env, std::move(capture.kind)));
  result.Set("device", adoptColumn<Napi::Uint32Array>(env, std::move(capture.device)));
  result.Set("stream", adoptColumn<Napi::Uint32Array>(env, std::move(capture.stream)));
  result.Set("thread", adoptColumn<Napi::Uint32Array>(env, std::move(capture.thread)));
  result.Set("process", adoptColumn<Napi::Uint32Array>(env, std::move(capture.process)));
  result.Set("name", adoptColumn<Napi::Uint32Array>(env, std::move(capture.name)));
  result.Set("cbid", adoptColumn<Napi::Uint32Array>(env, std::move(capture.cbid)));
  Napi::Array names = Napi::Array::New(env, capture.names.size());
  for (size_t i = 0; i < capture.names.size(); ++i) names.Set(uint32_t(i), Napi::String::New(env, capture.names[i]));
  result.Set("names", names);

  result.Set("counts", counts(env, capture.counts));
  Napi::Array devices = Napi::Array::New(env);
  uint32_t d = 0;
  for (const auto& [id, props] : capture.context.devices) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", Napi::Number::New(env, id));
    o.Set("numMultiprocessors", Napi::Number::New(env, props.numMultiprocessors));
    o.Set("maxWarpsPerMultiprocessor", Napi::Number::New(env, props.maxWarpsPerMultiprocessor));
    o.Set("computeCapability",
          Napi::String::New(env, std::to_string(props.computeCapabilityMajor) + "." +
                                     std::to_string(props.computeCapabilityMinor)));
    devices.Set(d++, o);
  }
  result.Set("devices", devices);
  Napi::Array diagnostics = Napi::Array::New(env, capture.diagnostics.size());
  for (size_t i = 0; i < capture.diagnostics.size(); ++i) {
    const auto& diag = capture.diagnostics[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("severity", Napi::String::New(env, diag.severity));
    o.Set("code", Napi::String::New(env, diag.code));
    o.Set("message", Napi::String::New(env, diag.message));
    if (diag.offset >= 0) o.Set("offset", Napi::Number::New(env, double(diag.offset)));
    o.Set("gated", Napi::Boolean::New(env, diag.gated));
    o.Set("fromCapture", Napi::Boolean::New(env, diag.fromCapture));
    if (diag.realtimeNs) o.Set("realtimeNs", bigint(env, diag.realtimeNs));
    diagnostics.Set(uint32_t(i), o);
  }
  result.Set("diagnostics", diagnostics);
  return result;
}

// The Kineto JSON scanner (kineto_scan.h) as a class: one per import, its caches living as long as the import.
//   new KinetoScanner({ instantKind, otherKind, intern(start, end), track(pid, tid), kind(cat) })
//   scanner.bind(tables)                 -> the columns to write (again after any of them is replaced)
//   scanner.scan(buf, pos, end, io)      -> writes the columns in place, the state and where it stopped in io.
//   scanner.release()                    -> drops the callbacks and columns once the import is over.
// The callbacks and columns are held by strong references, which are roots: the callbacks close over the importer,
// which holds this object, so without release() nothing of an import (its whole profile) was ever collected.
class KinetoScannerWrap : public Napi::ObjectWrap<KinetoScannerWrap>, private flagprof::kineto::ScanHost {
 public:
  // io: the in/out block shared with extension/import/native.ts (its IO indices mirror these).
  enum Io {
    kAfterElement,
    kOriginUs,
    kEventCount,
    kMaxEvents,
    kMaxSlices,
    kMaxValue,
    kPos,
    kStop,
    kFullMask,
    kArgsNeeded,
    kSlicesLength,
    kFlowsLength,
    kArgsUsed,
    kArgsCount,
    kNotesLength,
    kMetaLength,
    kIoSize
  };

  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "KinetoScanner",
                       {InstanceMethod<&KinetoScannerWrap::Bind>("bind"), InstanceMethod<&KinetoScannerWrap::Scan>("scan"),
                        InstanceMethod<&KinetoScannerWrap::Release>("release")});
  }

  explicit KinetoScannerWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<KinetoScannerWrap>(info), scanner_(0, 0) {
    if (info.Length() < 1 || !info[0].IsObject())
      throw Napi::TypeError::New(info.Env(), "KinetoScanner({ instantKind, otherKind, intern, track, kind })");
    Napi::Object o = info[0].As<Napi::Object>();
    scanner_ = flagprof::kineto::KinetoScanner(uint8_t(o.Get("instantKind").As<Napi::Number>().Uint32Value()),
                                               uint8_t(o.Get("otherKind").As<Napi::Number>().Uint32Value()));
    intern_ = Napi::Persistent(o.Get("intern").As<Napi::Function>());
    track_ = Napi::Persistent(o.Get("track").As<Napi::Function>());
    kind_ = Napi::Persistent(o.Get("kind").As<Napi::Function>());
  }

 private:
  template <typename Array>
  static Array column(Napi::Object table, const char* key, size_t& capacity) {
    Napi::Value v = table.Get(key);
    if (!v.IsTypedArray()) throw Napi::TypeError::New(table.Env(), std::string("scan: column ") + key + " missing");
    Array a = v.As<Array>();
    capacity = std::min(capacity, a.ElementLength());
    return a;
  }

  // The columns the scanner writes: bound once, and again whenever the importer has replaced one (grown it).
  Napi::Value Bind(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "bind(tables)");
    Napi::Object tables = info[0].As<Napi::Object>();
    Napi::Object s = tables.Get("slices").As<Napi::Object>();
    Napi::Object f = tables.Get("flows").As<Napi::Object>();
    size_t sliceCap = SIZE_MAX;
    slices_.kind = column<Napi::Uint8Array>(s, "kind", sliceCap).Data();
    slices_.track = column<Napi::Uint32Array>(s, "track", sliceCap).Data();
    slices_.start = column<Napi::Float64Array>(s, "start", sliceCap).Data();
    slices_.dur = column<Napi::Float64Array>(s, "dur", sliceCap).Data();
    slices_.name = column<Napi::Uint32Array>(s, "name", sliceCap).Data();
    slices_.cat = column<Napi::Uint32Array>(s, "cat", sliceCap).Data();
    slices_.correlation = column<Napi::Float64Array>(s, "correlation", sliceCap).Data();
    slices_.externalId = column<Napi::Float64Array>(s, "externalId", sliceCap).Data();
    slices_.parent = column<Napi::Int32Array>(s, "parent", sliceCap).Data();
    slices_.args = column<Napi::Int32Array>(s, "args", sliceCap).Data();
    slices_.capacity = sliceCap;
    size_t flowCap = SIZE_MAX;
    flows_.cat = column<Napi::Uint32Array>(f, "cat", flowCap).Data();
    flows_.id = column<Napi::Uint32Array>(f, "id", flowCap).Data();
    flows_.phase = column<Napi::Uint8Array>(f, "phase", flowCap).Data();
    flows_.ts = column<Napi::Float64Array>(f, "ts", flowCap).Data();
    flows_.track = column<Napi::Uint32Array>(f, "track", flowCap).Data();
    flows_.slice = column<Napi::Int32Array>(f, "slice", flowCap).Data();
    flows_.capacity = flowCap;
    size_t byteCap = SIZE_MAX, offsetCap = SIZE_MAX, noteCap = SIZE_MAX;
    args_.bytes = column<Napi::Uint8Array>(tables, "argsBytes", byteCap).Data();
    args_.offsets = column<Napi::Float64Array>(tables, "argsOffsets", offsetCap).Data();
    args_.byteCapacity = byteCap;
    args_.offsetCapacity = offsetCap;
    notes_.values = column<Napi::Float64Array>(tables, "notes", noteCap).Data();
    notes_.capacity = noteCap;
    size_t metaCap = SIZE_MAX;
    meta_.values = column<Napi::Float64Array>(tables, "meta", metaCap).Data();
    meta_.capacity = metaCap;
    // Held, so that no column bound here is collected while it is bound.
    bound_ = Napi::Persistent(tables);
    return env.Undefined();
  }

  // After this, scan() refuses: an import that is over does not scan again (a new import makes a new scanner).
  Napi::Value Release(const Napi::CallbackInfo& info) {
    intern_.Reset();
    track_.Reset();
    kind_.Reset();
    bound_.Reset();
    slices_ = {};
    flows_ = {};
    args_ = {};
    notes_ = {};
    meta_ = {};
    scanBuf_ = nullptr;
    released_ = true;
    return info.Env().Undefined();
  }

  Napi::Value Scan(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    env_ = env;
    if (info.Length() < 4 || !info[0].IsTypedArray() || !info[3].IsTypedArray())
      throw Napi::TypeError::New(env, "scan(buf, pos, end, io)");
    if (released_) throw Napi::Error::New(env, "scan: the scanner was released");
    if (bound_.IsEmpty()) throw Napi::Error::New(env, "scan: bind(tables) first");
    Napi::Uint8Array buf = info[0].As<Napi::Uint8Array>();
    const size_t end = std::min(size_t(info[2].As<Napi::Number>().Int64Value()), buf.ElementLength());
    const size_t pos = std::min(size_t(info[1].As<Napi::Number>().Int64Value()), end);
    Napi::Float64Array ioArray = info[3].As<Napi::Float64Array>();
    if (ioArray.ElementLength() < kIoSize) throw Napi::TypeError::New(env, "scan: io too short");
    double* io = ioArray.Data();
    slices_.length = std::min(size_t(io[kSlicesLength]), slices_.capacity);
    flows_.length = std::min(size_t(io[kFlowsLength]), flows_.capacity);
    args_.used = std::min(size_t(io[kArgsUsed]), args_.byteCapacity);
    args_.count = size_t(io[kArgsCount]);
    notes_.length = std::min(size_t(io[kNotesLength]), notes_.capacity);
    meta_.length = std::min(size_t(io[kMetaLength]), meta_.capacity);
    flagprof::kineto::ScanState state{io[kAfterElement] != 0, io[kOriginUs], io[kEventCount]};
    const flagprof::kineto::ScanLimits limits{io[kMaxEvents], io[kMaxSlices], io[kMaxValue]};
    scanBuf_ = buf.Data();
    const flagprof::kineto::ScanResult r =
        scanner_.scan(buf.Data(), pos, end, state, limits, slices_, flows_, args_, notes_, meta_, *this);
    io[kAfterElement] = state.afterElement ? 1 : 0;
    io[kOriginUs] = state.originUs;
    io[kEventCount] = state.eventCount;
    io[kPos] = double(r.pos);
    io[kStop] = double(int(r.stop));
    io[kFullMask] = r.fullMask;
    io[kArgsNeeded] = double(r.argsBytesNeeded);
    io[kSlicesLength] = double(slices_.length);
    io[kFlowsLength] = double(flows_.length);
    io[kArgsUsed] = double(args_.used);
    io[kArgsCount] = double(args_.count);
    io[kNotesLength] = double(notes_.length);
    io[kMetaLength] = double(meta_.length);
    return env.Undefined();
  }

  uint32_t internBytes(size_t start, size_t end) override {
    // Text without escapes goes as a string made here: decoding it in JS (a view, then TextDecoder) cost more than
    // the call itself for the ten thousand flow ids of a trace.
    const char* text = reinterpret_cast<const char*>(scanBuf_ + start);
    const bool plain = std::memchr(text, '\\', end - start) == nullptr;
    Napi::Value v = plain ? intern_.Call({Napi::Number::New(env_, double(start)), Napi::Number::New(env_, double(end)),
                                          Napi::String::New(env_, text, end - start)})
                          : intern_.Call({Napi::Number::New(env_, double(start)), Napi::Number::New(env_, double(end))});
    return v.As<Napi::Number>().Uint32Value();
  }
  uint32_t trackFor(uint32_t pid, uint32_t tid) override {
    Napi::Value v = track_.Call({Napi::Number::New(env_, pid), Napi::Number::New(env_, tid)});
    return v.As<Napi::Number>().Uint32Value();
  }
  uint8_t kindOf(uint32_t cat) override {
    return uint8_t(kind_.Call({Napi::Number::New(env_, cat)}).As<Napi::Number>().Uint32Value());
  }

  flagprof::kineto::KinetoScanner scanner_;
  Napi::FunctionReference intern_, track_, kind_;
  const uint8_t* scanBuf_ = nullptr;
  bool released_ = false;
  Napi::ObjectReference bound_;
  flagprof::kineto::SliceColumns slices_{};
  flagprof::kineto::FlowColumns flows_{};
  flagprof::kineto::ArgsColumns args_{};
  flagprof::kineto::StackNotes notes_{};
  flagprof::kineto::StackNotes meta_{};
  Napi::Env env_ = nullptr;
};

template <typename Array>
Array typedArg(const Napi::CallbackInfo& info, const char* fn, size_t at, size_t atLeast) {
  if (!info[at].IsTypedArray())
    throw Napi::TypeError::New(info.Env(), std::string(fn) + ": argument " + std::to_string(at) + " is not a typed array");
  Array a = info[at].As<Array>();
  if (a.ElementLength() < atLeast)
    throw Napi::RangeError::New(info.Env(), std::string(fn) + ": argument " + std::to_string(at) + " is too short");
  return a;
}

size_t countArg(const Napi::CallbackInfo& info, const char* fn, size_t at) {
  if (!info[at].IsNumber())
    throw Napi::TypeError::New(info.Env(), std::string(fn) + ": argument " + std::to_string(at) + " is not a count");
  const int64_t v = info[at].As<Napi::Number>().Int64Value();
  return v < 0 ? 0 : size_t(v);
}

// orderAndNest(track, start, dur, length, trackCount, order, offsets, depth, parent, maxDepth): false when a slice
// names a track past trackCount.
Napi::Value OrderAndNest(const Napi::CallbackInfo& info) {
  constexpr const char* fn = "orderAndNest";
  if (info.Length() < 10) throw Napi::TypeError::New(info.Env(), "orderAndNest: 10 arguments");
  const size_t n = countArg(info, fn, 3);
  const size_t tracks = countArg(info, fn, 4);
  const flagprof::kineto::SliceOrderIn in{typedArg<Napi::Uint32Array>(info, fn, 0, n).Data(),
                                          typedArg<Napi::Float64Array>(info, fn, 1, n).Data(),
                                          typedArg<Napi::Float64Array>(info, fn, 2, n).Data(), n, tracks};
  const flagprof::kineto::SliceOrderOut out{
      typedArg<Napi::Uint32Array>(info, fn, 5, n).Data(), typedArg<Napi::Uint32Array>(info, fn, 6, tracks + 1).Data(),
      typedArg<Napi::Uint16Array>(info, fn, 7, n).Data(), typedArg<Napi::Int32Array>(info, fn, 8, n).Data(),
      typedArg<Napi::Uint32Array>(info, fn, 9, tracks).Data()};
  return Napi::Boolean::New(info.Env(), flagprof::kineto::orderAndNest(in, out));
}

// shiftToZero(start, n, flowTs, m) -> the shift subtracted (0: none, NaN: no times).
Napi::Value ShiftToZero(const Napi::CallbackInfo& info) {
  constexpr const char* fn = "shiftToZero";
  if (info.Length() < 4) throw Napi::TypeError::New(info.Env(), "shiftToZero: 4 arguments");
  const size_t n = countArg(info, fn, 1);
  const size_t m = countArg(info, fn, 3);
  return Napi::Number::New(info.Env(), flagprof::kineto::shiftToZero(typedArg<Napi::Float64Array>(info, fn, 0, n).Data(), n,
                                                                 typedArg<Napi::Float64Array>(info, fn, 2, m).Data(), m));
}

// countByClass(kind, track, n, classOfKind, device, cpu, trackCount) -> false on a kind or track out of range.
Napi::Value CountByClass(const Napi::CallbackInfo& info) {
  constexpr const char* fn = "countByClass";
  if (info.Length() < 7) throw Napi::TypeError::New(info.Env(), "countByClass: 7 arguments");
  const size_t n = countArg(info, fn, 2);
  const size_t tracks = countArg(info, fn, 6);
  Napi::Uint8Array classOf = typedArg<Napi::Uint8Array>(info, fn, 3, 0);
  return Napi::Boolean::New(
      info.Env(), flagprof::kineto::countByClass(
                      typedArg<Napi::Uint8Array>(info, fn, 0, n).Data(), typedArg<Napi::Uint32Array>(info, fn, 1, n).Data(),
                      n, classOf.Data(), classOf.ElementLength(), typedArg<Napi::Uint32Array>(info, fn, 4, tracks).Data(),
                      typedArg<Napi::Uint32Array>(info, fn, 5, tracks).Data(), tracks));
}

// bindFlows(flowTrack, flowTs, m, lookIn, order, offsets, start, dur, parent, slice) -> false on an index out of
// range (slice is then partly written).
Napi::Value BindFlows(const Napi::CallbackInfo& info) {
  constexpr const char* fn = "bindFlows";
  if (info.Length() < 10) throw Napi::TypeError::New(info.Env(), "bindFlows: 10 arguments");
  const size_t m = countArg(info, fn, 2);
  Napi::Int32Array lookIn = typedArg<Napi::Int32Array>(info, fn, 3, 0);
  const size_t tracks = lookIn.ElementLength();
  Napi::Uint32Array order = typedArg<Napi::Uint32Array>(info, fn, 4, 0);
  Napi::Uint32Array offsets = typedArg<Napi::Uint32Array>(info, fn, 5, tracks + 1);
  const size_t n = order.ElementLength();
  for (size_t t = 0; t <= tracks; t++)
    if (offsets.Data()[t] > n) throw Napi::RangeError::New(info.Env(), "bindFlows: offsets past the order");
  const flagprof::kineto::FlowBindIn in{typedArg<Napi::Uint32Array>(info, fn, 0, m).Data(),
                                        typedArg<Napi::Float64Array>(info, fn, 1, m).Data(),
                                        m,
                                        lookIn.Data(),
                                        tracks,
                                        order.Data(),
                                        offsets.Data(),
                                        typedArg<Napi::Float64Array>(info, fn, 6, n).Data(),
                                        typedArg<Napi::Float64Array>(info, fn, 7, n).Data(),
                                        typedArg<Napi::Int32Array>(info, fn, 8, n).Data()};
  return Napi::Boolean::New(info.Env(),
                            flagprof::kineto::bindFlows(in, typedArg<Napi::Int32Array>(info, fn, 9, m).Data()));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("orderAndNest", Napi::Function::New(env, OrderAndNest, "orderAndNest"));
  exports.Set("shiftToZero", Napi::Function::New(env, ShiftToZero, "shiftToZero"));
  exports.Set("countByClass", Napi::Function::New(env, CountByClass, "countByClass"));
  exports.Set("bindFlows", Napi::Function::New(env, BindFlows, "bindFlows"));
  exports.Set("decodeCapture", Napi::Function::New(env, DecodeCapture, "decodeCapture"));
  exports.Set("KinetoScanner", KinetoScannerWrap::Define(env));
  exports.Set("formatVersion", Napi::Number::New(env, 1));
  return exports;
}

}  // namespace

NODE_API_MODULE(flagprof, Init)
