/* A FAKE AMD rocprofiler-sdk (librocprofiler-sdk.so), for tests on machines without an AMD GPU.
 *
 * It exports the part of rocprofiler-sdk's tool API the capture agent uses, with the layouts of the agent's
 * mirror (native/vendors/rocprofiler/mirror.h, written from the public headers, which are not installed here),
 * plus control functions a test workload calls through ctypes to "launch" device work on the calling thread.
 * What it reproduces of the SDK:
 * - Registration: rocprofiler_force_configure calls the tool's configure and then its initialize at once (there is
 *   no HSA runtime here to wait for); contexts, buffers and services can only be created and configured inside
 *   that initialize (CONFIGURATION_LOCKED after, as in the SDK); a second force_configure is refused.
 * - Buffer tracing of KERNEL_DISPATCH, MEMORY_COPY and HIP_RUNTIME_API into a buffer of a context, recorded only
 *   while that context is started. A full buffer (past its watermark), or what is there at a flush, goes to the
 *   buffer callback as an array of record headers on the library's own worker thread (delivery.h), with the count
 *   of records dropped since the last delivery; rocprofiler_flush_buffer returns once it has been delivered.
 * - Code-object callback tracing: the first launch of a kernel name "loads its code object": a CODE_OBJECT_LOAD
 *   callback, then DEVICE_KERNEL_SYMBOL_REGISTER (phase LOAD) with its kernel id and name, before the dispatch;
 *   starting a context replays the symbols already loaded, as the SDK does. hipMemsetAsync is a blit kernel of the
 *   runtime's own code object (__amd_rocclr_fillBufferAligned): rocprofiler-sdk has no fill records.
 * - External correlation: the id pushed on a thread for a context lands in correlation_id.external of every record
 *   of that thread's calls while it is on top of the stack (no separate record), for that context's records.
 * - Clock: CLOCK_BOOTTIME, for records and rocprofiler_get_timestamp. HIP API names only through
 *   rocprofiler_query_buffer_tracing_kind_operation_name (the op numbers are the fake's own).
 * - Agents: one CPU and one GPU agent, whose handles are node id + a per-process offset, as the SDK's are.
 *
 * Knobs: FAKE_ROCPROFILER_DROP_EVERY=N drops every Nth device record (the callback's drop count);
 * FAKE_ROCPROFILER_FIRST_CORRELATION sets the first internal correlation id (past 2^32 - 1: the 64-bit path);
 * FAKE_ROCPROFILER_ABI=0 writes the SDK 0.5 layouts (56-byte HIP API records, 56-byte callback records, both
 * without `ancestor`) instead of ROCm 7's. It computes nothing on any device. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/rocprofiler/mirror.h"

#define FAKE_INCOMPATIBLE_ABI 17
#define MAX_CONTEXTS 8
#define MAX_BUFFERS 8
#define MAX_KERNELS 256
#define KIND_SLOTS 16
#define AGENT_OFFSET 4242 /* the SDK adds a random 255..65535 */
#define CPU_AGENT (0 + AGENT_OFFSET)
#define GPU_AGENT (1 + AGENT_OFFSET)
#define FILL_KERNEL "__amd_rocclr_fillBufferAligned"
#define UNREGISTERED_KERNEL 0xfffffu /* a kernel id no symbol callback announced */

/* HIP API ids the fake uses and their names (the SDK's rocprofiler_hip_runtime_api_id_t numbering is not
 * mirrored: the agent never relies on the numbers, only on the query function). */
enum {
  FAKE_HIP_LAUNCH_KERNEL = 160,
  FAKE_HIP_MEMCPY_ASYNC = 194,
  FAKE_HIP_MEMSET_ASYNC = 215,
  FAKE_HIP_STREAM_SYNCHRONIZE = 291,
  FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL = 113,
  FAKE_HIP_UNTABLED = 999,
};

static const char* hip_api_name(int32_t op) {
  switch (op) {
    case FAKE_HIP_LAUNCH_KERNEL: return "hipLaunchKernel";
    case FAKE_HIP_MEMCPY_ASYNC: return "hipMemcpyAsync";
    case FAKE_HIP_MEMSET_ASYNC: return "hipMemsetAsync";
    case FAKE_HIP_STREAM_SYNCHRONIZE: return "hipStreamSynchronize";
    case FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL: return "hipExtModuleLaunchKernel";
    default: return NULL;
  }
}

