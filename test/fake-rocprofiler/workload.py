"""A torch CPU workload whose record_function ranges launch FAKE AMD GPU work through the fake rocprofiler-sdk
library, captured by the native agent (loaded before torch: rocprofiler_force_configure must run before the runtime
would initialise): the ROCtracer workload (test/fake-roctracer/workload.py) with the rocprofiler-sdk fake's control
functions. 5x matmul+relu, a sort with a memset (a fill kernel, as rocprofiler-sdk reports it), a device-to-host
copy, a kernel whose symbol was never registered, a HIP call the SDK does not name, a stream synchronisation.

usage: workload.py SESSION_DIR [--push-correlation]
"""
import os
import runpy

runpy.run_path(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-roctracer", "workload.py"),
    init_globals={"PREFIX": "fake_rocprofiler"},
    run_name="__main__",
)
