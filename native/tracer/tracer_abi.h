// The C ABI through which a Kineto adaptor built against the user's torch reaches the capture agent's one
// DeviceTracer (libflagprof_agent.so, loaded before torch). Plain C types only: the adaptor and the agent are
// built by different toolchains (torch's C++ flags, node-gyp's), so no C++ object crosses this line.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGPROF_TRACER_ABI 1

// One DeviceEvent as the agent hands it to a drain visitor; pointers are valid only during the visit.
typedef struct flagprof_tracer_event {
  uint32_t kind;  // flagprof::EventKind
  uint64_t start_ns, end_ns;  // Unix epoch ns
  uint32_t correlation_id;    // the vendor's id (flows)
  int32_t has_external_id;    // 0: no torch id (0 itself is a valid torch id)
  int64_t external_id;        // the torch id (linking)
  uint32_t device, stream, thread_id;
  const char* name;           // demangled
  size_t metadata_count;
  const char* const* metadata_keys;
  const char* const* metadata_values;  // JSON text or a bare string (the adaptor quotes non-literals)
} flagprof_tracer_event;

// What one drain saw, for the adaptor's diagnostics.
typedef struct flagprof_tracer_drain_info {
  uint64_t records, events, dropped, layout_mismatches, bad_frames;
  const char* vendor;  // "CUPTI", "MSPTI", "ROCtracer", "none"
} flagprof_tracer_drain_info;

typedef void (*flagprof_tracer_visit)(void* context, const flagprof_tracer_event* event);

// FLAGPROF_TRACER_ABI of the loaded agent.
int flagprof_tracer_abi(void);
// 1 when a vendor activity library is bound and armed.
int flagprof_tracer_available(void);
// A one-line reason when not available ("" otherwise).
const char* flagprof_tracer_unavailable_reason(void);
// The accelerator's tracer name ("CUPTI", "MSPTI", "ROCtracer"; "none" for the unavailable tracer).
const char* flagprof_tracer_name(void);
int flagprof_tracer_device_count(void);
// Session start/stop (arms RUNTIME and EXTERNAL_CORRELATION at start, flushes at stop). 0 or -1.
int flagprof_tracer_start(void);
int flagprof_tracer_stop(void);
// The torch correlation id of the op about to launch work on this thread. 0 or -1.
int flagprof_tracer_push_correlation(uint64_t id);
int flagprof_tracer_pop_correlation(void);
// Decodes what was recorded since the last start() and visits every DeviceEvent; 0 or -1.
int flagprof_tracer_drain(flagprof_tracer_visit visit, void* context, flagprof_tracer_drain_info* info);
// The last error of this thread (one line).
const char* flagprof_tracer_last_error(void);

#ifdef __cplusplus
}
#endif
