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
 * The body shared with the other CUPTI clones is test/fake-vendor/cupti_clone.h: control functions a test workload
 * calls through ctypes to "launch" device work on the calling thread (fake_mcpti_launch_kernel, _memcpy, _memset,
 * _synchronize, _untabled_call); each launch writes an EXTERNAL_CORRELATION record when an id was pushed, a
 * RUNTIME record and the device record sharing its correlation id, on a per-stream device timeline. Full buffers
 * are handed to the completed callback on the library's own worker thread (test/fake-vendor/delivery.h);
 * mcptiActivityFlushAll returns once every buffer queued before it has been delivered.
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../fake-vendor/delivery.h"
#include "../fake-vendor/names.h"

#include "vendors/mcpti/mirror.h"

#define CLONE_PREFIX mcpti
#define CLONE_ENV_PREFIX "FAKE_MCPTI_"
#define CLONE_API_VERSION FP_MCPTI_API_VERSION
#define CLONE_CLOCK CLOCK_REALTIME
#define CLONE_KERNEL_T fp_mcpti_kernel8
#define CLONE_MEMCPY_T fp_mcpti_memcpy5
#define CLONE_MEMSET_T fp_mcpti_memset4
#define CLONE_API_T fp_mcpti_api
#define CLONE_EXTERNAL_T fp_mcpti_external_correlation

/* MetaX's runtime and driver callback ids. 211 is cudaLaunchKernel in CUDA's table and nothing MCPTI names. */
#define CLONE_CBID_LAUNCH 17
#define CLONE_CBID_MEMCPY 9
#define CLONE_CBID_MEMSET 12
#define CLONE_CBID_SYNC 4
#define CLONE_CBID_UNNAMED 211
#define CLONE_DRIVER_CBID_SYNC 3
#define CLONE_NAME_LAUNCH "mcLaunchKernel"
#define CLONE_NAME_MEMCPY "mcMemcpyAsync"
#define CLONE_NAME_MEMSET "mcMemsetAsync"
#define CLONE_NAME_SYNC "mcDeviceSynchronize"
#define CLONE_DRIVER_NAME_SYNC "mcCtxSynchronize"

/* The stale iterator is MCPTI's own: mcptiActivityGetNextRecord is written below. */
#define CLONE_VENDOR_ITERATOR

#include "../fake-vendor/cupti_clone.h"

/* MCPTI stamps records with the host's realtime clock itself. */
static uint64_t vendor_time(uint64_t host_ns) { return host_ns; }

/* The EXTERNAL_CORRELATION record already handed out a second time, per iterating thread. */
static __thread const uint8_t* repeated_record;

int mcptiActivityGetNextRecord(uint8_t* buf, size_t valid, void** record) {
  if (!buf || !record) return FAKE_INVALID_PARAMETER;
  const uint8_t* prev = (const uint8_t*)*record;
  if (prev) {
    uint32_t kind;
    memcpy(&kind, prev, 4);
    if (kind == FP_MCPTI_KIND_EXTERNAL_CORRELATION && repeated_record != prev) {
      repeated_record = prev; /* MACA 3.8.0: the same record once more */
      return FAKE_SUCCESS;
    }
  }
  repeated_record = NULL;
  return clone_next_record(buf, valid, record);
}

int mcptiActivityGetApiName(int kind, uint32_t cbid, const char** name) {
  if (in_buffer_callback) {
    fputs("fake MCPTI: mcptiActivityGetApiName called inside the buffer callback (MCPTI deadlocks here)\n", stderr);
    abort();
  }
  if (!name) return FAKE_INVALID_PARAMETER;
  int domain = kind == FP_MCPTI_KIND_RUNTIME  ? CLONE_DOMAIN_RUNTIME
               : kind == FP_MCPTI_KIND_DRIVER ? CLONE_DOMAIN_DRIVER
                                              : 0;
  const char* known = clone_call_name(domain, cbid);
  if (!known) return FAKE_INVALID_PARAMETER;
  *name = known;
  return FAKE_SUCCESS;
}

/* ---- MetaX's CUDA-compatibility runtime: the device attributes occupancy needs (seed 001) ----
 * MACA's runtime exports cudaDeviceGetAttribute as wcudaDeviceGetAttribute (cudaDeviceAttr numbering); real MCPTI
 * writes no DEVICE records, so the agent asks these. The fake answers for one C500-like device: 104 compute units
 * with 64-wide waves (not NVIDIA's 32), 2048 threads and 16 blocks per unit. Knob FAKE_MCPTI_NO_ATTRIBUTES=1: the
 * runtime refuses every attribute (an older MACA). */
int wcudaGetDeviceCount(int* count) {
  if (!count) return FAKE_INVALID_PARAMETER;
  *count = 1;
  return FAKE_SUCCESS;
}

int wcudaDeviceGetAttribute(int* value, int attribute, int device) {
  const char* refuse = getenv("FAKE_MCPTI_NO_ATTRIBUTES");
  if (!value || device != 0 || (refuse && refuse[0] == '1')) return FAKE_INVALID_PARAMETER;
  switch (attribute) {
    case 1: *value = 1024; return FAKE_SUCCESS;     /* MaxThreadsPerBlock */
    case 8: *value = 65536; return FAKE_SUCCESS;    /* MaxSharedMemoryPerBlock */
    case 10: *value = 64; return FAKE_SUCCESS;      /* WarpSize */
    case 12: *value = 131072; return FAKE_SUCCESS;  /* MaxRegistersPerBlock */
    case 16: *value = 104; return FAKE_SUCCESS;     /* MultiProcessorCount */
    case 39: *value = 2048; return FAKE_SUCCESS;    /* MaxThreadsPerMultiProcessor */
    case 75: *value = 8; return FAKE_SUCCESS;       /* ComputeCapabilityMajor */
    case 76: *value = 0; return FAKE_SUCCESS;       /* ComputeCapabilityMinor */
    case 81: *value = 65536; return FAKE_SUCCESS;   /* MaxSharedMemoryPerMultiprocessor */
    case 82: *value = 131072; return FAKE_SUCCESS;  /* MaxRegistersPerMultiprocessor */
    case 106: *value = 16; return FAKE_SUCCESS;     /* MaxBlocksPerMultiprocessor */
    default: return FAKE_INVALID_PARAMETER;
  }
}
