/* The body every FAKE CUPTI-ABI clone shares (test/fake-mcpti, test/fake-mupti, test/fake-topspti): the vendor
 * activity libraries that are CUPTI's C ABI under their own prefix, with CUPTI's kind numbers and CUPTI's record
 * layouts at the versions each vendor ships. It reproduces CUPTI's activity side: buffers the subscriber hands over
 * through the request callback, records written back to back (every clone's record sizes are multiples of 8), full
 * buffers given to the completed callback on the library's own worker thread (delivery.h), Enable/Disable,
 * FlushAll, the GetNextRecord iterator, GetNumDroppedRecords and the external-correlation stack; and the control
 * functions a test workload calls through ctypes to "launch" device work on the calling thread
 * (fake_<prefix>_launch_kernel, _memcpy, _memset, _synchronize, _untabled_call). Each writes an
 * EXTERNAL_CORRELATION record when an id was pushed, a RUNTIME record and the device record sharing its
 * correlation id, on a per-stream device timeline. <ENV>DROP_EVERY=N drops every Nth device record (counted by
 * GetNumDroppedRecords), <ENV>NO_TIMING_EVERY=N writes every Nth with start = end = 0. It computes nothing.
 *
 * The including .c includes delivery.h and names.h, then defines, before including this header:
 *   CLONE_PREFIX        the function prefix, a bare token (mcpti -> mcptiActivityEnable, fake_mcpti_launch_kernel)
 *   CLONE_ENV_PREFIX    the knobs' prefix, a string ("FAKE_MCPTI_")
 *   CLONE_API_VERSION   what <prefix>GetVersion reports
 *   CLONE_CLOCK         the host clock the fake runs on: it spins and schedules device work on it
 *   CLONE_KERNEL_T, CLONE_MEMCPY_T, CLONE_MEMSET_T, CLONE_API_T: the mirror's record types (sizeof is the record's)
 *   CLONE_EXTERNAL_T    the external-correlation record; left undefined, the vendor has no external correlation:
 *                       no Push/Pop is exported, kind 39 cannot be enabled, no such record is ever written
 *   CLONE_CBID_LAUNCH, CLONE_CBID_MEMCPY, CLONE_CBID_MEMSET, CLONE_CBID_SYNC, CLONE_CBID_UNNAMED (runtime) and
 *   CLONE_DRIVER_CBID_SYNC: the vendor's callback ids; CLONE_NAME_LAUNCH, _MEMCPY, _MEMSET, _SYNC and
 *   CLONE_DRIVER_NAME_SYNC: the names it gives them (clone_call_name() answers the vendor's naming function)
 * and defines `static uint64_t vendor_time(uint64_t host_ns)`: that instant on the vendor's clock, as records and
 * <prefix>GetTimestamp carry it. Optional quirk hooks:
 *   CLONE_EXTERNAL_REFUSAL()  an expression: when nonzero, the status Push/Pop return instead of doing anything
 *   CLONE_VENDOR_ITERATOR     the .c exports <prefix>ActivityGetNextRecord itself, around clone_next_record()
 *   CLONE_API_CALLBACK        the name of a function the .c defines, called with the lock held on entering and
 *                             leaving every API call: (int domain, int site, uint32_t cbid, uint32_t correlation,
 *                             const char* symbol); it must drop the lock around whatever it calls out to.
 * Included once, by one .c. */
#ifndef FAKE_VENDOR_CUPTI_CLONE_H
#define FAKE_VENDOR_CUPTI_CLONE_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vendors/cupti/mirror.h"

#define CLONE_PASTE_(a, b) a##b
#define CLONE_PASTE(a, b) CLONE_PASTE_(a, b)
/* CLONE_API(ActivityEnable) is mcptiActivityEnable; CLONE_CONTROL(memset) is fake_mcpti_memset. */
#define CLONE_API(name) CLONE_PASTE(CLONE_PREFIX, name)
#define CLONE_CONTROL(name) CLONE_PASTE(CLONE_PASTE(fake_, CLONE_PREFIX), CLONE_PASTE(_, name))

