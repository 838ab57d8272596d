"""torch.profiler over the Kineto adaptor plugin, with device work from the FAKE vendor library
FLAGOS_TRACER_LIBRARY names (CUPTI, MSPTI or ROCtracer, told by its exports).

The work is launched from inside torch operators (torch.library custom ops), as a device backend's kernels are:
torch pushes each op's correlation id to the adaptor's session when the op starts, so the vendor records carry
it as their External id. Shaped like the parity workload: 5x mm+relu, a sort (a memset and a kernel), a
device-to-host copy. Writes OUT/trace.json and OUT/averages.json (self device time per op).

usage: kineto_workload.py OUT_DIR [--define NAME]
"""
import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "native", "agent", "python"))
from flagprof_agent import native  # noqa: E402  (before torch: arms the vendor library)

native.load_agent()

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from flagprof_agent import kineto_plugin  # noqa: E402

out = sys.argv[1]
defines = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--define"]
torch.utils.rename_privateuse1_backend("flagos")
print("plugin:", kineto_plugin.load(torch, defines))

fake = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"])
S, I, U = ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64
if hasattr(fake, "fake_cupti_launch_kernel"):
    fake.fake_cupti_launch_kernel.argtypes = [S, I, I, I, I, I, I, I, I, I, U]
    fake.fake_cupti_memcpy.argtypes = [U, I, I, I]
    fake.fake_cupti_memset.argtypes = [U, I]
    KERNELS = {
        "mm": b"_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE",
        "relu": b"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
        "sort": b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i",
    }

    def kernel(which, ns):
        fake.fake_cupti_launch_kernel(KERNELS[which], 2, 2, 1, 256, 1, 1, 64, 1024, 0, ns)

    def memset(nbytes):
        fake.fake_cupti_memset(nbytes, 0)

    def to_host(nbytes):
        fake.fake_cupti_memcpy(nbytes, 2, 3, 1)

    def synchronize():
        fake.fake_cupti_synchronize()
elif hasattr(fake, "fake_mspti_launch_kernel"):
    fake.fake_mspti_launch_kernel.argtypes = [S, S, S, U]
    fake.fake_mspti_memcpy.argtypes = [S, U, I, I]
    fake.fake_mspti_memset.argtypes = [S, U, I, I]
    KERNELS = {
        "mm": (b"aclnnMatmul", b"aclnnMatmul_MatMulCommon_MatMulV2", b"KERNEL_AICORE"),
        "relu": (b"aclnnRelu", b"aclnnRelu_ReluAiVector_Relu", b"KERNEL_AIVEC"),
        "sort": (b"aclnnSort", b"aclnnSort_SortAiCore_Sort", b"KERNEL_AICORE"),
    }

    def kernel(which, ns):
        fake.fake_mspti_launch_kernel(*KERNELS[which], ns)

    def memset(nbytes):
        fake.fake_mspti_memset(b"aclrtMemsetAsync", nbytes, 0, 1)

    def to_host(nbytes):
        fake.fake_mspti_memcpy(b"aclrtMemcpyAsync", nbytes, 2, 1)

    def synchronize():
        fake.fake_mspti_synchronize()
else:
    fake.fake_roctracer_launch_kernel.argtypes = [S, U, I]
    fake.fake_roctracer_memcpy.argtypes = [U, I]
    fake.fake_roctracer_memset.argtypes = [U]
    KERNELS = {
        "mm": b"Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0",
        "relu": b"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
        "sort": b"_ZN2at6native20bitonicSortKVInPlaceIfEEvPT_i",
    }

    def kernel(which, ns):
        fake.fake_roctracer_launch_kernel(KERNELS[which], ns, 1 if which == "mm" else 0)

    def memset(nbytes):
        fake.fake_roctracer_memset(nbytes)

    def to_host(nbytes):
        fake.fake_roctracer_memcpy(nbytes, 2)

    def synchronize():
        fake.fake_roctracer_synchronize()


# aten::mm's CPU kernel replaced by one that launches the GEMM, as a device backend's mm does: the parity checks
# look for aten::mm's own device time. (bmm computes it, so the kernel does not call itself.)
_aten = torch.library.Library("aten", "IMPL")


def _mm_launching(a, b):
    kernel("mm", 20000)
    return torch.bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0)


_aten.impl("mm", _mm_launching, "CPU")


@torch.library.custom_op("fakedev::relu", mutates_args=())
def fake_relu(a: torch.Tensor) -> torch.Tensor:
    kernel("relu", 3000)
    return torch.relu(a)


@torch.library.custom_op("fakedev::sort", mutates_args=())
def fake_sort(a: torch.Tensor) -> torch.Tensor:
    memset(64)
    kernel("sort", 4000)
    return torch.sort(a).values


@torch.library.custom_op("fakedev::to_cpu", mutates_args=())
def fake_to_cpu(a: torch.Tensor) -> torch.Tensor:
    to_host(a.numel() * a.element_size())
    return a.clone()


kernel("relu", 1000)  # before the profile: the capture window leaves it out
a = torch.randn(128, 128)
b = torch.randn(128, 128)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    for _ in range(5):
        c = fake_relu(torch.mm(a, b))
    fake_sort(torch.randn(16))
    fake_to_cpu(c)
    synchronize()
prof.export_chrome_trace(os.path.join(out, "trace.json"))
averages = {}
for row in prof.key_averages():
    averages[row.key] = {"count": row.count, "self_device_us": row.self_device_time_total,
                         "device_us": row.device_time_total}
with open(os.path.join(out, "averages.json"), "w") as f:
    json.dump(averages, f, indent=1)
print("done")
