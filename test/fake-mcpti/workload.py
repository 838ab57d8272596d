"""A torch CPU workload whose record_function ranges launch FAKE MetaX GPU work through the fake MCPTI library,
captured by the native agent: the CUPTI workload (test/fake-cupti/workload.py) with the MCPTI fake's control
functions and a MetaX GEMM kernel name. 5x matmul+relu, a sort with a memset, a device-to-host copy, a call MCPTI
does not name, a device synchronisation.

usage: workload.py SESSION_DIR [--push-correlation]
"""
import os
import runpy

runpy.run_path(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-cupti", "workload.py"),
    init_globals={"PREFIX": "fake_mcpti", "GEMM": b"mcblas_sgemm_128x128x8_nn_align1"},
    run_name="__main__",
)
