/* Layout mirrors of the MetaX MCPTI activity records (MACA; x86-64 / aarch64 LP64).
 *
 * MCPTI has no public header: these are the facts seed 001 measured on a C550 with MACA 3.8.0 and the reference
 * collects (vendor-apis.md): CUPTI's layouts at the versions MACA ships, Kernel8 (200 B), Memcpy5 (88),
 * Memset4 (88), API (40), ExternalCorrelation (24), and CUPTI's kind numbers. The offsets every decoder reads are
 * CUPTI's own (the types are built from the CUPTI mirror's record heads), so the shared CUPTI record parser reads
 * MCPTI records; the static_asserts below pin the sizes. What MCPTI changes is not the layout: its callback ids are MetaX's own
 * namespace (named only by mcptiActivityGetApiName), and its iterator can go stale (binding.cc).
 * Confirm on hardware before changing anything here. Plain C: the test fake builds against it. */
#ifndef FLAGPROF_MCPTI_MIRROR_H
#define FLAGPROF_MCPTI_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#include "../cupti/mirror.h"

#define FP_MCPTI_KIND_MEMCPY FP_CUPTI_KIND_MEMCPY
#define FP_MCPTI_KIND_MEMSET FP_CUPTI_KIND_MEMSET
#define FP_MCPTI_KIND_KERNEL FP_CUPTI_KIND_KERNEL
#define FP_MCPTI_KIND_DRIVER FP_CUPTI_KIND_DRIVER
#define FP_MCPTI_KIND_RUNTIME FP_CUPTI_KIND_RUNTIME
#define FP_MCPTI_KIND_CONCURRENT_KERNEL FP_CUPTI_KIND_CONCURRENT_KERNEL
#define FP_MCPTI_KIND_EXTERNAL_CORRELATION FP_CUPTI_KIND_EXTERNAL_CORRELATION
#define FP_MCPTI_EXTERNAL_KIND_CUSTOM0 FP_CUPTI_EXTERNAL_KIND_CUSTOM0

/* The API version MACA 3.5.3 reports (mcptiGetVersion). */
#define FP_MCPTI_API_VERSION 18

/* The record sizes MCPTI emits (one version per kind). */
#define FP_MCPTI_KERNEL_SIZE 200
#define FP_MCPTI_MEMCPY_SIZE 88
#define FP_MCPTI_MEMSET_SIZE 88
#define FP_MCPTI_API_SIZE 40
#define FP_MCPTI_EXTERNAL_SIZE 24

typedef struct {
  FP_CUPTI_KERNEL_HEAD
  uint8_t rest[FP_MCPTI_KERNEL_SIZE - 136];
} fp_mcpti_kernel8;

typedef struct {
  FP_CUPTI_MEMCPY_HEAD
  uint8_t rest[FP_MCPTI_MEMCPY_SIZE - 64];
} fp_mcpti_memcpy5;

typedef fp_cupti_memset4 fp_mcpti_memset4;
typedef fp_cupti_api fp_mcpti_api;
typedef fp_cupti_external_correlation fp_mcpti_external_correlation;

#ifdef __cplusplus
#define FP_MCPTI_SIZE(type, size) static_assert(sizeof(type) == size, #type " is not " #size " bytes")
#else
#define FP_MCPTI_SIZE(type, size) _Static_assert(sizeof(type) == size, #type " is not " #size " bytes")
#endif
FP_MCPTI_SIZE(fp_mcpti_kernel8, FP_MCPTI_KERNEL_SIZE);
FP_MCPTI_SIZE(fp_mcpti_memcpy5, FP_MCPTI_MEMCPY_SIZE);
FP_MCPTI_SIZE(fp_mcpti_memset4, FP_MCPTI_MEMSET_SIZE);
FP_MCPTI_SIZE(fp_mcpti_api, FP_MCPTI_API_SIZE);
FP_MCPTI_SIZE(fp_mcpti_external_correlation, FP_MCPTI_EXTERNAL_SIZE);
#undef FP_MCPTI_SIZE

#endif
