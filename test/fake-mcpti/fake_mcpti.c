/* A FAKE MetaX MCPTI activity library (MACA), for tests on machines without a MetaX GPU.
 *
 * MCPTI is the CUPTI C ABI with `mcpti` in place of `cupti` in every function name: mcptiGetVersion (18, as MACA
 * 3.5.3 reports), mcptiGetTimestamp (CLOCK_REALTIME ns here), mcptiActivityRegisterCallbacks, Enable/Disable,
 * FlushAll, GetNextRecord, GetNumDroppedRecords, Push/PopExternalCorrelationId, and
 * mcptiActivityGetApiName(kind, cbid, &name) (kind 5 RUNTIME, 4 DRIVER) as the one way to name a call. There is
 * no cuptiGetCallbackName and no cuptiSetThreadIdType: the thread id in API records is the system tid. Records
 * have CUPTI's kinds and layouts at the versions MACA ships (the mirror's fp_mcpti_* types: Kernel 200 B,
 * Memcpy 88, Memset 88, API 40, ExternalCorrelation 24), and MCPTI writes no DEVICE records. Callback ids are
 * MetaX's own namespace (mcLaunchKernel = 17, mcMemcpyAsync = 9, mcMemsetAsync = 12, mcDeviceSynchronize = 4),
 * which CUDA's cbid table names otherwise (17 is cudaGetDevice there): only GetApiName gives the right name.
 *
 * As the other fakes, it exports control functions a test workload calls through ctypes to "launch" device work
 * on the calling thread; each launch writes an EXTERNAL_CORRELATION record when an id was pushed, a RUNTIME record
 * and the device record sharing its correlation id, on a per-stream device timeline. Full buffers are handed to the
 * completed callback on the library's own worker thread (test/fake-vendor/delivery.h); mcptiActivityFlushAll
 * returns once every buffer queued before it has been delivered.
 *
 * MCPTI's quirks are reproduced on purpose, so the agent is tested against them:
 * - mcptiActivityGetApiName called while a buffer-completed callback runs deadlocks on real MCPTI: here it prints
 *   one line to stderr and aborts.
 * - The stale iterator (MACA 3.8.0): after mcptiActivityGetNextRecord returned an EXTERNAL_CORRELATION record, the
 *   next call returns that same pointer once more, then goes on. A consumer that trusts it counts the record twice.
 * - FAKE_MCPTI_NO_TIMING_EVERY=N writes every Nth device record with start = end = 0 (timing unavailable).
 * FAKE_MCPTI_DROP_EVERY=N drops every Nth device record and reports it through mcptiActivityGetNumDroppedRecords.
 * It computes nothing on any device. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/mcpti/mirror.h"

typedef void (*request_fn)(uint8_t**, size_t*, size_t*);
typedef void (*complete_fn)(void*, uint32_t, uint8_t*, size_t, size_t);

#define FAKE_SUCCESS 0
#define FAKE_INVALID_PARAMETER 1
#define FAKE_MAX_LIMIT_REACHED 12
#define FAKE_QUEUE_EMPTY 27
#define K_MAX 64

/* MetaX's runtime and driver callback ids. 211 is cudaLaunchKernel in CUDA's table and nothing MCPTI names. */
enum { CBID_SYNC = 4, CBID_MEMCPY_ASYNC = 9, CBID_MEMSET_ASYNC = 12, CBID_LAUNCH = 17, CBID_UNNAMED = 211 };
enum { DRIVER_CBID_CTX_SYNC = 3 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static request_fn request_cb;
static complete_fn complete_cb;
static int enabled[K_MAX];
static uint8_t* buffer;
static size_t buffer_size, buffer_used;
static uint32_t next_correlation = 1;
static uint64_t stream_busy_until;
static uint64_t drop_every, no_timing_every, device_records, dropped;
static __thread uint64_t ext_stack[64];
static __thread int ext_depth;
/* Set on the thread running a buffer-completed callback, while it runs. */
static __thread int in_buffer_callback;
/* The stale iterator: the EXTERNAL_CORRELATION record already handed out a second time. */
static __thread const uint8_t* repeated_record;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t) {
  while (now_ns() < t) {
  }
}