/* One delivery: the records with their headers inline, 8-byte aligned, and the drops since the last one. */
struct batch {
  uint64_t drops;
  size_t count;
  uint8_t data[];
};

struct buffer {
  int used;
  uint64_t context;
  size_t size, watermark;
  fp_rps_buffer_callback callback;
  void* callback_data;
  struct batch* batch; /* being filled; NULL when empty */
  size_t batch_used;
  uint64_t drops;
};

struct context {
  int used, active;
  uint64_t buffer_of_kind[KIND_SLOTS]; /* buffer id + 1 per buffer-tracing kind, 0 = not traced */
  fp_rps_callback_tracing_callback code_object_cb;
  void* code_object_arg;
};

struct kernel {
  uint64_t id;
  const char* name; /* owned (names.h) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER; /* held around code-object callbacks */
static struct context contexts[MAX_CONTEXTS];
static struct buffer buffers[MAX_BUFFERS];
static struct kernel kernels[MAX_KERNELS];
static int kernel_count;
static int configuring, configured, old_abi;
static uint64_t next_correlation = 1, drop_every, device_records;
static uint64_t queue_busy_until;

struct external {
  uint64_t context;
  uint64_t value;
};
static __thread struct external ext_stack[64];
static __thread int ext_depth;

static uint64_t boottime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t) {
  while (boottime_ns() < t) {
  }
}

static uint64_t this_thread(void) { return (uint64_t)syscall(SYS_gettid); }

/* ---- delivery ---- */

static void deliver(void* b, uint8_t* raw, size_t size, size_t used) {
  (void)size;
  struct buffer* buf = (struct buffer*)b;
  struct batch* batch = (struct batch*)raw;
  fp_rps_record_header** headers = batch->count ? malloc(batch->count * sizeof *headers) : NULL;
  size_t n = 0;
  for (size_t at = 0; headers && at < used && n < batch->count;) {
    fp_rps_record_header* h = (fp_rps_record_header*)(batch->data + at);
    uint64_t record_size;
    memcpy(&record_size, h + 1, 8);
    h->payload = h + 1;
    headers[n++] = h;
    at += sizeof *h + ((record_size + 7) & ~(uint64_t)7);
  }
  fp_rps_context_id ctx = {buf->context};
  fp_rps_buffer_id id = {(uint64_t)(buf - buffers)};
  buf->callback(ctx, id, headers, n, buf->callback_data, batch->drops);
  free(headers);
  free(batch);
}

static uint64_t complete_locked(struct buffer* buf) {
  struct batch* b = buf->batch;
  size_t used = buf->batch_used;
  if (!b && buf->drops) { /* drops still reach the tool, in an empty delivery */
    b = (struct batch*)calloc(1, sizeof *b);
    used = 0;
  }
  buf->batch = NULL;
  buf->batch_used = 0;
  if (b) {
    b->drops = buf->drops;
    buf->drops = 0;
  }
  return fake_delivery_complete(deliver, (void*)buf, (uint8_t*)b, buf->size, used);
}

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

/* Room for one record of `size` bytes in the buffer `kind` goes to for context `ctx`, zeroed, its header filled;
 * NULL when the context is not recording that kind. */
static void* reserve_locked(struct context* ctx, uint32_t kind, size_t size) {
  if (!ctx->active || kind >= KIND_SLOTS || !ctx->buffer_of_kind[kind]) return NULL;
  struct buffer* buf = &buffers[ctx->buffer_of_kind[kind] - 1];
  size_t need = sizeof(fp_rps_record_header) + ((size + 7) & ~(size_t)7);
  if (buf->batch && buf->batch_used + need > buf->watermark) complete_locked(buf);
  if (!buf->batch) {
    buf->batch = (struct batch*)malloc(sizeof(struct batch) + buf->size);
    if (!buf->batch) return NULL;
    buf->batch->count = 0;
    buf->batch_used = 0;
  }
  fp_rps_record_header* h = (fp_rps_record_header*)(buf->batch->data + buf->batch_used);
  memset(h, 0, need);
  h->u.ck.category = FP_RPS_BUFFER_CATEGORY_TRACING;
  h->u.ck.kind = kind;
  buf->batch_used += need;
  buf->batch->count++;
  uint64_t s = size;
  memcpy(h + 1, &s, 8);
  return h + 1;
}

