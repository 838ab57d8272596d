/* A FAKE Moore Threads MUSA MUPTI activity library, for tests on machines without a Moore Threads GPU.
 *
 * MUPTI is the CUPTI C ABI with `mupti` in place of `cupti` in every function name: muptiGetVersion (12),
 * muptiGetTimestamp, muptiActivityRegisterCallbacks, Enable/Disable, FlushAll, GetNextRecord (CUPTI's honest
 * iterator), GetNumDroppedRecords, Push/PopExternalCorrelationId, muptiGetCallbackName(domain, cbid, &name)
 * (domain 2 runtime, 1 driver; callable at any time, inside a buffer callback too) and muptiSetThreadIdType (accepted;
 * the thread id in API records stays the system tid). Records have CUPTI's kinds and layouts at the versions MUSA
 * ships (the mirror's fp_mupti_* types: Kernel6 168 B, Memcpy4 80, Memset3 80, API 40, ExternalCorrelation 24).
 *
 * What the agent must get right here:
 * - The clock: every record timestamp, and muptiGetTimestamp, is CLOCK_MONOTONIC ns, not realtime; only the
 *   capture's calibration puts MUSA work on the host timeline.
 * - Callback ids are MUSA's own namespace (musaLaunchKernel = 31, musaMemcpyAsync = 41, musaMemsetAsync = 51,
 *   musaDeviceSynchronize = 165, driver muCtxSynchronize = 3), which CUDA's cbid table names otherwise (cuda*
 *   names, and 31 is cudaMemcpy there): only muptiGetCallbackName gives the right name, and it returns 1
 *   (invalid) for an id it does not know (999, the untabled call).
 * - FAKE_MUPTI_NO_EXTERNAL=1: Push/PopExternalCorrelationId return 43 (not implemented, as MUSA's Kineto fork
 *   reports) and no EXTERNAL_CORRELATION record is ever written.
 * FAKE_MUPTI_DROP_EVERY=N drops every Nth device record (counted by muptiActivityGetNumDroppedRecords) and
 * FAKE_MUPTI_NO_TIMING_EVERY=N writes every Nth with start = end = 0, as the MCPTI fake's knobs do.
 *
 * The body shared with the other CUPTI clones is test/fake-vendor/cupti_clone.h: control functions a test workload
 * calls through ctypes (fake_mupti_launch_kernel, _memcpy, _memset, _synchronize, _untabled_call), full buffers
 * delivered on the library's own worker thread (test/fake-vendor/delivery.h). It computes nothing on any device. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/mupti/mirror.h"

#define FAKE_NOT_IMPLEMENTED 43

/* FAKE_MUPTI_NO_EXTERNAL=1: a MUPTI build without the external-correlation API. */
static int external_refusal(void) {
  const char* off = getenv("FAKE_MUPTI_NO_EXTERNAL");
  return off && strcmp(off, "1") == 0 ? FAKE_NOT_IMPLEMENTED : 0;
}

#define CLONE_PREFIX mupti
#define CLONE_ENV_PREFIX "FAKE_MUPTI_"
#define CLONE_API_VERSION 12
#define CLONE_CLOCK CLOCK_MONOTONIC
#define CLONE_KERNEL_T fp_mupti_kernel6
#define CLONE_MEMCPY_T fp_mupti_memcpy4
#define CLONE_MEMSET_T fp_mupti_memset3
#define CLONE_API_T fp_mupti_api
#define CLONE_EXTERNAL_T fp_mupti_external_correlation
#define CLONE_EXTERNAL_REFUSAL() external_refusal()

/* MUSA's runtime and driver callback ids. 999 is an id MUPTI does not name. */
#define CLONE_CBID_LAUNCH 31
#define CLONE_CBID_MEMCPY 41
#define CLONE_CBID_MEMSET 51
#define CLONE_CBID_SYNC 165
#define CLONE_CBID_UNNAMED 999
#define CLONE_DRIVER_CBID_SYNC 3
#define CLONE_NAME_LAUNCH "musaLaunchKernel"
#define CLONE_NAME_MEMCPY "musaMemcpyAsync"
#define CLONE_NAME_MEMSET "musaMemsetAsync"
#define CLONE_NAME_SYNC "musaDeviceSynchronize"
#define CLONE_DRIVER_NAME_SYNC "muCtxSynchronize"

#include "../fake-vendor/cupti_clone.h"

/* MUPTI stamps records with CLOCK_MONOTONIC, the clock the fake runs on. */
static uint64_t vendor_time(uint64_t host_ns) { return host_ns; }

int muptiGetCallbackName(int domain, uint32_t cbid, const char** name) {
  if (!name) return FAKE_INVALID_PARAMETER;
  const char* known = clone_call_name(domain, cbid);
  if (!known) return FAKE_INVALID_PARAMETER;
  *name = known;
  return FAKE_SUCCESS;
}

int muptiSetThreadIdType(int type) {
  (void)type;
  return FAKE_SUCCESS;
}