static size_t record_size(uint32_t kind) {
  switch (kind) {
    case FP_MCPTI_KIND_KERNEL:
    case FP_MCPTI_KIND_CONCURRENT_KERNEL: return sizeof(fp_mcpti_kernel8);
    case FP_MCPTI_KIND_MEMCPY: return sizeof(fp_mcpti_memcpy5);
    case FP_MCPTI_KIND_MEMSET: return sizeof(fp_mcpti_memset4);
    case FP_MCPTI_KIND_RUNTIME:
    case FP_MCPTI_KIND_DRIVER: return sizeof(fp_mcpti_api);
    case FP_MCPTI_KIND_EXTERNAL_CORRELATION: return sizeof(fp_mcpti_external_correlation);
    default: return 0;
  }
}

static void deliver(void* callback, uint8_t* b, size_t size, size_t used) {
  in_buffer_callback = 1;
  ((complete_fn)callback)(NULL, 0, b, size, used);
  in_buffer_callback = 0;
}

/* Hands the current buffer to the delivery thread (called with the lock held); returns the sequence number a
 * flush waits for. */
static uint64_t complete_locked(void) {
  uint8_t* b = buffer;
  size_t size = buffer_size, used = buffer_used;
  buffer = NULL;
  buffer_used = buffer_size = 0;
  return fake_delivery_complete(deliver, (void*)complete_cb, b, size, used);
}

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

/* Room for one record of a kind in the current buffer (asks the agent for one when needed). Every MCPTI record
 * size is a multiple of 8: records lie back to back. */
static void* reserve_locked(uint32_t kind) {
  size_t size = record_size(kind);
  if (buffer && buffer_used + size > buffer_size) complete_locked();
  if (!buffer) {
    uint8_t* b = NULL;
    size_t s = 0, max_records = 0;
    if (!request_cb) return NULL;
    pthread_mutex_unlock(&lock);
    request_cb(&b, &s, &max_records);
    pthread_mutex_lock(&lock);
    if (!b || s < size) {
      dropped++;
      return NULL;
    }
    buffer = b;
    buffer_size = s;
    buffer_used = 0;
  }
  void* p = buffer + buffer_used;
  memset(p, 0, size);
  memcpy(p, &kind, 4);
  buffer_used += size;
  return p;
}

static __thread uint32_t cached_tid;
static uint32_t cached_pid;

static void call_record_locked(uint32_t kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  if (!enabled[kind]) return;
  if (kind == FP_MCPTI_KIND_RUNTIME && enabled[FP_MCPTI_KIND_EXTERNAL_CORRELATION] && ext_depth > 0) {
    fp_mcpti_external_correlation* e = reserve_locked(FP_MCPTI_KIND_EXTERNAL_CORRELATION);
    if (e) {
      e->externalKind = FP_MCPTI_EXTERNAL_KIND_CUSTOM0;
      e->externalId = ext_stack[ext_depth - 1];
      e->correlationId = correlation;
    }
  }
  fp_mcpti_api* a = reserve_locked(kind);
  if (!a) return;
  a->cbid = cbid;
  a->start = start;
  a->end = end;
  if (!cached_pid) cached_pid = (uint32_t)getpid();
  if (!cached_tid) cached_tid = (uint32_t)syscall(SYS_gettid);
  a->processId = cached_pid;
  a->threadId = cached_tid;
  a->correlationId = correlation;
  a->returnValue = 0;
}

static void api_record_locked(uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  call_record_locked(FP_MCPTI_KIND_RUNTIME, cbid, start, end, correlation);
}

/* Device work starts a little after the launch, and after whatever the stream is still running. */
static uint64_t schedule_locked(uint64_t launched, uint64_t duration) {
  uint64_t start = launched + 2500;
  if (start < stream_busy_until) start = stream_busy_until + 300;
  stream_busy_until = start + duration;
  return start;
}

/* Whether the next device record is dropped (1) or written (0); *timed says whether it keeps its timestamps. */
static int drop_this_locked(int* timed) {
  device_records++;
  *timed = !(no_timing_every && device_records % no_timing_every == 0);
  if (drop_every && device_records % drop_every == 0) {
    dropped++;
    return 1;
  }
  return 0;
}

