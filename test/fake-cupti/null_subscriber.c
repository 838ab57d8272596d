/* A null CUPTI activity subscriber, for the overhead bench: it binds a CUPTI-compatible library, registers the
 * buffer callbacks and arms the kinds the capture agent arms while profiling (CONCURRENT_KERNEL, MEMCPY, MEMSET
 * and DEVICE at attach; RUNTIME and EXTERNAL_CORRELATION at start), then discards every buffer unread. What it
 * costs is what any subscriber (Kineto included) pays the vendor for recording; the agent's own share is what
 * it costs beyond that. Buffers are the agent's size, written once at attach and recycled as the agent's are,
 * so the two differ only in what they do with a completed buffer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "vendors/cupti/mirror.h"

#define BUFFER_SIZE ((size_t)8 << 20)
#define FLUSH_FORCED 1u
#define THREAD_ID_SYSTEM 1

typedef void (*request_fn)(uint8_t**, size_t*, size_t*);
typedef void (*complete_fn)(void*, uint32_t, uint8_t*, size_t, size_t);

static int (*register_callbacks)(request_fn, complete_fn);
static int (*enable)(int);
static int (*disable)(int);
static int (*flush_all)(uint32_t);
static int (*set_thread_id_type)(int);

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void* pool[4];
static int pooled;

static void requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = NULL;
  pthread_mutex_lock(&pool_lock);
  if (pooled > 0) p = pool[--pooled];
  pthread_mutex_unlock(&pool_lock);
  if (!p && posix_memalign(&p, 8, BUFFER_SIZE) != 0) p = NULL;
  *buffer = (uint8_t*)p;
  *size = p ? BUFFER_SIZE : 0;
  *max_records = 0;
}

static void completed(void* context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  (void)context, (void)stream, (void)size, (void)valid;
  if (!buffer) return;
  pthread_mutex_lock(&pool_lock);
  if (pooled < 4) {
    pool[pooled++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  free(buffer);
}

/* Binds the library at `path` and arms the device kinds; 0 on success. */
int null_subscriber_attach(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return -1;
  register_callbacks = (int (*)(request_fn, complete_fn))dlsym(lib, "cuptiActivityRegisterCallbacks");
  enable = (int (*)(int))dlsym(lib, "cuptiActivityEnable");
  disable = (int (*)(int))dlsym(lib, "cuptiActivityDisable");
  flush_all = (int (*)(uint32_t))dlsym(lib, "cuptiActivityFlushAll");
  set_thread_id_type = (int (*)(int))dlsym(lib, "cuptiSetThreadIdType");
  if (!register_callbacks || !enable || !disable || !flush_all) return -2;
  if (set_thread_id_type) set_thread_id_type(THREAD_ID_SYSTEM);
  for (pooled = 0; pooled < 2; ++pooled) {
    if (posix_memalign(&pool[pooled], 8, BUFFER_SIZE) != 0) return -5;
    for (size_t at = 0; at < BUFFER_SIZE; at += 4096) ((volatile char*)pool[pooled])[at] = 0;
  }
  if (register_callbacks(requested, completed) != 0) return -3;
  int r = enable(FP_CUPTI_KIND_CONCURRENT_KERNEL) | enable(FP_CUPTI_KIND_MEMCPY) | enable(FP_CUPTI_KIND_MEMSET) |
          enable(FP_CUPTI_KIND_DEVICE);
  return r == 0 ? 0 : -4;
}

int null_subscriber_start(void) {
  flush_all(FLUSH_FORCED);
  return enable(FP_CUPTI_KIND_RUNTIME) | enable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
}

int null_subscriber_stop(void) {
  int r = flush_all(FLUSH_FORCED);
  disable(FP_CUPTI_KIND_RUNTIME);
  disable(FP_CUPTI_KIND_EXTERNAL_CORRELATION);
  return r;
}
