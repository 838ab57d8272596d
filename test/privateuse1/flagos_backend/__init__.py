"""The "flagos" PrivateUse1 test backend: a device over host memory whose ops launch their device work through a
fake vendor activity library (FLAGOS_TRACER_LIBRARY), so torch's profilers can be tried without hardware.

`import flagos_backend` loads the flagprof capture agent, names PrivateUse1 "flagos", builds (once, cached) and
loads the C++ backend, and registers the torch.flagos device module. The math runs on the CPU.
"""
import hashlib
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES_DIR = os.path.dirname(_HERE)
_ROOT = os.path.dirname(os.path.dirname(_SOURCES_DIR))
_NATIVE = os.path.join(_ROOT, "native")
# The Kineto adaptor's sources, compiled into the backend once they exist.
_ADAPTOR_SOURCES = [
    os.path.join(_NATIVE, "kineto", "flagos_kineto_profiler.cc"),
    os.path.join(_NATIVE, "kineto", "agent_device_tracer.cc"),
    os.path.join(_NATIVE, "tracer", "device_tracer.cc"),
]
_BACKEND_SOURCES = [
    os.path.join(_SOURCES_DIR, "flagos_backend.cpp"),
    os.path.join(_SOURCES_DIR, "flagos_runtime.cc"),
]
_HEADERS = [
    os.path.join(_SOURCES_DIR, "flagos_runtime.h"),
    os.path.join(_NATIVE, "kineto", "flagos_kineto_profiler.h"),
    os.path.join(_NATIVE, "tracer", "device_tracer.h"),
    os.path.join(_NATIVE, "tracer", "tracer_abi.h"),
]

__all__ = ["device_clock_ns", "tracer_family", "has_kineto_adaptor", "extension_path"]


class FlagosBackendError(RuntimeError):
    """A one-line reason the backend cannot start."""


def _require_tracer_library():
    if not os.environ.get("FLAGOS_TRACER_LIBRARY", "").strip():
        raise FlagosBackendError(
            "FLAGOS_TRACER_LIBRARY is not set: the flagos test backend needs a fake vendor library")


def _load_agent():
    # The agent binds the vendor library and registers its buffer callbacks; that must precede any device work.
    try:
        from flagprof_agent import native
    except ImportError:
        sys.path.insert(0, os.path.join(_NATIVE, "agent", "python"))
        from flagprof_agent import native
    load = getattr(native, "load_agent", None) or native._load
    load()


def _adaptor_available():
    return all(os.path.exists(path) for path in _ADAPTOR_SOURCES)


def _cache_root():
    return os.environ.get("FLAGPROF_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "flagprof")


def _build_settings():
    import torch

    with_adaptor = _adaptor_available()
    sources = _BACKEND_SOURCES + (_ADAPTOR_SOURCES if with_adaptor else [])
    cflags = ["-O1"]
    include_dirs = [_SOURCES_DIR]
    if with_adaptor:
        cflags += ["-DFLAGOS_BACKEND_WITH_ADAPTOR", "-DUSE_KINETO", "-DFMT_HEADER_ONLY"]
        torch_include = os.path.join(os.path.dirname(torch.__file__), "include")
        include_dirs += [_NATIVE, os.path.join(torch_include, "kineto")]
    digest = hashlib.sha256()
    for path in sources + [h for h in _HEADERS if os.path.exists(h)]:
        digest.update(path.encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    digest.update(" ".join(cflags).encode())
    build_dir = os.path.join(_cache_root(), "privateuse1-%s-%s" % (torch.__version__, digest.hexdigest()[:16]))
    return sources, cflags, include_dirs, build_dir


_NAME = "flagos_backend_ext"


def _load_extension():
    import torch

    sources, cflags, include_dirs, build_dir = _build_settings()
    built = os.path.join(build_dir, _NAME + ".so")
    if os.path.exists(built):
        # The directory is named by the sources' hash: a library there is current.
        torch.ops.load_library(built)
        return built
    os.makedirs(build_dir, exist_ok=True)
    from torch.utils import cpp_extension

    try:
        cpp_extension.load(
            name=_NAME,
            sources=sources,
            extra_cflags=cflags,
            extra_include_paths=include_dirs,
            extra_ldflags=["-ldl"],
            build_directory=build_dir,
            is_python_module=False,
            verbose=os.environ.get("FLAGOS_BACKEND_VERBOSE") == "1",
        )
    except Exception as exc:  # the compiler's output is already on stderr
        raise FlagosBackendError("building the flagos test backend in %s failed: %s"
                                 % (build_dir, str(exc).strip().splitlines()[-1] if str(exc).strip() else exc)) from None
    return built


def _device_module():
    import types

    import torch

    module = types.ModuleType("torch.flagos")
    module.is_available = lambda: True
    module.device_count = lambda: 1
    module.current_device = lambda: 0
    module.set_device = lambda device: None
    module.synchronize = lambda device=None: torch.ops.flagos.synchronize()
    module._is_in_bad_fork = lambda: False
    # Random numbers come from the CPU kernels and torch.manual_seed seeds the CPU generator: nothing to seed here.
    module.manual_seed = lambda seed: None
    module.manual_seed_all = lambda seed: None
    module.initial_seed = torch.initial_seed
    module.get_rng_state = lambda device="flagos": torch.get_rng_state()
    module.set_rng_state = lambda state, device="flagos": torch.set_rng_state(state)
    module.device_clock_ns = device_clock_ns
    return module


def device_clock_ns():
    """The sum of the durations of all device work launched so far, in ns."""
    import torch

    return int(torch.ops.flagos.device_clock_ns())


def tracer_family():
    """Which fake vendor library the runtime drives: "cupti", "mspti" or "roctracer"."""
    import torch

    return str(torch.ops.flagos.family())


def has_kineto_adaptor():
    """Whether the backend was built with the flagprof Kineto adaptor registered."""
    import torch

    return bool(torch.ops.flagos.has_kineto_adaptor())


extension_path = None


def _start():
    global extension_path
    _require_tracer_library()
    _load_agent()
    import torch

    torch.utils.rename_privateuse1_backend("flagos")
    torch._register_device_module("flagos", _device_module())
    torch.utils.generate_methods_for_privateuse1_backend()
    extension_path = _load_extension()
    problem = torch.ops.flagos.open_runtime()
    if problem:
        raise FlagosBackendError(problem)


_start()