/* ---- control functions for test workloads (ctypes) ---- */

void fake_mcpti_launch_kernel(const char* name, int gx, int gy, int gz, int bx, int by, int bz, int registers,
                              int static_shared, int dynamic_shared, uint64_t duration_ns) {
  uint64_t t0 = now_ns();
  spin_until(t0 + 1500);
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  uint64_t start = schedule_locked(t0, duration_ns);
  int timed = 1;
  if ((enabled[FP_MCPTI_KIND_CONCURRENT_KERNEL] || enabled[FP_MCPTI_KIND_KERNEL]) && !drop_this_locked(&timed)) {
    fp_mcpti_kernel8* k = reserve_locked(enabled[FP_MCPTI_KIND_CONCURRENT_KERNEL] ? FP_MCPTI_KIND_CONCURRENT_KERNEL
                                                                                  : FP_MCPTI_KIND_KERNEL);
    if (k) {
      k->registersPerThread = (uint16_t)registers;
      k->start = timed ? start : 0;
      k->end = timed ? start + duration_ns : 0;
      k->completed = k->end;
      k->deviceId = 0;
      k->contextId = 1;
      k->streamId = 7;
      k->gridX = gx, k->gridY = gy, k->gridZ = gz;
      k->blockX = bx, k->blockY = by, k->blockZ = bz;
      k->staticSharedMemory = static_shared;
      k->dynamicSharedMemory = dynamic_shared;
      k->correlationId = correlation;
      k->name = own_name_locked(name); /* MACA keeps function names for the life of the process */
      k->queued = 0;
    }
  }
  api_record_locked(CBID_LAUNCH, t0, now_ns(), correlation);
  pthread_mutex_unlock(&lock);
}

