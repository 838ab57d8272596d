/* A FAKE Huawei Ascend MSPTI activity library, for tests on machines without an NPU.
 *
 * It exports the part of MSPTI's activity API the capture agent uses, with the record layouts of the agent's
 * mirror (written from the public mspti_activity.h, which is not installed here), plus control functions a test
 * workload calls through ctypes to "launch" device work on the calling thread. Each launch writes what MSPTI
 * would: an EXTERNAL_CORRELATION record per pushed id, an API record naming the ACL call ("aclnnMatmul",
 * "aclrtMemcpyAsync", ...) and the device record sharing its 64-bit correlation id, with timestamps on a
 * per-stream device timeline (CLOCK_REALTIME, as MSPTI's). Full buffers are handed to the completed callback on
 * the library's own worker thread; msptiActivityFlushAll hands over the partial buffer and returns once every
 * buffer queued before it has been delivered.
 *
 * Two of MSPTI's quirks are reproduced on purpose, so the agent is tested against them:
 * - msptiActivityGetNextRecord keeps its position in a thread_local and ignores the record passed in: a consumer
 *   that stops before the end makes the next buffer on that thread start mid-way.
 * - msptiActivityPopExternalCorrelationId(kind, NULL) fails and pops nothing (CANN 9.0).
 *
 * Three more of CANN's behaviours, each behind a knob so the plain fake stays simple:
 * - FAKE_MSPTI_NEEDS_PRELOAD=1: msptiActivityEnable(MEMCPY / MEMSET) returns 6 ("without LD_PRELOAD") unless this
 *   library was loaded at process start (it is named in LD_PRELOAD, as CANN's interposer has to be).
 * - FAKE_MSPTI_LAUNCH_API=1: each kernel launch also writes the runtime's aclrtLaunchKernel API record inside the
 *   operator's, with the same correlation id, as CANN's RUNTIME_API and ACL_API kinds both report a launch.
 * - Device ids are physical, as CANN reports them: the first id of ASCEND_RT_VISIBLE_DEVICES (0 when unset).
 * At exit it says on stderr how many records a subscriber left undelivered: a consumer must unsubscribe and then
 * flush before the process ends.
 *
 * FAKE_MSPTI_DROP_EVERY=N drops every Nth device record and reports it through
 * msptiActivityGetNumDroppedRecords; FAKE_MSPTI_FIRST_CORRELATION sets the first correlation id (ids above
 * 2^32 - 1 exercise the 64-bit path). It computes nothing on any device. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/mspti/mirror.h"

typedef void (*request_fn)(uint8_t**, size_t*, size_t*);
typedef void (*complete_fn)(uint8_t*, size_t, size_t);

#define K_MAX 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static request_fn request_cb;
static complete_fn complete_cb;
static int subscribed;
static int enabled[K_MAX];
static uint64_t next_correlation = 1;
static uint64_t stream_busy_until;
static uint64_t drop_every, device_records, dropped;
static uint32_t physical_device;
static int needs_preload, preloaded, launch_api;
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

static size_t record_size(uint32_t kind) {
  switch (kind) {
    case FP_MSPTI_KIND_KERNEL: return sizeof(fp_mspti_kernel);
    case FP_MSPTI_KIND_API: return sizeof(fp_mspti_api);
    case FP_MSPTI_KIND_MEMSET: return sizeof(fp_mspti_memset);
    case FP_MSPTI_KIND_MEMCPY: return sizeof(fp_mspti_memcpy);
    case FP_MSPTI_KIND_EXTERNAL_CORRELATION: return sizeof(fp_mspti_external_correlation);
    default: return 0;
  }
}

/* Full buffers and flushes are delivered by test/fake-vendor/delivery.h, from a worker thread as MSPTI does. */
static void deliver(void* callback, uint8_t* b, size_t size, size_t used) {
  ((complete_fn)callback)(b, size, used);
}

/* Hands the current buffer to the delivery thread (called with the lock held); returns the sequence number a
 * flush waits for. */
