// Enflame GCU TOPSPTI decode side: a CUPTI clone (../cupti/clone.h) with CUPTI's first record layouts
// (mirror.h). TOPSPTI has no external-correlation records of its own: the agent writes one per runtime call
// that ran inside a torch op, from its API-enter callback (binding.cc), in CUPTI's external-correlation layout,
// so the decoder links them as it links every vendor's. Callback ids are TOPSPTI's, named by
// topsptiGetCallbackName after the final flush; the device clock reaches realtime through the calibration pairs.
#pragma once

#include "../cupti/clone.h"
#include "mirror.h"

namespace flagprof::topspti {

inline constexpr const char* kGenericRuntimeName = "topsRuntime";
inline constexpr const char* kGenericDriverName = "topsDriver";

// `external`: the records the agent writes from its callback.
inline constexpr cupti::CloneTraits kClone{6,    FP_TOPSPTI_KERNEL_SIZE, FP_TOPSPTI_MEMCPY_SIZE, FP_TOPSPTI_MEMSET_SIZE,
                                           true, kGenericRuntimeName,    kGenericDriverName};
struct Records : cupti::CloneRecords<kClone> {};

}  // namespace flagprof::topspti
