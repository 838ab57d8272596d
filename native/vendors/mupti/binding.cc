// The agent's Moore Threads MUSA MUPTI binding: the CUPTI family's binding (../cupti/family.h) with MUPTI's
// names (mupti*), its record versions (Kernel6, Memcpy4, Memset3) and its callback-id namespace, named by
// muptiGetCallbackName after the final flush. MUPTI's CLOCK_MONOTONIC timestamps are mapped to realtime by the
// calibration pairs muptiGetTimestamp gives at session start and stop (seed 000: an affine conversion).
#include "../cupti/family.h"
#include "decode.h"
#include "mirror.h"

namespace flagprof::agent {

namespace {

struct MuptiFlavour {
  static constexpr const char* kLabel = "MUPTI";
  static constexpr const char* kPrefix = "mupti";
  static constexpr uint32_t kId = flagprof::mupti::Records::kId;
  static constexpr const char* kNameFunction = "muptiGetCallbackName";
  static constexpr const char* kHint = "the libmupti.so of the installed MUSA toolkit";
  static constexpr bool kDeviceRecords = false;
  static constexpr bool kScan = false;
  static constexpr bool kExternalByCallback = false;
  static constexpr const char* kDeviceAttribute = nullptr;
  static constexpr const char* kDeviceCount = nullptr;
  static int nameArgument(bool driver) { return driver ? FP_MUPTI_CB_DOMAIN_DRIVER_API : FP_MUPTI_CB_DOMAIN_RUNTIME_API; }
  static size_t recordSize(uint32_t kind, uint32_t) { return flagprof::mupti::Records::recordSize(kind); }
};

}  // namespace

std::unique_ptr<VendorTracer> bind_mupti(void* lib, std::string& missing) {
  return cupti_family::Family<MuptiFlavour>::bind(lib, missing);
}

}  // namespace flagprof::agent