/* Device records dropped by the knob are counted on every buffer that would have had them. */
static int dropped_locked(void) {
  device_records++;
  if (!drop_every || device_records % drop_every) return 0;
  for (int c = 0; c < MAX_CONTEXTS; ++c)
    for (int k = 0; k < KIND_SLOTS; ++k)
      if (contexts[c].active && contexts[c].buffer_of_kind[k] &&
          (k == FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH || k == FP_RPS_BUFFER_TRACING_MEMORY_COPY)) {
        buffers[contexts[c].buffer_of_kind[k] - 1].drops++;
        return 1;
      }
  return 1;
}

static uint64_t external_for(uint64_t context) {
  for (int i = ext_depth - 1; i >= 0; --i)
    if (ext_stack[i].context == context) return ext_stack[i].value;
  return 0;
}

static void api_record_locked(int32_t op, uint64_t start, uint64_t end, uint64_t correlation) {
  for (int c = 0; c < MAX_CONTEXTS; ++c) {
    struct context* ctx = &contexts[c];
    if (!ctx->used) continue;
    if (old_abi) {
      fp_rps_hip_api_record_v0* a =
          reserve_locked(ctx, FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API, sizeof(fp_rps_hip_api_record_v0));
      if (!a) continue;
      a->kind = FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API;
      a->operation = (uint32_t)op;
      a->correlation_id.internal = correlation;
      a->correlation_id.external.value = external_for((uint64_t)c);
      a->start_timestamp = start;
      a->end_timestamp = end;
      a->thread_id = this_thread();
    } else {
      fp_rps_hip_api_record* a = reserve_locked(ctx, FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API, sizeof(fp_rps_hip_api_record));
      if (!a) continue;
      a->kind = FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API;
      a->operation = (uint32_t)op;
      a->correlation_id.internal = correlation;
      a->correlation_id.external.value = external_for((uint64_t)c);
      a->correlation_id.ancestor = 0;
      a->start_timestamp = start;
      a->end_timestamp = end;
      a->thread_id = this_thread();
    }
  }
}

static uint64_t schedule_locked(uint64_t launched, uint64_t duration) {
  uint64_t start = launched + 2500;
  if (start < queue_busy_until) start = queue_busy_until + 300;
  queue_busy_until = start + duration;
  return start;
}

static void dispatch_record_locked(uint64_t kernel_id, uint64_t start, uint64_t duration, uint64_t correlation,
                                   const uint32_t grid[3], const uint32_t block[3]) {
  if (dropped_locked()) return;
  for (int c = 0; c < MAX_CONTEXTS; ++c) {
    struct context* ctx = &contexts[c];
    if (!ctx->used) continue;
    fp_rps_kernel_dispatch_record* k =
        reserve_locked(ctx, FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH, sizeof(fp_rps_kernel_dispatch_record));
    if (!k) continue;
    k->kind = FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH;
    k->operation = FP_RPS_KERNEL_DISPATCH_COMPLETE;
    k->correlation_id.internal = correlation;
    k->correlation_id.external.value = external_for((uint64_t)c);
    k->thread_id = this_thread();
    k->start_timestamp = start;
    k->end_timestamp = start + duration;
    k->dispatch_info.size = sizeof k->dispatch_info - sizeof k->dispatch_info.reserved_padding;
    k->dispatch_info.agent_id.handle = GPU_AGENT;
    k->dispatch_info.queue_id = 0x7f0000a000ull; /* an hsa_queue_t address, as the SDK reports */
    k->dispatch_info.kernel_id = kernel_id;
    k->dispatch_info.dispatch_id = correlation;
    k->dispatch_info.group_segment_size = 1024;
    k->dispatch_info.workgroup_size.x = block[0];
    k->dispatch_info.workgroup_size.y = block[1];
    k->dispatch_info.workgroup_size.z = block[2];
    k->dispatch_info.grid_size.x = grid[0];
    k->dispatch_info.grid_size.y = grid[1];
    k->dispatch_info.grid_size.z = grid[2];
  }
}

/* ---- code objects ---- */

typedef void (*callback_v0)(fp_rps_callback_record_v0, fp_rps_user_data*, void*);

