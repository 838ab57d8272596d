"""One measurement for bench/kineto-adaptor.mjs: a launch-bound loop (aten::mm on 4x4 tensors whose CPU kernel
launches a GEMM through the FAKE vendor library) timed on the launching thread, under VARIANT:
  idle        the fake library alone, nothing profiling
  idle-plugin the capture agent and the Kineto plugin loaded and registered, nothing profiling
  plain       torch.profiler (CPU activity) over the loop, no plugin: what a profile costs without device activity
  adaptor     torch.profiler (CPU + PrivateUse1) over the loop with the plugin: device activity recorded and linked
Prints the loop's thread CPU seconds per launch (ns)."""
import ctypes
import os
import sys
import time

variant, launches = sys.argv[1], int(sys.argv[2])
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "native", "agent", "python"))
if variant in ("idle-plugin", "adaptor"):
    from flagprof_agent import native

    native.load_agent()
import torch  # noqa: E402

if variant in ("idle-plugin", "adaptor"):
    torch.utils.rename_privateuse1_backend("flagos")
    from flagprof_agent import kineto_plugin

    kineto_plugin.load(torch)

fake = ctypes.CDLL(os.environ["FLAGOS_TRACER_LIBRARY"])
fake.fake_cupti_launch_kernel.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 9 + [ctypes.c_uint64]
GEMM = b"_ZN7cutlass6KernelI43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE"
lib = torch.library.Library("aten", "IMPL")


def mm(a, b):
    fake.fake_cupti_launch_kernel(GEMM, 1, 1, 1, 32, 1, 1, 16, 0, 0, 100)
    return torch.bmm(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0)


lib.impl("mm", mm, "CPU")
a = torch.randn(4, 4)


def loop():
    for _ in range(launches):
        torch.mm(a, a)


loop()  # warm
if os.environ.get("BENCH_CPU") is not None:
    os.sched_setaffinity(0, {int(os.environ["BENCH_CPU"])})
if variant in ("plain", "adaptor"):
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.PrivateUse1] if variant == "adaptor" else [])
    prof = profile(activities=activities)
    prof.start()
    t0 = time.thread_time_ns()
    loop()
    elapsed = time.thread_time_ns() - t0
    prof.stop()
else:
    t0 = time.thread_time_ns()
    loop()
    elapsed = time.thread_time_ns() - t0
print(elapsed / launches)
