// libflagprof_kineto.so: the adaptor as torch's PrivateUse1 profiler, for a torch whose device backend brings
// none. The capture agent loads it after torch and calls flagprof_kineto_register(); a backend that registers
// its own profiler (REGISTER_PRIVATEUSE1_PROFILER at its static init) keeps it: this one only fills the gap.
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <memory>

#include "flagos_kineto_profiler.h"

#define FLAGPROF_KINETO_EXPORT extern "C" __attribute__((visibility("default")))

// 1 when ours was registered now, 0 when a PrivateUse1 profiler was already registered (left as it is), -1 when
// no device tracer is available (nothing registered: a profile holds CPU events only).
FLAGPROF_KINETO_EXPORT int flagprof_kineto_register(void) {
  auto& registry = torch::profiler::impl::PrivateUse1ProfilerRegistry::instance();
  if (registry.hasFactory()) return 0;
  auto probe = std::make_unique<flagprof::kineto::FlagosKinetoProfiler>();
  if (!probe->tracerAvailable()) return -1;
  registry.registerFactory([]() -> std::unique_ptr<libkineto::IActivityProfiler> {
    return std::make_unique<flagprof::kineto::FlagosKinetoProfiler>();
  });
  return 1;
}

FLAGPROF_KINETO_EXPORT int flagprof_kineto_registered_with_kineto(void) {
  return torch::profiler::impl::PrivateUse1ProfilerRegistry::instance().isRegisteredWithKineto() ? 1 : 0;
}
