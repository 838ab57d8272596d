// The flagos runtime over a fake vendor activity library (test/fake-cupti, test/fake-mspti, test/fake-roctracer):
// the library is told apart by the control function it exports, and each runtime call becomes that vendor's
// launch, copy, fill or synchronize, so the vendor's records look as a real device's would.
#include "flagos_runtime.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace flagos {
namespace {

using CuptiLaunch = void (*)(const char*, int, int, int, int, int, int, int, int, int, uint64_t);
using CuptiMemcpy = void (*)(uint64_t, int, int, int);
using CuptiMemset = void (*)(uint64_t, int);
using MsptiLaunch = void (*)(const char*, const char*, const char*, uint64_t);
using MsptiMemcpy = void (*)(const char*, uint64_t, int, int);
using MsptiMemset = void (*)(const char*, uint64_t, int, int);
using RocLaunch = void (*)(const char*, uint64_t, int);
using RocMemcpy = void (*)(uint64_t, int);
using RocMemset = void (*)(uint64_t);
using Synchronize = void (*)();

enum class Family { None, Cupti, Mspti, Roctracer };

struct Vendor {
  Family family = Family::None;
  std::string error;
  CuptiLaunch cupti_launch = nullptr;
  CuptiMemcpy cupti_memcpy = nullptr;
  CuptiMemset cupti_memset = nullptr;
  MsptiLaunch mspti_launch = nullptr;
  MsptiMemcpy mspti_memcpy = nullptr;
  MsptiMemset mspti_memset = nullptr;
  RocLaunch roc_launch = nullptr;
  RocMemcpy roc_memcpy = nullptr;
  RocMemset roc_memset = nullptr;
  Synchronize synchronize = nullptr;
};

Vendor vendor;
std::once_flag opened;
std::atomic<uint64_t> device_clock{0};

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

void bind() {
  const char* path = std::getenv("FLAGOS_TRACER_LIBRARY");
  if (!path || !*path) {
    vendor.error = "FLAGOS_TRACER_LIBRARY is not set: the flagos test backend needs a fake vendor library";
    return;
  }
  // The capture agent has usually opened the same file already: dlopen then hands back its handle.
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* why = dlerror();
    vendor.error = std::string("FLAGOS_TRACER_LIBRARY=") + path + " could not be loaded: " + (why ? why : "unknown");
    return;
  }
  if (auto launch = symbol<CuptiLaunch>(lib, "fake_cupti_launch_kernel")) {
    vendor.family = Family::Cupti;
    vendor.cupti_launch = launch;
    vendor.cupti_memcpy = symbol<CuptiMemcpy>(lib, "fake_cupti_memcpy");
    vendor.cupti_memset = symbol<CuptiMemset>(lib, "fake_cupti_memset");
    vendor.synchronize = symbol<Synchronize>(lib, "fake_cupti_synchronize");
  } else if (auto launch = symbol<MsptiLaunch>(lib, "fake_mspti_launch_kernel")) {
    vendor.family = Family::Mspti;
    vendor.mspti_launch = launch;
    vendor.mspti_memcpy = symbol<MsptiMemcpy>(lib, "fake_mspti_memcpy");
    vendor.mspti_memset = symbol<MsptiMemset>(lib, "fake_mspti_memset");
    vendor.synchronize = symbol<Synchronize>(lib, "fake_mspti_synchronize");
  } else if (auto launch = symbol<RocLaunch>(lib, "fake_roctracer_launch_kernel")) {
    vendor.family = Family::Roctracer;
    vendor.roc_launch = launch;
    vendor.roc_memcpy = symbol<RocMemcpy>(lib, "fake_roctracer_memcpy");
    vendor.roc_memset = symbol<RocMemset>(lib, "fake_roctracer_memset");
    vendor.synchronize = symbol<Synchronize>(lib, "fake_roctracer_synchronize");
  } else {
    vendor.error = std::string("FLAGOS_TRACER_LIBRARY=") + path +
                   " is not a fake vendor library (no fake_cupti_, fake_mspti_ or fake_roctracer_ launch function)";
    return;
  }
  bool complete = vendor.synchronize &&
                  (vendor.family == Family::Cupti     ? vendor.cupti_memcpy && vendor.cupti_memset
                   : vendor.family == Family::Mspti   ? vendor.mspti_memcpy && vendor.mspti_memset
                                                      : vendor.roc_memcpy && vendor.roc_memset);
  if (!complete) {
    vendor.error = std::string("FLAGOS_TRACER_LIBRARY=") + path + " lacks a copy, fill or synchronize function";
    vendor.family = Family::None;
  }
}