static uint64_t complete_locked(void) { return fake_buffer_complete(deliver, (void*)complete_cb); }

__attribute__((constructor)) static void install_delivery(void) { fake_delivery_install(&lock); }

/* Room for one record of a kind in the current buffer (asks the agent for one when needed). Records are laid
 * out back to back at their sizes, multiples of 8 as the header's alignment makes them. */
static void* reserve_locked(uint32_t kind) {
  void* p = fake_buffer_reserve(record_size(kind), record_size(kind), request_cb, deliver, (void*)complete_cb, &dropped);
  if (p) memcpy(p, &kind, 4);
  return p;
}

static __thread uint32_t cached_tid;
static uint32_t cached_pid;

static void api_record_locked2(const char* name, uint64_t start, uint64_t end, uint64_t correlation, int external);

static void api_record_locked(const char* name, uint64_t start, uint64_t end, uint64_t correlation) {
  api_record_locked2(name, start, end, correlation, 1);
}

static void api_record_locked2(const char* name, uint64_t start, uint64_t end, uint64_t correlation, int external) {
  if (!enabled[FP_MSPTI_KIND_API]) return;
  if (external && enabled[FP_MSPTI_KIND_EXTERNAL_CORRELATION] && ext_depth > 0) {
    fp_mspti_external_correlation* e = reserve_locked(FP_MSPTI_KIND_EXTERNAL_CORRELATION);
    if (e) {
      e->externalKind = FP_MSPTI_EXTERNAL_KIND_CUSTOM0;
      e->externalId = ext_stack[ext_depth - 1];
      e->correlationId = correlation;
    }
  }
  fp_mspti_api* a = reserve_locked(FP_MSPTI_KIND_API);
  if (!a) return;
  a->start = start;
  a->end = end;
  if (!cached_pid) cached_pid = (uint32_t)getpid();
  if (!cached_tid) cached_tid = (uint32_t)syscall(SYS_gettid);
  a->pt.processId = cached_pid;
  a->pt.threadId = cached_tid;
  a->correlationId = correlation;
  a->name = own_name_locked(name);
}

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

/* An aclnn operator launch: the API record named `api`, the kernel named `kernel` of type `type`
 * ("KERNEL_AICORE", "KERNEL_AIVEC", ...); either string may be NULL. */
void fake_mspti_launch_kernel(const char* api, const char* kernel, const char* type, uint64_t duration_ns) {
  uint64_t t0 = now_ns();
  spin_until(t0 + 1500);
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t start = schedule_locked(t0, duration_ns);
  if (enabled[FP_MSPTI_KIND_KERNEL] && !drop_this_locked()) {
    fp_mspti_kernel* k = reserve_locked(FP_MSPTI_KIND_KERNEL);
    if (k) {
      k->start = start;
      k->end = start + duration_ns;
      k->ds.deviceId = physical_device;
      k->ds.streamId = 3;
      k->correlationId = correlation;
      k->type = own_name_locked(type);
      k->name = own_name_locked(kernel);
    }
  }
  if (launch_api) api_record_locked2("aclrtLaunchKernel", t0 + 300, now_ns(), correlation, 0);
  api_record_locked(api, t0, now_ns(), correlation);
  pthread_mutex_unlock(&lock);
}

