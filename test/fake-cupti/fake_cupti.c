/* A FAKE CUPTI-compatible activity library, for tests on machines without a GPU.
 *
 * It exports the part of CUPTI's activity API the capture agent uses, with the vendor's own record layouts
 * (the real cupti_activity.h when installed, else the agent's mirror), plus control functions a test workload
 * calls through ctypes to "launch" device work on the calling thread. Each launch writes what CUPTI would:
 * an EXTERNAL_CORRELATION record when an id was pushed, a RUNTIME record, and the device record sharing its
 * correlation id, with realistic timestamps on a per-stream device timeline. As CUPTI does, full buffers are
 * handed to the completed callback on the library's own worker thread, never on the thread that launched the
 * work, and cuptiActivityFlushAll hands over the partial buffer and returns once every buffer queued before it
 * has been delivered; FAKE_CUPTI_DROP_EVERY=N drops every Nth device record and reports it through
 * cuptiActivityGetNumDroppedRecords. It computes nothing on any device.
 *
 * FAKE_CUPTI_PPU=1 makes it write what PPU's CUPTI-compatible layer writes (seed 000): a driver record for every
 * runtime call (the driver call the runtime made, under its own correlation id, whether or not DRIVER activity was
 * enabled) and, with an id pushed, an external-correlation record for each of the two, so a buffer holds about
 * twice the records per launch CUPTI's would. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fake-vendor/delivery.h"

#if __has_include(<cupti_activity.h>) && !defined(FAKE_CUPTI_USE_MIRROR)
#include <cupti.h>
#define FAKE_REAL_HEADERS 1
typedef CUptiResult res_t;
typedef CUpti_ActivityKernel10 kernel_rec;
typedef CUpti_ActivityMemcpy6 memcpy_rec;
typedef CUpti_ActivityMemset4 memset_rec;
typedef CUpti_ActivityAPI api_rec;
typedef CUpti_ActivityExternalCorrelation ext_rec;
typedef CUpti_ActivityDevice5 device_rec;
#define API_VERSION CUPTI_API_VERSION
#define KIND_T CUpti_ActivityKind
#define EXTKIND_T CUpti_ExternalCorrelationKind
#define DOMAIN_T CUpti_CallbackDomain
#define THREADTYPE_T CUpti_ActivityThreadIdType
#define CTX_T CUcontext
#define RECORD_T CUpti_Activity
#define REQUEST_T CUpti_BuffersCallbackRequestFunc
#define COMPLETE_T CUpti_BuffersCallbackCompleteFunc
#define SET_KIND(r, k) ((r)->kind = (CUpti_ActivityKind)(k))
#else
#include "vendors/cupti/mirror.h"
typedef int res_t;
typedef fp_cupti_kernel10 kernel_rec;
typedef fp_cupti_memcpy6 memcpy_rec;
typedef fp_cupti_memset4 memset_rec;
typedef fp_cupti_api api_rec;
typedef fp_cupti_external_correlation ext_rec;
typedef fp_cupti_device5 device_rec;
#define API_VERSION 130001
#define KIND_T int
#define EXTKIND_T int
#define DOMAIN_T int
#define THREADTYPE_T int
#define CTX_T void*
#define RECORD_T void
typedef void (*REQUEST_T)(uint8_t**, size_t*, size_t*);
typedef void (*COMPLETE_T)(void*, uint32_t, uint8_t*, size_t, size_t);
#define CUPTIAPI
#define SET_KIND(r, k) ((r)->kind = (k))
#endif

#define FAKE_SUCCESS 0
#define FAKE_INVALID_PARAMETER 1
#define FAKE_MAX_LIMIT_REACHED 12
#define FAKE_QUEUE_EMPTY 27

enum { K_MEMCPY = 1, K_MEMSET = 2, K_KERNEL = 3, K_DRIVER = 4, K_RUNTIME = 5, K_DEVICE = 8, K_CONC = 10, K_EXT = 39, K_MAX = 64 };
enum { CBID_MEMCPY_ASYNC = 41, CBID_MEMSET_ASYNC = 51, CBID_SYNC = 165, CBID_LAUNCH = 211, CBID_GRAPH_LAUNCH = 311, CBID_UNTABLED = 100000 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static REQUEST_T request_cb;
static COMPLETE_T complete_cb;
static int enabled[K_MAX];
static int system_tids;
static uint32_t next_correlation = 1;
static uint64_t stream_busy_until;
static int device_announced;
static uint64_t drop_every, device_records, dropped;
static int ppu_mode;
static __thread uint64_t ext_stack[64];
static __thread int ext_depth;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t) {
  while (now_ns() < t) {
  }
}

/* Full buffers and flushes are delivered by test/fake-vendor/delivery.h, from a worker thread as CUPTI does. */
static void deliver(void* callback, uint8_t* b, size_t size, size_t used) {
  ((COMPLETE_T)callback)(NULL, 0, b, size, used);
}

