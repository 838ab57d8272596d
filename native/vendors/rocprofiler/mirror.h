/* Layout mirror of the AMD rocprofiler-sdk ABI the tracer uses (LP64: x86-64), ROCtracer's successor.
 * Written from the public headers (fwd.h, buffer_tracing.h, callback_tracing.h, registration.h, buffer.h,
 * agent.h, external_correlation.h) of ROCm/rocprofiler-sdk commit 8ab1ed78 (October 2024, after rocm-6.2.2; SDK
 * 0.5.0) and of ROCm/rocm-systems projects/rocprofiler-sdk (fwd.h at 04098322, buffer_tracing.h at 00db669d: the
 * ROCm 7 line); plain C so the test fake can build against it, as the real header is rarely installed.
 *
 * What differs between those two versions and matters here:
 * - rocprofiler_correlation_id_t grew `ancestor` (24 bytes, was 16). The HIP API record carries that type, so its
 *   timestamps and thread id moved by 8: its `size` field tells the two apart (56 bytes before, 64 after). Kernel
 *   dispatch and memory copy records carry rocprofiler_async_correlation_id_t (internal, external: 16 bytes), so
 *   their offsets did not move; both only grew at the end (pipe_id; dst/src addresses).
 * - The callback-tracing record (passed to callbacks BY VALUE, no size field) also carries the grown correlation
 *   id: kind, operation, phase and payload sit 8 bytes later. Both layouts are mirrored; the binding tells them
 *   apart by where the kind it asked for (CODE_OBJECT) appears.
 * Buffer-tracing kinds up to KERNEL_DISPATCH (11) and callback kind CODE_OBJECT (10) have the same numbers in both
 * (later kinds were renumbered: PAGE_MIGRATION was removed). Timestamps are CLOCK_BOOTTIME nanoseconds. */
#ifndef FLAGPROF_ROCPROFILER_MIRROR_H
#define FLAGPROF_ROCPROFILER_MIRROR_H

#include <stddef.h>
#include <stdint.h>

/* rocprofiler_status_t values the agent tells apart. */
#define FP_RPS_STATUS_SUCCESS 0
#define FP_RPS_STATUS_ERROR 1
#define FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND 2
#define FP_RPS_STATUS_ERROR_BUFFER_NOT_FOUND 3
#define FP_RPS_STATUS_ERROR_KIND_NOT_FOUND 4
#define FP_RPS_STATUS_ERROR_OPERATION_NOT_FOUND 5
#define FP_RPS_STATUS_ERROR_THREAD_NOT_FOUND 6
#define FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED 15
#define FP_RPS_STATUS_ERROR_INVALID_ARGUMENT 18

/* rocprofiler_buffer_category_t */
#define FP_RPS_BUFFER_CATEGORY_TRACING 1

/* rocprofiler_buffer_tracing_kind_t: the kinds this tracer records. */
#define FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API 5
#define FP_RPS_BUFFER_TRACING_MEMORY_COPY 10
#define FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH 11

/* Not a rocprofiler kind: the record the agent writes beside a copied record whose correlation carries an
 * external id (fp_rps_external_record), so the capture decoder gets the pair as it gets every other vendor's
 * external correlations. Far above any kind the SDK numbers. */
#define FP_RPS_FLAGPROF_EXTERNAL_KIND 0x464C4558u /* "XELF" */

/* rocprofiler_callback_tracing_kind_t and rocprofiler_code_object_operation_t: kernel names arrive through the
 * code-object callback service (kernel_id -> kernel_name), never in the dispatch records. */
#define FP_RPS_CALLBACK_TRACING_CODE_OBJECT 10
#define FP_RPS_CODE_OBJECT_LOAD 1
#define FP_RPS_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER 2
/* rocprofiler_callback_phase_t */
#define FP_RPS_CALLBACK_PHASE_LOAD 1
#define FP_RPS_CALLBACK_PHASE_UNLOAD 2

/* rocprofiler_memory_copy_operation_t: the copy direction is the record's operation. There is no fill kind: a
 * hipMemset runs as a runtime blit kernel and is reported as a kernel dispatch. */
