// The agent's CUPTI binding (NVIDIA CUDA, and PPU's CUPTI-compatible library): the CUPTI family's binding
// (family.h) with CUPTI's own names, record versions and iterator.
#include "family.h"

namespace flagprof::agent {

namespace {

struct CuptiFlavour {
  static constexpr const char* kLabel = "CUPTI";
  static constexpr const char* kPrefix = "cupti";
  static constexpr uint32_t kId = flagprof::cupti::Records::kId;
  static constexpr const char* kNameFunction = "cuptiGetCallbackName";
  static constexpr const char* kHint = "the CUPTI that belongs to the running CUDA runtime";
  static constexpr bool kDeviceRecords = true;
  static constexpr bool kScan = false;
  static constexpr bool kExternalByCallback = false;
  static constexpr const char* kDeviceAttribute = nullptr;
  static constexpr const char* kDeviceCount = nullptr;
  static int nameArgument(bool driver) { return driver ? FP_CUPTI_CB_DOMAIN_DRIVER_API : FP_CUPTI_CB_DOMAIN_RUNTIME_API; }
  static size_t recordSize(uint32_t kind, uint32_t apiVersion) { return flagprof::cupti::recordSize(kind, apiVersion); }
};

}  // namespace

std::unique_ptr<VendorTracer> bind_cupti(void* lib, std::string& missing) {
  return cupti_family::Family<CuptiFlavour>::bind(lib, missing);
}

}  // namespace flagprof::agent
