// The vendor table: every vendor activity API the tracer knows, one row each. A vendor is this row plus its
// folder (native/vendors/<key>/: mirror.h, the record layouts with static_asserts where the public header is
// installed; decode.{h,cc}, its records, names and metadata, with its `Records` traits for the capture decoder;
// binding.cc, the agent's capture binding, `bind_<key>`). The capture decoder's dispatch, the agent's library
// search and accelerator selection, the addon's vendor names and the fuzzer's vendor range all derive from here;
// the build lists each folder's sources by globbing (scripts/vendor-sources.mjs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cupti/decode.h"
#include "mcpti/decode.h"
#include "mspti/decode.h"
#include "mupti/decode.h"
#include "rocprofiler/decode.h"
#include "roctracer/decode.h"
#include "topspti/decode.h"

namespace flagprof {

struct VendorRow {
  uint32_t id;        // the capture header's vendor field (fpc_format.h): never reused
  const char* key;    // folder, `bind_<key>`, and the name the addon and the extension use ("cupti")
  const char* label;  // as messages name the API ("CUPTI")
  // The functions a library of this API is recognised by (any one of them; nullptr ends the list).
  std::array<const char*, 2> recognisedBy;
  std::array<const char*, 4> sonames;       // the agent's dlopen search order (nullptr ends the list)
  std::array<const char*, 4> accelerators;  // the FLAGOS_ACCELERATOR values it traces (nullptr ends the list)
  const char* unavailableCode;              // the catalogue line printed when no library of it loaded (nullptr:
  const char* unavailableLine;              // none, as the vendor's own tracer prints none)
  // The vendor's own names for the library override (tried before its sonames) and for the diagnostics switch
  // (FLAGOS_TRACE's meaning), where its integration has them; nullptr where not.
  const char* libraryEnv = nullptr;
  const char* debugEnv = nullptr;
  // The row whose accelerators this one traces too, searched before it: a successor API preferred where its library
  // is present (rocprofiler-sdk over ROCtracer). Its own accelerator list stays empty, so each accelerator still has
  // one row; nullptr for every other row.
  const char* supersedes = nullptr;
};

// Table order is the search order: MCPTI before CUPTI, so a MetaX library is never taken for NVIDIA's by a
// CUPTI-named function it may also export; rocprofiler-sdk before the ROCtracer it supersedes.
inline constexpr VendorRow kVendors[] = {
    {4, "mcpti", "MCPTI", {"mcptiActivityRegisterCallbacks", "mcptiActivityGetApiName"}, {"libmcpti.so"}, {"metax"},
     "C1", "[flagos] CUPTI not available, tracer not armed"},
    {1, "cupti", "CUPTI", {"cuptiActivityRegisterCallbacks"}, {"libcupti.so.13", "libcupti.so.12", "libcupti.so"},
     {"cuda", "ppu"}, "C1", "[flagos] CUPTI not available, tracer not armed"},
    {2, "mspti", "MSPTI", {"msptiActivityRegisterCallbacks"}, {"libmspti.so"}, {"ascend"}, "M1",
     "[flagos] libmspti is unavailable"},
    {7, "rocprofiler", "rocprofiler-sdk", {"rocprofiler_force_configure", "rocprofiler_create_buffer"},
     {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so.0", "librocprofiler-sdk.so"}, {}, "Q13",
     "[flagos] librocprofiler-sdk is unavailable", nullptr, nullptr, "roctracer"},
    {3, "roctracer", "ROCtracer", {"roctracer_enable_domain_activity_expl", "roctracer_enable_domain_activity"},
     {"libroctracer64.so.4", "libroctracer64.so"}, {"rocm", "dcu"}, "R25", "[flagos] libroctracer64 is unavailable"},
    {5, "mupti", "MUPTI", {"muptiActivityRegisterCallbacks"},
     {"libmupti.so", "libmupti.so.1.2", "/usr/local/musa/lib/libmupti.so"}, {"musa"}, nullptr, nullptr,
     "FLAGOS_MUPTI_LIBRARY", "FLAGOS_MUPTI_DEBUG"},
    {6, "topspti", "TOPSPTI", {"topsptiActivityRegisterCallbacks"},
     {"libtopspti.so", "/opt/tops/extras/TOPSPTI/lib64/libtopspti.so", "/opt/tops/lib/libtopspti_prof.so"}, {"gcu"},
     nullptr, nullptr, "FLAGOS_TOPSPTI_LIBRARY", "FLAGOS_TOPSPTI_DEBUG"},
};

// The vendors whose types the code needs at compile time, in table order: X(key) for each row. The capture
// decoder instantiates its decoder with `key::Records`; the agent calls `bind_<key>`.
#define FLAGPROF_FOR_EACH_VENDOR(X) X(mcpti) X(cupti) X(mspti) X(rocprofiler) X(roctracer) X(mupti) X(topspti)

// Accelerators with no activity API this tracer binds: they get the unavailable tracer, with its reason.
inline constexpr const char* kAcceleratorsWithoutTracer[] = {"cpu"};

inline constexpr size_t kVendorCount = sizeof kVendors / sizeof kVendors[0];

constexpr const VendorRow* vendorById(uint32_t id) {
  for (const VendorRow& v : kVendors)
    if (v.id == id) return &v;
  return nullptr;
}

// Exactly one tracer per accelerator (seed §1.4): an accelerator in two rows, or in a row and the list without a
// tracer, does not build.
constexpr bool acceleratorsUnique() {
  auto same = [](const char* a, const char* b) { return std::string_view(a) == std::string_view(b); };
  for (size_t i = 0; i < kVendorCount; ++i)
    for (const char* a : kVendors[i].accelerators) {
      if (!a) break;
      for (size_t j = i + 1; j < kVendorCount; ++j)
        for (const char* b : kVendors[j].accelerators)
          if (b && same(a, b)) return false;
      for (const char* b : kAcceleratorsWithoutTracer)
        if (same(a, b)) return false;
    }
  return true;
}
static_assert(acceleratorsUnique(), "an accelerator must be traced by exactly one vendor row");

constexpr bool idsUnique() {
  for (size_t i = 0; i < kVendorCount; ++i)
    for (size_t j = i + 1; j < kVendorCount; ++j)
      if (kVendors[i].id == kVendors[j].id) return false;
  return true;
}
static_assert(idsUnique(), "vendor ids are the capture format's: each is used once");

// A superseding row names a row that exists, comes after it in the search order and supersedes nothing itself.
constexpr bool supersedesValid() {
  for (size_t i = 0; i < kVendorCount; ++i) {
    if (!kVendors[i].supersedes) continue;
    if (kVendors[i].accelerators[0]) return false;
    bool after = false;
    for (size_t j = i + 1; j < kVendorCount; ++j)
      if (std::string_view(kVendors[j].key) == kVendors[i].supersedes && !kVendors[j].supersedes) after = true;
    if (!after) return false;
  }
  return true;
}
static_assert(supersedesValid(), "a superseding row names a later row, and has no accelerators of its own");

constexpr const VendorRow* vendorByKey(std::string_view key) {
  for (const VendorRow& v : kVendors)
    if (key == v.key) return &v;
  return nullptr;
}

// The compile-time list is in table order (the agent searches in it).
#define FLAGPROF_VENDOR_KEY(key) #key,
inline constexpr const char* kVendorKeys[] = {FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_VENDOR_KEY)};
#undef FLAGPROF_VENDOR_KEY
constexpr bool keysInTableOrder() {
  for (size_t i = 0; i < kVendorCount; ++i)
    if (std::string_view(kVendorKeys[i]) != kVendors[i].key) return false;
  return true;
}
static_assert(keysInTableOrder(), "FLAGPROF_FOR_EACH_VENDOR lists the vendors in table order");

// The compile-time list and the table describe the same vendors: each key has its row, with its Records' id.
#define FLAGPROF_VENDOR_ONE(key) +1
static_assert(0 FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_VENDOR_ONE) == kVendorCount, "a vendor row without its X(key)");
#undef FLAGPROF_VENDOR_ONE
#define FLAGPROF_VENDOR_ROW_MATCHES(key)                                       \
  static_assert(vendorByKey(#key) && vendorByKey(#key)->id == key::Records::kId, \
                "vendor " #key ": its row's id is not its Records' id");
FLAGPROF_FOR_EACH_VENDOR(FLAGPROF_VENDOR_ROW_MATCHES)
#undef FLAGPROF_VENDOR_ROW_MATCHES

}  // namespace flagprof
