/* Buffer delivery shared by the FAKE vendor activity libraries (test/fake-cupti, -mspti, -roctracer), done as the
 * real libraries do it: a full buffer goes to the subscriber's completed callback from the library's own worker
 * thread, never on the thread that launched the work, and a flush returns only once every buffer completed before
 * it has been delivered and its callback has returned, in order. Included once by each fake. */
#ifndef FAKE_VENDOR_DELIVERY_H
#define FAKE_VENDOR_DELIVERY_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Calls the subscriber's callback, whatever its signature in this vendor's API. */
typedef void (*fake_deliver_fn)(void* callback, uint8_t* buffer, size_t size, size_t used);

struct fake_completed {
  struct fake_completed* next;
  fake_deliver_fn deliver;
  void* callback;
  uint8_t* buffer;
  size_t size, used;
};

/* The queue has its own lock, never held while a callback runs. Lock order: the library's lock, then this one. */
static pthread_mutex_t fake_queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_queue_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t fake_queue_delivered = PTHREAD_COND_INITIALIZER;
static struct fake_completed *fake_queue_head, *fake_queue_tail;
static uint64_t fake_queued_seq, fake_delivered_seq; /* buffers enqueued / whose callback has returned */
static int fake_worker_running;
static pthread_t fake_worker;
static pthread_mutex_t* fake_library_lock;

static void* fake_worker_main(void* arg) {
  (void)arg;
  pthread_mutex_lock(&fake_queue_lock);
  for (;;) {
    while (!fake_queue_head) pthread_cond_wait(&fake_queue_ready, &fake_queue_lock);
    struct fake_completed* c = fake_queue_head;
    fake_queue_head = c->next;
    if (!fake_queue_head) fake_queue_tail = NULL;
    pthread_mutex_unlock(&fake_queue_lock);
    c->deliver(c->callback, c->buffer, c->size, c->used);
    free(c);
    pthread_mutex_lock(&fake_queue_lock);
    fake_delivered_seq++;
    pthread_cond_broadcast(&fake_queue_delivered);
  }
  return NULL;
}

/* Started at the first completed buffer, detached and with every signal blocked: it never keeps the process
 * alive, and exit() simply ends it (buffers still queued then are lost, as without a final flush). */
static int fake_start_worker_locked(void) {
  if (fake_worker_running) return 1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  fake_worker_running = pthread_create(&fake_worker, &attr, fake_worker_main, NULL) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return fake_worker_running;
}

/* A forked child has no worker: it starts its own when it needs one; the parent's queue is not its to deliver. */
static void fake_atfork_prepare(void) {
  pthread_mutex_lock(fake_library_lock);
  pthread_mutex_lock(&fake_queue_lock);
}
static void fake_atfork_parent(void) {
  pthread_mutex_unlock(&fake_queue_lock);
  pthread_mutex_unlock(fake_library_lock);
}
static void fake_atfork_child(void) {
  pthread_cond_init(&fake_queue_ready, NULL); /* the parent's worker may have been waiting on them */
  pthread_cond_init(&fake_queue_delivered, NULL);
  fake_queue_head = fake_queue_tail = NULL;
  fake_queued_seq = fake_delivered_seq = 0;
  fake_worker_running = 0;
  pthread_mutex_unlock(&fake_queue_lock);
  pthread_mutex_unlock(fake_library_lock);
}

/* Call once, at load, with the library's own lock. */
static void fake_delivery_install(pthread_mutex_t* library_lock) {
  fake_library_lock = library_lock;
  pthread_atfork(fake_atfork_prepare, fake_atfork_parent, fake_atfork_child);
}

/* Hands a completed buffer to the worker; called with the library's lock held. Returns the sequence number a flush
 * waits for (every buffer completed so far). Should no worker start, the callback runs here, without the lock. */
static uint64_t fake_delivery_complete(fake_deliver_fn deliver, void* callback, uint8_t* buffer, size_t size,
                                       size_t used) {
  struct fake_completed* c = buffer && callback ? (struct fake_completed*)malloc(sizeof *c) : NULL;
  pthread_mutex_lock(&fake_queue_lock);
  if (c && fake_start_worker_locked()) {
    c->next = NULL;
    c->deliver = deliver;
    c->callback = callback;
    c->buffer = buffer;
    c->size = size;
    c->used = used;
    if (fake_queue_tail)
      fake_queue_tail->next = c;
    else
      fake_queue_head = c;
    fake_queue_tail = c;
    fake_queued_seq++;
    pthread_cond_signal(&fake_queue_ready);
    buffer = NULL;
  }
  uint64_t seq = fake_queued_seq;
  pthread_mutex_unlock(&fake_queue_lock);
  if (buffer && callback) {
    free(c);
    pthread_mutex_unlock(fake_library_lock);
    deliver(callback, buffer, size, used);
    pthread_mutex_lock(fake_library_lock);
  }
  return seq;
}

/* A flush: returns once every buffer up to `seq` has been delivered (not when called from a callback: the worker
 * would wait for itself). Called without the library's lock. */
static void fake_delivery_wait(uint64_t seq) {
  pthread_mutex_lock(&fake_queue_lock);
  if (!(fake_worker_running && pthread_equal(pthread_self(), fake_worker)))
    while (fake_delivered_seq < seq) pthread_cond_wait(&fake_queue_delivered, &fake_queue_lock);
  pthread_mutex_unlock(&fake_queue_lock);
}

/* The buffer a fake is filling, for the APIs whose subscriber hands buffers out through a CUPTI-style request
 * callback (CUPTI, its clones, MSPTI). Touched with the library's lock held. */
typedef void (*fake_request_fn)(uint8_t**, size_t*, size_t*);
static uint8_t* fake_buffer;
static size_t fake_buffer_size, fake_buffer_used;

/* Hands the buffer being filled to the delivery thread; returns the sequence number a flush waits for. */
static uint64_t fake_buffer_complete(fake_deliver_fn deliver, void* callback) {
  uint8_t* b = fake_buffer;
  size_t size = fake_buffer_size, used = fake_buffer_used;
  fake_buffer = NULL;
  fake_buffer_used = fake_buffer_size = 0;
  return fake_delivery_complete(deliver, callback, b, size, used);
}

/* Room for `size` zeroed bytes in the buffer being filled, the next record `stride` bytes on; a full buffer is
 * handed over and the subscriber asked for another (with the library's lock dropped, as the real libraries call
 * it). NULL, counted in *refused, when the subscriber gives none or one too small. */
static void* fake_buffer_reserve(size_t size, size_t stride, fake_request_fn request, fake_deliver_fn deliver,
                                 void* callback, uint64_t* refused) {
  if (fake_buffer && fake_buffer_used + size > fake_buffer_size) fake_buffer_complete(deliver, callback);
  if (!fake_buffer) {
    uint8_t* b = NULL;
    size_t s = 0, max_records = 0;
    if (!request) return NULL;
    pthread_mutex_unlock(fake_library_lock);
    request(&b, &s, &max_records);
    pthread_mutex_lock(fake_library_lock);
    if (!b || s < size) {
      (*refused)++;
      return NULL;
    }
    /* Another thread installed a buffer while the lock was dropped: hand that one over first, never lose it. */
    if (fake_buffer) fake_buffer_complete(deliver, callback);
    fake_buffer = b;
    fake_buffer_size = s;
    fake_buffer_used = 0;
  }
  void* p = fake_buffer + fake_buffer_used;
  memset(p, 0, size);
  fake_buffer_used += stride;
  return p;
}

#endif
