"""A torch CPU workload whose record_function ranges launch FAKE AMD GPU work through the fake ROCtracer library,
captured by the native agent (flagprof_agent.native, loaded before torch). Shaped like the CUPTI workload:
5x matmul+relu, a sort with a memset, a device-to-host copy, a stream synchronisation.

usage: workload.py SESSION_DIR [--push-correlation] [--module-launch]

Each kernel is launched with its own grid, block and shared memory (DIMS), where the fake takes them
(fake_roctracer_set_launch_dims); --module-launch sends the sort kernel through hipModuleLaunchKernel's layout
instead of hipLaunchKernel's (the GEMM always goes through hipExtModuleLaunchKernel's).

The rocprofiler-sdk fake, with the same control functions, runs it with its own prefix
(test/fake-rocprofiler/workload.py): PREFIX in the globals it is run with.
"""
import ctypes
import os
import sys

from flagprof_agent import native  # before torch: arms the vendor library

session_dir = sys.argv[1]
push = "--push-correlation" in sys.argv
module_launch = "--module-launch" in sys.argv
capture = native.open_capture(session_dir)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-vendor"))
from mm_launch import launch_gemm_inside_mm  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

# The fake the agent bound: FLAGOS_TRACER_LIBRARY, or FAKE_LIBRARY where a test names it another way.
library = ctypes.CDLL(os.environ.get("FAKE_LIBRARY") or os.environ["FLAGOS_TRACER_LIBRARY"])
PREFIX = globals().get("PREFIX", "fake_roctracer")


class _Controls:
    """The fake's control functions under their names without the prefix (fake.launch_kernel, ...)."""

    def __getattr__(self, name):
        return getattr(library, "%s_%s" % (PREFIX, name))


fake = _Controls()
S, I, U = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64
fake.launch_kernel.argtypes = [S, U, I]
fake.memcpy.argtypes = [U, I]
fake.memset.argtypes = [U]

GEMM = b"Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0"
RELU = b"_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_15launch_clamp_scalarEvEUlfE_EEviT0_T1_"
SORT = b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i"

# (grid in blocks, block in threads, dynamic shared memory bytes) per kernel; None for the unnamed one.
DIMS = {
    GEMM: ((16, 8, 1), (256, 1, 1), 8192),
    RELU: ((256, 1, 1), (128, 1, 1), 512),
    SORT: ((1, 1, 1), (1024, 1, 1), 4096),
    None: ((3, 2, 1), (64, 4, 1), 0),
}

if hasattr(library, PREFIX + "_set_launch_dims"):
    fake.set_launch_dims.argtypes = [ctypes.c_uint32] * 7

    def launch(kernel, ns, module):
        grid, block, shared = DIMS[kernel]
        fake.set_launch_dims(*grid, *block, shared)
        fake.launch_kernel(kernel, ns, module)

else:  # a fake without launch dims (rocprofiler-sdk's)

    def launch(kernel, ns, module):
        fake.launch_kernel(kernel, ns, module)


# The GEMM is launched from inside aten::mm (test/fake-vendor/mm_launch.py), pushed ids around it.
_mm = launch_gemm_inside_mm(torch, lambda: launch(GEMM, 20000, 1), capture if push else None)

# Launched before start(): the capture window must leave it out.
launch(RELU, 1000, 0)

a = torch.randn(256, 256)
b = torch.randn(256, 256)
capture.start()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for step in range(5):
        with record_function("fake::matmul"):
            c = a @ b  # launches the GEMM inside aten::mm
        with record_function("fake::relu"):
            c = torch.relu(c)
            launch(RELU, 3000, 0)
    with record_function("fake::sort"):
        torch.sort(torch.randn(16))
        fake.memset(64)
        launch(SORT, 4000, 2 if module_launch else 0)
    with record_function("fake::to_cpu"):
        fake.memcpy(4096, 2)
    launch(None, 500, 0)  # a name the runtime left out
    if hasattr(library, PREFIX + "_untabled_call"):
        fake.untabled_call()  # a HIP call the library does not name (rocprofiler-sdk's fake has one)
    fake.synchronize()
capture.stop()
prof.export_chrome_trace(os.path.join(session_dir, "trace.json"))
print(capture.close())