/* One code-object callback, in the record layout of the ABI the fake plays. Called with kernel_lock only. */
static void code_object_callback(struct context* ctx, uint64_t handle, int32_t operation, void* payload) {
  fp_rps_user_data user = {0};
  if (old_abi) {
    fp_rps_callback_record_v0 r;
    memset(&r, 0, sizeof r);
    r.context_id.handle = handle;
    r.thread_id = this_thread();
    r.kind = FP_RPS_CALLBACK_TRACING_CODE_OBJECT;
    r.operation = operation;
    r.phase = FP_RPS_CALLBACK_PHASE_LOAD;
    r.payload = payload;
    ((callback_v0)(void*)ctx->code_object_cb)(r, &user, ctx->code_object_arg);
  } else {
    fp_rps_callback_record r;
    memset(&r, 0, sizeof r);
    r.context_id.handle = handle;
    r.thread_id = this_thread();
    r.correlation_id.ancestor = 10; /* never read as a kind */
    r.kind = FP_RPS_CALLBACK_TRACING_CODE_OBJECT;
    r.operation = operation;
    r.phase = FP_RPS_CALLBACK_PHASE_LOAD;
    r.payload = payload;
    ctx->code_object_cb(r, &user, ctx->code_object_arg);
  }
}

/* Announces one kernel symbol (its code object first) to a context. The contexts array is only written during
 * configuration, so it is read here without the main lock. */
static void announce(struct context* ctx, uint64_t handle, const struct kernel* k) {
  if (!ctx->used || !ctx->active || !ctx->code_object_cb) return;
  struct {
    uint64_t size, code_object_id;
  } code_object = {sizeof code_object, k->id};
  code_object_callback(ctx, handle, FP_RPS_CODE_OBJECT_LOAD, &code_object);
  fp_rps_kernel_symbol_data symbol = {sizeof symbol, k->id, k->id, k->name, 0x7f00001000ull + k->id};
  code_object_callback(ctx, handle, FP_RPS_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER, &symbol);
}

/* The kernel id of a name, loading its code object on first use. */
static uint64_t kernel_id_of(const char* name) {
  if (!name) return UNREGISTERED_KERNEL;
  pthread_mutex_lock(&kernel_lock);
  for (int i = 0; i < kernel_count; ++i)
    if (strcmp(kernels[i].name, name) == 0) {
      uint64_t id = kernels[i].id;
      pthread_mutex_unlock(&kernel_lock);
      return id;
    }
  uint64_t id = UNREGISTERED_KERNEL;
  if (kernel_count < MAX_KERNELS) {
    pthread_mutex_lock(&lock);
    const char* owned = own_name_locked(name);
    pthread_mutex_unlock(&lock);
    struct kernel* k = &kernels[kernel_count++];
    k->id = (uint64_t)kernel_count; /* 1, 2, ... as the SDK numbers them */
    k->name = owned;
    id = k->id;
    for (int c = 0; c < MAX_CONTEXTS; ++c) announce(&contexts[c], (uint64_t)c, k);
  }
  pthread_mutex_unlock(&kernel_lock);
  return id;
}

/* ---- control functions for test workloads (ctypes) ---- */

static void launch(const char* kernel, uint64_t duration_ns, int32_t op, const uint32_t grid[3], const uint32_t block[3]) {
  uint64_t kernel_id = kernel_id_of(kernel);
  uint64_t t0 = boottime_ns();
  spin_until(t0 + 1500);
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t start = schedule_locked(t0, duration_ns);
  api_record_locked(op, t0, boottime_ns(), correlation);
  dispatch_record_locked(kernel_id, start, duration_ns, correlation, grid, block);
  pthread_mutex_unlock(&lock);
}

/* A kernel launch with its grid (work-items, as HSA counts) and workgroup sizes. */
void fake_rocprofiler_launch_kernel_dims(const char* kernel, uint64_t duration_ns, int module, uint32_t gx,
                                         uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz) {
  const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  launch(kernel, duration_ns, module ? FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL : FAKE_HIP_LAUNCH_KERNEL, grid, block);
}

/* A kernel launch through hipLaunchKernel (module = 0) or hipExtModuleLaunchKernel (module != 0), as
 * fake_roctracer_launch_kernel; NULL: a kernel whose symbol was never announced. */
void fake_rocprofiler_launch_kernel(const char* kernel, uint64_t duration_ns, int module) {
  fake_rocprofiler_launch_kernel_dims(kernel, duration_ns, module, 65536, 1, 1, 256, 1, 1);
}

