// The generic Kineto adaptor (seed 000 §1.3, §2, §3): DeviceEvents in, libkineto::GenericTraceActivity out.
// It does two things only: translate events, and wire the two correlation schemes —
//   flows:   flow.id = the vendor's correlation_id, start on the runtime half, finish on the device half;
//   linking: linked = getLinkedActivity(torch's external_correlation_id), never the vendor id (§2).
// The lines it prints are the FLAGOS_TRACE catalogue's A1-A16 (the extension's bring-up panel parses them).
#include "flagos_kineto_profiler.h"

#include <c10/core/DeviceType.h>
#include <libkineto.h>
#include <output_base.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace flagprof::kineto {

namespace {

using libkineto::ActivityType;

bool traceOn() {
  static const bool on = [] {
    const char* v = getenv("FLAGOS_TRACE");
    if (v == nullptr) return false;
    std::string s;
    for (const char* p = v; *p; ++p)
      if (*p != ' ' && *p != '\t') s.push_back(char(tolower(static_cast<unsigned char>(*p))));
    return s == "1" || s == "true" || s == "on" || s == "yes";
  }();
  return on;
}

void line(bool gated, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void line(bool gated, const char* fmt, ...) {
  if (gated && !traceOn()) return;
  char text[4096];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  fprintf(stderr, "[flagos] %s\n", text);
}

// Kind codes of the catalogue's lines (§3 of the FLAGOS_TRACE reference): the EventKind numbers.
int kindCode(EventKind kind) { return int(kind); }

ActivityType activityTypeOf(EventKind kind) {
  switch (kind) {
    case EventKind::Kernel: return ActivityType::CONCURRENT_KERNEL;
    case EventKind::Memcpy: return ActivityType::GPU_MEMCPY;
    case EventKind::Memset: return ActivityType::GPU_MEMSET;
    case EventKind::Runtime: return ActivityType::PRIVATEUSE1_RUNTIME;
    case EventKind::Driver: return ActivityType::PRIVATEUSE1_DRIVER;
  }
  return ActivityType::PRIVATEUSE1_RUNTIME;
}

bool isHostSide(EventKind kind) { return kind == EventKind::Runtime || kind == EventKind::Driver; }

const std::set<ActivityType>& deviceActivities() {
  static const std::set<ActivityType> types{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                            ActivityType::GPU_MEMSET, ActivityType::PRIVATEUSE1_RUNTIME,
                                            ActivityType::PRIVATEUSE1_DRIVER};
  return types;
}

// Agent mode (the capture agent's launcher owns the capture window and writes capture.fpc, which the product
// merges): the adaptor only carries torch's correlation ids to the tracer. Starting, stopping or draining the
// capture here would cut the agent's window at every profiler restart, and emitting the events would put them in
// the trace twice. The agent sets FLAGPROF_KINETO_IDS_ONLY=1 before it registers the adaptor.
bool idsOnly() {
  const char* v = getenv("FLAGPROF_KINETO_IDS_ONLY");
  return v != nullptr && v[0] == '1' && v[1] == '\0';
}

class FlagosKinetoSession final : public libkineto::IActivityProfilerSession {
 public:
  FlagosKinetoSession(std::shared_ptr<DeviceTracer> tracer, std::set<ActivityType> wanted)
      : tracer_(std::move(tracer)), wanted_(std::move(wanted)), idsOnly_(idsOnly()) {}

  void start() override {
    if (!idsOnly_) tracer_->start();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    status_ = libkineto::TraceStatus::PROCESSING;
    if (idsOnly_) {
      line(true, "session stop: ids only (the capture agent records the device events)");
      return;
    }
    tracer_->stop();
    events_ = tracer_->drain();
    line(true, "session stop: drained %zu device events", events_.size());
  }

  std::vector<std::string> errors() override { return {}; }

  void pushCorrelationId(uint64_t id) override { tracer_->pushCorrelation(id); }
  void popCorrelationId() override { tracer_->popCorrelation(); }

  // The resolver-less overload: kineto builds that never hand over getLinkedActivity. Everything is emitted, but
  // nothing can be linked to an op, so device time per op stays 0 (A5 says so).
  void processTrace(libkineto::ActivityLogger& logger) override {
    line(true, "processTrace(1-arg) called with %zu events", events_.size());
    for (const DeviceEvent& e : events_) emit(logger, e, nullptr);
  }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback getLinkedActivity,
                    int64_t startTime, int64_t endTime) override {
    const size_t n = events_.size();
    line(true, "processTrace(4-arg) called with %zu events, window=[%lld,%lld]", n, (long long)startTime,
         (long long)endTime);
    size_t byKind[5] = {0, 0, 0, 0, 0};
    for (const DeviceEvent& e : events_) byKind[size_t(e.kind) % 5]++;
    line(true, "processTrace events by kind: kernel=%zu memcpy=%zu memset=%zu runtime=%zu", byKind[0], byKind[1],
         byKind[2], byKind[3] + byKind[4]);
    if (n > 0 && traceOn()) {
      line(true, "First event: kind=%d start=%llu end=%llu", kindCode(events_.front().kind),
           (unsigned long long)events_.front().start_ns, (unsigned long long)events_.front().end_ns);
      line(true, "Last event: kind=%d start=%llu end=%llu", kindCode(events_.back().kind),
           (unsigned long long)events_.back().start_ns, (unsigned long long)events_.back().end_ns);
      int shown = 0;
      size_t inWindow = 0, deviceEvents = 0;
      for (const DeviceEvent& e : events_) {
        if (isHostSide(e.kind)) continue;
        deviceEvents++;
        if (inCaptureWindow(e, startTime, endTime)) inWindow++;
        if (shown < 3)
          line(true, "Device event #%d: kind=%d start=%llu end=%llu window=[%lld,%lld]", ++shown, kindCode(e.kind),
               (unsigned long long)e.start_ns, (unsigned long long)e.end_ns, (long long)startTime,
               (long long)endTime);
      }
      line(true, "Found %zu/%zu device events in window", inWindow, deviceEvents);
    }
    if (!getLinkedActivity) warnEmptyResolver();
    if (traceOn()) {
      std::string kinds;
      for (size_t i = 0; i < n && i < 10; ++i) kinds += std::to_string(kindCode(events_[i].kind)) + " ";
      line(true, "First 10 events_ kinds: %s", kinds.c_str());
    }
    // An arrow needs both halves in the trace: a flow only on correlation ids with a runtime and a device event in
    // the window (a synchronize has no device half; a device record whose launch fell outside has no start).
    std::unordered_set<uint32_t> hostIds, deviceIds;
    for (const DeviceEvent& e : events_) {
      if (e.correlation_id == 0 || !inCaptureWindow(e, startTime, endTime) || !wanted(e.kind)) continue;
      (isHostSide(e.kind) ? hostIds : deviceIds).insert(e.correlation_id);
    }
    paired_.clear();
    for (uint32_t id : hostIds)
      if (deviceIds.count(id)) paired_.insert(id);
    size_t candidates = 0, linked = 0;
    size_t dropped[5] = {0, 0, 0, 0, 0};
    for (const DeviceEvent& e : events_) {
      if (!inCaptureWindow(e, startTime, endTime)) {
        dropped[size_t(e.kind) % 5]++;
        if (!isHostSide(e.kind))
          line(true, "Dropped device event: kind=%d start=%llu end=%llu (window=[%lld,%lld])", kindCode(e.kind),
               (unsigned long long)e.start_ns, (unsigned long long)e.end_ns, (long long)startTime,
               (long long)endTime);
        continue;
      }
      if (!wanted(e.kind)) continue;
      const libkineto::ITraceActivity* op = nullptr;
      if (e.external_correlation_id) {
        candidates++;
#ifdef FLAGOS_ABLATION_LINK_BY_VENDOR_ID
        // The seed §2 ablation, built only by the test that proves P4 catches it: the vendor id in place of torch's.
        if (getLinkedActivity) op = getLinkedActivity(int32_t(e.correlation_id));
#else
        if (getLinkedActivity) op = getLinkedActivity(int32_t(*e.external_correlation_id));
#endif
        if (op) linked++;
      }
      line(true, "toActivity: kind=%d -> activityType=%d name=%s", kindCode(e.kind), int(activityTypeOf(e.kind)),
           e.name.c_str());
      emit(logger, e, op);
    }
    const size_t droppedAll = dropped[0] + dropped[1] + dropped[2] + dropped[3] + dropped[4];
    line(true,
         "processTrace(4-arg) linked %zu/%zu link candidates (of %zu events, resolver=%s), dropped %zu outside window "
         "(kernel=%zu memcpy=%zu memset=%zu runtime=%zu)",
         linked, candidates, n, getLinkedActivity ? "present" : "EMPTY", droppedAll, dropped[0], dropped[1],
         dropped[2], dropped[3] + dropped[4]);
  }

  // The device row's name in viewers: the backend's own ("flagos 0", "npu 0"), not kineto's "Process 0".
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    int64_t device = 0;
    for (const DeviceEvent& e : events_)
      if (!isHostSide(e.kind)) {
        device = e.device;
        break;
      }
    const std::string backend = c10::get_privateuse1_backend();
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{device, device, backend + " " + std::to_string(device), backend});
  }

  // One row per stream the session's device events ran on, named as torch-cuda names them.
  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::set<std::pair<uint32_t, uint32_t>> streams;
    for (const DeviceEvent& e : events_)
      if (!isHostSide(e.kind)) streams.insert({e.device, e.stream});
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [device, stream] : streams)
      out.push_back(libkineto::ResourceInfo{int64_t(stream), int64_t(stream), int64_t(device),
                                            "stream " + std::to_string(stream)});
    return out;
  }

  // Kineto keeps the buffer with the trace: the activities (and the pointers the logger holds) live as long as it.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    if (!buffer_) return nullptr;
    buffer_->span.startTime = spanStart_;
    buffer_->span.endTime = spanEnd_;
    return std::move(buffer_);
  }

 private:
  // Strict containment (seed §3.2: the same test as libkineto's outOfRange), both sides Unix epoch ns (§3.3).
  static bool inCaptureWindow(const DeviceEvent& e, int64_t startTime, int64_t endTime) {
    return int64_t(e.start_ns) >= startTime && int64_t(e.end_ns) <= endTime;
  }

  bool wanted(EventKind kind) const { return wanted_.empty() || wanted_.count(activityTypeOf(kind)) > 0; }

  static void warnEmptyResolver() {
    static std::once_flag once;
    std::call_once(once, [] {
      line(false, "kineto called processTrace with an EMPTY getLinkedActivity callback.");
      line(false, "  Device activities cannot be linked to the CPU ops that launched them, so");
      line(false, "  device time (self_device_time_total) will be 0 for every op.");
      line(false, "  The device timeline itself is unaffected. torch/libkineto must pass");
      line(false, "  the resolver to plugin profiler sessions.");
    });
  }

  void emit(libkineto::ActivityLogger& logger, const DeviceEvent& e, const libkineto::ITraceActivity* op) {
    if (!buffer_) buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    auto activity = std::make_unique<libkineto::GenericTraceActivity>(buffer_->span, activityTypeOf(e.kind), e.name);
    activity->startTime = int64_t(e.start_ns);
    activity->endTime = int64_t(e.end_ns);
    activity->id = int32_t(e.correlation_id);
    if (isHostSide(e.kind)) {
      // Kineto's own runtime rows: the process, then the launching thread.
      activity->device = int32_t(getpid());
      activity->resource = int32_t(e.thread_id);
      activity->threadId = int32_t(e.thread_id);
    } else {
      activity->device = int32_t(e.device);
      activity->resource = int32_t(e.stream);
    }
    if (paired_.count(e.correlation_id)) {
      activity->flow.id = e.correlation_id;
      activity->flow.type = libkineto::kLinkAsyncCpuGpu;
      activity->flow.start = isHostSide(e.kind);
    }
    activity->linked = op;
    for (const auto& [key, value] : e.metadata) {
      // Torch writes "External id" itself from the linked op; a second copy would be a duplicate JSON key.
      if (op != nullptr && key == "External id") continue;
      // addMetadata stores the text unquoted: one bare word there breaks the whole trace file (§3.4).
      if (metadataValueIsJsonLiteral(value)) activity->addMetadata(key, value);
      else activity->addMetadataQuoted(key, value);
    }
    if (spanStart_ == 0 || activity->startTime < spanStart_) spanStart_ = activity->startTime;
    if (activity->endTime > spanEnd_) spanEnd_ = activity->endTime;
    logger.handleActivity(*activity);
    buffer_->activities.push_back(std::move(activity));
  }

  std::shared_ptr<DeviceTracer> tracer_;
  std::set<ActivityType> wanted_;
  const bool idsOnly_;
  std::vector<DeviceEvent> events_;
  std::unordered_set<uint32_t> paired_;  // correlation ids drawn as arrows
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  int64_t spanStart_ = 0, spanEnd_ = 0;
};

}  // namespace