#define FAKE_SUCCESS 0
#define FAKE_INVALID_PARAMETER 1
#define FAKE_MAX_LIMIT_REACHED 12
#define FAKE_QUEUE_EMPTY 27
#define K_MAX 64

/* CUPTI's callback domains and sites, which every clone keeps. */
#define CLONE_DOMAIN_DRIVER FP_CUPTI_CB_DOMAIN_DRIVER_API
#define CLONE_DOMAIN_RUNTIME FP_CUPTI_CB_DOMAIN_RUNTIME_API
#define CLONE_SITE_ENTER 0
#define CLONE_SITE_EXIT 1

typedef void (*request_fn)(uint8_t**, size_t*, size_t*);
typedef void (*complete_fn)(void*, uint32_t, uint8_t*, size_t, size_t);

static uint64_t vendor_time(uint64_t host_ns);

#ifdef CLONE_API_CALLBACK
static void CLONE_API_CALLBACK(int domain, int site, uint32_t cbid, uint32_t correlation, const char* symbol);
#define api_callback_locked CLONE_API_CALLBACK
#else
/* No callback API: nothing is called, and the lock stays held from the correlation id to the last record. */
#define api_callback_locked(domain, site, cbid, correlation, symbol) ((void)(correlation))
#endif

#ifndef CLONE_EXTERNAL_REFUSAL
#define CLONE_EXTERNAL_REFUSAL() 0
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static request_fn request_cb;
static complete_fn complete_cb;
static int enabled[K_MAX];
static uint32_t next_correlation = 1;
static uint64_t stream_busy_until; /* host clock */
static uint64_t drop_every, no_timing_every, device_records, dropped;
#ifdef CLONE_EXTERNAL_T
static __thread uint64_t ext_stack[64];
static __thread int ext_depth;
#endif
/* Set on the thread running a buffer-completed callback, while it runs (for vendors whose API misbehaves there). */
static __thread int in_buffer_callback;

static uint64_t host_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLONE_CLOCK, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t) {
  while (host_now_ns() < t) {
  }
}

static size_t record_size(uint32_t kind) {
  switch (kind) {
    case FP_CUPTI_KIND_KERNEL:
    case FP_CUPTI_KIND_CONCURRENT_KERNEL: return sizeof(CLONE_KERNEL_T);
    case FP_CUPTI_KIND_MEMCPY: return sizeof(CLONE_MEMCPY_T);
    case FP_CUPTI_KIND_MEMSET: return sizeof(CLONE_MEMSET_T);
    case FP_CUPTI_KIND_RUNTIME:
    case FP_CUPTI_KIND_DRIVER: return sizeof(CLONE_API_T);
#ifdef CLONE_EXTERNAL_T
    case FP_CUPTI_KIND_EXTERNAL_CORRELATION: return sizeof(CLONE_EXTERNAL_T);
#endif
    default: return 0;
  }
}

/* The vendor's name for a call (domain: CUPTI's 2 runtime, 1 driver), NULL for an id it does not name. */
static const char* clone_call_name(int domain, uint32_t cbid) {
  if (domain == CLONE_DOMAIN_RUNTIME) {
    switch (cbid) {
      case CLONE_CBID_LAUNCH: return CLONE_NAME_LAUNCH;
      case CLONE_CBID_MEMCPY: return CLONE_NAME_MEMCPY;
      case CLONE_CBID_MEMSET: return CLONE_NAME_MEMSET;
      case CLONE_CBID_SYNC: return CLONE_NAME_SYNC;
      default: return NULL;
    }
  }
  if (domain == CLONE_DOMAIN_DRIVER && cbid == CLONE_DRIVER_CBID_SYNC) return CLONE_DRIVER_NAME_SYNC;
  return NULL;
}

static void deliver(void* callback, uint8_t* b, size_t size, size_t used) {
  in_buffer_callback = 1;
  ((complete_fn)callback)(NULL, 0, b, size, used);
  in_buffer_callback = 0;
}

/* Hands the current buffer to the delivery thread (called with the lock held); returns the sequence number a
 * flush waits for. */
static uint64_t complete_locked(void) { return fake_buffer_complete(deliver, (void*)complete_cb); }

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

