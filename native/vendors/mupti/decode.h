// Moore Threads MUSA MUPTI decode side: a CUPTI clone (../cupti/clone.h). MUPTI records have CUPTI's layouts at
// the versions MUSA ships (Kernel6, Memcpy4, Memset3; mirror.h pins the offsets); its callback ids are MUSA's own,
// named by muptiGetCallbackName after the final flush; its CLOCK_MONOTONIC timestamps reach realtime through the
// capture's calibration pairs like every vendor clock.
#pragma once

#include "../cupti/clone.h"
#include "mirror.h"

namespace flagprof::mupti {

inline constexpr const char* kGenericRuntimeName = "musaRuntime";
inline constexpr const char* kGenericDriverName = "musaDriver";

inline constexpr cupti::CloneTraits kClone{5,    FP_MUPTI_KERNEL_SIZE, FP_MUPTI_MEMCPY_SIZE, FP_MUPTI_MEMSET_SIZE,
                                           true, kGenericRuntimeName,  kGenericDriverName};
struct Records : cupti::CloneRecords<kClone> {};

}  // namespace flagprof::mupti
