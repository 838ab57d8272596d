/* Layout mirrors of the Huawei Ascend MSPTI activity records the tracer decodes (LP64: x86-64 and aarch64).
 * Written from the public mspti_activity.h (Ascend/mspti, csrc/include); plain C so the test fake can build
 * against it, as the real header is rarely installed. Every record is declared there packed and aligned to 8,
 * so 64-bit fields sit at offset 4 and each size is rounded up to a multiple of 8: Kernel 56, Api 48,
 * Memcpy 56, Memset 56, ExternalCorrelation 24. Correlation ids are 64-bit. */
#ifndef FLAGPROF_MSPTI_MIRROR_H
#define FLAGPROF_MSPTI_MIRROR_H

#include <stddef.h>
#include <stdint.h>

#define FP_MSPTI_KIND_KERNEL 2
#define FP_MSPTI_KIND_API 3
#define FP_MSPTI_KIND_MEMSET 6
#define FP_MSPTI_KIND_MEMCPY 7
#define FP_MSPTI_KIND_EXTERNAL_CORRELATION 8

#define FP_MSPTI_EXTERNAL_KIND_CUSTOM0 2
#define FP_MSPTI_EXTERNAL_KIND_CUSTOM1 3

/* msptiResult values the agent tells apart. */
#define FP_MSPTI_SUCCESS 0
#define FP_MSPTI_ERROR_INVALID_PARAMETER 1
#define FP_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS 2
#define FP_MSPTI_ERROR_MAX_LIMIT_REACHED 3
#define FP_MSPTI_ERROR_QUEUE_EMPTY 5

/* msptiActivityMemcpyKind: 0 unknown, 1 HtoH, 2 HtoD, 3 DtoH, 4 DtoD, 5 default (decided by address). */
#define FP_MSPTI_MEMCPY_KIND_COUNT 6

#define FP_MSPTI_RECORD __attribute__((__packed__)) __attribute__((aligned(8)))

typedef struct FP_MSPTI_RECORD {
  uint32_t kind;
  uint64_t start;
  uint64_t end;
  struct {
    uint32_t deviceId;
    uint32_t streamId;
  } ds;
  uint64_t correlationId;
  const char* type;
  const char* name;
} fp_mspti_kernel;

typedef struct FP_MSPTI_RECORD {
  uint32_t kind;
  uint64_t start;
  uint64_t end;
  struct {
    uint32_t processId;
    uint32_t threadId;
  } pt;
  uint64_t correlationId;
  const char* name;
} fp_mspti_api;

typedef struct FP_MSPTI_RECORD {
  uint32_t kind;
  uint32_t copyKind;
  uint64_t bytes;
  uint64_t start;
  uint64_t end;
  uint32_t deviceId;
  uint32_t streamId;
  uint64_t correlationId;
  uint8_t isAsync;
} fp_mspti_memcpy;

typedef struct FP_MSPTI_RECORD {
  uint32_t kind;
  uint32_t value;
  uint64_t bytes;
  uint64_t start;
  uint64_t end;
  uint32_t deviceId;
  uint32_t streamId;
  uint64_t correlationId;
  uint8_t isAsync;
} fp_mspti_memset;

typedef struct FP_MSPTI_RECORD {
  uint32_t kind;
  uint32_t externalKind;
  uint64_t externalId;
  uint64_t correlationId;
} fp_mspti_external_correlation;

#ifdef __cplusplus
#define FP_MSPTI_ASSERT(condition, what) static_assert(condition, what)
#else
#define FP_MSPTI_ASSERT(condition, what) _Static_assert(condition, what)
#endif

/* The offsets the header's packing gives; a compiler that ignored the attributes fails here. */
FP_MSPTI_ASSERT(sizeof(fp_mspti_kernel) == 56, "msptiActivityKernel size");
FP_MSPTI_ASSERT(offsetof(fp_mspti_kernel, start) == 4 && offsetof(fp_mspti_kernel, end) == 12 &&
                    offsetof(fp_mspti_kernel, ds) == 20 && offsetof(fp_mspti_kernel, correlationId) == 28 &&
                    offsetof(fp_mspti_kernel, type) == 36 && offsetof(fp_mspti_kernel, name) == 44,
                "msptiActivityKernel offsets");
FP_MSPTI_ASSERT(sizeof(fp_mspti_api) == 48, "msptiActivityApi size");
FP_MSPTI_ASSERT(offsetof(fp_mspti_api, start) == 4 && offsetof(fp_mspti_api, end) == 12 &&
                    offsetof(fp_mspti_api, pt) == 20 && offsetof(fp_mspti_api, correlationId) == 28 &&
                    offsetof(fp_mspti_api, name) == 36,
                "msptiActivityApi offsets");
FP_MSPTI_ASSERT(sizeof(fp_mspti_memcpy) == 56, "msptiActivityMemcpy size");
FP_MSPTI_ASSERT(offsetof(fp_mspti_memcpy, copyKind) == 4 && offsetof(fp_mspti_memcpy, bytes) == 8 &&
                    offsetof(fp_mspti_memcpy, start) == 16 && offsetof(fp_mspti_memcpy, end) == 24 &&
                    offsetof(fp_mspti_memcpy, deviceId) == 32 && offsetof(fp_mspti_memcpy, streamId) == 36 &&
                    offsetof(fp_mspti_memcpy, correlationId) == 40 && offsetof(fp_mspti_memcpy, isAsync) == 48,
                "msptiActivityMemcpy offsets");
FP_MSPTI_ASSERT(sizeof(fp_mspti_memset) == 56, "msptiActivityMemset size");
FP_MSPTI_ASSERT(offsetof(fp_mspti_memset, value) == 4 && offsetof(fp_mspti_memset, bytes) == 8 &&
                    offsetof(fp_mspti_memset, start) == 16 && offsetof(fp_mspti_memset, end) == 24 &&
                    offsetof(fp_mspti_memset, deviceId) == 32 && offsetof(fp_mspti_memset, streamId) == 36 &&
                    offsetof(fp_mspti_memset, correlationId) == 40 && offsetof(fp_mspti_memset, isAsync) == 48,
                "msptiActivityMemset offsets");
FP_MSPTI_ASSERT(sizeof(fp_mspti_external_correlation) == 24 &&
                    offsetof(fp_mspti_external_correlation, externalKind) == 4 &&
                    offsetof(fp_mspti_external_correlation, externalId) == 8 &&
                    offsetof(fp_mspti_external_correlation, correlationId) == 16,
                "msptiActivityExternalCorrelation layout");

#endif
