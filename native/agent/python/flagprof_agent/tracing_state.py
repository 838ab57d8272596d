"""Whether the main thread runs inside a profile callback: torch's Python tracer runs Python code from its callback
(the repr of a function it records, the hash of a tensor), and the interpreter checks for signals there. A signal
handler that stops the profiler, or raises, at that point hangs or breaks the tracer; the handlers ask first.

The interpreter counts callbacks in its thread state (`tracing`), which Python does not expose and whose place in
the struct differs between versions: it is found once, before any profiler runs, as the one int of the thread
state that is 0 here and 1 inside a sys.setprofile callback. Where it cannot be found, inside() is always False
(the handlers then act at once, as before).
"""

import sys

_flag = None


class _TracingFlag:
    def __init__(self):
        self._ints = None
        self._at = None
        try:
            import ctypes

            if sys.getprofile() is not None:
                return  # someone else's profile function: no clean reading
            get_state = ctypes.pythonapi.PyThreadState_Get
            get_state.restype = ctypes.c_void_p
            ints = (ctypes.c_int * 32).from_address(get_state())
            outside = list(ints)
            inside = []
            sys.setprofile(lambda _frame, _event, _arg: inside or inside.extend(ints))
            try:
                (lambda: None)()
            finally:
                sys.setprofile(None)
            found = [at for at, (was, now) in enumerate(zip(outside, inside)) if was == 0 and now == 1]
            if len(found) == 1 and ints[found[0]] == 0:
                self._ints, self._at = ints, found[0]
        except Exception:
            self._ints = None

    def inside(self):
        return self._ints is not None and self._ints[self._at] > 0


def calibrate():
    """Finds the flag (once, on the main thread, before a profiler starts)."""
    global _flag
    if _flag is None:
        _flag = _TracingFlag()


def inside():
    return _flag is not None and _flag.inside()
