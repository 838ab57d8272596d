/* A FAKE AMD ROCtracer activity library, for tests on machines without an AMD GPU or Hygon DCU.
 *
 * It exports the part of ROCtracer's activity API the capture agent uses, with the record layout of the agent's
 * mirror (written from the public ext/prof_protocol.h, which is not installed here), plus control functions a
 * test workload calls through ctypes to "launch" device work on the calling thread. Each launch writes what
 * ROCtracer would: an EXT_API record per pushed external id, a HIP_API record carrying the HIP API id (named only
 * by roctracer_op_string), and the HIP_OPS record sharing its 64-bit correlation id, with timestamps on a
 * per-queue device timeline in the HSA system clock (CLOCK_MONOTONIC here: not realtime, so the agent's
 * calibration pairs are needed to place anything). The pool owns its buffers: a full one, or the partial one at a
 * flush, is handed to the pool callback as a [begin, end) range on the library's own worker thread, and freed
 * after the callback returns; roctracer_flush_activity_expl returns once every buffer queued before it has been
 * delivered.
 *
 * Every call also goes to the HIP API callback (roctracer_enable_domain_callback) on the calling thread, at enter
 * and at exit, with a hip_api_data_t laid out as hip_prof_str.h's (the mirror's fp_roc_hip_api_data): the launch
 * calls carry their grid and block in their own argument struct (hipLaunchKernel's dim3s, hipModuleLaunchKernel's
 * gridDimX.., hipExtModuleLaunchKernel's global work size in work-items), the others no arguments.
 *
 * roctracer_op_string answers at any time, as ROCtracer's does (the agent is what defers it past the final flush).
 * FAKE_ROCTRACER_FIRST_CORRELATION sets the first correlation id (ids above 2^32 - 1 exercise the 64-bit path);
 * FAKE_ROCTRACER_NO_CALLBACKS makes roctracer_enable_domain_callback fail, as a build without HIP API callbacks.
 * It computes nothing on any device. */
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

#include "vendors/roctracer/mirror.h"

#define FAKE_ROC_ERROR 1
#define FAKE_ROC_BAD_DOMAIN 4
#define FAKE_ROC_BAD_PARAMETER 5
#define DOMAINS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fp_roc_buffer_callback pool_cb;
static void* pool_arg;
static int pool_open;
static size_t pool_buffer_size;
static int enabled[DOMAINS];
static uint8_t* buffer;
static size_t buffer_used;
static uint64_t next_correlation = 1;
static uint64_t queue_busy_until;
static __thread uint64_t ext_stack[64];
static __thread int ext_depth;
static fp_roc_api_callback api_cb;
static void* api_cb_arg;
/* The dims of the next launches (fake_roctracer_set_launch_dims). */
static uint32_t launch_grid[3] = {1, 1, 1}, launch_block[3] = {256, 1, 1}, launch_shared;

/* HIP API ids the fake uses and their names: far past any release's hip_prof_str.h table (a few hundred ids), so
 * an agent that relied on the numbers instead of roctracer_op_string would find nothing. */
enum {
  FAKE_HIP_LAUNCH_KERNEL = 3907,
  FAKE_HIP_MEMCPY_ASYNC = 3881,
  FAKE_HIP_MEMSET_ASYNC = 3860,
  FAKE_HIP_STREAM_SYNCHRONIZE = 3876,
  FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL = 3930,
  FAKE_HIP_MODULE_LAUNCH_KERNEL = 3899,
};

static const char* hip_api_name(uint32_t op) {
  switch (op) {
    case FAKE_HIP_LAUNCH_KERNEL: return "hipLaunchKernel";
    case FAKE_HIP_MODULE_LAUNCH_KERNEL: return "hipModuleLaunchKernel";
    case FAKE_HIP_MEMCPY_ASYNC: return "hipMemcpyAsync";
    case FAKE_HIP_MEMSET_ASYNC: return "hipMemsetAsync";
    case FAKE_HIP_STREAM_SYNCHRONIZE: return "hipStreamSynchronize";
    case FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL: return "hipExtModuleLaunchKernel";
    default: return NULL;
  }
}

