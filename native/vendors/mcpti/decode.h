// MetaX MCPTI decode side: a CUPTI clone (../cupti/clone.h). MCPTI records have CUPTI's layouts at the versions
// MACA ships (mirror.h pins the offsets), so CUPTI's record parser, copy names and metadata read them; what is
// MetaX's own is the callback-id namespace, named by mcptiActivityGetApiName after the final flush.
#pragma once

#include "../cupti/clone.h"
#include "mirror.h"

namespace flagprof::mcpti {

inline constexpr const char* kGenericRuntimeName = "mcRuntime";
inline constexpr const char* kGenericDriverName = "mcDriver";

inline constexpr cupti::CloneTraits kClone{4,    FP_MCPTI_KERNEL_SIZE, FP_MCPTI_MEMCPY_SIZE, FP_MCPTI_MEMSET_SIZE,
                                           true, kGenericRuntimeName,  kGenericDriverName};
struct Records : cupti::CloneRecords<kClone> {};

}  // namespace flagprof::mcpti