/* copy_kind: msptiActivityMemcpyKind (2 HtoD, 3 DtoH, 4 DtoD). */
void fake_mspti_memcpy(const char* api, uint64_t bytes, int copy_kind, int is_async) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t duration = 1200 + bytes / 20;
  uint64_t start = schedule_locked(t0, duration);
  if (enabled[FP_MSPTI_KIND_MEMCPY] && !drop_this_locked()) {
    fp_mspti_memcpy* m = reserve_locked(FP_MSPTI_KIND_MEMCPY);
    if (m) {
      m->copyKind = (uint32_t)copy_kind;
      m->bytes = bytes;
      m->start = start;
      m->end = start + duration;
      m->deviceId = physical_device;
      m->streamId = 3;
      m->correlationId = correlation;
      m->isAsync = (uint8_t)(is_async != 0);
    }
  }
  uint64_t t1 = is_async ? now_ns() + 1800 : stream_busy_until + 800;
  spin_until(t1);
  api_record_locked(api, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

void fake_mspti_memset(const char* api, uint64_t bytes, int value, int is_async) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t duration = 900 + bytes / 200;
  uint64_t start = schedule_locked(t0, duration);
  if (enabled[FP_MSPTI_KIND_MEMSET] && !drop_this_locked()) {
    fp_mspti_memset* m = reserve_locked(FP_MSPTI_KIND_MEMSET);
    if (m) {
      m->value = (uint32_t)value;
      m->bytes = bytes;
      m->start = start;
      m->end = start + duration;
      m->deviceId = physical_device;
      m->streamId = 3;
      m->correlationId = correlation;
      m->isAsync = (uint8_t)(is_async != 0);
    }
  }
  uint64_t t1 = now_ns() + 1500;
  spin_until(t1);
  api_record_locked(api, t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* aclrtSynchronizeStream: returns once the device timeline is idle. */
void fake_mspti_synchronize(void) {
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&lock);
  uint64_t correlation = next_correlation++;
  uint64_t t1 = stream_busy_until > t0 ? stream_busy_until + 500 : t0 + 700;
  spin_until(t1);
  api_record_locked("aclrtSynchronizeStream", t0, t1, correlation);
  pthread_mutex_unlock(&lock);
}

/* ---- the MSPTI activity API ---- */

int msptiGetVersion(uint32_t* version) {
  if (!version) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  *version = 260000;
  return FP_MSPTI_SUCCESS;
}

int msptiGetTimestamp(uint64_t* timestamp) {
  if (!timestamp) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  *timestamp = now_ns();
  return FP_MSPTI_SUCCESS;
}

int msptiActivityGetStructSize(int kind, uint32_t version, size_t* size) {
  (void)version;
  if (!size) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  size_t s = kind > 0 && kind < K_MAX ? record_size((uint32_t)kind) : 0;
  if (!s) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  *size = s;
  return FP_MSPTI_SUCCESS;
}

/* One subscriber per process, as MSPTI allows. */
int msptiSubscribe(void** subscriber, void* callback, void* userdata) {
  (void)callback;
  (void)userdata;
  if (!subscriber) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  int taken = subscribed;
  subscribed = 1;
  pthread_mutex_unlock(&lock);
  if (taken) return FP_MSPTI_ERROR_MULTIPLE_SUBSCRIBERS;
  *subscriber = (void*)&subscribed;
  return FP_MSPTI_SUCCESS;
}

int msptiUnsubscribe(void* subscriber) {
  (void)subscriber;
  pthread_mutex_lock(&lock);
  subscribed = 0;
  pthread_mutex_unlock(&lock);
  return FP_MSPTI_SUCCESS;
}

int msptiActivityRegisterCallbacks(request_fn request, complete_fn complete) {
  if (!request || !complete) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  const char* every = getenv("FAKE_MSPTI_DROP_EVERY");
  drop_every = every ? strtoull(every, NULL, 10) : 0;
  const char* first = getenv("FAKE_MSPTI_FIRST_CORRELATION");
  pthread_mutex_lock(&lock);
  if (first) next_correlation = strtoull(first, NULL, 10);
  request_cb = request;
  complete_cb = complete;
  pthread_mutex_unlock(&lock);
  return FP_MSPTI_SUCCESS;
}

/* Whether this library is named in LD_PRELOAD: CANN's interposer only sees the copies when loaded at start. */
static int named_in_preload(void) {
  const char* preload = getenv("LD_PRELOAD");
  Dl_info self;
  if (!preload || !dladdr((void*)named_in_preload, &self) || !self.dli_fname) return 0;
  const char* base = strrchr(self.dli_fname, '/');
  return strstr(preload, base ? base + 1 : self.dli_fname) != NULL;
}

__attribute__((constructor)) static void read_knobs(void) {
  const char* visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
  physical_device = visible && *visible ? (uint32_t)strtoul(visible, NULL, 10) : 0;
  needs_preload = getenv("FAKE_MSPTI_NEEDS_PRELOAD") && strcmp(getenv("FAKE_MSPTI_NEEDS_PRELOAD"), "1") == 0;
  launch_api = getenv("FAKE_MSPTI_LAUNCH_API") && strcmp(getenv("FAKE_MSPTI_LAUNCH_API"), "1") == 0;
  preloaded = named_in_preload();
}

/* A subscriber that exits without unsubscribing and flushing leaves its last records in the library. */
__attribute__((destructor)) static void report_undelivered(void) {
  pthread_mutex_lock(&lock);
  size_t left = fake_buffer ? fake_buffer_used : 0;
  int still = subscribed;
  pthread_mutex_unlock(&lock);
  if (still || left)
    fprintf(stderr, "fake MSPTI: process exit with the subscriber %s and %zu bytes of records undelivered\n",
            still ? "still subscribed" : "unsubscribed", left);
}

int msptiActivityEnable(int kind) {
  if (kind <= 0 || kind >= K_MAX) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  if (needs_preload && !preloaded && (kind == FP_MSPTI_KIND_MEMCPY || kind == FP_MSPTI_KIND_MEMSET))
    return 6; /* MSPTI_ERROR_... "without LD_PRELOAD" */
  pthread_mutex_lock(&lock);
  enabled[kind] = 1;
  pthread_mutex_unlock(&lock);
  return FP_MSPTI_SUCCESS;
}

int msptiActivityDisable(int kind) {
  if (kind <= 0 || kind >= K_MAX) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  enabled[kind] = 0;
  pthread_mutex_unlock(&lock);
  return FP_MSPTI_SUCCESS;
}

int msptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  pthread_mutex_lock(&lock);
  uint64_t seq = complete_locked();
  pthread_mutex_unlock(&lock);
  fake_delivery_wait(seq);
  return FP_MSPTI_SUCCESS;
}

