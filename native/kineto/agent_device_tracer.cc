// MakeDeviceTracer() for a Kineto adaptor built against the user's torch: the DeviceTracer that reaches the
// capture agent's one tracer through its C ABI (tracer_abi.h). The agent is loaded before torch (it must arm the
// vendor library before the first device context), RTLD_GLOBAL, so its symbols are found in the process; else
// FLAGPROF_AGENT_LIBRARY names it. Without it: the unavailable tracer, and available() false says so.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "../tracer/device_tracer.h"
#include "../tracer/tracer_abi.h"

namespace flagprof {

namespace {

struct AgentAbi {
  int (*abi)() = nullptr;
  int (*available)() = nullptr;
  const char* (*unavailableReason)() = nullptr;
  int (*deviceCount)() = nullptr;
  int (*start)() = nullptr;
  int (*stop)() = nullptr;
  int (*push)(uint64_t) = nullptr;
  int (*pop)() = nullptr;
  int (*drain)(flagprof_tracer_visit, void*, flagprof_tracer_drain_info*) = nullptr;
  const char* (*lastError)() = nullptr;
};

template <typename F>
bool resolve(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

bool bindAbi(void* handle, AgentAbi& a) {
  return resolve(handle, "flagprof_tracer_abi", a.abi) && a.abi() == FLAGPROF_TRACER_ABI &&
         resolve(handle, "flagprof_tracer_available", a.available) &&
         resolve(handle, "flagprof_tracer_unavailable_reason", a.unavailableReason) &&
         resolve(handle, "flagprof_tracer_device_count", a.deviceCount) &&
         resolve(handle, "flagprof_tracer_start", a.start) && resolve(handle, "flagprof_tracer_stop", a.stop) &&
         resolve(handle, "flagprof_tracer_push_correlation", a.push) &&
         resolve(handle, "flagprof_tracer_pop_correlation", a.pop) &&
         resolve(handle, "flagprof_tracer_drain", a.drain) &&
         resolve(handle, "flagprof_tracer_last_error", a.lastError);
}

class AgentDeviceTracer final : public DeviceTracer {
 public:
  explicit AgentDeviceTracer(const AgentAbi& abi) : abi_(abi) {}
  bool available() const override { return abi_.available() == 1; }
  void start() override {
    if (abi_.start() != 0) fprintf(stderr, "[flagos] device tracer start failed: %s\n", abi_.lastError());
  }
  void stop() override { abi_.stop(); }
  std::vector<DeviceEvent> drain() override {
    std::vector<DeviceEvent> events;
    flagprof_tracer_drain_info info{};
    if (abi_.drain(&AgentDeviceTracer::visit, &events, &info) != 0)
      fprintf(stderr, "[flagos] device tracer drain failed: %s\n", abi_.lastError());
    return events;
  }
  void pushCorrelation(uint64_t id) override { abi_.push(id); }
  void popCorrelation() override { abi_.pop(); }
  int deviceCount() const override { return abi_.deviceCount(); }

 private:
  static void visit(void* context, const flagprof_tracer_event* in) {
    DeviceEvent e;
    e.kind = EventKind(in->kind);
    e.start_ns = in->start_ns;
    e.end_ns = in->end_ns;
    e.correlation_id = in->correlation_id;
    if (in->has_external_id) e.external_correlation_id = in->external_id;
    e.device = in->device;
    e.stream = in->stream;
    e.thread_id = in->thread_id;
    e.name = in->name ? in->name : "";
    for (size_t i = 0; i < in->metadata_count; ++i) e.metadata[in->metadata_keys[i]] = in->metadata_values[i];
    static_cast<std::vector<DeviceEvent>*>(context)->push_back(std::move(e));
  }
  AgentAbi abi_;
};


}  // namespace

std::unique_ptr<DeviceTracer> MakeDeviceTracer() {
  AgentAbi abi;
  if (bindAbi(RTLD_DEFAULT, abi)) return std::make_unique<AgentDeviceTracer>(abi);
  const char* path = getenv("FLAGPROF_AGENT_LIBRARY");
  if (path && *path) {
    void* handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (handle && bindAbi(handle, abi)) return std::make_unique<AgentDeviceTracer>(abi);
  }
  return std::make_unique<UnavailableDeviceTracer>();
}

}  // namespace flagprof
