/* Layout mirrors of the Moore Threads MUSA MUPTI activity records (x86-64 / aarch64 LP64).
 *
 * MUPTI has no public header. What is known (seed 000's MUSA integration, vendor-apis.md): MUPTI is CUPTI's C ABI
 * with `mupti` in every function name and CUPTI's record layouts at the versions MUSA ships, MUpti_ActivityKernel6
 * (168 B), Memcpy4 (80), Memset3 (80), API (40) and ExternalCorrelation (24), with CUPTI's kind numbers. So the
 * types below are the CUPTI mirror's at those versions, and the static_asserts pin every offset the decoder reads
 * to CUPTI's. What MUPTI changes is not the layout: its timestamps are CLOCK_MONOTONIC (muptiGetTimestamp reads the
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
  uint32_t kind;
  uint8_t cacheConfig;
  uint8_t sharedMemoryConfig;
  uint16_t registersPerThread;
  uint32_t partitionedGlobalCacheRequested;
  uint32_t partitionedGlobalCacheExecuted;
  uint64_t start;
  uint64_t end;
  uint64_t completed;
  uint32_t deviceId;
  uint32_t contextId;
  uint32_t streamId;
  int32_t gridX, gridY, gridZ;
  int32_t blockX, blockY, blockZ;
  int32_t staticSharedMemory;
  int32_t dynamicSharedMemory;
  uint32_t localMemoryPerThread;
  uint32_t localMemoryTotal;
  uint32_t correlationId;
  int64_t gridId;
  const char* name;
  void* reserved0;
  uint64_t queued;
  uint64_t submitted;
  uint8_t rest[FP_MUPTI_KERNEL_SIZE - 136];
} fp_mupti_kernel6;

/* MUpti_ActivityMemcpy4 and MUpti_ActivityMemset3 (CUPTI's Memcpy4 / Memset3). */
typedef struct {
  uint32_t kind;
  uint8_t copyKind;
  uint8_t srcKind;
  uint8_t dstKind;
  uint8_t flags;
  uint64_t bytes;
  uint64_t start;
  uint64_t end;
  uint32_t deviceId;
  uint32_t contextId;
  uint32_t streamId;
  uint32_t correlationId;
  uint32_t runtimeCorrelationId;
  uint32_t pad;
  void* reserved0;
  uint8_t rest[FP_MUPTI_MEMCPY_SIZE - 64];
} fp_mupti_memcpy4;

typedef struct {
  uint32_t kind;
  uint32_t value;
  uint64_t bytes;
  uint64_t start;
  uint64_t end;
  uint32_t deviceId;
  uint32_t contextId;
  uint32_t streamId;
  uint32_t correlationId;
  uint16_t flags;
  uint16_t memoryKind;
  uint32_t pad;
  void* reserved0;
  uint8_t rest[FP_MUPTI_MEMSET_SIZE - 64];
} fp_mupti_memset3;

typedef fp_cupti_api fp_mupti_api;
typedef fp_cupti_external_correlation fp_mupti_external_correlation;

#ifdef __cplusplus
#define FP_MUPTI_ASSERT static_assert
#else
#define FP_MUPTI_ASSERT _Static_assert
#endif
#define FP_MUPTI_SAME_OFFSET(mine, cupti, field) \
  FP_MUPTI_ASSERT(offsetof(mine, field) == offsetof(cupti, field), #mine "." #field " is not at CUPTI's offset")
FP_MUPTI_ASSERT(sizeof(fp_mupti_kernel6) == FP_MUPTI_KERNEL_SIZE, "Kernel6 is 168 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_memcpy4) == FP_MUPTI_MEMCPY_SIZE, "Memcpy4 is 80 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_memset3) == FP_MUPTI_MEMSET_SIZE, "Memset3 is 80 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_api) == FP_MUPTI_API_SIZE, "API is 40 bytes");
FP_MUPTI_ASSERT(sizeof(fp_mupti_external_correlation) == FP_MUPTI_EXTERNAL_SIZE, "ExternalCorrelation is 24 bytes");
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, registersPerThread);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, start);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, end);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, deviceId);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, streamId);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, gridX);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, blockX);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, dynamicSharedMemory);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, correlationId);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, name);
FP_MUPTI_SAME_OFFSET(fp_mupti_kernel6, fp_cupti_kernel10, queued);
FP_MUPTI_SAME_OFFSET(fp_mupti_memcpy4, fp_cupti_memcpy6, bytes);
FP_MUPTI_SAME_OFFSET(fp_mupti_memcpy4, fp_cupti_memcpy6, start);
FP_MUPTI_SAME_OFFSET(fp_mupti_memcpy4, fp_cupti_memcpy6, streamId);
FP_MUPTI_SAME_OFFSET(fp_mupti_memcpy4, fp_cupti_memcpy6, correlationId);
FP_MUPTI_SAME_OFFSET(fp_mupti_memset3, fp_cupti_memset4, value);
FP_MUPTI_SAME_OFFSET(fp_mupti_memset3, fp_cupti_memset4, bytes);
FP_MUPTI_SAME_OFFSET(fp_mupti_memset3, fp_cupti_memset4, streamId);
FP_MUPTI_SAME_OFFSET(fp_mupti_memset3, fp_cupti_memset4, correlationId);
FP_MUPTI_SAME_OFFSET(fp_mupti_memset3, fp_cupti_memset4, memoryKind);
#undef FP_MUPTI_SAME_OFFSET
#undef FP_MUPTI_ASSERT

#endif