/* Hands the current buffer to the delivery thread (called with the lock held); returns the sequence number a
 * flush waits for. */
static uint64_t complete_locked(void) { return fake_buffer_complete(deliver, (void*)complete_cb); }

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

/* Room for one record in the current buffer (asks the agent for one when needed). */
static void* reserve_locked(size_t size) {
  void* p = fake_buffer_reserve(size, (size + 7) & ~(size_t)7, request_cb, deliver, (void*)complete_cb, &dropped);
  return p;
}

static __thread uint32_t cached_tid;
static uint32_t cached_pid;

static uint32_t thread_id(void) {
  if (!system_tids) return (uint32_t)(uintptr_t)pthread_self();
  if (!cached_tid) cached_tid = (uint32_t)syscall(SYS_gettid);
  return cached_tid;
}

static void announce_device_locked(void) {
  if (device_announced || !enabled[K_DEVICE]) return;
  device_announced = 1;
  device_rec* d = (device_rec*)reserve_locked(sizeof *d);
  if (!d) return;
  /* An H100-like device: what occupancy estimates need. */
  SET_KIND(d, K_DEVICE);
  d->numThreadsPerWarp = 32;
  d->numMultiprocessors = 132;
  d->maxWarpsPerMultiprocessor = 64;
  d->maxBlocksPerMultiprocessor = 32;
  d->maxSharedMemoryPerMultiprocessor = 233472;
  d->maxRegistersPerMultiprocessor = 65536;
  d->maxRegistersPerBlock = 65536;
  d->maxSharedMemoryPerBlock = 49152;
  d->maxThreadsPerBlock = 1024;
  d->computeCapabilityMajor = 9;
  d->computeCapabilityMinor = 0;
  d->id = 0;
  d->name = "FAKE CUPTI device (no hardware)";
}

/* The driver calls PPU's layer reports under each runtime call (cuLaunchKernel = 307 under cudaLaunchKernel). */
enum { DRIVER_CBID_LAUNCH = 307, DRIVER_CBID_OTHER = 17 };

static void call_record_locked(int kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation);

static void api_record_locked(uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  if (!enabled[K_RUNTIME]) return;
  call_record_locked(K_RUNTIME, cbid, start, end, correlation);
  if (ppu_mode)
    call_record_locked(K_DRIVER, cbid == CBID_LAUNCH ? DRIVER_CBID_LAUNCH : DRIVER_CBID_OTHER, start + (end - start) / 4,
                       end - (end - start) / 4, next_correlation++);
}

static void call_record_locked(int kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  if (enabled[K_EXT] && ext_depth > 0) {
    ext_rec* e = (ext_rec*)reserve_locked(sizeof *e);
    if (e) {
      SET_KIND(e, K_EXT);
      e->externalKind = (EXTKIND_T)3; /* CUSTOM0 */
      e->externalId = ext_stack[ext_depth - 1];
      e->correlationId = correlation;
    }
  }
  api_rec* a = (api_rec*)reserve_locked(sizeof *a);
  if (!a) return;
  SET_KIND(a, kind);
  a->cbid = cbid;
  a->start = start;
  a->end = end;
  if (!cached_pid) cached_pid = (uint32_t)getpid();
  a->processId = cached_pid;
  a->threadId = thread_id();
  a->correlationId = correlation;
  a->returnValue = 0;
}

/* Device work starts a little after the launch, and after whatever the stream is still running. */
static uint64_t schedule_locked(uint64_t launched, uint64_t duration) {
  uint64_t start = launched + 2500;
  if (start < stream_busy_until) start = stream_busy_until + 300;
  stream_busy_until = start + duration;
  return start;
}

static int drop_this_locked(void) {
  device_records++;
  if (drop_every && device_records % drop_every == 0) {
    dropped++;
    return 1;
  }
  return 0;
}

/* ---- control functions for test workloads (ctypes) ---- */

void fake_cupti_launch_kernel(const char* mangled_name, int gx, int gy, int gz, int bx, int by, int bz,
                              int registers, int static_shared, int dynamic_shared, uint64_t duration_ns) {
  uint64_t t0 = now_ns();
  spin_until(t0 + 1500); /* a launch takes microseconds; recording adds to that, as CUPTI's does */
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  announce_device_locked();
  uint64_t start = schedule_locked(t0, duration_ns);
  if ((enabled[K_CONC] || enabled[K_KERNEL]) && !drop_this_locked()) {
    kernel_rec* k = (kernel_rec*)reserve_locked(sizeof *k);
    if (k) {
      SET_KIND(k, enabled[K_CONC] ? K_CONC : K_KERNEL);
      k->registersPerThread = (uint16_t)registers;
      k->start = start;
      k->end = start + duration_ns;
      k->completed = k->end;
      k->deviceId = 0;
      k->contextId = 1;
      k->streamId = 7;
      k->gridX = gx, k->gridY = gy, k->gridZ = gz;
      k->blockX = bx, k->blockY = by, k->blockZ = bz;
      k->staticSharedMemory = static_shared;
      k->dynamicSharedMemory = dynamic_shared;
      k->correlationId = correlation;
      k->name = mangled_name; /* the caller keeps the string alive, as CUDA keeps function names */
      k->queued = 0;
    }
  }
  api_record_locked(CBID_LAUNCH, t0, now_ns(), correlation);
  pthread_mutex_unlock(&lock);
}

