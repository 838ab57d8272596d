// The vendor-agnostic tracer contract. Everything vendor-specific (activity records, enum values, layout
// mirrors) lives below this line, in one decoder per vendor; agent, addon and CLI only see these types.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flagprof {

enum class EventKind : uint8_t { Kernel = 0, Memcpy = 1, Memset = 2, Runtime = 3, Driver = 4 };

const char* eventKindName(EventKind kind);

struct DeviceEvent {
  EventKind kind = EventKind::Kernel;
  uint64_t start_ns = 0, end_ns = 0;  // Unix epoch nanoseconds
  // The vendor's id: pairs a runtime call with the device activity it produced (flow arrows).
  uint32_t correlation_id = 0;
  // The torch id: pairs device/runtime activity with the CPU op that issued it (device-time attribution).
  // Optional, not 0-means-absent: 0 is a valid torch id.
  std::optional<int64_t> external_correlation_id;
  uint32_t device = 0, stream = 0, thread_id = 0;
  std::string name;                             // already demangled
  std::map<std::string, std::string> metadata;  // "grid" -> "[8, 16, 5]"; values are JSON text
};

class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  virtual bool available() const = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual std::vector<DeviceEvent> drain() = 0;
  virtual void pushCorrelation(uint64_t /*id*/) {}
  virtual void popCorrelation() {}
  virtual int deviceCount() const = 0;
};

// The explicit no-device-activity tracer (seed §1.4): CPU profiling goes on, and available() says there is nothing
// else. Every factory falls back to it rather than to a neighbour vendor's tracer.
class UnavailableDeviceTracer final : public DeviceTracer {
 public:
  bool available() const override { return false; }
  void start() override {}
  void stop() override {}
  std::vector<DeviceEvent> drain() override { return {}; }
  int deviceCount() const override { return 0; }
};

// The process's one tracer: in the capture agent, the vendor tracer the accelerator is traced by (or the
// unavailable tracer); in a Kineto adaptor built against torch, the agent's tracer reached through its C ABI.
std::unique_ptr<DeviceTracer> MakeDeviceTracer();

// True when the text can be written into JSON as it is (a number, true/false/null, or an array of those);
// anything else must be quoted. Conservative on purpose: over-quoting a number is cosmetic, under-quoting a
// bare word breaks the whole document (seed §3.4).
bool metadataValueIsJsonLiteral(const std::string& value);

// Appends `"key": value` pairs of the metadata to `out` as a JSON object, quoting non-literals.
void appendMetadataJson(std::string& out, const std::map<std::string, std::string>& metadata);

// JSON string escaping (quotes included).
void appendJsonString(std::string& out, const char* text, size_t length);

// abi::__cxa_demangle, keeping the input when it is not a mangled C++ name.
std::string demangle(const std::string& name);

}  // namespace flagprof
