/* Layout mirror of the AMD ROCtracer activity record the tracer decodes (LP64: x86-64).
 * Written from the public ext/prof_protocol.h (ROCm/roctracer); plain C so the test fake can build against it,
 * as the real header is rarely installed. Every domain shares one 64-byte record: domain, kind, op, then the
 * correlation id and the two timestamps, a union (device and queue for device ops, process and thread for API
 * calls, the external id for external-correlation records) and a union of byte count and kernel name pointer.
 * Correlation ids are 64-bit. Timestamps are the HSA system clock, not CLOCK_REALTIME. */
#ifndef FLAGPROF_ROCTRACER_MIRROR_H
#define FLAGPROF_ROCTRACER_MIRROR_H

#include <stddef.h>
#include <stdint.h>

/* activity_domain_t values the tracer reads. */
#define FP_ROC_DOMAIN_HIP_OPS 2
#define FP_ROC_DOMAIN_HIP_API 3
#define FP_ROC_DOMAIN_EXT_API 5

/* Ops of the HIP_OPS domain (roctracer_hip.h). */
#define FP_ROC_HIP_OP_DISPATCH 0
#define FP_ROC_HIP_OP_COPY 1
#define FP_ROC_HIP_OP_BARRIER 2

/* Ops of the EXT_API domain: a mark, or the external id pushed around a range of API calls. */
#define FP_ROC_EXT_OP_MARK 0
#define FP_ROC_EXT_OP_EXTERN_ID 1

/* A HIP_OPS record's kind is the runtime's command type (OpenCL command numbers, which HIP's runtime reuses):
 * it tells a copy's direction, and a buffer fill (memset) from a copy. ROCtracer has no memset record. */
#define FP_ROC_KIND_KERNEL 0x11F0
#define FP_ROC_KIND_TASK 0x11F1
#define FP_ROC_KIND_DTOH 0x11F3
#define FP_ROC_KIND_HTOD 0x11F4
#define FP_ROC_KIND_DTOD 0x11F5
#define FP_ROC_KIND_DTOH_2D 0x1201
#define FP_ROC_KIND_HTOD_2D 0x1202
#define FP_ROC_KIND_DTOD_2D 0x1203
#define FP_ROC_KIND_FILL 0x1207

/* roctracer_status_t values the agent tells apart. */
#define FP_ROC_SUCCESS 0

typedef struct {
  uint32_t domain;
  uint32_t kind;
  uint32_t op;
  uint32_t pad;
  uint64_t correlation_id;
  uint64_t begin_ns;
  uint64_t end_ns;
  union {
    struct {
      int32_t device_id;
      uint64_t queue_id;
    } dev;
    struct {
      uint32_t process_id;
      uint32_t thread_id;
    } api;
    uint64_t external_id;
  } u;
  union {
    uint64_t bytes;
    const char* kernel_name;
  } v;
} fp_roc_record;

/* roctracer_properties_t: what a memory pool is opened with. The pool owns its buffers and hands each full or
 * flushed range [begin, end) of records to the callback. */
typedef void (*fp_roc_buffer_callback)(const char* begin, const char* end, void* arg);
typedef struct {
  uint32_t mode;
  size_t buffer_size;
  void (*alloc_fun)(char** ptr, size_t size, void* arg);
  void* alloc_arg;
  fp_roc_buffer_callback buffer_callback_fun;
  void* buffer_callback_arg;
} fp_roc_properties;

#ifdef __cplusplus
#define FP_ROC_ASSERT(condition, what) static_assert(condition, what)
#else
#define FP_ROC_ASSERT(condition, what) _Static_assert(condition, what)
#endif

/* Natural alignment gives these offsets; the decoder reads them as constants. */
#define FP_ROC_OFF_DEVICE 40
#define FP_ROC_OFF_QUEUE 48
#define FP_ROC_OFF_PROCESS 40
#define FP_ROC_OFF_THREAD 44
#define FP_ROC_OFF_EXTERNAL 40
#define FP_ROC_OFF_BYTES 56
FP_ROC_ASSERT(sizeof(fp_roc_record) == 64, "activity_record_t size");
FP_ROC_ASSERT(offsetof(fp_roc_record, kind) == 4 && offsetof(fp_roc_record, op) == 8 &&
                  offsetof(fp_roc_record, correlation_id) == 16 && offsetof(fp_roc_record, begin_ns) == 24 &&
                  offsetof(fp_roc_record, end_ns) == 32 && offsetof(fp_roc_record, v) == FP_ROC_OFF_BYTES,
              "activity_record_t offsets");
FP_ROC_ASSERT(offsetof(fp_roc_record, u.dev.device_id) == FP_ROC_OFF_DEVICE &&
                  offsetof(fp_roc_record, u.dev.queue_id) == FP_ROC_OFF_QUEUE &&
                  offsetof(fp_roc_record, u.api.process_id) == FP_ROC_OFF_PROCESS &&
                  offsetof(fp_roc_record, u.api.thread_id) == FP_ROC_OFF_THREAD &&
                  offsetof(fp_roc_record, u.external_id) == FP_ROC_OFF_EXTERNAL,
              "activity_record_t unions");
FP_ROC_ASSERT(sizeof(fp_roc_properties) == 48 && offsetof(fp_roc_properties, buffer_size) == 8 &&
                  offsetof(fp_roc_properties, buffer_callback_fun) == 32,
              "roctracer_properties_t layout");

