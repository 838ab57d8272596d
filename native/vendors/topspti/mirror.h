/* Layout mirrors of the Enflame GCU TOPSPTI activity records and callback data (x86-64 / aarch64 LP64).
 *
 * TOPSPTI ships with the TopsRider SDK (/opt/tops/extras/TOPSPTI, libtopspti.so) and has no public header. What
 * is known (seeds 000 and 002, vendor-apis.md): a CUPTI-shaped interface, `topspti` in every function name,
 * kernel, memcpy, memset, runtime and driver records through asynchronous activity buffers, CUPTI's callback API
 * (topsptiSubscribe / topsptiEnableDomain, an API-enter and an API-exit callback per call) and
 * topsptiGetCallbackName; timestamps on the device's own clock (topsptiGetTimestamp); and no external-correlation
 * API, so no external-correlation records. The layouts below are therefore CUPTI's first versions of each record
 * (Kernel 144 B, Memcpy 64, Memset 64, API 40), built from the CUPTI mirror's record heads, and CUPTI's
 * CUpti_CallbackData, with CUPTI's kind numbers; the static_asserts pin the sizes. This is the decision the build rests on until
 * a TopsRider header says otherwise: confirm on hardware before changing anything here. Plain C: the test fake
 * builds against it. */
#ifndef FLAGPROF_TOPSPTI_MIRROR_H
#define FLAGPROF_TOPSPTI_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "../cupti/mirror.h"

#define FP_TOPSPTI_KIND_MEMCPY FP_CUPTI_KIND_MEMCPY
#define FP_TOPSPTI_KIND_MEMSET FP_CUPTI_KIND_MEMSET
#define FP_TOPSPTI_KIND_KERNEL FP_CUPTI_KIND_KERNEL
#define FP_TOPSPTI_KIND_DRIVER FP_CUPTI_KIND_DRIVER
#define FP_TOPSPTI_KIND_RUNTIME FP_CUPTI_KIND_RUNTIME
#define FP_TOPSPTI_KIND_CONCURRENT_KERNEL FP_CUPTI_KIND_CONCURRENT_KERNEL
#define FP_TOPSPTI_CB_DOMAIN_DRIVER_API FP_CUPTI_CB_DOMAIN_DRIVER_API
#define FP_TOPSPTI_CB_DOMAIN_RUNTIME_API FP_CUPTI_CB_DOMAIN_RUNTIME_API
#define FP_TOPSPTI_API_ENTER 0
#define FP_TOPSPTI_API_EXIT 1

#define FP_TOPSPTI_KERNEL_SIZE 144
#define FP_TOPSPTI_MEMCPY_SIZE 64
#define FP_TOPSPTI_MEMSET_SIZE 64
#define FP_TOPSPTI_API_SIZE 40
#define FP_TOPSPTI_CALLBACK_DATA_SIZE 72

typedef struct {
  FP_CUPTI_KERNEL_HEAD
  uint8_t rest[FP_TOPSPTI_KERNEL_SIZE - 136];
} fp_topspti_kernel;

typedef struct {
  FP_CUPTI_MEMCPY_HEAD
} fp_topspti_memcpy;

typedef struct {
  FP_CUPTI_MEMSET_HEAD
} fp_topspti_memset;

typedef fp_cupti_api fp_topspti_api;

/* What the API-enter and API-exit callbacks receive (CUPTI's CUpti_CallbackData). */
typedef struct {
  int32_t callbackSite; /* FP_TOPSPTI_API_ENTER / _EXIT */
  const char* functionName;
  const void* functionParams;
  void* functionReturnValue;
  const char* symbolName;
  void* context;
  uint32_t contextUid;
  uint64_t* correlationData;
  uint32_t correlationId;
} fp_topspti_callback_data;

/* void callback(void* userdata, int domain, uint32_t cbid, const fp_topspti_callback_data* data) */
typedef void (*fp_topspti_callback_fn)(void*, int, uint32_t, const void*);

#ifdef __cplusplus
#define FP_TOPSPTI_ASSERT static_assert
#else
#define FP_TOPSPTI_ASSERT _Static_assert
#endif
FP_TOPSPTI_ASSERT(sizeof(fp_topspti_kernel) == FP_TOPSPTI_KERNEL_SIZE, "kernel record is 144 bytes");
FP_TOPSPTI_ASSERT(sizeof(fp_topspti_memcpy) == FP_TOPSPTI_MEMCPY_SIZE, "memcpy record is 64 bytes");
FP_TOPSPTI_ASSERT(sizeof(fp_topspti_memset) == FP_TOPSPTI_MEMSET_SIZE, "memset record is 64 bytes");
FP_TOPSPTI_ASSERT(sizeof(fp_topspti_api) == FP_TOPSPTI_API_SIZE, "API record is 40 bytes");
FP_TOPSPTI_ASSERT(sizeof(fp_topspti_callback_data) == FP_TOPSPTI_CALLBACK_DATA_SIZE, "callback data is 72 bytes");
FP_TOPSPTI_ASSERT(offsetof(fp_topspti_callback_data, correlationId) == 64, "callback data correlationId at 64");
#undef FP_TOPSPTI_ASSERT

#endif
