"""The profiling window: torch.profiler (and the native capture in agent mode) between two instants.

--delay/--duration bound the window like Nsight Systems does. The profiler is started and stopped on the main
thread (torch's op callbacks and Python tracer are armed from the thread that starts them), so the timer is a
SIGALRM whose handler runs between two bytecodes of the user's script.
"""

import signal
import sys
import time

WAITING, OPEN, CLOSED = "waiting", "open", "closed"


def _say(message):
    sys.stderr.write("flagprof: %s\n" % message)
    sys.stderr.flush()


class CaptureWindow:
    def __init__(self, torch, activities, native_handle, record_shapes, profile_memory, delay, duration, progress):
        self.torch = torch
        self.activities = activities
        self.native = native_handle
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.delay = delay or 0.0
        self.duration = duration
        self.progress = progress
        self.state = WAITING
        self.profiler = None
        self.start_ns = None
        self.end_ns = None
        self.notes = []
        self.user_profiler = None
        self.native_failure = None
        # Said aloud when the user asked for agent mode; under 'auto' the fallback is only recorded.
        self.announce_native_failure = True
        self._switching = False
        self._timer_armed = False
        self._patched = []

    # -- the window -------------------------------------------------------------------------------------------

    def arm(self):
        """Opens the window now, or schedules it; schedules its end when a duration is given."""
        self._guard_user_profiler()
        if self.delay > 0:
            self._set_timer(self.delay)
        else:
            self.open()

    def open(self):
        if self.state != WAITING:
            return
        if self.torch is not None and self._torch_profiler_busy():
            self.state = CLOSED
            note = "the script's own torch.profiler was running when the profiling window opened; nothing was captured"
            self.notes.append(note)
            _say(note)
            return
        self._switching = True
        try:
            if self.native is not None:
                try:
                    self.native.start()
                except Exception as error:
                    self._native_failed("start", error)
            if self.torch is not None:
                try:
                    self.profiler = self.torch.profiler.profile(
                        activities=[a for _, a in self.activities],
                        record_shapes=self.record_shapes,
                        with_stack=True,
                        profile_memory=self.profile_memory,
                    )
                    self.profiler.start()
                except Exception as error:
                    # The script still runs, unprofiled, rather than failing because of us.
                    self.profiler = None
                    note = "torch.profiler could not start (%s: %s); the script runs without op profiling" % (
                        type(error).__name__,
                        error,
                    )
                    self.notes.append(note)
                    _say(note)
                    if self.native is None:
                        self.state = CLOSED
                        return
        finally:
            self._switching = False
        self.state = OPEN
        self.start_ns = time.time_ns()
        self.progress.emit("running", profiling=True)
        if self.duration is not None and self.duration > 0:
            self._set_timer(self.duration)

    def close(self):
        if self.state != OPEN:
            if self.state == WAITING:
                self.state = CLOSED
            self._clear_timer()
            return
        self._clear_timer()
        self._switching = True
        try:
            if self.profiler is not None:
                self.profiler.stop()
            if self.native is not None:
                try:
                    self.native.stop()
                except Exception as error:
                    self._native_failed("stop", error)
        finally:
            self._switching = False
            self.state = CLOSED
            self.end_ns = time.time_ns()
        self.progress.emit("running", profiling=False)

    def _native_failed(self, what, error):
        """Agent mode degrades to CPU-only profiling instead of failing the user's run."""
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        self.native_failure = "the native capture failed to %s (%s)" % (what, reason)
        self.notes.append(self.native_failure)
        if self.announce_native_failure:
            _say(self.native_failure + "; profiling CPU ops only")
        if what == "start":
            self.native = None

    @property
    def captured(self):
        return self.start_ns is not None

    def describe(self):
        return {
            "delayS": self.delay,
            "durationS": self.duration,
            # Epoch nanoseconds as strings: JSON readers with double-precision numbers would round them.
            "startNs": str(self.start_ns) if self.start_ns is not None else None,
            "endNs": str(self.end_ns) if self.end_ns is not None else None,
            "captured": self.captured,
        }

    # -- timer --------------------------------------------------------------------------------------------------

    def _set_timer(self, seconds):
        signal.signal(signal.SIGALRM, self._on_timer)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        self._timer_armed = True

    def _clear_timer(self):
        if self._timer_armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            self._timer_armed = False

    def _on_timer(self, _signum, _frame):
        self._timer_armed = False
        try:
            if self.state == WAITING:
                self.open()
            elif self.state == OPEN:
                self.close()
        except Exception as error:  # never let the profiler's trouble surface inside the user's code
            self.notes.append("profiling window could not switch: %s" % error)
            _say("profiling window could not switch: %s" % error)

    # -- a script that runs torch.profiler itself -----------------------------------------------------------------

    def _torch_profiler_busy(self):
        try:
            return bool(self.torch.autograd.profiler._is_profiler_enabled)
        except Exception:
            return False

    def _guard_user_profiler(self):
        """Two torch profilers cannot run at once (a second start silently ends the first, whose stop then
        crashes the interpreter). When the script starts its own, ours steps aside first and says so."""
        if self.torch is None:
            return
        module = self.torch.autograd.profiler
        for name in ("_prepare_profiler", "_enable_profiler"):
            original = getattr(module, name, None)
            if original is None:
                continue
            setattr(module, name, self._make_guard(original))
            self._patched.append((module, name, original))

    def _make_guard(self, original):
        window = self

        def guarded(*args, **kwargs):
            if not window._switching and window.state == OPEN:
                where = _caller_outside_torch()
                window.user_profiler = where
                note = (
                    "the script starts torch.profiler itself%s; only one profiler can run at a time, so FlagOS "
                    "Profiler stopped its own capture there (the trace ends at that point). Remove the script's "
                    "profiler or choose a --delay/--duration window outside it." % (" at %s" % where if where else "")
                )
                window.notes.append(note)
                _say(note)
                window.close()
            return original(*args, **kwargs)

        return guarded

    def restore(self):
        for module, name, original in self._patched:
            setattr(module, name, original)
        self._patched = []


def _caller_outside_torch():
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "torch" not in name.replace("\\", "/").split("/")[-3:-1] and "flagprof_agent" not in name:
            return "%s:%d" % (name, frame.f_lineno)
        frame = frame.f_back
    return None