static uint64_t hsa_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t) {
  while (hsa_ns() < t) {
  }
}

/* The pool's buffers go to the pool callback from a worker thread (test/fake-vendor/delivery.h), then are freed:
 * the consumer only reads them. */
static void deliver(void* callback, uint8_t* b, size_t size, size_t used) {
  (void)size;
  ((fp_roc_buffer_callback)callback)((const char*)b, (const char*)b + used, pool_arg);
  free(b);
}

static uint64_t complete_locked(void) {
  uint8_t* b = buffer;
  size_t used = buffer_used;
  buffer = NULL;
  buffer_used = 0;
  if (b && !used) {
    free(b);
    b = NULL;
  }
  return fake_delivery_complete(deliver, (void*)pool_cb, b, pool_buffer_size, used);
}

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

static fp_roc_record* reserve_locked(uint32_t domain, uint32_t op, uint32_t kind) {
  if (!pool_open || !enabled[domain]) return NULL;
  if (buffer && buffer_used + sizeof(fp_roc_record) > pool_buffer_size) complete_locked();
  if (!buffer) {
    buffer = (uint8_t*)malloc(pool_buffer_size);
    if (!buffer) return NULL;
    buffer_used = 0;
  }
  fp_roc_record* r = (fp_roc_record*)(buffer + buffer_used);
  memset(r, 0, sizeof *r);
  r->domain = domain;
  r->op = op;
  r->kind = kind;
  buffer_used += sizeof *r;
  return r;
}

static __thread uint32_t cached_tid;
static uint32_t cached_pid;

static void api_record_locked(uint32_t op, uint64_t start, uint64_t end, uint64_t correlation) {
  if (ext_depth > 0) {
    fp_roc_record* e = reserve_locked(FP_ROC_DOMAIN_EXT_API, FP_ROC_EXT_OP_EXTERN_ID, 0);
    if (e) {
      e->correlation_id = correlation;
      e->u.external_id = ext_stack[ext_depth - 1];
    }
  }
  fp_roc_record* a = reserve_locked(FP_ROC_DOMAIN_HIP_API, op, 0);
  if (!a) return;
  a->correlation_id = correlation;
  a->begin_ns = start;
  a->end_ns = end;
  if (!cached_pid) cached_pid = (uint32_t)getpid();
  if (!cached_tid) cached_tid = (uint32_t)syscall(SYS_gettid);
  a->u.api.process_id = cached_pid;
  a->u.api.thread_id = cached_tid;
}

static uint64_t schedule_locked(uint64_t launched, uint64_t duration) {
  uint64_t start = launched + 2500;
  if (start < queue_busy_until) start = queue_busy_until + 300;
  queue_busy_until = start + duration;
  return start;
}

static fp_roc_record* device_record_locked(uint32_t op, uint32_t kind, uint64_t start, uint64_t duration,
                                           uint64_t correlation) {
  fp_roc_record* r = reserve_locked(FP_ROC_DOMAIN_HIP_OPS, op, kind);
  if (!r) return NULL;
  r->correlation_id = correlation;
  r->begin_ns = start;
  r->end_ns = start + duration;
  r->u.dev.device_id = 0;
  r->u.dev.queue_id = 0;
  return r;
}

/* A call's correlation id, and its HIP API callback at enter (outside the lock, as ROCtracer calls it on the
 * launching thread before the call runs). */
static uint64_t api_enter(uint32_t op, fp_roc_hip_api_data* data) {
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  fp_roc_api_callback cb = api_cb;
  void* arg = api_cb_arg;
  pthread_mutex_unlock(&lock);
  data->correlation_id = correlation;
  data->phase = FP_ROC_API_PHASE_ENTER;
  if (cb) cb(FP_ROC_DOMAIN_HIP_API, op, data, arg);
  return correlation;
}

