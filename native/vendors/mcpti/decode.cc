// MetaX MCPTI: record sizes and names (the layouts are CUPTI's, mirror.h).
#include "decode.h"

#include "mirror.h"

namespace flagprof::mcpti {

size_t recordSize(uint32_t kind) {
  switch (kind) {
    case FP_MCPTI_KIND_KERNEL:
    case FP_MCPTI_KIND_CONCURRENT_KERNEL: return FP_MCPTI_KERNEL_SIZE;
    case FP_MCPTI_KIND_MEMCPY: return FP_MCPTI_MEMCPY_SIZE;
    case FP_MCPTI_KIND_MEMSET: return FP_MCPTI_MEMSET_SIZE;
    case FP_MCPTI_KIND_RUNTIME:
    case FP_MCPTI_KIND_DRIVER: return FP_MCPTI_API_SIZE;
    case FP_MCPTI_KIND_EXTERNAL_CORRELATION: return FP_MCPTI_EXTERNAL_SIZE;
    default: return 0;
  }
}

RecordClass parseRecord(const uint8_t* record, size_t size, ParsedRecord& out) {
  if (size < 4) return RecordClass::Malformed;
  const uint32_t kind = loadAt<uint32_t>(record, 0);
  const size_t expected = recordSize(kind);
  if (expected == 0) return RecordClass::Ignored;
  if (size != expected) return RecordClass::Malformed;
  return cupti::parseRecord(record, size, out);
}

std::string callName(const ParsedRecord& r, const DecodeContext& context) {
  const bool driver = r.kind == EventKind::Driver;
  const auto& names = driver ? context.driverNames : context.runtimeNames;
  auto it = names.find(r.cbid);
  if (it != names.end()) return it->second;
  return driver ? kGenericDriverName : kGenericRuntimeName;
}

}  // namespace flagprof::mcpti
