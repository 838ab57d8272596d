"""ctypes binding of libflagprof_agent.so, the native capture agent (agent mode).

Import and call open_capture() before torch touches a device: loading the library binds the vendor's
activity library and registers its buffer callbacks, which must precede the first device context.
Standard library only: this module must not import torch.
"""
import ctypes
import os

__all__ = ["open_capture", "load_agent", "Capture", "agent_library_candidates"]

_LIBRARY_NAME = "libflagprof_agent.so"
_lib = None


def agent_library_candidates():
    """Where the agent library is looked for, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    candidates = []
    override = os.environ.get("FLAGPROF_AGENT_LIBRARY", "").strip()
    if override:
        candidates.append(override)
    candidates += [
        os.path.join(here, _LIBRARY_NAME),
        os.path.join(root, "build", "Release", _LIBRARY_NAME),
        os.path.join(root, "build", "Release", "lib.target", _LIBRARY_NAME),
    ]
    return candidates


def _load():
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in agent_library_candidates():
        if not os.path.exists(path):
            errors.append("%s (not found)" % path)
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            errors.append("%s (%s)" % (path, str(exc).splitlines()[0] if str(exc) else "cannot load"))
            continue
        lib.flagprof_agent_last_error.restype = ctypes.c_char_p
        lib.flagprof_agent_library.restype = ctypes.c_char_p
        lib.flagprof_agent_open.argtypes = [ctypes.c_char_p]
        lib.flagprof_agent_push_correlation.argtypes = [ctypes.c_uint64]
        for name in ("flagprof_agent_open", "flagprof_agent_start", "flagprof_agent_stop",
                     "flagprof_agent_push_correlation", "flagprof_agent_pop_correlation", "flagprof_agent_close"):
            getattr(lib, name).restype = ctypes.c_int
        _lib = lib
        return lib
    raise RuntimeError("flagprof agent library could not be loaded; tried " + "; ".join(errors))


def load_agent():
    """Loads the agent (binding and arming the vendor library) without opening a capture: a profiler session
    through the Kineto adaptor then records into memory. Call before torch touches a device."""
    return _load()


def _check(lib, result, what):
    if result != 0:
        reason = (lib.flagprof_agent_last_error() or b"unknown error").decode("utf-8", "replace")
        raise RuntimeError("flagprof agent %s failed: %s" % (what, reason.splitlines()[0] if reason else reason))


class Capture:
    """One capture into SESSION_DIR/capture.fpc (frames are appended as buffers complete)."""

    def __init__(self, lib, path):
        self._lib = lib
        self.path = path
        self._closed = False

    @property
    def vendor_library(self):
        return (self._lib.flagprof_agent_library() or b"").decode("utf-8", "replace")

    def start(self):
        _check(self._lib, self._lib.flagprof_agent_start(), "start")

    def stop(self):
        _check(self._lib, self._lib.flagprof_agent_stop(), "stop")

    def push_correlation(self, correlation_id):
        _check(self._lib, self._lib.flagprof_agent_push_correlation(int(correlation_id)), "push_correlation")

    def pop_correlation(self):
        _check(self._lib, self._lib.flagprof_agent_pop_correlation(), "pop_correlation")

    def close(self):
        """Stops if needed, writes the closing frame and returns the capture's path."""
        if not self._closed:
            self._closed = True
            _check(self._lib, self._lib.flagprof_agent_close(), "close")
        return self.path


def open_capture(session_dir):
    """Loads the agent (arming the vendor library) and opens SESSION_DIR/capture.fpc.

    Raises RuntimeError with a one-line reason when the agent or the vendor library cannot load."""
    lib = _load()
    os.makedirs(session_dir, exist_ok=True)
    path = os.path.join(session_dir, "capture.fpc")
    _check(lib, lib.flagprof_agent_open(path.encode("utf-8")), "open")
    return Capture(lib, path)
