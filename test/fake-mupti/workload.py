"""A torch CPU workload whose record_function ranges launch FAKE Moore Threads GPU work through the fake MUPTI
library, captured by the native agent: the CUPTI workload (test/fake-cupti/workload.py) with the MUPTI fake's
control functions and a MUSA GEMM kernel name. 5x matmul+relu, a sort with a memset, a device-to-host copy, a call
MUPTI does not name, a device synchronisation.

usage: workload.py SESSION_DIR [--push-correlation]
"""
import os
import runpy

runpy.run_path(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-cupti", "workload.py"),
    init_globals={"PREFIX": "fake_mupti", "GEMM": b"mublas_sgemm_128x128x8_nn"},
    run_name="__main__",
)