const Vendor& bound() {
  std::call_once(opened, bind);
  if (vendor.family == Family::None) throw std::runtime_error(vendor.error);
  return vendor;
}

// The fakes time copies and fills by these rates; the device clock follows them so the two agree.
uint64_t copy_ns(uint64_t bytes) { return 1200 + bytes / 20; }
uint64_t fill_ns(uint64_t bytes) { return 900 + bytes / 200; }

}  // namespace

std::string runtime_open() {
  std::call_once(opened, bind);
  return vendor.family == Family::None ? vendor.error : std::string();
}

const char* runtime_family() {
  switch (vendor.family) {
    case Family::Cupti: return "cupti";
    case Family::Mspti: return "mspti";
    case Family::Roctracer: return "roctracer";
    default: return "";
  }
}

void runtime_launch_kernel(const KernelSpec& kernel, int grid, int block, uint64_t duration_ns) {
  const Vendor& v = bound();
  switch (v.family) {
    case Family::Cupti: {
      // Tiles of a GEMM use registers and shared memory; elementwise kernels barely any.
      bool gemm = kernel.ascend_type && std::string(kernel.ascend_type) == "KERNEL_AICORE";
      v.cupti_launch(kernel.mangled_name, grid, 1, 1, block, 1, 1, gemm ? 128 : 16, gemm ? 16384 : 0, 0, duration_ns);
      break;
    }
    case Family::Mspti: v.mspti_launch(kernel.aclnn_api, kernel.mangled_name, kernel.ascend_type, duration_ns); break;
    case Family::Roctracer: v.roc_launch(kernel.mangled_name, duration_ns, 0); break;
    default: break;
  }
  device_clock += duration_ns;
}

void runtime_memcpy(uint64_t bytes, CopyKind kind) {
  const Vendor& v = bound();
  switch (v.family) {
    case Family::Cupti: {
      // Memory kinds: 1 pageable host, 3 device.
      int src = kind == CopyKind::HostToDevice ? 1 : 3;
      int dst = kind == CopyKind::DeviceToHost ? 1 : 3;
      v.cupti_memcpy(bytes, static_cast<int>(kind), src, dst);
      break;
    }
    case Family::Mspti: {
      // msptiActivityMemcpyKind: 2 HtoD, 3 DtoH, 4 DtoD. A copy to pageable host memory is synchronous.
      int copy = kind == CopyKind::HostToDevice ? 2 : kind == CopyKind::DeviceToHost ? 3 : 4;
      bool sync = kind == CopyKind::DeviceToHost;
      v.mspti_memcpy(sync ? "aclrtMemcpy" : "aclrtMemcpyAsync", bytes, copy, sync ? 0 : 1);
      break;
    }
    case Family::Roctracer: {
      // hipMemcpyKind: 1 HtoD, 2 DtoH, 3 DtoD.
      int direction = kind == CopyKind::HostToDevice ? 1 : kind == CopyKind::DeviceToHost ? 2 : 3;
      v.roc_memcpy(bytes, direction);
      break;
    }
    default: break;
  }
  device_clock += copy_ns(bytes);
}

void runtime_memset(uint64_t bytes, int value) {
  const Vendor& v = bound();
  switch (v.family) {
    case Family::Cupti: v.cupti_memset(bytes, value); break;
    case Family::Mspti: v.mspti_memset("aclrtMemsetAsync", bytes, value, 1); break;
    case Family::Roctracer: v.roc_memset(bytes); break;
    default: break;
  }
  device_clock += fill_ns(bytes);
}

void runtime_synchronize() { bound().synchronize(); }

uint64_t runtime_device_clock_ns() { return device_clock.load(); }

}  // namespace flagos
