/* Layout mirrors of the CUPTI activity records the tracer decodes (x86-64 / aarch64 LP64).
 * Plain C so the test fake can build against it where no CUDA toolkit is installed; where the real
 * cupti_activity.h is installed, cupti_decode.cc static_asserts every offset used against it.
 * Field names follow the vendor header. Sizes: Kernel10 216 (Kernel4..9 = 144/160/168/176/200/208 share the
 * offsets used here), Memcpy6 96 (v1/3/4/5 = 64/72/80/88), Memset4 88 (v1/2/3 = 64/72/80), API 40,
 * ExternalCorrelation 24, Device5 184 (v3/v4 = 152/176). */
#ifndef FLAGPROF_CUPTI_MIRROR_H
#define FLAGPROF_CUPTI_MIRROR_H

#include <stdint.h>

#define FP_CUPTI_KIND_MEMCPY 1
#define FP_CUPTI_KIND_MEMSET 2
#define FP_CUPTI_KIND_KERNEL 3
#define FP_CUPTI_KIND_DRIVER 4
#define FP_CUPTI_KIND_RUNTIME 5
#define FP_CUPTI_KIND_DEVICE 8
#define FP_CUPTI_KIND_CONCURRENT_KERNEL 10
#define FP_CUPTI_KIND_EXTERNAL_CORRELATION 39

#define FP_CUPTI_EXTERNAL_KIND_CUSTOM0 3
#define FP_CUPTI_EXTERNAL_KIND_CUSTOM1 4

#define FP_CUPTI_CB_DOMAIN_DRIVER_API 1
#define FP_CUPTI_CB_DOMAIN_RUNTIME_API 2

/* The fields every CUPTI kernel record version has, at the same offsets (Kernel4 to Kernel10 share these 136
 * bytes): a clone's mirror builds the version it ships from them. */
#define FP_CUPTI_KERNEL_HEAD \
  uint32_t kind; \
  uint8_t cacheConfig; \
  uint8_t sharedMemoryConfig; \
  uint16_t registersPerThread; \
  uint32_t partitionedGlobalCacheRequested; \
  uint32_t partitionedGlobalCacheExecuted; \
  uint64_t start; \
  uint64_t end; \
  uint64_t completed; \
  uint32_t deviceId; \
  uint32_t contextId; \
  uint32_t streamId; \
  int32_t gridX, gridY, gridZ; \
  int32_t blockX, blockY, blockZ; \
  int32_t staticSharedMemory; \
  int32_t dynamicSharedMemory; \
  uint32_t localMemoryPerThread; \
  uint32_t localMemoryTotal; \
  uint32_t correlationId; \
  int64_t gridId; \
  const char* name; \
  void* reserved0; \
  uint64_t queued; \
  uint64_t submitted;

/* The 64 bytes every memcpy record version starts with (Memcpy v1 is exactly these). */
#define FP_CUPTI_MEMCPY_HEAD \
  uint32_t kind; \
  uint8_t copyKind; \
  uint8_t srcKind; \
  uint8_t dstKind; \
  uint8_t flags; \
  uint64_t bytes; \
  uint64_t start; \
  uint64_t end; \
  uint32_t deviceId; \
  uint32_t contextId; \
  uint32_t streamId; \
  uint32_t correlationId; \
  uint32_t runtimeCorrelationId; \
  uint32_t pad; \
  void* reserved0;

/* The 64 bytes every memset record version starts with (Memset v1 is exactly these). */
#define FP_CUPTI_MEMSET_HEAD \
  uint32_t kind; \
  uint32_t value; \
  uint64_t bytes; \
  uint64_t start; \
  uint64_t end; \
  uint32_t deviceId; \
  uint32_t contextId; \
  uint32_t streamId; \
  uint32_t correlationId; \
  uint16_t flags; \
  uint16_t memoryKind; \
  uint32_t pad; \
  void* reserved0;

/* Kernel5 (CUDA 11.0) on add the graph fields (Kernel4, 144 bytes, ends at graphNodeId). */
typedef struct {
  FP_CUPTI_KERNEL_HEAD
  uint8_t launchType;
  uint8_t isSharedMemoryCarveoutRequested;
  uint8_t sharedMemoryCarveoutRequested;
  uint8_t padding;
  uint32_t sharedMemoryExecuted;
  uint64_t graphNodeId;
  uint32_t shmemLimitConfig;
  uint32_t graphId;
  uint8_t rest[216 - 160];
} fp_cupti_kernel10;

typedef struct {
  FP_CUPTI_MEMCPY_HEAD
  uint8_t rest[96 - 64];
} fp_cupti_memcpy6;

typedef struct {
  FP_CUPTI_MEMSET_HEAD
  uint8_t rest[88 - 64];
} fp_cupti_memset4;

typedef struct {
  uint32_t kind;
  uint32_t cbid;
  uint64_t start;
  uint64_t end;
  uint32_t processId;
  uint32_t threadId;
  uint32_t correlationId;
  uint32_t returnValue;
} fp_cupti_api;

typedef struct {
  uint32_t kind;
  uint32_t externalKind;
  uint64_t externalId;
  uint32_t correlationId;
  uint32_t reserved;
} fp_cupti_external_correlation;

typedef struct {
  uint32_t kind;
  uint32_t flags;
  uint64_t globalMemoryBandwidth; /* KB/s */
  uint64_t globalMemorySize;
  uint32_t constantMemorySize;
  uint32_t l2CacheSize;
  uint32_t numThreadsPerWarp;
  uint32_t coreClockRate;
  uint32_t numMemcpyEngines;
  uint32_t numMultiprocessors;
  uint32_t maxIPC;
  uint32_t maxWarpsPerMultiprocessor;
  uint32_t maxBlocksPerMultiprocessor;
  uint32_t maxSharedMemoryPerMultiprocessor;
  uint32_t maxRegistersPerMultiprocessor;
  uint32_t maxRegistersPerBlock;
  uint32_t maxSharedMemoryPerBlock;
  uint32_t maxThreadsPerBlock;
  uint32_t maxBlockDimX, maxBlockDimY, maxBlockDimZ;
  uint32_t maxGridDimX, maxGridDimY, maxGridDimZ;
  uint32_t computeCapabilityMajor;
  uint32_t computeCapabilityMinor;
  uint32_t id;
  uint32_t eccEnabled;
  uint8_t uuid[16];
  const char* name;
  uint8_t rest[184 - 144];
} fp_cupti_device5;

#endif