/* copy_kind: 1 HtoD, 2 DtoH, 8 DtoD; src/dst memory kinds 1 pageable, 2 pinned, 3 device (CUPTI's numbers). */
void fake_mcpti_memcpy(uint64_t bytes, int copy_kind, int src_kind, int dst_kind) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  uint64_t duration = 1200 + bytes / 20;
  uint64_t start = schedule_locked(t0, duration);
  int timed = 1;
  if (enabled[FP_MCPTI_KIND_MEMCPY] && !drop_this_locked(&timed)) {
    fp_mcpti_memcpy5* m = reserve_locked(FP_MCPTI_KIND_MEMCPY);
    if (m) {
      m->copyKind = (uint8_t)copy_kind;
      m->srcKind = (uint8_t)src_kind;
      m->dstKind = (uint8_t)dst_kind;
      m->bytes = bytes;
      m->start = timed ? start : 0;
      m->end = timed ? start + duration : 0;
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

void fake_mcpti_memset(uint64_t bytes, int value) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  uint64_t duration = 900 + bytes / 200;
  uint64_t start = schedule_locked(t0, duration);
  int timed = 1;
  if (enabled[FP_MCPTI_KIND_MEMSET] && !drop_this_locked(&timed)) {
    fp_mcpti_memset4* m = reserve_locked(FP_MCPTI_KIND_MEMSET);
    if (m) {
      m->value = (uint32_t)value;
      m->bytes = bytes;
      m->start = timed ? start : 0;
      m->end = timed ? start + duration : 0;
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

/* mcDeviceSynchronize: returns once the device timeline is idle (a driver record too, when DRIVER is enabled). */
void fake_mcpti_synchronize(void) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  uint64_t t1 = stream_busy_until > t0 ? stream_busy_until + 500 : t0 + 700;
  spin_until(t1);
  call_record_locked(FP_MCPTI_KIND_DRIVER, DRIVER_CBID_CTX_SYNC, t0 + 100, t1 - 100, next_correlation++);
  api_record_locked(CBID_SYNC, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* A runtime call whose id MCPTI does not name (exercises the generic label). */
void fake_mcpti_untabled_call(void) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_record_locked(CBID_UNNAMED, t0, t0 + 900, correlation);
  spin_until(t0 + 900);
  pthread_mutex_unlock(&lock);
}

/* ---- the MCPTI activity API ---- */

int mcptiGetVersion(uint32_t* version) {
  if (!version) return FAKE_INVALID_PARAMETER;
  *version = FP_MCPTI_API_VERSION;
  return FAKE_SUCCESS;
}

int mcptiGetTimestamp(uint64_t* timestamp) {
  if (!timestamp) return FAKE_INVALID_PARAMETER;
  *timestamp = now_ns();
  return FAKE_SUCCESS;
}

int mcptiActivityRegisterCallbacks(request_fn request, complete_fn complete) {
  if (!request || !complete) return FAKE_INVALID_PARAMETER;
  const char* drop = getenv("FAKE_MCPTI_DROP_EVERY");
  const char* untimed = getenv("FAKE_MCPTI_NO_TIMING_EVERY");
  pthread_mutex_lock(&lock);
  drop_every = drop ? strtoull(drop, NULL, 10) : 0;
  no_timing_every = untimed ? strtoull(untimed, NULL, 10) : 0;
  request_cb = request;
  complete_cb = complete;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int mcptiActivityEnable(int kind) {
  if (kind <= 0 || kind >= K_MAX) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[kind] = 1;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int mcptiActivityDisable(int kind) {
  if (kind <= 0 || kind >= K_MAX) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[kind] = 0;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int mcptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  pthread_mutex_lock(&lock);
  uint64_t seq = complete_locked();
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return FAKE_SUCCESS;
}

int mcptiActivityGetNextRecord(uint8_t* buf, size_t valid, void** record) {
  if (!buf || !record) return FAKE_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record) {
    const uint8_t* prev = (const uint8_t*)*record;
    uint32_t kind;
    memcpy(&kind, prev, 4);
    if (kind == FP_MCPTI_KIND_EXTERNAL_CORRELATION && repeated_record != prev) {
      repeated_record = prev; /* MACA 3.8.0: the same record once more */
      return FAKE_SUCCESS;
    }
    repeated_record = NULL;
    size_t size = record_size(kind);
    if (!size) return FAKE_INVALID_PARAMETER;
    offset = (size_t)(prev - buf) + size;
  } else {
    repeated_record = NULL;
  }
  if (offset + 8 > valid) return FAKE_MAX_LIMIT_REACHED;
  *record = buf + offset;
  return FAKE_SUCCESS;
}

int mcptiActivityGetNumDroppedRecords(void* context, uint32_t stream, size_t* count) {
  (void)context;
  (void)stream;
  if (!count) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  *count = (size_t)dropped;
  dropped = 0;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int mcptiActivityPushExternalCorrelationId(int kind, uint64_t id) {
  (void)kind;
  if (ext_depth >= 64) return FAKE_INVALID_PARAMETER;
  ext_stack[ext_depth++] = id;
  return FAKE_SUCCESS;
}

int mcptiActivityPopExternalCorrelationId(int kind, uint64_t* last) {
  (void)kind;
  if (ext_depth == 0) return FAKE_QUEUE_EMPTY;
  uint64_t id = ext_stack[--ext_depth];
  if (last) *last = id;
  return FAKE_SUCCESS;
}

int mcptiActivityGetApiName(int kind, uint32_t cbid, const char** name) {
  if (in_buffer_callback) {
    fputs("fake MCPTI: mcptiActivityGetApiName called inside the buffer callback (MCPTI deadlocks here)\n", stderr);
    abort();
  }
  if (!name) return FAKE_INVALID_PARAMETER;
  if (kind == FP_MCPTI_KIND_RUNTIME) {
    switch (cbid) {
      case CBID_LAUNCH: *name = "mcLaunchKernel"; return FAKE_SUCCESS;
      case CBID_MEMCPY_ASYNC: *name = "mcMemcpyAsync"; return FAKE_SUCCESS;
      case CBID_MEMSET_ASYNC: *name = "mcMemsetAsync"; return FAKE_SUCCESS;
      case CBID_SYNC: *name = "mcDeviceSynchronize"; return FAKE_SUCCESS;
      default: break;
    }
  } else if (kind == FP_MCPTI_KIND_DRIVER && cbid == DRIVER_CBID_CTX_SYNC) {
    *name = "mcCtxSynchronize";
    return FAKE_SUCCESS;
  }
  return FAKE_INVALID_PARAMETER;
}