/* Room for one record of a kind in the current buffer (asks the agent for one when needed). */
static void* reserve_locked(uint32_t kind) {
  void* p = fake_buffer_reserve(record_size(kind), record_size(kind), request_cb, deliver, (void*)complete_cb, &dropped);
  if (p) memcpy(p, &kind, 4);
  return p;
}

static __thread uint32_t cached_tid;
static uint32_t cached_pid;

/* A RUNTIME or DRIVER record (host-clock times), after the EXTERNAL_CORRELATION record a runtime call gets while
 * an id is pushed. */
static void call_record_locked(uint32_t kind, uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  if (!enabled[kind]) return;
#ifdef CLONE_EXTERNAL_T
  if (kind == FP_CUPTI_KIND_RUNTIME && enabled[FP_CUPTI_KIND_EXTERNAL_CORRELATION] && ext_depth > 0) {
    CLONE_EXTERNAL_T* e = reserve_locked(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
    if (e) {
      e->externalKind = FP_CUPTI_EXTERNAL_KIND_CUSTOM0;
      e->externalId = ext_stack[ext_depth - 1];
      e->correlationId = correlation;
    }
  }
#endif
  CLONE_API_T* a = reserve_locked(kind);
  if (!a) return;
  a->cbid = cbid;
  a->start = vendor_time(start);
  a->end = vendor_time(end);
  if (!cached_pid) cached_pid = (uint32_t)getpid();
  if (!cached_tid) cached_tid = (uint32_t)syscall(SYS_gettid);
  a->processId = cached_pid;
  a->threadId = cached_tid;
  a->correlationId = correlation;
  a->returnValue = 0;
}

static void api_record_locked(uint32_t cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  call_record_locked(FP_CUPTI_KIND_RUNTIME, cbid, start, end, correlation);
}

/* Device work starts a little after the launch, and after whatever the stream is still running (host clock). */
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

void CLONE_CONTROL(launch_kernel)(const char* name, int gx, int gy, int gz, int bx, int by, int bz, int registers,
                                  int static_shared, int dynamic_shared, uint64_t duration_ns) {
  uint64_t t0 = host_now_ns();
  spin_until(t0 + 1500);
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_ENTER, CLONE_CBID_LAUNCH, correlation, name);
  uint64_t start = schedule_locked(t0, duration_ns);
  int timed = 1;
  if ((enabled[FP_CUPTI_KIND_CONCURRENT_KERNEL] || enabled[FP_CUPTI_KIND_KERNEL]) && !drop_this_locked(&timed)) {
    CLONE_KERNEL_T* k = reserve_locked(enabled[FP_CUPTI_KIND_CONCURRENT_KERNEL] ? FP_CUPTI_KIND_CONCURRENT_KERNEL
                                                                                : FP_CUPTI_KIND_KERNEL);
    if (k) {
      k->registersPerThread = (uint16_t)registers;
      k->start = timed ? vendor_time(start) : 0;
      k->end = timed ? vendor_time(start + duration_ns) : 0;
      k->completed = k->end;
      k->deviceId = 0;
      k->contextId = 1;
      k->streamId = 7;
      k->gridX = gx, k->gridY = gy, k->gridZ = gz;
      k->blockX = bx, k->blockY = by, k->blockZ = bz;
      k->staticSharedMemory = static_shared;
      k->dynamicSharedMemory = dynamic_shared;
      k->correlationId = correlation;
      k->name = own_name_locked(name); /* the runtimes keep function names for the life of the process */
      k->queued = 0;
    }
  }
  api_record_locked(CLONE_CBID_LAUNCH, t0, host_now_ns(), correlation);
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_EXIT, CLONE_CBID_LAUNCH, correlation, name);
  pthread_mutex_unlock(&lock);
}