FlagosKinetoProfiler::FlagosKinetoProfiler() : FlagosKinetoProfiler(std::shared_ptr<DeviceTracer>(MakeDeviceTracer())) {}

FlagosKinetoProfiler::FlagosKinetoProfiler(std::shared_ptr<DeviceTracer> tracer) : tracer_(std::move(tracer)) {
  // Kineto makes one profiler per factory call: the registration line once per process.
  static std::once_flag once;
  std::call_once(once, [this] {
    if (tracerAvailable()) line(true, "FlagosKinetoProfiler registered with kineto");
    else line(true, "no device tracer available, FlagosKinetoProfiler not registered");
  });
}

const std::string& FlagosKinetoProfiler::name() const { return name_; }

const std::set<libkineto::ActivityType>& FlagosKinetoProfiler::availableActivities() const {
  return deviceActivities();
}

std::unique_ptr<libkineto::IActivityProfilerSession> FlagosKinetoProfiler::configure(
    const std::set<libkineto::ActivityType>& activityTypes, const libkineto::Config& /*config*/) {
  line(true, "FlagosKinetoProfiler::configure called with %zu activity types", activityTypes.size());
  return makeSession(activityTypes);
}

std::unique_ptr<libkineto::IActivityProfilerSession> FlagosKinetoProfiler::configure(
    int64_t /*tsMs*/, int64_t /*durationMs*/, const std::set<libkineto::ActivityType>& activityTypes,
    const libkineto::Config& /*config*/) {
  return makeSession(activityTypes);  // the timed overload is silent (the catalogue's A3 is the other's)
}

std::unique_ptr<libkineto::IActivityProfilerSession> FlagosKinetoProfiler::makeSession(
    const std::set<libkineto::ActivityType>& activityTypes) {
  if (!tracerAvailable()) return nullptr;
  std::set<ActivityType> wanted;
  for (ActivityType t : activityTypes)
    if (deviceActivities().count(t)) wanted.insert(t);
  if (wanted.empty()) return nullptr;  // a CPU-only profile: nothing of ours was asked for
  return std::make_unique<FlagosKinetoSession>(tracer_, std::move(wanted));
}

}  // namespace flagprof::kineto
