"""A torch CPU workload whose record_function ranges launch FAKE AMD GPU work through the fake rocprofiler-sdk
library, captured by the native agent (flagprof_agent.native, loaded before torch: rocprofiler_force_configure
must run before the runtime would initialise). Shaped like the ROCtracer workload: 5x matmul+relu, a sort with a
memset (a fill kernel, as rocprofiler-sdk reports it), a device-to-host copy, a HIP call the SDK does not name, a
stream synchronisation.

usage: workload.py SESSION_DIR [--push-correlation]
"""
import ctypes
import os
import sys

from flagprof_agent import native  # before torch: arms the vendor library

session_dir = sys.argv[1]
push = "--push-correlation" in sys.argv
capture = native.open_capture(session_dir)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-vendor"))
from mm_launch import launch_gemm_inside_mm  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

# The fake the agent bound: FLAGOS_TRACER_LIBRARY, or FAKE_LIBRARY where a test names it another way.
fake = ctypes.CDLL(os.environ.get("FAKE_LIBRARY") or os.environ["FLAGOS_TRACER_LIBRARY"])
S, I, U = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64
fake.fake_rocprofiler_launch_kernel.argtypes = [S, U, I]
fake.fake_rocprofiler_memcpy.argtypes = [U, I]
fake.fake_rocprofiler_memset.argtypes = [U]

GEMM = b"Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0"
RELU = b"_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_15launch_clamp_scalarEvEUlfE_EEviT0_T1_"
SORT = b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i"

# The GEMM is launched from inside aten::mm (test/fake-vendor/mm_launch.py), pushed ids around it.
_mm = launch_gemm_inside_mm(torch, lambda: fake.fake_rocprofiler_launch_kernel(GEMM, 20000, 1), capture if push else None)

# Launched before start(): the capture window must leave it out.
fake.fake_rocprofiler_launch_kernel(RELU, 1000, 0)

a = torch.randn(256, 256)
b = torch.randn(256, 256)
capture.start()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for step in range(5):
        with record_function("fake::matmul"):
            c = a @ b  # launches the GEMM inside aten::mm
        with record_function("fake::relu"):
            c = torch.relu(c)
            fake.fake_rocprofiler_launch_kernel(RELU, 3000, 0)
    with record_function("fake::sort"):
        torch.sort(torch.randn(16))
        fake.fake_rocprofiler_memset(64)
        fake.fake_rocprofiler_launch_kernel(SORT, 4000, 0)
    with record_function("fake::to_cpu"):
        fake.fake_rocprofiler_memcpy(4096, 2)
    fake.fake_rocprofiler_launch_kernel(None, 500, 0)  # a kernel whose symbol was never registered
    fake.fake_rocprofiler_untabled_call()
    fake.fake_rocprofiler_synchronize()
capture.stop()
prof.export_chrome_trace(os.path.join(session_dir, "trace.json"))
print(capture.close())