/* direction: 1 HtoD, 2 DtoH, 3 DtoD (as hipMemcpyKind numbers them). */
void fake_rocprofiler_memcpy(uint64_t bytes, int direction) {
  static const uint32_t operations[4] = {FP_RPS_MEMORY_COPY_NONE, FP_RPS_MEMORY_COPY_HOST_TO_DEVICE,
                                         FP_RPS_MEMORY_COPY_DEVICE_TO_HOST, FP_RPS_MEMORY_COPY_DEVICE_TO_DEVICE};
  uint32_t operation = operations[direction & 3];
  uint64_t t0 = boottime_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t duration = 1200 + bytes / 20;
  uint64_t start = schedule_locked(t0, duration);
  if (!dropped_locked())
    for (int c = 0; c < MAX_CONTEXTS; ++c) {
      struct context* ctx = &contexts[c];
      if (!ctx->used) continue;
      fp_rps_memory_copy_record* m = reserve_locked(ctx, FP_RPS_BUFFER_TRACING_MEMORY_COPY, sizeof *m);
      if (!m) continue;
      m->kind = FP_RPS_BUFFER_TRACING_MEMORY_COPY;
      m->operation = operation;
      m->correlation_id.internal = correlation;
      m->correlation_id.external.value = external_for((uint64_t)c);
      m->thread_id = this_thread();
      m->start_timestamp = start;
      m->end_timestamp = start + duration;
      m->src_agent_id.handle = operation == FP_RPS_MEMORY_COPY_HOST_TO_DEVICE ? CPU_AGENT : GPU_AGENT;
      m->dst_agent_id.handle = operation == FP_RPS_MEMORY_COPY_DEVICE_TO_HOST ? CPU_AGENT : GPU_AGENT;
      m->bytes = bytes;
    }
  uint64_t t1 = boottime_ns() + 1800;
  spin_until(t1);
  api_record_locked(FAKE_HIP_MEMCPY_ASYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* hipMemsetAsync: the runtime fills with a blit kernel of its own code object, reported as a kernel dispatch. */
void fake_rocprofiler_memset(uint64_t bytes) {
  const uint32_t grid[3] = {(uint32_t)((bytes + 3) / 4), 1, 1}, block[3] = {256, 1, 1};
  launch(FILL_KERNEL, 900 + bytes / 200, FAKE_HIP_MEMSET_ASYNC, grid, block);
}

/* hipStreamSynchronize: returns once the device timeline is idle. */
void fake_rocprofiler_synchronize(void) {
  uint64_t t0 = boottime_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t t1 = queue_busy_until > t0 ? queue_busy_until + 500 : t0 + 700;
  spin_until(t1);
  api_record_locked(FAKE_HIP_STREAM_SYNCHRONIZE, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* A HIP call whose operation the query function does not name (exercises the generic label). */
void fake_rocprofiler_untabled_call(void) {
  uint64_t t0 = boottime_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  spin_until(t0 + 900);
  api_record_locked(FAKE_HIP_UNTABLED, t0, t0 + 900, correlation);
  pthread_mutex_unlock(&lock);
}

/* ---- the rocprofiler-sdk tool API ---- */

int rocprofiler_get_version(uint32_t* major, uint32_t* minor, uint32_t* patch) {
  const char* abi = getenv("FAKE_ROCPROFILER_ABI");
  int v0 = abi && strcmp(abi, "0") == 0;
  if (major) *major = v0 ? 0 : 1;
  if (minor) *minor = v0 ? 5 : 0;
  if (patch) *patch = 0;
  return FP_RPS_STATUS_SUCCESS;
}

int rocprofiler_get_timestamp(uint64_t* ts) {
  if (!ts) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  *ts = boottime_ns();
  return FP_RPS_STATUS_SUCCESS;
}

int rocprofiler_get_thread_id(uint64_t* tid) {
  if (!tid) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  *tid = this_thread();
  return FP_RPS_STATUS_SUCCESS;
}

static void client_finalize(fp_rps_client_id client) { (void)client; }

int rocprofiler_force_configure(fp_rps_configure_func configure) {
  if (!configure) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  if (configured) {
    pthread_mutex_unlock(&lock);
    return FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED;
  }
  configured = configuring = 1;
  const char* drop = getenv("FAKE_ROCPROFILER_DROP_EVERY");
  const char* first = getenv("FAKE_ROCPROFILER_FIRST_CORRELATION");
  const char* abi = getenv("FAKE_ROCPROFILER_ABI");
  drop_every = drop ? strtoull(drop, NULL, 10) : 0;
  if (first) next_correlation = strtoull(first, NULL, 10);
  old_abi = abi && strcmp(abi, "0") == 0;
  pthread_mutex_unlock(&lock);
  fp_rps_client_id client = {NULL, 1};
  fp_rps_tool_configure_result* result = configure(old_abi ? 500 : 10000, old_abi ? "0.5.0" : "1.0.0", 0, &client);
  int status = FP_RPS_STATUS_SUCCESS;
  if (result && result->initialize && result->initialize(client_finalize, result->tool_data) != 0)
    status = FP_RPS_STATUS_ERROR;
  pthread_mutex_lock(&lock);
  configuring = 0;
  pthread_mutex_unlock(&lock);
  return status;
}

int rocprofiler_create_context(fp_rps_context_id* id) {
  if (!id) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  int status = FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (configuring) {
    status = FP_RPS_STATUS_ERROR;
    for (int c = 0; c < MAX_CONTEXTS; ++c)
      if (!contexts[c].used) {
        contexts[c].used = 1;
        id->handle = (uint64_t)c;
        status = FP_RPS_STATUS_SUCCESS;
        break;
      }
  }
  pthread_mutex_unlock(&lock);
  return status;
}

static struct context* context_at(fp_rps_context_id id) {
  return id.handle < MAX_CONTEXTS && contexts[id.handle].used ? &contexts[id.handle] : NULL;
}

int rocprofiler_create_buffer(fp_rps_context_id context, size_t size, size_t watermark, uint32_t policy,
                              fp_rps_buffer_callback callback, void* callback_data, fp_rps_buffer_id* id) {
  (void)policy; /* lossless or not, the fake never blocks: DROP_EVERY plays the drops */
  if (!callback || !id || size < 4096) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  int status = !configuring ? FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED
               : !context_at(context) ? FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND
                                      : FP_RPS_STATUS_ERROR;
  if (status == FP_RPS_STATUS_ERROR)
    for (int b = 0; b < MAX_BUFFERS; ++b)
      if (!buffers[b].used) {
        struct buffer* buf = &buffers[b];
        buf->used = 1;
        buf->context = context.handle;
        buf->size = size;
        buf->watermark = watermark && watermark <= size ? watermark : size;
        buf->callback = callback;
        buf->callback_data = callback_data;
        id->handle = (uint64_t)b;
        status = FP_RPS_STATUS_SUCCESS;
        break;
      }
  pthread_mutex_unlock(&lock);
  return status;
}

int rocprofiler_configure_buffer_tracing_service(fp_rps_context_id context, uint32_t kind, const int32_t* operations,
                                                 size_t operations_count, fp_rps_buffer_id buffer) {
  (void)operations;
  (void)operations_count; /* every operation */
  pthread_mutex_lock(&lock);
  struct context* ctx = context_at(context);
  int status = !configuring ? FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED
               : !ctx       ? FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND
               : buffer.handle >= MAX_BUFFERS || !buffers[buffer.handle].used ? FP_RPS_STATUS_ERROR_BUFFER_NOT_FOUND
               : (kind != FP_RPS_BUFFER_TRACING_KERNEL_DISPATCH && kind != FP_RPS_BUFFER_TRACING_MEMORY_COPY &&
                  kind != FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API)
                   ? FP_RPS_STATUS_ERROR_KIND_NOT_FOUND
                   : FP_RPS_STATUS_SUCCESS;
  if (status == FP_RPS_STATUS_SUCCESS) ctx->buffer_of_kind[kind] = buffer.handle + 1;
  pthread_mutex_unlock(&lock);
  return status;
}

int rocprofiler_configure_callback_tracing_service(fp_rps_context_id context, uint32_t kind,
                                                   const int32_t* operations, size_t operations_count,
                                                   fp_rps_callback_tracing_callback callback, void* callback_args) {
  (void)operations;
  (void)operations_count;
  pthread_mutex_lock(&lock);
  struct context* ctx = context_at(context);
  int status = !configuring ? FP_RPS_STATUS_ERROR_CONFIGURATION_LOCKED
               : !ctx       ? FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND
               : !callback  ? FP_RPS_STATUS_ERROR_INVALID_ARGUMENT
               : kind != FP_RPS_CALLBACK_TRACING_CODE_OBJECT ? FP_RPS_STATUS_ERROR_KIND_NOT_FOUND
                                                              : FP_RPS_STATUS_SUCCESS;
  if (status == FP_RPS_STATUS_SUCCESS) {
    ctx->code_object_cb = callback;
    ctx->code_object_arg = callback_args;
  }
  pthread_mutex_unlock(&lock);
  return status;
}

int rocprofiler_start_context(fp_rps_context_id context) {
  pthread_mutex_lock(&kernel_lock);
  pthread_mutex_lock(&lock);
  struct context* ctx = context_at(context);
  int was = ctx ? ctx->active : 0;
  if (ctx) ctx->active = 1;
  pthread_mutex_unlock(&lock);
  /* Code objects loaded before the context started are reported at its start. */
  if (ctx && !was)
    for (int i = 0; i < kernel_count; ++i) announce(ctx, context.handle, &kernels[i]);
  pthread_mutex_unlock(&kernel_lock);
  return ctx ? FP_RPS_STATUS_SUCCESS : FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND;
}

int rocprofiler_stop_context(fp_rps_context_id context) {
  pthread_mutex_lock(&lock);
  struct context* ctx = context_at(context);
  if (ctx) ctx->active = 0;
  pthread_mutex_unlock(&lock);
  return ctx ? FP_RPS_STATUS_SUCCESS : FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND;
}

int rocprofiler_flush_buffer(fp_rps_buffer_id buffer) {
  pthread_mutex_lock(&lock);
  if (buffer.handle >= MAX_BUFFERS || !buffers[buffer.handle].used) {
    pthread_mutex_unlock(&lock);
    return FP_RPS_STATUS_ERROR_BUFFER_NOT_FOUND;
  }
  uint64_t seq = complete_locked(&buffers[buffer.handle]);
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return FP_RPS_STATUS_SUCCESS;
}

/* Per thread, as the SDK keeps them; the fake only knows the calling thread's stack. */
int rocprofiler_push_external_correlation_id(fp_rps_context_id context, uint64_t tid, fp_rps_user_data value) {
  if (!context_at(context)) return FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (tid != this_thread()) return FP_RPS_STATUS_ERROR_THREAD_NOT_FOUND;
  if (ext_depth >= 64) return FP_RPS_STATUS_ERROR;
  ext_stack[ext_depth].context = context.handle;
  ext_stack[ext_depth].value = value.value;
  ext_depth++;
  return FP_RPS_STATUS_SUCCESS;
}

int rocprofiler_pop_external_correlation_id(fp_rps_context_id context, uint64_t tid, fp_rps_user_data* value) {
  if (!context_at(context)) return FP_RPS_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (tid != this_thread()) return FP_RPS_STATUS_ERROR_THREAD_NOT_FOUND;
  for (int i = ext_depth - 1; i >= 0; --i)
    if (ext_stack[i].context == context.handle) {
      if (value) value->value = ext_stack[i].value;
      memmove(&ext_stack[i], &ext_stack[i + 1], (size_t)(ext_depth - i - 1) * sizeof ext_stack[0]);
      ext_depth--;
      return FP_RPS_STATUS_SUCCESS;
    }
  return FP_RPS_STATUS_ERROR;
}

int rocprofiler_query_buffer_tracing_kind_operation_name(uint32_t kind, int32_t operation, const char** name,
                                                         uint64_t* length) {
  if (kind != FP_RPS_BUFFER_TRACING_HIP_RUNTIME_API) return FP_RPS_STATUS_ERROR_KIND_NOT_FOUND;
  const char* n = hip_api_name(operation);
  if (!n) return FP_RPS_STATUS_ERROR_OPERATION_NOT_FOUND;
  if (name) *name = n;
  if (length) *length = strlen(n);
  return FP_RPS_STATUS_SUCCESS;
}

int rocprofiler_query_available_agents(uint32_t version, fp_rps_query_agents_callback callback, size_t agent_size,
                                       void* user_data) {
  static const fp_rps_agent_head agents[2] = {{sizeof(fp_rps_agent_head), {CPU_AGENT}, 1},
                                              {sizeof(fp_rps_agent_head), {GPU_AGENT}, FP_RPS_AGENT_TYPE_GPU}};
  if (version != FP_RPS_AGENT_INFO_VERSION_0 || !callback) return FP_RPS_STATUS_ERROR_INVALID_ARGUMENT;
  if (agent_size > sizeof(fp_rps_agent_head)) return FAKE_INCOMPATIBLE_ABI; /* the SDK refuses a larger struct */
  const void* pointers[2] = {&agents[0], &agents[1]};
  return callback(version, pointers, 2, user_data);
}