/* ---- HIP API callbacks (roctracer_enable_domain_callback), where a kernel's launch dimensions are: ROCtracer's
 * activity records carry none. The callback is activity_rtapi_callback_t (ext/prof_protocol.h): (domain, cid,
 * callback data, arg); for the HIP_API domain the data is hip_api_data_t (hip_prof_str.h, generated per ROCm
 * release: the call ids (cid) differ between releases, the argument structs of the launch calls do not). */
#define FP_ROC_API_PHASE_ENTER 0
#define FP_ROC_API_PHASE_EXIT 1
typedef void (*fp_roc_api_callback)(uint32_t domain, uint32_t cid, const void* data, void* arg);

typedef struct {
  uint32_t x, y, z;
} fp_roc_dim3;

/* hip_api_data_t: correlation id (the one the call's activity records carry), phase, then the union of every
 * call's arguments (pointer-aligned), then phase_data. Only the launch calls' members are mirrored, as hipamd's
 * generated header has had them since ROCm 4.3 (ROCm/clr hipamd/include/hip/amd_detail/hip_prof_str.h): each
 * pointer argument is followed by a copy of what it points to (args__val, kernelParams__val), so hipLaunchKernel's
 * shared memory lies 8 bytes later than in older generated headers; the grid and block offsets are the same in
 * both. */
typedef struct {
  uint64_t correlation_id;
  uint32_t phase;
  union {
    /* hipLaunchKernel, hipLaunchKernel_spt, hipExtLaunchKernel (the same head, then events and flags): grid in
     * blocks, as CUDA's. */
    struct {
      const void* function_address;
      fp_roc_dim3 numBlocks;
      fp_roc_dim3 dimBlocks;
      void** args;
      void* args__val;
      size_t sharedMemBytes;
      void* stream;
    } hipLaunchKernel;
    /* hipLaunchCooperativeKernel: the same dims, an unsigned int for the shared memory. */
    struct {
      const void* f;
      fp_roc_dim3 gridDim;
      fp_roc_dim3 blockDimX;
      void** kernelParams;
      void* kernelParams__val;
      unsigned int sharedMemBytes;
      void* stream;
    } hipLaunchCooperativeKernel;
    /* hipModuleLaunchKernel (cuLaunchKernel's shape): grid in blocks. */
    struct {
      void* f;
      unsigned int gridDimX, gridDimY, gridDimZ;
      unsigned int blockDimX, blockDimY, blockDimZ;
      unsigned int sharedMemBytes;
      void* stream;
      void** kernelParams;
      void* kernelParams__val;
      void** extra;
      void* extra__val;
    } hipModuleLaunchKernel;
    /* hipExtModuleLaunchKernel, and hipHccModuleLaunchKernel (the same layout without flags; newer headers name
     * its fields gridDim / blockDim, older ones globalWorkSize / localWorkSize): the grid is the global work size,
     * in work-items (HSA's dispatch packet), not in blocks. */
    struct {
      void* f;
      unsigned int globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ;
      unsigned int localWorkSizeX, localWorkSizeY, localWorkSizeZ;
      size_t sharedMemBytes;
      void* hStream;
      void** kernelParams;
      void* kernelParams__val;
      void** extra;
      void* extra__val;
      void* startEvent;
      void* stopEvent;
      unsigned int flags;
    } hipExtModuleLaunchKernel;
  } args;
  uint64_t* phase_data;
} fp_roc_hip_api_data;

FP_ROC_ASSERT(offsetof(fp_roc_hip_api_data, phase) == 8 && offsetof(fp_roc_hip_api_data, args) == 16,
              "hip_api_data_t head");
FP_ROC_ASSERT(offsetof(fp_roc_hip_api_data, args.hipLaunchKernel.numBlocks) == 24 &&
                  offsetof(fp_roc_hip_api_data, args.hipLaunchKernel.dimBlocks) == 36 &&
                  offsetof(fp_roc_hip_api_data, args.hipLaunchKernel.sharedMemBytes) == 64 &&
                  offsetof(fp_roc_hip_api_data, args.hipLaunchCooperativeKernel.sharedMemBytes) == 64,
              "hipLaunchKernel arguments");
FP_ROC_ASSERT(offsetof(fp_roc_hip_api_data, args.hipModuleLaunchKernel.gridDimX) == 24 &&
                  offsetof(fp_roc_hip_api_data, args.hipModuleLaunchKernel.blockDimX) == 36 &&
                  offsetof(fp_roc_hip_api_data, args.hipModuleLaunchKernel.sharedMemBytes) == 48 &&
                  offsetof(fp_roc_hip_api_data, args.hipExtModuleLaunchKernel.localWorkSizeX) == 36 &&
                  offsetof(fp_roc_hip_api_data, args.hipExtModuleLaunchKernel.sharedMemBytes) == 48,
              "hipModuleLaunchKernel arguments");

/* What the capture agent appends to a HIP_OPS dispatch record whose launch its HIP API callback saw (joined by
 * correlation id when the buffer is delivered): the record is then 64 + 32 bytes. Grid in blocks, block in
 * threads, the launch's dynamic shared memory in bytes. A record without it is the plain 64 bytes. */
#define FP_ROC_LAUNCH_MAGIC 0x4D494446u /* "FDIM" */
typedef struct {
  uint32_t magic;
  uint32_t shared_memory;
  uint32_t grid[3];
  uint32_t block[3];
} fp_roc_launch_dims;
FP_ROC_ASSERT(sizeof(fp_roc_launch_dims) == 32, "launch dims size");

#endif