#define FP_RPS_MEMORY_COPY_NONE 0
#define FP_RPS_MEMORY_COPY_HOST_TO_HOST 1
#define FP_RPS_MEMORY_COPY_HOST_TO_DEVICE 2
#define FP_RPS_MEMORY_COPY_DEVICE_TO_HOST 3
#define FP_RPS_MEMORY_COPY_DEVICE_TO_DEVICE 4

/* rocprofiler_kernel_dispatch_operation_t: buffer records are all COMPLETE. */
#define FP_RPS_KERNEL_DISPATCH_COMPLETE 2

/* rocprofiler_buffer_policy_t, rocprofiler_agent_version_t, rocprofiler_agent_type_t */
#define FP_RPS_BUFFER_POLICY_LOSSLESS 2
#define FP_RPS_AGENT_INFO_VERSION_0 1
#define FP_RPS_AGENT_TYPE_GPU 2

/* ROCPROFILER_CONTEXT_NONE: the handle of no context. */
#define FP_RPS_CONTEXT_NONE UINT64_MAX

typedef union {
  uint64_t value;
  void* ptr;
} fp_rps_user_data;

typedef struct {
  uint64_t handle;
} fp_rps_context_id;

typedef struct {
  uint64_t handle;
} fp_rps_buffer_id;

typedef struct {
  uint64_t handle;
} fp_rps_agent_id;

typedef struct {
  uint32_t x, y, z;
} fp_rps_dim3;

/* rocprofiler_async_correlation_id_t (and, before `ancestor`, rocprofiler_correlation_id_t). */
typedef struct {
  uint64_t internal;
  fp_rps_user_data external;
} fp_rps_async_correlation_id;

/* rocprofiler_correlation_id_t with `ancestor` (ROCm 7). */
typedef struct {
  uint64_t internal;
  fp_rps_user_data external;
  uint64_t ancestor;
} fp_rps_correlation_id;

/* rocprofiler_record_header_t: what the buffer callback gets an array of pointers to. */
typedef struct {
  union {
    struct {
      uint32_t category;
      uint32_t kind;
    } ck;
    uint64_t hash;
  } u;
  void* payload;
} fp_rps_record_header;

/* rocprofiler_kernel_dispatch_info_t: 128 bytes, frozen by the SDK's own static_assert. */
typedef struct {
  uint64_t size;
  fp_rps_agent_id agent_id;
  uint64_t queue_id;
  uint64_t kernel_id;
  uint64_t dispatch_id;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  fp_rps_dim3 workgroup_size;
  fp_rps_dim3 grid_size;
  uint8_t reserved_padding[56];
} fp_rps_kernel_dispatch_info;

/* rocprofiler_buffer_tracing_kernel_dispatch_record_t (ROCm 7 appends pipe_id; the mirror reads the prefix). */
typedef struct {
  uint64_t size;
  uint32_t kind;
  uint32_t operation;
  fp_rps_async_correlation_id correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  fp_rps_kernel_dispatch_info dispatch_info;
} fp_rps_kernel_dispatch_record;

/* rocprofiler_buffer_tracing_memory_copy_record_t (ROCm 7 appends dst_address, src_address). */
typedef struct {
  uint64_t size;
  uint32_t kind;
  uint32_t operation;
  fp_rps_async_correlation_id correlation_id;
  uint64_t thread_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  fp_rps_agent_id dst_agent_id;
  fp_rps_agent_id src_agent_id;
  uint64_t bytes;
} fp_rps_memory_copy_record;

/* rocprofiler_buffer_tracing_hip_api_record_t, ROCm 7 (correlation with ancestor): 64 bytes. */
typedef struct {
  uint64_t size;
  uint32_t kind;
  uint32_t operation;
  fp_rps_correlation_id correlation_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  uint64_t thread_id;
} fp_rps_hip_api_record;

/* The same before `ancestor` (SDK 0.5, ROCm 6.2-6.3): 56 bytes. */
typedef struct {
  uint64_t size;
  uint32_t kind;
  uint32_t operation;
  fp_rps_async_correlation_id correlation_id;
  uint64_t start_timestamp;
  uint64_t end_timestamp;
  uint64_t thread_id;
} fp_rps_hip_api_record_v0;

