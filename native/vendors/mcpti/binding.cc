// The agent's MetaX MCPTI binding: the CUPTI family's binding (../cupti/family.h) with MCPTI's names
// (mcpti*), its record sizes, its callback-id namespace named by mcptiActivityGetApiName after the final flush
// (asked inside the buffer callback it deadlocks, seed 001), and its own scan of each buffer by record size:
// MACA 3.8.0's iterator can return a stale pointer after external-correlation records.
#include "../cupti/family.h"
#include "decode.h"
#include "mirror.h"

namespace flagprof::agent {

namespace {

struct McptiFlavour {
  static constexpr const char* kLabel = "MCPTI";
  static constexpr const char* kPrefix = "mcpti";
  static constexpr uint32_t kId = flagprof::mcpti::Records::kId;
  static constexpr const char* kNameFunction = "mcptiActivityGetApiName";
  static constexpr const char* kHint = "the libmcpti.so of the installed MACA";
  static constexpr bool kDeviceRecords = false;
  static constexpr bool kScan = true;
  static constexpr bool kExternalByCallback = false;
  // MetaX's compatibility runtime: no DEVICE records, but the attributes occupancy needs (seed 001).
  static constexpr const char* kDeviceAttribute = "wcudaDeviceGetAttribute";
  static constexpr const char* kDeviceCount = "wcudaGetDeviceCount";
  // mcptiActivityGetApiName takes the activity kind of the record the id came from.
  static int nameArgument(bool driver) { return driver ? FP_MCPTI_KIND_DRIVER : FP_MCPTI_KIND_RUNTIME; }
  static size_t recordSize(uint32_t kind, uint32_t) { return flagprof::mcpti::Records::recordSize(kind); }
};

}  // namespace

std::unique_ptr<VendorTracer> bind_mcpti(void* lib, std::string& missing) {
  return cupti_family::Family<McptiFlavour>::bind(lib, missing);
}

}  // namespace flagprof::agent