/* copy_kind: 1 HtoD, 2 DtoH, 8 DtoD; src/dst memory kinds 1 pageable, 2 pinned, 3 device (CUPTI's numbers). */
void CLONE_CONTROL(memcpy)(uint64_t bytes, int copy_kind, int src_kind, int dst_kind) {
  uint64_t t0 = host_now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_ENTER, CLONE_CBID_MEMCPY, correlation, NULL);
  uint64_t duration = 1200 + bytes / 20;
  uint64_t start = schedule_locked(t0, duration);
  int timed = 1;
  if (enabled[FP_CUPTI_KIND_MEMCPY] && !drop_this_locked(&timed)) {
    CLONE_MEMCPY_T* m = reserve_locked(FP_CUPTI_KIND_MEMCPY);
    if (m) {
      m->copyKind = (uint8_t)copy_kind;
      m->srcKind = (uint8_t)src_kind;
      m->dstKind = (uint8_t)dst_kind;
      m->bytes = bytes;
      m->start = timed ? vendor_time(start) : 0;
      m->end = timed ? vendor_time(start + duration) : 0;
      m->deviceId = 0;
      m->contextId = 1;
      m->streamId = 7;
      m->correlationId = correlation;
    }
  }
  /* A device-to-host copy is synchronous for pageable memory: the call returns after the copy. */
  uint64_t t1 = copy_kind == 2 ? stream_busy_until + 800 : host_now_ns() + 1800;
  spin_until(t1);
  api_record_locked(CLONE_CBID_MEMCPY, t0, t1, correlation);
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_EXIT, CLONE_CBID_MEMCPY, correlation, NULL);
  pthread_mutex_unlock(&lock);
}

void CLONE_CONTROL(memset)(uint64_t bytes, int value) {
  uint64_t t0 = host_now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_ENTER, CLONE_CBID_MEMSET, correlation, NULL);
  uint64_t duration = 900 + bytes / 200;
  uint64_t start = schedule_locked(t0, duration);
  int timed = 1;
  if (enabled[FP_CUPTI_KIND_MEMSET] && !drop_this_locked(&timed)) {
    CLONE_MEMSET_T* m = reserve_locked(FP_CUPTI_KIND_MEMSET);
    if (m) {
      m->value = (uint32_t)value;
      m->bytes = bytes;
      m->start = timed ? vendor_time(start) : 0;
      m->end = timed ? vendor_time(start + duration) : 0;
      m->deviceId = 0;
      m->contextId = 1;
      m->streamId = 7;
      m->correlationId = correlation;
      m->memoryKind = 3; /* device */
    }
  }
  uint64_t t1 = host_now_ns() + 1500;
  spin_until(t1);
  api_record_locked(CLONE_CBID_MEMSET, t0, t1, correlation);
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_EXIT, CLONE_CBID_MEMSET, correlation, NULL);
  pthread_mutex_unlock(&lock);
}

/* The device synchronisation: returns once the device timeline is idle, through one driver call (a DRIVER record
 * too, when DRIVER is enabled). */
void CLONE_CONTROL(synchronize)(void) {
  uint64_t t0 = host_now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_ENTER, CLONE_CBID_SYNC, correlation, NULL);
  uint64_t t1 = stream_busy_until > t0 ? stream_busy_until + 500 : t0 + 700;
  uint32_t driver_correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_DRIVER, CLONE_SITE_ENTER, CLONE_DRIVER_CBID_SYNC, driver_correlation, NULL);
  spin_until(t1);
  call_record_locked(FP_CUPTI_KIND_DRIVER, CLONE_DRIVER_CBID_SYNC, t0 + 100, t1 - 100, driver_correlation);
  api_callback_locked(CLONE_DOMAIN_DRIVER, CLONE_SITE_EXIT, CLONE_DRIVER_CBID_SYNC, driver_correlation, NULL);
  api_record_locked(CLONE_CBID_SYNC, t0, t1, correlation);
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_EXIT, CLONE_CBID_SYNC, correlation, NULL);
  pthread_mutex_unlock(&lock);
}

/* A runtime call whose id the vendor does not name (exercises the generic label). */
void CLONE_CONTROL(untabled_call)(void) {
  uint64_t t0 = host_now_ns();
  pthread_mutex_lock(&lock);
  uint32_t correlation = next_correlation++;
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_ENTER, CLONE_CBID_UNNAMED, correlation, NULL);
  api_record_locked(CLONE_CBID_UNNAMED, t0, t0 + 900, correlation);
  spin_until(t0 + 900);
  api_callback_locked(CLONE_DOMAIN_RUNTIME, CLONE_SITE_EXIT, CLONE_CBID_UNNAMED, correlation, NULL);
  pthread_mutex_unlock(&lock);
}

