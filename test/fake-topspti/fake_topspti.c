/* A FAKE Enflame GCU TOPSPTI activity library (TopsRider), for tests on machines without an Enflame GCU.
 *
 * TOPSPTI is a CUPTI-shaped API with `topspti` in every function name: topsptiGetVersion (1), topsptiGetTimestamp,
 * topsptiActivityRegisterCallbacks (CUPTI's request and completed callbacks), Enable/Disable, FlushAll,
 * GetNextRecord (CUPTI's honest iterator), GetNumDroppedRecords, topsptiGetCallbackName(domain, cbid, &name), and
 * CUPTI's callback API: topsptiSubscribe (one subscriber; a second gets 39, multiple subscribers not supported),
 * topsptiUnsubscribe, topsptiEnableDomain. Records have CUPTI's kinds and CUPTI's first layouts (the mirror's
 * fp_topspti_* types: kernel 144 B, memcpy 64, memset 64, API 40, RUNTIME and DRIVER).
 *
 * What the agent must get right here:
 * - No external correlation at all: no Push/PopExternalCorrelationId is exported, topsptiActivityEnable(39)
 *   returns 1 (no such kind), and no EXTERNAL_CORRELATION record is ever written. The API-enter and API-exit
 *   callbacks are how a call is tied to the host's ranges: for every runtime call (launch, memcpy, memset,
 *   synchronize, the untabled call), while a subscriber has the runtime domain (2) enabled, its callback runs on
 *   the calling thread with callbackSite ENTER and the call's correlation id before any of the call's records
 *   are written, and with EXIT after; the driver call inside synchronize does the same in the driver domain (1).
 *   The library's lock is never held while the subscriber's callback runs.
 * - The clock is the device's own: topsptiGetTimestamp and every record timestamp read
 *   500000000000 + CLOCK_MONOTONIC_ns * 1.001, another origin and a 0.1 % rate difference, so only an affine
 *   mapping puts device work back in place. The fake itself spins and schedules in real (monotonic) time.
 * - Callback ids are Enflame's own (topsLaunchKernel = 7, topsMemcpyAsync = 11, topsMemsetAsync = 13,
 *   topsDeviceSynchronize = 21, driver topsCtxSynchronize = 5), named by topsptiGetCallbackName only; 999 is the
 *   untabled call, which it does not name.
 * FAKE_TOPSPTI_NO_CALLBACKS=1: subscribe and enable succeed but no callback is ever called (a TOPSPTI release
 * that delivers none). FAKE_TOPSPTI_DROP_EVERY=N drops every Nth device record (counted by
 * topsptiActivityGetNumDroppedRecords), FAKE_TOPSPTI_NO_TIMING_EVERY=N writes every Nth with start = end = 0.
 *
 * The body shared with the other CUPTI clones is test/fake-vendor/cupti_clone.h: control functions a test workload
 * calls through ctypes (fake_topspti_launch_kernel, _memcpy, _memset, _synchronize, _untabled_call), full buffers
 * delivered on the library's own worker thread (test/fake-vendor/delivery.h). It computes nothing on any device. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/topspti/mirror.h"

#define FAKE_MULTIPLE_SUBSCRIBERS 39

#define CLONE_PREFIX topspti
#define CLONE_ENV_PREFIX "FAKE_TOPSPTI_"
#define CLONE_API_VERSION 1
#define CLONE_CLOCK CLOCK_MONOTONIC
#define CLONE_KERNEL_T fp_topspti_kernel
#define CLONE_MEMCPY_T fp_topspti_memcpy
#define CLONE_MEMSET_T fp_topspti_memset
#define CLONE_API_T fp_topspti_api
/* No CLONE_EXTERNAL_T: TOPSPTI has no external-correlation API. */
#define CLONE_API_CALLBACK api_callback_locked

/* Enflame's runtime and driver callback ids. 999 is an id TOPSPTI does not name. */
#define CLONE_CBID_LAUNCH 7
#define CLONE_CBID_MEMCPY 11
#define CLONE_CBID_MEMSET 13
#define CLONE_CBID_SYNC 21
#define CLONE_CBID_UNNAMED 999
#define CLONE_DRIVER_CBID_SYNC 5
#define CLONE_NAME_LAUNCH "topsLaunchKernel"
#define CLONE_NAME_MEMCPY "topsMemcpyAsync"
#define CLONE_NAME_MEMSET "topsMemsetAsync"
#define CLONE_NAME_SYNC "topsDeviceSynchronize"
#define CLONE_DRIVER_NAME_SYNC "topsCtxSynchronize"