/* MSPTI's iterator: the position lives in a thread_local, the record passed in is not looked at, and the
 * position only goes back to 0 when the end of a buffer is reported. */
static __thread size_t iterator_position;

int msptiActivityGetNextRecord(uint8_t* buf, size_t valid, void** record) {
  if (!buf || !record) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  size_t offset = iterator_position;
  uint32_t kind = 0;
  if (offset + 4 <= valid) memcpy(&kind, buf + offset, 4);
  size_t size = record_size(kind);
  if (offset + 4 > valid || !size || offset + size > valid) {
    iterator_position = 0;
    return FP_MSPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = buf + offset;
  iterator_position = offset + size;
  return FP_MSPTI_SUCCESS;
}

int msptiActivityGetNumDroppedRecords(void* context, uint32_t stream, size_t* count) {
  (void)context;
  (void)stream;
  if (!count) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  *count = (size_t)dropped;
  dropped = 0;
  pthread_mutex_unlock(&lock);
  return FP_MSPTI_SUCCESS;
}

int msptiActivityPushExternalCorrelationId(int kind, uint64_t id) {
  (void)kind;
  if (ext_depth >= 64) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  ext_stack[ext_depth++] = id;
  return FP_MSPTI_SUCCESS;
}

/* CANN 9.0: a NULL lastId is refused and nothing is popped. */
int msptiActivityPopExternalCorrelationId(int kind, uint64_t* last) {
  (void)kind;
  if (!last) return FP_MSPTI_ERROR_INVALID_PARAMETER;
  if (ext_depth == 0) return FP_MSPTI_ERROR_QUEUE_EMPTY;
  *last = ext_stack[--ext_depth];
  return FP_MSPTI_SUCCESS;
}