/* The agent's own record (FP_RPS_FLAGPROF_EXTERNAL_KIND): the torch id `external` that records of correlation
 * `internal` carried. Laid out like the SDK's records (size, kind, operation first) so one walk reads them all. */
typedef struct {
  uint64_t size;
  uint32_t kind;
  uint32_t operation; /* 0 */
  uint64_t internal;
  uint64_t external;
} fp_rps_external_record;

/* rocprofiler_callback_tracing_record_t, ROCm 7 and before `ancestor`. Passed by value: no size field. */
typedef struct {
  fp_rps_context_id context_id;
  uint64_t thread_id;
  fp_rps_correlation_id correlation_id;
  uint32_t kind;
  int32_t operation;
  uint32_t phase;
  void* payload;
} fp_rps_callback_record;

typedef struct {
  fp_rps_context_id context_id;
  uint64_t thread_id;
  fp_rps_async_correlation_id correlation_id;
  uint32_t kind;
  int32_t operation;
  uint32_t phase;
  void* payload;
} fp_rps_callback_record_v0;

/* rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t: the prefix the agent reads. */
typedef struct {
  uint64_t size;
  uint64_t kernel_id;
  uint64_t code_object_id;
  const char* kernel_name;
  uint64_t kernel_object;
} fp_rps_kernel_symbol_data;

/* rocprofiler_agent_v0_t: only its head (size, id, type); the SDK accepts any agent_size up to its own. */
typedef struct {
  uint64_t size;
  fp_rps_agent_id id;
  uint32_t type;
} fp_rps_agent_head;

/* rocprofiler_client_id_t and rocprofiler_tool_configure_result_t (registration.h). */
typedef struct {
  const char* name;
  uint32_t handle;
} fp_rps_client_id;

typedef void (*fp_rps_client_finalize)(fp_rps_client_id);
typedef int (*fp_rps_tool_initialize)(fp_rps_client_finalize finalize, void* tool_data);
typedef void (*fp_rps_tool_finalize)(void* tool_data);

typedef struct {
  size_t size;
  fp_rps_tool_initialize initialize;
  fp_rps_tool_finalize finalize;
  void* tool_data;
} fp_rps_tool_configure_result;

typedef fp_rps_tool_configure_result* (*fp_rps_configure_func)(uint32_t version, const char* runtime_version,
                                                               uint32_t priority, fp_rps_client_id* client_id);

/* rocprofiler_buffer_tracing_cb_t: the records of one buffer, and what was dropped since the last call. */
typedef void (*fp_rps_buffer_callback)(fp_rps_context_id context, fp_rps_buffer_id buffer,
                                       fp_rps_record_header** headers, size_t num_headers, void* data,
                                       uint64_t drop_count);

/* rocprofiler_callback_tracing_cb_t, declared with the larger (ROCm 7) record: with the older library the
 * last 8 bytes read are the caller's stack, never interpreted (see the binding). */
typedef void (*fp_rps_callback_tracing_callback)(fp_rps_callback_record record, fp_rps_user_data* user_data,
                                                 void* callback_data);

typedef int (*fp_rps_query_agents_callback)(uint32_t version, const void** agents, size_t num_agents,
                                            void* user_data);

#ifdef __cplusplus
#define FP_RPS_ASSERT(condition, what) static_assert(condition, what)
#else
#define FP_RPS_ASSERT(condition, what) _Static_assert(condition, what)
#endif

FP_RPS_ASSERT(sizeof(fp_rps_record_header) == 16 && offsetof(fp_rps_record_header, payload) == 8,
              "rocprofiler_record_header_t layout");
FP_RPS_ASSERT(sizeof(fp_rps_kernel_dispatch_info) == 128 && offsetof(fp_rps_kernel_dispatch_info, agent_id) == 8 &&
                  offsetof(fp_rps_kernel_dispatch_info, queue_id) == 16 &&
                  offsetof(fp_rps_kernel_dispatch_info, kernel_id) == 24 &&
                  offsetof(fp_rps_kernel_dispatch_info, workgroup_size) == 48 &&
                  offsetof(fp_rps_kernel_dispatch_info, grid_size) == 60,
              "rocprofiler_kernel_dispatch_info_t layout");