#include "../fake-vendor/cupti_clone.h"

/* The GCU's clock: its own origin, and 0.1 % fast against the host's monotonic clock. */
static uint64_t vendor_time(uint64_t host_ns) { return 500000000000ull + host_ns + host_ns / 1000; }

int topsptiGetCallbackName(int domain, uint32_t cbid, const char** name) {
  if (!name) return FAKE_INVALID_PARAMETER;
  const char* known = clone_call_name(domain, cbid);
  if (!known) return FAKE_INVALID_PARAMETER;
  *name = known;
  return FAKE_SUCCESS;
}

/* ---- CUPTI's callback API (one subscriber, under the library's lock) ---- */

static struct {
  int active;
  fp_topspti_callback_fn callback;
  void* userdata;
  int domains[3];  /* indexed by domain: 1 driver, 2 runtime */
  int silent;      /* FAKE_TOPSPTI_NO_CALLBACKS */
} subscriber;
/* CUPTI's per-call slot the enter and exit callbacks of one call share; one per domain, as calls of a domain
 * do not nest on a thread. */
static __thread uint64_t correlation_data[3];
static __thread int return_value; /* every fake call succeeds */

static void api_callback_locked(int domain, int site, uint32_t cbid, uint32_t correlation, const char* symbol) {
  if (!subscriber.active || subscriber.silent || !subscriber.callback || !subscriber.domains[domain]) return;
  fp_topspti_callback_fn callback = subscriber.callback;
  void* userdata = subscriber.userdata;
  if (site == CLONE_SITE_ENTER) correlation_data[domain] = 0;
  fp_topspti_callback_data data = {
      .callbackSite = site == CLONE_SITE_ENTER ? FP_TOPSPTI_API_ENTER : FP_TOPSPTI_API_EXIT,
      .functionName = clone_call_name(domain, cbid),
      .functionReturnValue = site == CLONE_SITE_EXIT ? &return_value : NULL,
      .symbolName = symbol,
      .contextUid = 1,
      .correlationData = &correlation_data[domain],
      .correlationId = correlation,
  };
  /* The subscriber may take its own locks, or call back into the library. */
  pthread_mutex_unlock(&lock);
  callback(userdata, domain, cbid, &data);
  pthread_mutex_lock(&lock);
}

int topsptiSubscribe(void** handle, fp_topspti_callback_fn callback, void* userdata) {
  if (!handle) return FAKE_INVALID_PARAMETER;
  const char* none = getenv("FAKE_TOPSPTI_NO_CALLBACKS");
  pthread_mutex_lock(&lock);
  if (subscriber.active) {
    pthread_mutex_unlock(&lock);
    return FAKE_MULTIPLE_SUBSCRIBERS;
  }
  memset(&subscriber, 0, sizeof subscriber);
  subscriber.active = 1;
  subscriber.callback = callback;
  subscriber.userdata = userdata;
  subscriber.silent = none && strcmp(none, "1") == 0;
  *handle = &subscriber;
  pthread_mutex_unlock(&lock);
  return FAKE_SUCCESS;
}

int topsptiUnsubscribe(void* handle) {
  pthread_mutex_lock(&lock);
  int mine = subscriber.active && handle == (void*)&subscriber;
  if (mine) memset(&subscriber, 0, sizeof subscriber);
  pthread_mutex_unlock(&lock);
  return mine ? FAKE_SUCCESS : FAKE_INVALID_PARAMETER;
}

int topsptiEnableDomain(uint32_t enable, void* handle, int domain) {
  if (domain != CLONE_DOMAIN_DRIVER && domain != CLONE_DOMAIN_RUNTIME) return FAKE_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  int mine = subscriber.active && handle == (void*)&subscriber;
  if (mine) subscriber.domains[domain] = enable != 0;
  pthread_mutex_unlock(&lock);
  return mine ? FAKE_SUCCESS : FAKE_INVALID_PARAMETER;
}