/* ---- the CUPTI-shaped activity API, under the vendor's prefix ---- */

int CLONE_API(GetVersion)(uint32_t* version) {
  if (!version) return FAKE_INVALID_PARAMETER;
  *version = CLONE_API_VERSION;
  return FAKE_SUCCESS;
}

int CLONE_API(GetTimestamp)(uint64_t* timestamp) {
  if (!timestamp) return FAKE_INVALID_PARAMETER;
  *timestamp = vendor_time(host_now_ns());
  return FAKE_SUCCESS;
}

int CLONE_API(ActivityRegisterCallbacks)(request_fn request, complete_fn complete) {
  if (!request || !complete) return FAKE_INVALID_PARAMETER;
  const char* drop = getenv(CLONE_ENV_PREFIX "DROP_EVERY");
  const char* untimed = getenv(CLONE_ENV_PREFIX "NO_TIMING_EVERY");
  pthread_mutex_lock(&lock);
  drop_every = drop ? strtoull(drop, NULL, 10) : 0;
  no_timing_every = untimed ? strtoull(untimed, NULL, 10) : 0;
  request_cb = request;
  complete_cb = complete;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

static int kind_accepted(int kind) {
#ifndef CLONE_EXTERNAL_T
  if (kind == FP_CUPTI_KIND_EXTERNAL_CORRELATION) return 0; /* the vendor has no such kind */
#endif
  return kind > 0 && kind < K_MAX;
}

int CLONE_API(ActivityEnable)(int kind) {
  if (!kind_accepted(kind)) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[kind] = 1;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int CLONE_API(ActivityDisable)(int kind) {
  if (!kind_accepted(kind)) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[kind] = 0;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int CLONE_API(ActivityFlushAll)(uint32_t flag) {
  (void)flag;
  pthread_mutex_lock(&lock);
  uint64_t seq = complete_locked();
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return FAKE_SUCCESS;
}

/* CUPTI's iterator, honest: the record after *record (the first when NULL), MAX_LIMIT_REACHED past the last. */
static int clone_next_record(uint8_t* buf, size_t valid, void** record) {
  if (!buf || !record) return FAKE_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record) {
    const uint8_t* prev = (const uint8_t*)*record;
    uint32_t kind;
    memcpy(&kind, prev, 4);
    size_t size = record_size(kind);
    if (!size) return FAKE_INVALID_PARAMETER;
    offset = (size_t)(prev - buf) + size;
  }
  if (offset + 8 > valid) return FAKE_MAX_LIMIT_REACHED;
  *record = buf + offset;
  return FAKE_SUCCESS;
}

#ifndef CLONE_VENDOR_ITERATOR
int CLONE_API(ActivityGetNextRecord)(uint8_t* buf, size_t valid, void** record) {
  return clone_next_record(buf, valid, record);
}
#endif

int CLONE_API(ActivityGetNumDroppedRecords)(void* context, uint32_t stream, size_t* count) {
  (void)context;
  (void)stream;
  if (!count) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  *count = (size_t)dropped;
  dropped = 0;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

#ifdef CLONE_EXTERNAL_T
int CLONE_API(ActivityPushExternalCorrelationId)(int kind, uint64_t id) {
  (void)kind;
  int refusal = CLONE_EXTERNAL_REFUSAL();
  if (refusal) return refusal;
  if (ext_depth >= 64) return FAKE_INVALID_PARAMETER;
  ext_stack[ext_depth++] = id;
  return FAKE_SUCCESS;
}

int CLONE_API(ActivityPopExternalCorrelationId)(int kind, uint64_t* last) {
  (void)kind;
  int refusal = CLONE_EXTERNAL_REFUSAL();
  if (refusal) return refusal;
  if (ext_depth == 0) return FAKE_QUEUE_EMPTY;
  uint64_t id = ext_stack[--ext_depth];
  if (last) *last = id;
  return FAKE_SUCCESS;
}
#endif

#endif