FP_RPS_ASSERT(sizeof(fp_rps_kernel_dispatch_record) == 184 && offsetof(fp_rps_kernel_dispatch_record, kind) == 8 &&
                  offsetof(fp_rps_kernel_dispatch_record, operation) == 12 &&
                  offsetof(fp_rps_kernel_dispatch_record, correlation_id) == 16 &&
                  offsetof(fp_rps_kernel_dispatch_record, thread_id) == 32 &&
                  offsetof(fp_rps_kernel_dispatch_record, start_timestamp) == 40 &&
                  offsetof(fp_rps_kernel_dispatch_record, end_timestamp) == 48 &&
                  offsetof(fp_rps_kernel_dispatch_record, dispatch_info) == 56,
              "rocprofiler_buffer_tracing_kernel_dispatch_record_t layout");
FP_RPS_ASSERT(sizeof(fp_rps_memory_copy_record) == 80 && offsetof(fp_rps_memory_copy_record, thread_id) == 32 &&
                  offsetof(fp_rps_memory_copy_record, start_timestamp) == 40 &&
                  offsetof(fp_rps_memory_copy_record, end_timestamp) == 48 &&
                  offsetof(fp_rps_memory_copy_record, dst_agent_id) == 56 &&
                  offsetof(fp_rps_memory_copy_record, src_agent_id) == 64 &&
                  offsetof(fp_rps_memory_copy_record, bytes) == 72,
              "rocprofiler_buffer_tracing_memory_copy_record_t layout");
FP_RPS_ASSERT(sizeof(fp_rps_hip_api_record) == 64 && offsetof(fp_rps_hip_api_record, start_timestamp) == 40 &&
                  offsetof(fp_rps_hip_api_record, end_timestamp) == 48 &&
                  offsetof(fp_rps_hip_api_record, thread_id) == 56,
              "rocprofiler_buffer_tracing_hip_api_record_t layout (ROCm 7)");
FP_RPS_ASSERT(sizeof(fp_rps_hip_api_record_v0) == 56 && offsetof(fp_rps_hip_api_record_v0, start_timestamp) == 32 &&
                  offsetof(fp_rps_hip_api_record_v0, end_timestamp) == 40 &&
                  offsetof(fp_rps_hip_api_record_v0, thread_id) == 48,
              "rocprofiler_buffer_tracing_hip_api_record_t layout (SDK 0.5)");
FP_RPS_ASSERT(sizeof(fp_rps_external_record) == 32 && offsetof(fp_rps_external_record, internal) == 16 &&
                  offsetof(fp_rps_external_record, external) == 24,
              "the agent's external-correlation record");
FP_RPS_ASSERT(sizeof(fp_rps_callback_record) == 64 && offsetof(fp_rps_callback_record, kind) == 40 &&
                  offsetof(fp_rps_callback_record, payload) == 56,
              "rocprofiler_callback_tracing_record_t layout (ROCm 7)");
FP_RPS_ASSERT(sizeof(fp_rps_callback_record_v0) == 56 && offsetof(fp_rps_callback_record_v0, kind) == 32 &&
                  offsetof(fp_rps_callback_record_v0, operation) == 36 &&
                  offsetof(fp_rps_callback_record_v0, phase) == 40 &&
                  offsetof(fp_rps_callback_record_v0, payload) == 48,
              "rocprofiler_callback_tracing_record_t layout (SDK 0.5)");
FP_RPS_ASSERT(offsetof(fp_rps_kernel_symbol_data, kernel_id) == 8 &&
                  offsetof(fp_rps_kernel_symbol_data, kernel_name) == 24,
              "kernel_symbol_register_data_t layout");
FP_RPS_ASSERT(sizeof(fp_rps_agent_head) == 24 && offsetof(fp_rps_agent_head, type) == 16, "rocprofiler_agent_v0_t head");
FP_RPS_ASSERT(sizeof(fp_rps_tool_configure_result) == 32 && offsetof(fp_rps_tool_configure_result, tool_data) == 24,
              "rocprofiler_tool_configure_result_t layout");

#endif
