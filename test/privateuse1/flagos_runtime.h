// The flagos device runtime: the four calls a backend's kernels make to put work on the "device". The work itself
// is done on the host; what these calls produce is the vendor's activity (kernel, copy, fill, sync records) through
// the fake vendor library named by FLAGOS_TRACER_LIBRARY, so a profiler sees a device timeline.
#pragma once

#include <cstdint>
#include <string>

namespace flagos {

// CUPTI's copy-kind numbers; the runtime translates them for the other vendor families.
enum class CopyKind : int { HostToDevice = 1, DeviceToHost = 2, DeviceToDevice = 8 };

// One kernel as each vendor family would name it: the mangled device function (CUDA, HIP) and, for Ascend, the
// aclnn operator API that launches it and its core type.
struct KernelSpec {
  const char* mangled_name;
  const char* aclnn_api;
  const char* ascend_type;  // "KERNEL_AICORE" (cube units) or "KERNEL_AIVEC" (vector units)
};

// Binds the vendor library at first use; returns "" when bound, else a one-line reason.
std::string runtime_open();
// "cupti", "mspti" or "roctracer" once bound.
const char* runtime_family();

void runtime_launch_kernel(const KernelSpec& kernel, int grid, int block, uint64_t duration_ns);
void runtime_memcpy(uint64_t bytes, CopyKind kind);
void runtime_memset(uint64_t bytes, int value);
void runtime_synchronize();

// The device clock: the sum of the durations of everything launched so far, in ns.
uint64_t runtime_device_clock_ns();

}  // namespace flagos
