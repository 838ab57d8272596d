// The generic Kineto adaptor over DeviceTracer (seed 000 §1.3): it knows DeviceEvent, EventKind and DeviceTracer
// and nothing of any vendor. Any PrivateUse1 backend registers it:
//
//   #include "kineto/flagos_kineto_profiler.h"
//   using FlagosKinetoProfiler = flagprof::kineto::FlagosKinetoProfiler;
//   REGISTER_PRIVATEUSE1_PROFILER(FlagosKinetoProfiler);
//
// Build with torch's include dirs plus <torch>/include/kineto, -DUSE_KINETO -DFMT_HEADER_ONLY, and link
// libtorch_cpu (PrivateUse1ProfilerRegistry).
#pragma once

#include <IActivityProfiler.h>

#include <memory>
#include <set>
#include <string>

#include "../tracer/device_tracer.h"

namespace flagprof::kineto {

class FlagosKinetoProfiler : public libkineto::IActivityProfiler {
 public:
  FlagosKinetoProfiler();
  // For tests and backends that bring their own tracer.
  explicit FlagosKinetoProfiler(std::shared_ptr<DeviceTracer> tracer);
  bool tracerAvailable() const { return tracer_ && tracer_->available(); }
  const std::string& name() const override;
  const std::set<libkineto::ActivityType>& availableActivities() const override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& activityTypes,
                                                                 const libkineto::Config& config) override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t tsMs, int64_t durationMs,
                                                                 const std::set<libkineto::ActivityType>& activityTypes,
                                                                 const libkineto::Config& config) override;

 private:
  // A session for the device kinds asked for; nullptr when none are (a CPU-only profile) or no tracer is there.
  std::unique_ptr<libkineto::IActivityProfilerSession> makeSession(const std::set<libkineto::ActivityType>& activityTypes);
  std::shared_ptr<DeviceTracer> tracer_;
  std::string name_{"flagos"};
};

}  // namespace flagprof::kineto
