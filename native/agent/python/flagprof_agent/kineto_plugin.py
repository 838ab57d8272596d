"""The Kineto adaptor as a PrivateUse1 profiler plugin, built against the torch in this interpreter.

libflagprof_kineto.so (native/kineto) is compiled on first use with torch's own headers and C++ ABI flag and
cached per torch build and source hash, so a torch upgrade or a changed adaptor builds afresh and nothing else
does. Loading it registers the adaptor with torch's PrivateUse1ProfilerRegistry unless a backend registered its
own; torch then pushes its correlation ids to the capture agent's tracer and links device events by External id.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

__all__ = ["PluginUnavailable", "sources", "build", "load"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_NATIVE = os.path.dirname(os.path.dirname(os.path.dirname(_HERE)))  # native/, beside native/agent/python
_loaded = None


class PluginUnavailable(RuntimeError):
    """The plugin cannot be built or loaded here; the message is one line saying why."""


def sources():
    """The adaptor's sources (the plugin is these and nothing vendor-specific)."""
    return [
        os.path.join(_NATIVE, "kineto", "flagos_kineto_profiler.cc"),
        os.path.join(_NATIVE, "kineto", "agent_device_tracer.cc"),
        os.path.join(_NATIVE, "kineto", "register_plugin.cc"),
        os.path.join(_NATIVE, "tracer", "device_tracer.cc"),
    ]


def _headers():
    return [
        os.path.join(_NATIVE, "kineto", "flagos_kineto_profiler.h"),
        os.path.join(_NATIVE, "tracer", "device_tracer.h"),
        os.path.join(_NATIVE, "tracer", "tracer_abi.h"),
    ]


def cache_root():
    base = os.environ.get("FLAGPROF_CACHE", "").strip() or os.path.join(os.path.expanduser("~"), ".cache", "flagprof")
    return os.path.join(base, "kineto")


def _compile_command(torch, output, defines):
    from torch.utils import cpp_extension

    includes = cpp_extension.include_paths()
    kineto = os.path.join(includes[0], "kineto")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    compiler = os.environ.get("CXX", "").strip() or "g++"
    command = [compiler, "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
               "-DUSE_KINETO", "-DFMT_HEADER_ONLY", "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi]
    command += ["-D%s" % d for d in defines]
    command += ["-I%s" % p for p in includes + [kineto, _NATIVE]]
    command += sources()
    libdirs = cpp_extension.library_paths()
    command += ["-L%s" % d for d in libdirs] + ["-Wl,-rpath,%s" % d for d in libdirs]
    command += ["-ltorch_cpu", "-lc10", "-ldl", "-o", output]
    return command


def build(torch, defines=()):
    """The path of the plugin for this torch, compiled when not cached. Raises PluginUnavailable (one line)."""
    if not os.path.isdir(os.path.join(_NATIVE, "kineto")):
        raise PluginUnavailable("the Kineto adaptor's sources are not installed (%s)" % os.path.join(_NATIVE, "kineto"))
    try:
        from torch.utils import cpp_extension

        includes = cpp_extension.include_paths()
    except Exception as exc:  # torch without its build helpers
        raise PluginUnavailable("torch's C++ headers cannot be located (%s)" % exc)
    if not os.path.exists(os.path.join(includes[0], "kineto", "IActivityProfiler.h")):
        raise PluginUnavailable("torch %s ships no Kineto plugin headers (include/kineto/IActivityProfiler.h)"
                                % torch.__version__)
    if not os.path.exists(os.path.join(includes[0], "torch", "csrc", "profiler", "standalone",
                                       "privateuse1_profiler.h")):
        raise PluginUnavailable("torch %s has no PrivateUse1 profiler registry (privateuse1_profiler.h)"
                                % torch.__version__)
    digest = hashlib.sha1()
    for path in sources() + _headers():
        with open(path, "rb") as f:
            digest.update(f.read())
    digest.update(repr(sorted(defines)).encode())
    digest.update(repr(_compile_command(torch, "out", defines)[:9]).encode())
    folder = os.path.join(cache_root(), "torch-%s-%s" % (torch.__version__.replace("+", "_"), digest.hexdigest()[:12]))
    output = os.path.join(folder, "libflagprof_kineto.so")
    if os.path.exists(output):
        return output
    compiler = os.environ.get("CXX", "").strip() or "g++"
    if shutil.which(compiler) is None:
        raise PluginUnavailable("no C++ compiler (%s) to build the Kineto plugin against torch %s"
                                % (compiler, torch.__version__))
    os.makedirs(folder, exist_ok=True)
    # Built beside its final name and renamed: ranks building at once never load a half-written library.
    fd, temporary = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=folder)
    os.close(fd)
    try:
        done = subprocess.run(_compile_command(torch, temporary, defines), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            first = next((l for l in done.stdout.splitlines() if "error" in l), done.stdout.strip()[:200])
            raise PluginUnavailable("the Kineto plugin did not compile against torch %s: %s"
                                    % (torch.__version__, first.strip()))
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return output


def load(torch, defines=()):
    """Builds (or finds) and loads the plugin and registers the adaptor. Returns 'registered' (ours now serves
    PrivateUse1 sessions), 'backend' (the device backend registered its own profiler) or raises PluginUnavailable."""
    global _loaded
    if _loaded is not None:
        return _loaded
    path = build(torch, defines)
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        raise PluginUnavailable("the Kineto plugin %s could not be loaded: %s" % (path, str(exc).splitlines()[0]))
    result = lib.flagprof_kineto_register()
    if result < 0:
        raise PluginUnavailable("no device tracer is available to the Kineto plugin (the capture agent is not "
                                "loaded or bound no vendor library)")
    _loaded = "registered" if result == 1 else "backend"
    return _loaded


if __name__ == "__main__":  # python -m flagprof_agent.kineto_plugin: build for this interpreter's torch
    import torch as _torch

    try:
        print(build(_torch))
    except PluginUnavailable as exc:
        print("flagprof: %s" % exc, file=sys.stderr)
        sys.exit(1)