static void api_exit(uint32_t op, fp_roc_hip_api_data* data) {
  pthread_mutex_lock(&lock);
  fp_roc_api_callback cb = api_cb;
  void* arg = api_cb_arg;
  pthread_mutex_unlock(&lock);
  data->phase = FP_ROC_API_PHASE_EXIT;
  if (cb) cb(FP_ROC_DOMAIN_HIP_API, op, data, arg);
}

/* ---- control functions for test workloads (ctypes) ---- */

/* The grid (in blocks), block and dynamic shared memory of the launches that follow (until set again). */
void fake_roctracer_set_launch_dims(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz,
                                    uint32_t shared) {
  pthread_mutex_lock(&lock);
  launch_grid[0] = gx, launch_grid[1] = gy, launch_grid[2] = gz;
  launch_block[0] = bx, launch_block[1] = by, launch_block[2] = bz;
  launch_shared = shared;
  pthread_mutex_unlock(&lock);
}

/* A kernel launch through hipLaunchKernel (module = 0), hipExtModuleLaunchKernel (module = 1) or
 * hipModuleLaunchKernel (module = 2), each with its own argument layout. */
void fake_roctracer_launch_kernel(const char* kernel, uint64_t duration_ns, int module) {
  uint64_t t0 = hsa_ns();
  fp_roc_hip_api_data data;
  memset(&data, 0, sizeof data);
  uint32_t op = module == 2 ? FAKE_HIP_MODULE_LAUNCH_KERNEL
                : module  ? FAKE_HIP_EXT_MODULE_LAUNCH_KERNEL
                          : FAKE_HIP_LAUNCH_KERNEL;
  pthread_mutex_lock(&lock);
  uint32_t g[3] = {launch_grid[0], launch_grid[1], launch_grid[2]};
  uint32_t b[3] = {launch_block[0], launch_block[1], launch_block[2]};
  uint32_t shared = launch_shared;
  pthread_mutex_unlock(&lock);
  if (op == FAKE_HIP_LAUNCH_KERNEL) {
    data.args.hipLaunchKernel.function_address = kernel;
    data.args.hipLaunchKernel.numBlocks = (fp_roc_dim3){g[0], g[1], g[2]};
    data.args.hipLaunchKernel.dimBlocks = (fp_roc_dim3){b[0], b[1], b[2]};
    data.args.hipLaunchKernel.sharedMemBytes = shared;
  } else if (op == FAKE_HIP_MODULE_LAUNCH_KERNEL) {
    data.args.hipModuleLaunchKernel.gridDimX = g[0];
    data.args.hipModuleLaunchKernel.gridDimY = g[1];
    data.args.hipModuleLaunchKernel.gridDimZ = g[2];
    data.args.hipModuleLaunchKernel.blockDimX = b[0];
    data.args.hipModuleLaunchKernel.blockDimY = b[1];
    data.args.hipModuleLaunchKernel.blockDimZ = b[2];
    data.args.hipModuleLaunchKernel.sharedMemBytes = shared;
  } else {
    /* HSA's work sizes: the global one counts work-items. */
    data.args.hipExtModuleLaunchKernel.globalWorkSizeX = g[0] * b[0];
    data.args.hipExtModuleLaunchKernel.globalWorkSizeY = g[1] * b[1];
    data.args.hipExtModuleLaunchKernel.globalWorkSizeZ = g[2] * b[2];
    data.args.hipExtModuleLaunchKernel.localWorkSizeX = b[0];
    data.args.hipExtModuleLaunchKernel.localWorkSizeY = b[1];
    data.args.hipExtModuleLaunchKernel.localWorkSizeZ = b[2];
    data.args.hipExtModuleLaunchKernel.sharedMemBytes = shared;
  }
  uint64_t correlation = api_enter(op, &data);
  spin_until(t0 + 1500);
  pthread_mutex_lock(&lock);
  uint64_t start = schedule_locked(t0, duration_ns);
  fp_roc_record* k = device_record_locked(FP_ROC_HIP_OP_DISPATCH, FP_ROC_KIND_KERNEL, start, duration_ns, correlation);
  if (k) k->v.kernel_name = own_name_locked(kernel);
  api_record_locked(op, t0, hsa_ns(), correlation);
  pthread_mutex_unlock(&lock);
  api_exit(op, &data);
}

