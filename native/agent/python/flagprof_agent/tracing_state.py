"""Where the main thread is, for the moments the profiler may be switched (stopped, restarted) without harm.

Whether it runs inside a profile callback: torch's Python tracer runs Python code from its callback
(the repr of a function it records, the hash of a tensor), and the interpreter checks for signals there. A signal
handler that stops the profiler, or raises, at that point hangs or breaks the tracer; the handlers ask first.

The interpreter counts callbacks in its thread state (`tracing`), which Python does not expose and whose place in
the struct differs between versions: it is found once, before any profiler runs, as the one int of the thread
state that is 0 here and 1 inside a sys.setprofile callback. Where it cannot be found, inside() is always False
(the handlers then act at once, as before).

Whether a garbage collection runs (gc.callbacks): its finalizers run Python code from inside whatever allocated,
a torch op included. Whether a torch record_function is open on the main thread (its __enter__ and __exit__
counted): the profiler must not be switched inside a RecordFunction's scope.
"""

import gc
import sys
import threading

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
    """Finds the flag (once, on the main thread, before a profiler starts) and watches garbage collections."""
    global _flag
    if _flag is None:
        _flag = _TracingFlag()
    if _on_collection not in gc.callbacks:
        gc.callbacks.append(_on_collection)


def inside():
    return _flag is not None and _flag.inside()


_collecting = False


def _on_collection(phase, _info):
    global _collecting
    _collecting = phase == "start"


def collecting():
    """Whether a garbage collection is running (its finalizers are what runs now)."""
    return _collecting


_open_record_functions = 0
_record_function_patch = None


def watch_record_functions(torch):
    """Counts the record_function scopes open on the main thread (torch.profiler.record_function and
    torch.autograd.profiler.record_function are one class): DataLoader's __next__, the script's own. The
    profiler's own step markers (ProfilerStep#N, entered by one step and left by the next) are not counted."""
    global _record_function_patch
    if _record_function_patch is not None:
        return
    cls = getattr(getattr(getattr(torch, "autograd", None), "profiler", None), "record_function", None)
    enter, exit_ = getattr(cls, "__enter__", None), getattr(cls, "__exit__", None)
    if enter is None or exit_ is None:
        return
    main = threading.main_thread().ident

    def counted(scope):
        return threading.get_ident() == main and not str(getattr(scope, "name", "")).startswith("ProfilerStep#")

    def __enter__(self):
        global _open_record_functions
        result = enter(self)
        if counted(self):
            _open_record_functions += 1
        return result

    def __exit__(self, *exc):
        global _open_record_functions
        try:
            return exit_(self, *exc)
        finally:
            if counted(self) and _open_record_functions > 0:
                _open_record_functions -= 1

    cls.__enter__, cls.__exit__ = __enter__, __exit__
    _record_function_patch = (cls, enter, exit_)


def unwatch_record_functions():
    global _record_function_patch, _open_record_functions
    if _record_function_patch is not None:
        cls, enter, exit_ = _record_function_patch
        cls.__enter__, cls.__exit__ = enter, exit_
        _record_function_patch = None
    _open_record_functions = 0


def open_record_functions():
    """How many record_function scopes are open on the main thread."""
    return _open_record_functions