/* A cudaGraphLaunch replaying `nodes` kernels of graph `graph_id` back to back: as CUPTI reports it, every
 * kernel carries the launch call's correlation id, the graph's id and its own node id. */
void fake_cupti_graph_launch(const char* mangled_name, uint32_t graph_id, int nodes, uint64_t duration_ns) {
  uint64_t t0 = now_ns();
  spin_until(t0 + 2500);
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  announce_device_locked();
  for (int n = 0; n < nodes; n++) {
    uint64_t start = schedule_locked(t0, duration_ns);
    if (!(enabled[K_CONC] || enabled[K_KERNEL]) || drop_this_locked()) continue;
    kernel_rec* k = (kernel_rec*)reserve_locked(sizeof *k);
    if (!k) continue;
    memset(k, 0, sizeof *k);
    SET_KIND(k, enabled[K_CONC] ? K_CONC : K_KERNEL);
    k->registersPerThread = 32;
    k->start = start;
    k->end = start + duration_ns;
    k->completed = k->end;
    k->contextId = 1;
    k->streamId = 7;
    k->gridX = 4, k->gridY = 1, k->gridZ = 1;
    k->blockX = 128, k->blockY = 1, k->blockZ = 1;
    k->correlationId = correlation;
    k->name = mangled_name;
    k->graphId = graph_id;
    k->graphNodeId = ((uint64_t)graph_id << 32) | (uint64_t)(n + 1);
  }
  api_record_locked(CBID_GRAPH_LAUNCH, t0, now_ns(), correlation);
  pthread_mutex_unlock(&lock);
}

