// The agent's Enflame GCU TOPSPTI binding: the CUPTI family's binding (../cupti/family.h) with TOPSPTI's names
// (topspti*), its record layouts, its callback ids named by topsptiGetCallbackName after the final flush, its
// device clock mapped to realtime by the calibration pairs topsptiGetTimestamp gives at session start and stop,
// and, because TOPSPTI has no external-correlation API, torch's ids taken at the API-enter callback
// (kExternalByCallback: family.h says how). FLAGOS_TOPSPTI_LIBRARY and FLAGOS_TOPSPTI_DEBUG (the vendor row)
// name the library and turn the diagnostics on, as the GCU integration names them.
#include "../cupti/family.h"
#include "decode.h"
#include "mirror.h"

namespace flagprof::agent {

namespace {

struct TopsptiFlavour {
  static constexpr const char* kLabel = "TOPSPTI";
  static constexpr const char* kPrefix = "topspti";
  static constexpr uint32_t kId = flagprof::topspti::Records::kId;
  static constexpr const char* kNameFunction = "topsptiGetCallbackName";
  static constexpr const char* kHint = "the libtopspti.so of the installed TopsRider SDK (/opt/tops/extras/TOPSPTI)";
  static constexpr bool kDeviceRecords = false;
  static constexpr bool kScan = false;
  static constexpr bool kExternalByCallback = true;
  static constexpr const char* kDeviceAttribute = nullptr;
  static constexpr const char* kDeviceCount = nullptr;
  static int nameArgument(bool driver) {
    return driver ? FP_TOPSPTI_CB_DOMAIN_DRIVER_API : FP_TOPSPTI_CB_DOMAIN_RUNTIME_API;
  }
  static size_t recordSize(uint32_t kind, uint32_t) { return flagprof::topspti::Records::recordSize(kind); }
};

}  // namespace

std::unique_ptr<VendorTracer> bind_topspti(void* lib, std::string& missing) {
  return cupti_family::Family<TopsptiFlavour>::bind(lib, missing);
}

}  // namespace flagprof::agent
