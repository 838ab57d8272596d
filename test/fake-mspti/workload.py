"""A torch CPU workload whose record_function ranges launch FAKE Ascend NPU work through the fake MSPTI library,
captured by the native agent (flagprof_agent.native, loaded before torch). Shaped like the CUPTI workload:
5x matmul+relu, a sort with a memset, a device-to-host copy, a stream synchronisation.

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

fake = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"])
S, I, U = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64
fake.fake_mspti_launch_kernel.argtypes = [S, S, S, U]
fake.fake_mspti_memcpy.argtypes = [S, U, I, I]
fake.fake_mspti_memset.argtypes = [S, U, I, I]

MATMUL = (b"aclnnMatmul", b"aclnnMatmul_MatMulCommon_MatMulV2", b"KERNEL_AICORE")
RELU = (b"aclnnRelu", b"aclnnRelu_ReluAiVector_Relu", b"KERNEL_AIVEC")
SORT = (b"aclnnSort", b"aclnnSort_SortAiCore_Sort", b"KERNEL_AICORE")

# The GEMM is launched from inside aten::mm (test/fake-vendor/mm_launch.py), pushed ids around it.
_mm = launch_gemm_inside_mm(torch, lambda: fake.fake_mspti_launch_kernel(*MATMUL, 20000), capture if push else None)

# Launched before start(): the capture window must leave it out.
fake.fake_mspti_launch_kernel(*RELU, 1000)

a = torch.randn(256, 256)
b = torch.randn(256, 256)
capture.start()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for step in range(5):
        with record_function("fake::matmul"):
            c = a @ b  # launches the GEMM inside aten::mm
        with record_function("fake::relu"):
            c = torch.relu(c)
            fake.fake_mspti_launch_kernel(*RELU, 3000)
    with record_function("fake::sort"):
        torch.sort(torch.randn(16))
        fake.fake_mspti_memset(b"aclrtMemsetAsync", 64, 0, 1)
        fake.fake_mspti_launch_kernel(*SORT, 4000)
    with record_function("fake::to_cpu"):
        fake.fake_mspti_memcpy(b"aclrtMemcpy", 4096, 3, 0)
    fake.fake_mspti_launch_kernel(None, None, None, 500)  # names the vendor left out
    fake.fake_mspti_synchronize()
capture.stop()
prof.export_chrome_trace(os.path.join(session_dir, "trace.json"))
print(capture.close())
