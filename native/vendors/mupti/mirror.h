/* Layout mirrors of the Moore Threads MUSA MUPTI activity records (x86-64 / aarch64 LP64).
 *
 * MUPTI has no public header. What is known (seed 000's MUSA integration, vendor-apis.md): MUPTI is CUPTI's C ABI
 * with `mupti` in every function name and CUPTI's record layouts at the versions MUSA ships, MUpti_ActivityKernel6
 * (168 B), Memcpy4 (80), Memset3 (80), API (40) and ExternalCorrelation (24), with CUPTI's kind numbers. So the
 * types below are built from the CUPTI mirror's record heads (every offset the decoder reads is CUPTI's by
 * construction) at those versions' sizes, which the static_asserts pin. What MUPTI changes is not the layout: its timestamps are CLOCK_MONOTONIC (muptiGetTimestamp reads the
 * same clock; the capture's calibration pairs map it to realtime), and its callback ids are MUSA's own, named by
 * muptiGetCallbackName(domain, id). Confirm on hardware before changing anything here. Plain C: the test fake
 * builds against it. */
#ifndef FLAGPROF_MUPTI_MIRROR_H
#define FLAGPROF_MUPTI_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "../cupti/mirror.h"

#define FP_MUPTI_KIND_MEMCPY FP_CUPTI_KIND_MEMCPY
#define FP_MUPTI_KIND_MEMSET FP_CUPTI_KIND_MEMSET
#define FP_MUPTI_KIND_KERNEL FP_CUPTI_KIND_KERNEL
#define FP_MUPTI_KIND_DRIVER FP_CUPTI_KIND_DRIVER
#define FP_MUPTI_KIND_RUNTIME FP_CUPTI_KIND_RUNTIME
#define FP_MUPTI_KIND_CONCURRENT_KERNEL FP_CUPTI_KIND_CONCURRENT_KERNEL
#define FP_MUPTI_KIND_EXTERNAL_CORRELATION FP_CUPTI_KIND_EXTERNAL_CORRELATION
#define FP_MUPTI_EXTERNAL_KIND_CUSTOM0 FP_CUPTI_EXTERNAL_KIND_CUSTOM0
#define FP_MUPTI_CB_DOMAIN_DRIVER_API FP_CUPTI_CB_DOMAIN_DRIVER_API
#define FP_MUPTI_CB_DOMAIN_RUNTIME_API FP_CUPTI_CB_DOMAIN_RUNTIME_API

/* The record sizes MUPTI emits (one version per kind). */
#define FP_MUPTI_KERNEL_SIZE 168
#define FP_MUPTI_MEMCPY_SIZE 80
#define FP_MUPTI_MEMSET_SIZE 80
#define FP_MUPTI_API_SIZE 40
#define FP_MUPTI_EXTERNAL_SIZE 24

/* MUpti_ActivityKernel6: CUPTI's Kernel6, the fields up to `submitted` as every kernel version has them. */
typedef struct {
  FP_CUPTI_KERNEL_HEAD
  uint8_t rest[FP_MUPTI_KERNEL_SIZE - 136];
} fp_mupti_kernel6;

/* MUpti_ActivityMemcpy4 and MUpti_ActivityMemset3 (CUPTI's Memcpy4 / Memset3). */
typedef struct {
  FP_CUPTI_MEMCPY_HEAD
  uint8_t rest[FP_MUPTI_MEMCPY_SIZE - 64];
} fp_mupti_memcpy4;

typedef struct {
  FP_CUPTI_MEMSET_HEAD
  uint8_t rest[FP_MUPTI_MEMSET_SIZE - 64];
} fp_mupti_memset3;

typedef fp_cupti_api fp_mupti_api;
typedef fp_cupti_external_correlation fp_mupti_external_correlation;

#ifdef __cplusplus
#define FP_MUPTI_ASSERT static_assert
#else
#define FP_MUPTI_ASSERT _Static_assert
#endif
FP_MUPTI_ASSERT(sizeof(fp_mupti_kernel6) == FP_MUPTI_KERNEL_SIZE, "Kernel6 is 168 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_memcpy4) == FP_MUPTI_MEMCPY_SIZE, "Memcpy4 is 80 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_memset3) == FP_MUPTI_MEMSET_SIZE, "Memset3 is 80 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_api) == FP_MUPTI_API_SIZE, "API is 40 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_external_correlation) == FP_MUPTI_EXTERNAL_SIZE, "ExternalCorrelation is 24 bytes");
#undef FP_MUPTI_ASSERT

#endif
