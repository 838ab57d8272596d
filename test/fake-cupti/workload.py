"""A torch CPU workload whose record_function ranges launch FAKE device work through the fake CUPTI library,
captured by the native agent (flagprof_agent.native, loaded before torch). Shaped like the parity workload:
5x matmul+relu, a sort, a device-to-host copy.

usage: workload.py SESSION_DIR [--push-correlation] [--graph]

--graph adds one CUDA-graph replay (fake::graph_replay: a cudaGraphLaunch of three kernel nodes of graph 7).

Other fakes with the CUPTI fake's control functions run it with their own prefix and kernel name
(test/fake-mcpti/workload.py): PREFIX and GEMM in the globals it is run with.
"""
import ctypes
import os
import sys

from flagprof_agent import native  # before torch: arms the vendor library

session_dir = sys.argv[1]
push = "--push-correlation" in sys.argv
graph = "--graph" in sys.argv
capture = native.open_capture(session_dir)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-vendor"))
from mm_launch import launch_gemm_inside_mm  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

# The fake the agent bound: FLAGOS_TRACER_LIBRARY, or FAKE_LIBRARY where a test names it another way.
library = ctypes.CDLL(os.environ.get("FAKE_LIBRARY") or os.environ["FLAGOS_TRACER_LIBRARY"])
PREFIX = globals().get("PREFIX", "fake_cupti")


class _Controls:
    """The fake's control functions under their names without the prefix (fake.launch_kernel, ...)."""

    def __getattr__(self, name):
        return getattr(library, "%s_%s" % (PREFIX, name))


fake = _Controls()
I, U = ctypes.c_int, ctypes.c_uint64
fake.launch_kernel.argtypes = [ctypes.c_char_p, I, I, I, I, I, I, I, I, I, U]
fake.memcpy.argtypes = [U, I, I, I]
fake.memset.argtypes = [U, I]

GEMM = globals().get("GEMM", b"_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE")
RELU = b"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_"
SORT = b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i"

# The GEMM is launched from inside aten::mm (test/fake-vendor/mm_launch.py), pushed ids around it.
_mm = launch_gemm_inside_mm(
    torch, lambda: fake.launch_kernel(GEMM, 2, 2, 1, 256, 1, 1, 128, 16384, 0, 20000), capture if push else None
)

# Launched before start(): the capture window must leave it out.
fake.launch_kernel(RELU, 1, 1, 1, 32, 1, 1, 16, 0, 0, 1000)

a = torch.randn(256, 256)
b = torch.randn(256, 256)
capture.start()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for step in range(5):
        with record_function("fake::matmul"):
            c = a @ b  # launches the GEMM inside aten::mm
        with record_function("fake::relu"):
            c = torch.relu(c)
            fake.launch_kernel(RELU, 256, 1, 1, 128, 1, 1, 16, 0, 0, 3000)
    with record_function("fake::sort"):
        torch.sort(torch.randn(16))
        fake.memset(64, 0)
        fake.launch_kernel(SORT, 1, 1, 1, 16, 1, 1, 38, 1024, 0, 4000)
    with record_function("fake::to_cpu"):
        fake.memcpy(4096, 2, 3, 1)
    if graph:
        fake.graph_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, I, U]
        with record_function("fake::graph_replay"):
            fake.graph_launch(RELU, 7, 3, 2000)
    fake.untabled_call()
    fake.synchronize()
capture.stop()
prof.export_chrome_trace(os.path.join(session_dir, "trace.json"))
print(capture.close())