/* direction: 1 HtoD, 2 DtoH, 3 DtoD (as hipMemcpyKind numbers them). */
void fake_roctracer_memcpy(uint64_t bytes, int direction) {
  static const uint32_t kinds[4] = {0, FP_ROC_KIND_HTOD, FP_ROC_KIND_DTOH, FP_ROC_KIND_DTOD};
  uint64_t t0 = hsa_ns();
  fp_roc_hip_api_data data;
  memset(&data, 0, sizeof data);
  uint64_t correlation = api_enter(FAKE_HIP_MEMCPY_ASYNC, &data);
  pthread_mutex_lock(&lock);
  uint64_t duration = 1200 + bytes / 20;
  uint64_t start = schedule_locked(t0, duration);
  fp_roc_record* m = device_record_locked(FP_ROC_HIP_OP_COPY, kinds[direction & 3], start, duration, correlation);
  if (m) m->v.bytes = bytes;
  uint64_t t1 = hsa_ns() + 1800;
  spin_until(t1);
  api_record_locked(FAKE_HIP_MEMCPY_ASYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
  api_exit(FAKE_HIP_MEMCPY_ASYNC, &data);
}

/* hipMemsetAsync: a buffer fill, which ROCtracer reports as a HIP_OPS copy whose kind is a fill. */
void fake_roctracer_memset(uint64_t bytes) {
  uint64_t t0 = hsa_ns();
  fp_roc_hip_api_data data;
  memset(&data, 0, sizeof data);
  uint64_t correlation = api_enter(FAKE_HIP_MEMSET_ASYNC, &data);
  pthread_mutex_lock(&lock);
  uint64_t duration = 900 + bytes / 200;
  uint64_t start = schedule_locked(t0, duration);
  fp_roc_record* m = device_record_locked(FP_ROC_HIP_OP_COPY, FP_ROC_KIND_FILL, start, duration, correlation);
  if (m) m->v.bytes = bytes;
  uint64_t t1 = hsa_ns() + 1500;
  spin_until(t1);
  api_record_locked(FAKE_HIP_MEMSET_ASYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
  api_exit(FAKE_HIP_MEMSET_ASYNC, &data);
}

/* hipStreamSynchronize: returns once the device timeline is idle. */
void fake_roctracer_synchronize(void) {
  uint64_t t0 = hsa_ns();
  fp_roc_hip_api_data data;
  memset(&data, 0, sizeof data);
  uint64_t correlation = api_enter(FAKE_HIP_STREAM_SYNCHRONIZE, &data);
  pthread_mutex_lock(&lock);
  uint64_t t1 = queue_busy_until > t0 ? queue_busy_until + 500 : t0 + 700;
  spin_until(t1);
  api_record_locked(FAKE_HIP_STREAM_SYNCHRONIZE, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
  api_exit(FAKE_HIP_STREAM_SYNCHRONIZE, &data);
}

/* ---- the ROCtracer activity API ---- */

uint32_t roctracer_version_major(void) { return 4; }
uint32_t roctracer_version_minor(void) { return 1; }

int roctracer_get_timestamp(uint64_t* timestamp) {
  if (!timestamp) return FAKE_ROC_BAD_PARAMETER;
  *timestamp = hsa_ns();
  return FP_ROC_SUCCESS;
}

const char* roctracer_op_string(uint32_t domain, uint32_t op, uint32_t kind) {
  (void)kind;
  return domain == FP_ROC_DOMAIN_HIP_API ? hip_api_name(op) : NULL;
}

/* One pool, returned through `pool` (the default pool when `pool` is NULL, as ROCtracer's). */
int roctracer_open_pool_expl(const fp_roc_properties* properties, void** pool) {
  if (!properties || !properties->buffer_callback_fun || properties->buffer_size < sizeof(fp_roc_record))
    return FAKE_ROC_BAD_PARAMETER;
  const char* first = getenv("FAKE_ROCTRACER_FIRST_CORRELATION");
  pthread_mutex_lock(&lock);
  if (pool_open) {
    pthread_mutex_unlock(&lock);
    return FAKE_ROC_ERROR;
  }
  if (first) next_correlation = strtoull(first, NULL, 10);
  pool_cb = properties->buffer_callback_fun;
  pool_arg = properties->buffer_callback_arg;
  pool_buffer_size = properties->buffer_size - properties->buffer_size % sizeof(fp_roc_record);
  pool_open = 1;
  pthread_mutex_unlock(&lock);
  if (pool) *pool = (void*)&pool_open;
  return FP_ROC_SUCCESS;
}

int roctracer_enable_domain_activity_expl(uint32_t domain, void* pool) {
  (void)pool;
  if (domain >= DOMAINS) return FAKE_ROC_BAD_DOMAIN;
  pthread_mutex_lock(&lock);
  int ok = pool_open;
  if (ok) enabled[domain] = 1;
  pthread_mutex_unlock(&lock);
  return ok ? FP_ROC_SUCCESS : FAKE_ROC_ERROR;
}

int roctracer_disable_domain_activity(uint32_t domain) {
  if (domain >= DOMAINS) return FAKE_ROC_BAD_DOMAIN;
  pthread_mutex_lock(&lock);
  enabled[domain] = 0;
  pthread_mutex_unlock(&lock);
  return FP_ROC_SUCCESS;
}

/* The HIP API domain's callback (the only callback domain the fake has). */
int roctracer_enable_domain_callback(uint32_t domain, fp_roc_api_callback callback, void* arg) {
  if (domain != FP_ROC_DOMAIN_HIP_API) return FAKE_ROC_BAD_DOMAIN;
  if (!callback) return FAKE_ROC_BAD_PARAMETER;
  if (getenv("FAKE_ROCTRACER_NO_CALLBACKS")) return FAKE_ROC_ERROR;
  pthread_mutex_lock(&lock);
  api_cb = callback;
  api_cb_arg = arg;
  pthread_mutex_unlock(&lock);
  return FP_ROC_SUCCESS;
}

int roctracer_disable_domain_callback(uint32_t domain) {
  if (domain != FP_ROC_DOMAIN_HIP_API) return FAKE_ROC_BAD_DOMAIN;
  pthread_mutex_lock(&lock);
  api_cb = NULL;
  api_cb_arg = NULL;
  pthread_mutex_unlock(&lock);
  return FP_ROC_SUCCESS;
}

int roctracer_flush_activity_expl(void* pool) {
  (void)pool;
  pthread_mutex_lock(&lock);
  uint64_t seq = complete_locked();
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return FP_ROC_SUCCESS;
}

int roctracer_next_record(const fp_roc_record* record, const fp_roc_record** next) {
  if (!record || !next) return FAKE_ROC_BAD_PARAMETER;
  *next = record + 1;
  return FP_ROC_SUCCESS;
}

int roctracer_activity_push_external_correlation_id(uint64_t id) {
  if (ext_depth >= 64) return FAKE_ROC_BAD_PARAMETER;
  ext_stack[ext_depth++] = id;
  return FP_ROC_SUCCESS;
}

int roctracer_activity_pop_external_correlation_id(uint64_t* last) {
  if (ext_depth == 0) return FAKE_ROC_ERROR;
  uint64_t id = ext_stack[--ext_depth];
  if (last) *last = id;
  return FP_ROC_SUCCESS;
}