/* copy_kind: 1 HtoD, 2 DtoH, 8 DtoD; src/dst memory kinds 1 pageable, 2 pinned, 3 device. */
void fake_cupti_memcpy(uint64_t bytes, int copy_kind, int src_kind, int dst_kind) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  announce_device_locked();
  uint64_t duration = 1200 + bytes / 20; /* ~20 GB/s */
  uint64_t start = schedule_locked(t0, duration);
  if (enabled[K_MEMCPY] && !drop_this_locked()) {
    memcpy_rec* m = (memcpy_rec*)reserve_locked(sizeof *m);
    if (m) {
      SET_KIND(m, K_MEMCPY);
      m->copyKind = (uint8_t)copy_kind;
      m->srcKind = (uint8_t)src_kind;
      m->dstKind = (uint8_t)dst_kind;
      m->bytes = bytes;
      m->start = start;
      m->end = start + duration;
      m->deviceId = 0;
      m->contextId = 1;
      m->streamId = 7;
      m->correlationId = correlation;
    }
  }
  /* A device-to-host copy is synchronous for pageable memory: the call returns after the copy. */
  uint64_t t1 = copy_kind == 2 ? stream_busy_until + 800 : now_ns() + 1800;
  spin_until(t1);
  api_record_locked(CBID_MEMCPY_ASYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

void fake_cupti_memset(uint64_t bytes, int value) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  announce_device_locked();
  uint64_t duration = 900 + bytes / 200;
  uint64_t start = schedule_locked(t0, duration);
  if (enabled[K_MEMSET] && !drop_this_locked()) {
    memset_rec* m = (memset_rec*)reserve_locked(sizeof *m);
    if (m) {
      SET_KIND(m, K_MEMSET);
      m->value = (uint32_t)value;
      m->bytes = bytes;
      m->start = start;
      m->end = start + duration;
      m->deviceId = 0;
      m->contextId = 1;
      m->streamId = 7;
      m->correlationId = correlation;
      m->memoryKind = 3; /* device */
    }
  }
  uint64_t t1 = now_ns() + 1500;
  spin_until(t1);
  api_record_locked(CBID_MEMSET_ASYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* cudaDeviceSynchronize: returns once the device timeline is idle. */
void fake_cupti_synchronize(void) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  uint64_t t1 = stream_busy_until > t0 ? stream_busy_until + 500 : t0 + 700;
  spin_until(t1);
  api_record_locked(CBID_SYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* A runtime call whose id no table names (exercises the generic label). */
void fake_cupti_untabled_call(void) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_record_locked(CBID_UNTABLED, t0, t0 + 900, correlation);
  spin_until(t0 + 900);
  pthread_mutex_unlock(&lock);
}

/* ---- the CUPTI activity API ---- */

res_t CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (!version) return (res_t)FAKE_INVALID_PARAMETER;
  *version = API_VERSION;
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (!timestamp) return (res_t)FAKE_INVALID_PARAMETER;
  *timestamp = now_ns();
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityRegisterCallbacks(REQUEST_T request, COMPLETE_T complete) {
  if (!request || !complete) return (res_t)FAKE_INVALID_PARAMETER;
  const char* every = getenv("FAKE_CUPTI_DROP_EVERY");
  drop_every = every ? strtoull(every, NULL, 10) : 0;
  const char* ppu = getenv("FAKE_CUPTI_PPU");
  ppu_mode = ppu && strcmp(ppu, "1") == 0;
  pthread_mutex_lock(&lock);
  request_cb = request;
  complete_cb = complete;
  pthread_mutex_unlock(&lock);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityEnable(KIND_T kind) {
  if ((int)kind <= 0 || (int)kind >= K_MAX) return (res_t)FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[(int)kind] = 1;
  pthread_mutex_unlock(&lock);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityDisable(KIND_T kind) {
  if ((int)kind <= 0 || (int)kind >= K_MAX) return (res_t)FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[(int)kind] = 0;
  pthread_mutex_unlock(&lock);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  pthread_mutex_lock(&lock);
  uint64_t seq = complete_locked();
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buf, size_t valid, RECORD_T** record) {
  if (!buf || !record) return (res_t)FAKE_INVALID_PARAMETER;
  static const size_t sizes[K_MAX] = {[K_MEMCPY] = sizeof(memcpy_rec), [K_MEMSET] = sizeof(memset_rec),
                                      [K_KERNEL] = sizeof(kernel_rec),  [K_CONC] = sizeof(kernel_rec),
                                      [K_RUNTIME] = sizeof(api_rec),    [K_DRIVER] = sizeof(api_rec),
                                      [K_EXT] = sizeof(ext_rec),        [K_DEVICE] = sizeof(device_rec)};
  size_t offset = 0;
  if (*record) {
    uint8_t* prev = (uint8_t*)*record;
    uint32_t kind;
    memcpy(&kind, prev, 4);
    size_t size = kind < K_MAX ? sizes[kind] : 0;
    if (!size) return (res_t)FAKE_INVALID_PARAMETER;
    offset = (size_t)(prev - buf) + ((size + 7) & ~(size_t)7);
  }
  if (offset + 8 > valid) return (res_t)FAKE_MAX_LIMIT_REACHED;
  *record = (RECORD_T*)(buf + offset);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityGetNumDroppedRecords(CTX_T context, uint32_t stream, size_t* count) {
  (void)context;
  (void)stream;
  if (!count) return (res_t)FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  *count = (size_t)dropped;
  dropped = 0;
  pthread_mutex_unlock(&lock);
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityPushExternalCorrelationId(EXTKIND_T kind, uint64_t id) {
  (void)kind;
  if (ext_depth >= 64) return (res_t)FAKE_INVALID_PARAMETER;
  ext_stack[ext_depth++] = id;
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiActivityPopExternalCorrelationId(EXTKIND_T kind, uint64_t* last) {
  (void)kind;
  if (ext_depth == 0) return (res_t)FAKE_QUEUE_EMPTY;
  uint64_t id = ext_stack[--ext_depth];
  if (last) *last = id;
  return (res_t)FAKE_SUCCESS;
}

res_t CUPTIAPI cuptiGetCallbackName(DOMAIN_T domain, uint32_t cbid, const char** name) {
  if (!name) return (res_t)FAKE_INVALID_PARAMETER;
  if ((int)domain == 2) {
    switch (cbid) {
      case CBID_LAUNCH: *name = "cudaLaunchKernel_v7000"; return (res_t)FAKE_SUCCESS;
      case CBID_MEMCPY_ASYNC: *name = "cudaMemcpyAsync_v3020"; return (res_t)FAKE_SUCCESS;
      case CBID_MEMSET_ASYNC: *name = "cudaMemsetAsync_v3020"; return (res_t)FAKE_SUCCESS;
      case CBID_SYNC: *name = "cudaDeviceSynchronize_v3020"; return (res_t)FAKE_SUCCESS;
      case CBID_GRAPH_LAUNCH: *name = "cudaGraphLaunch_v10000"; return (res_t)FAKE_SUCCESS;
      default: break;
    }
  }
  return (res_t)FAKE_INVALID_PARAMETER;
}

res_t CUPTIAPI cuptiSetThreadIdType(THREADTYPE_T type) {
  system_tids = (int)type == 1;
  return (res_t)FAKE_SUCCESS;
}
