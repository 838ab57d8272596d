"""Choosing the capture mode.

The decision for 'auto' is made before torch is imported: agent mode must load its native library before torch
touches a device, and loading it when torch's own profiler owns the device would put two subscribers on one
activity API. So torch's build is read from its version file and the device nodes, not from an imported torch.
"""

import glob
import importlib.util
import os
import re

MODES = ("auto", "kineto", "agent", "cpu")


def torch_build():
    """What the installed torch was built for, without importing it; None when torch is not installed."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    build = {"version": None, "cuda": None, "hip": None, "xpu": None, "path": None}
    for location in spec.submodule_search_locations:
        build["path"] = location
        try:
            with open(os.path.join(location, "version.py"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        for key, name in (("version", "__version__"), ("cuda", "cuda"), ("hip", "hip"), ("xpu", "xpu")):
            match = re.search(r"^%s\s*(?::[^=]*)?=\s*'([^']*)'" % re.escape(name), text, re.M)
            if match:
                build[key] = match.group(1)
        break
    return build


def device_backend_plugins():
    """Out-of-tree device backends torch autoloads (PrivateUse1 plugins such as torch_fl register here)."""
    try:
        import importlib.metadata as metadata

        entry_points = metadata.entry_points()
        if hasattr(entry_points, "select"):
            found = entry_points.select(group="torch.backends")
        else:  # Python 3.9
            found = entry_points.get("torch.backends", [])
        return sorted({ep.name for ep in found})
    except Exception:
        return []


def _device_nodes(patterns):
    return any(glob.glob(p) for p in patterns)


def device_hint(build):
    """(True, why) when torch can probably trace a device itself; decided without importing torch."""
    plugins = device_backend_plugins()
    if plugins:
        return True, "torch device backend plugin registered (%s): its Kineto plugin traces the device" % ", ".join(plugins)
    if build.get("cuda") and _device_nodes(["/dev/nvidiactl", "/dev/nvidia0"]):
        return True, "torch is built with CUDA %s and an NVIDIA device is present" % build["cuda"]
    if build.get("hip") and _device_nodes(["/dev/kfd"]):
        return True, "torch is built with ROCm/HIP %s and a GPU is present" % build["hip"]
    if build.get("xpu") and _device_nodes(["/dev/dri/renderD*"]):
        return True, "torch is built with XPU support and a GPU is present"
    if build.get("cuda"):
        return False, "torch is built with CUDA %s but no NVIDIA device is present" % build["cuda"]
    return False, "torch %s has no device support of its own" % (build.get("version") or "")


def device_activities(torch):
    """The profiler activities torch itself supports in this interpreter, beyond CPU, with names."""
    activity = torch.profiler.ProfilerActivity
    found = []
    try:
        if torch.cuda.is_available():
            found.append(("CUDA", activity.CUDA))
    except Exception:
        pass
    try:
        backend = torch._C._get_privateuse1_backend_name()
        if backend and backend != "privateuseone" and hasattr(activity, "PrivateUse1"):
            found.append(("PrivateUse1:%s" % backend, activity.PrivateUse1))
    except Exception:
        pass
    try:
        if hasattr(torch, "xpu") and torch.xpu.is_available() and hasattr(activity, "XPU"):
            found.append(("XPU", activity.XPU))
    except Exception:
        pass
    return found
