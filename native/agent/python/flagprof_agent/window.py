"""The profiling window: torch.profiler (and the native capture in agent mode) between two instants.

--delay/--duration bound the window like Nsight Systems does. The profiler is started and stopped on the main
thread (torch's op callbacks and Python tracer are armed from the thread that starts them), so the timer is a
SIGALRM whose handler runs between two bytecodes of the user's script.

While the window is open the profiler is restarted every `segment_s` seconds and each stopped profiler is handed to
`on_segment` (segments.SegmentWriter.add), so a run that is killed keeps all but its last segment. The script is
paused while a segment is written; those pauses are recorded (session.json "flushes") so a gap on the timeline
is explained.

While the window is open, exact_sites' mode runs every torch call of the script's thread through the trampoline of
its expression; it is switched off while a segment is written and removed when the window closes, so time outside
the window costs nothing.

With a step schedule (--schedule, schedule.py) the window is open for the whole run and torch's own schedule picks
the steps: the profiler is stepped at the script's line after each optimizer step, every cycle torch hands to
on_trace_ready is one segment, and time-based rotation is off. With a finite repeat the window closes after the
last cycle.
"""

import os
import signal
import sys
import threading
import time
import warnings

from . import tracing_state
from .exact_sites import SITE_FILE

WAITING, OPEN, CLOSED = "waiting", "open", "closed"
# Segments are shortened while writing one takes longer than this, down to MIN_SEGMENT_S.
FLUSH_TARGET_S = 2.0
MIN_SEGMENT_S = 0.25
FIRST_SEGMENT_S = 0.5
# What runs in a frame, for where the profiler may be switched (CaptureWindow._switch_point).
_SCRIPT, _LIBRARY, _TORCH = "script", "library", "torch"
# How soon a switch the script's state put off is tried again.
RETRY_SWITCH_S = 0.01


def _say(message):
    try:
        sys.stderr.write("flagprof: %s\n" % message)
        sys.stderr.flush()
    except (OSError, ValueError):
        # A closed terminal or a dead launcher: the message is in session.json's notes; the profile matters more.
        pass


class CaptureWindow:
    def __init__(
        self,
        torch,
        activities,
        native_handle,
        record_shapes,
        profile_memory,
        delay,
        duration,
        progress,
        segment_s=None,
        on_segment=None,
        site_table=None,
        schedule=None,
    ):
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
        self.segment_s = segment_s if segment_s and segment_s > 0 else None
        self.on_segment = on_segment
        # exact_sites.SiteTable, or None when the expression of each call is not wanted (FLAGPROF_EXACT_SITES=0).
        self.site_table = site_table
        self._remove_site_mode = None
        self._torch_prefixes = None
        # (frame, global trace function) while a switch waits for the script's own code.
        self._own_code_switch = None
        self.segments = 0
        self.flushes = []
        self.stopped_by = None
        self._switching = False
        self._timer_armed = False
        self._patched = []
        self._open_at = None
        self._close_at = None
        self._rotate_at = None
        self._current_segment_s = None
        # Called with the PrivateUse1 backend's name when the script registers one while profiled (cpu and kineto
        # modes): the profile then follows it from the script's next line on. None: not followed (agent mode, where
        # the native capture already owns the device activity API).
        self.on_device_backend = None
        self.device_backend = None
        # False when the device the script registered is not profiled through PrivateUse1 (on_device_backend said).
        self.device_followed = True
        # schedule.StepSchedule, or None: the window is bounded by time only.
        self.schedule = schedule
        self._optimizer_steps = None
        self._main_thread = None
        # torch.profiler's step() is running (on_trace_ready then hands over a whole cycle) / waits for the script's
        # next line / writing a cycle failed for good (the disk is full).
        self._in_step = False
        self._step_pending = False
        self._stop_after_step = False
        # {"cycle", "steps": [first, last], "complete"} of every cycle handed to the segment writer.
        self.cycles = []
        self.steps_counted = 0
        self.schedule_done_at = None
        self._schedule_noted = set()

    # -- the window -------------------------------------------------------------------------------------------

    def arm(self):
        """Opens the window now, or schedules it; schedules its end when a duration is given."""
        self._guard_user_profiler()
        self._follow_device_backends()
        # Read before any profiler runs (it takes the profile function the reading borrows).
        tracing_state.calibrate()
        if self.delay > 0:
            self._open_at = time.monotonic() + self.delay
            self._schedule()
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
        if self.torch is not None:
            tracing_state.watch_record_functions(self.torch)
        with _DeferredStopSignals():
            self._open()

    def _open(self):
        self._switching = True
        try:
            if self.native is not None:
                try:
                    self.native.start()
                except Exception as error:
                    self._native_failed("start", error)
            if self.torch is not None:
                try:
                    self.profiler = self._start_profiler()
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
            self._install_site_mode()
            if self.schedule is not None and self.profiler is not None:
                self._install_step_hook()
        finally:
            self._switching = False
        self.state = OPEN
        self.start_ns = time.time_ns()
        self.progress.emit("running", profiling=True)
        now = time.monotonic()
        self._open_at = None
        if self.duration is not None and self.duration > 0:
            self._close_at = now + self.duration
        if self.segment_s is not None and self.profiler is not None:
            # The first segment is short (how dense the script's ops are is not known yet); each cheap one doubles
            # the next, up to segment_s.
            self._current_segment_s = min(FIRST_SEGMENT_S, self.segment_s)
            self._rotate_at = now + self._current_segment_s
        self._schedule()

    def _start_profiler(self):
        scheduled = {}
        if self.schedule is not None:
            scheduled = {"schedule": self.schedule.torch_schedule(self.torch), "on_trace_ready": self._cycle_ready}
        profiler = self.torch.profiler.profile(
            activities=[a for _, a in self._profiled_activities()],
            record_shapes=self.record_shapes,
            with_stack=True,
            profile_memory=self.profile_memory,
            **scheduled,
        )
        profiler.start()
        return profiler

    def _profiled_activities(self):
        """The activities asked for, plus the PrivateUse1 device the script registered since (its backend's Kineto
        profiler traces it)."""
        if (
            self.device_backend is None
            or not self.device_followed
            or any(name.startswith("PrivateUse1") for name, _ in self.activities)
        ):
            return self.activities
        activity = getattr(self.torch.profiler.ProfilerActivity, "PrivateUse1", None)
        if activity is None:
            return self.activities
        self.activities = list(self.activities) + [("PrivateUse1:%s" % self.device_backend, activity)]
        return self.activities

    def _follow_device_backends(self):
        """A device backend imported by the script renames torch's PrivateUse1 backend (torch_npu, torch_fl, an
        OpenReg-style device): the segment running then ends right after the script's statement that did it (the
        import), and the next one profiles the device too. Nothing is patched when nothing would follow it."""
        if self.torch is None or self.on_device_backend is None:
            return
        module = self.torch.utils
        original = getattr(module, "rename_privateuse1_backend", None)
        if original is None:
            return
        window = self

        def rename_privateuse1_backend(*args, **kwargs):
            result = original(*args, **kwargs)
            try:
                window._device_backend_registered(sys._getframe(1))
            except Exception as error:  # never let following the backend break the script's import
                window.notes.append("the new PrivateUse1 device could not be followed: %s" % error)
            return result

        rename_privateuse1_backend.__wrapped__ = original
        setattr(module, "rename_privateuse1_backend", rename_privateuse1_backend)
        self._patched.append((module, "rename_privateuse1_backend", original))

    def _device_backend_registered(self, caller):
        name = self.torch._C._get_privateuse1_backend_name()
        if not name or name == "privateuseone" or self.device_backend is not None:
            return
        if self.schedule is not None and self.state == OPEN:
            # A scheduled profiler keeps its activities from cycle to cycle: restarting it would restart the count.
            self.device_backend = name
            self.notes.append(
                "the script registered the device %r while the schedule ran: its device activity is not traced "
                "(profile without --schedule, or import the backend before the script's first step)" % name
            )
            return
        self.device_backend = name
        if self.on_device_backend(name) is False:
            # Nothing of ours would trace it (agent mode with a backend that brings its own profiler, or no
            # plugin): the activities stay as they are.
            self.device_followed = False
            return
        if self.state != OPEN or self.profiler is None:
            return  # the window opens later, with the device
        # The outermost frame of the script's own code (the statement that imported the backend): the switch waits
        # for its next line, when the backend has registered its profiler too.
        own = None
        frame = caller
        while frame is not None:
            if self._frame_kind(frame) == _SCRIPT:
                own = frame
            frame = frame.f_back
        self._rotate_at = time.monotonic()
        if own is None or not self._switch_at(own, calls=False):
            self._schedule()

    def _install_site_mode(self):
        if self.site_table is None or self.profiler is None or self._remove_site_mode is not None:
            return
        from .exact_sites import install

        try:
            self._remove_site_mode = install(self.torch, self.site_table)
            why = "this torch has no usable TorchFunctionMode"
        except Exception as error:
            self._remove_site_mode = None
            why = "%s: %s" % (type(error).__name__, error)
        if self._remove_site_mode is None:
            # Lines still come from the event tree; operators are charged to their functions.
            self.site_table = None
            self.notes.append("exact expression sites are off (%s)" % why)

    def _remove_site_mode_now(self):
        remove, self._remove_site_mode = self._remove_site_mode, None
        if remove is not None:
            remove()

    def close(self):
        pending = self._step_pending
        self._cancel_own_code_switch()
        if pending and self.state == OPEN:
            # The run ends between an optimizer step and the script's next line: that step still ends a step.
            self._step_profiler()
        if self.state != OPEN:
            if self.state == WAITING:
                self.state = CLOSED
            self._clear_timer()
            return
        self._clear_timer()
        self._end_window(self.profiler)
        if self.schedule is None:
            self._hand_over(self.profiler)
        elif self.torch is not None:
            # A cycle the end cut short went out through on_trace_ready, from the profiler's stop.
            self._schedule_verdict()

    def _end_window(self, profiler):
        """Stops the profiler (if still running) and the native capture: the window is closed."""
        self._switching = True
        try:
            self._remove_site_mode_now()
            if profiler is not None:
                profiler.stop()
            if self.native is not None:
                try:
                    self.native.stop()
                except Exception as error:
                    self._native_failed("stop", error)
        finally:
            self._switching = False
            self.state = CLOSED
            self.end_ns = time.time_ns()
            self._remove_step_hook()
        self.progress.emit("running", profiling=False)

    def rotate(self):
        """Ends the current segment (its events go to disk) and starts the next one. Ctrl-C, SIGTERM and SIGHUP wait
        until it is done (then reach the script as usual): an exception inside the profiler's stop leaves torch in
        a state whose next stop crashes the interpreter."""
        if self.state != OPEN or self.profiler is None or self.schedule is not None:
            return
        with _DeferredStopSignals():
            self._rotate()

    def _rotate(self):
        flush_start = time.time_ns()
        # Stopping a long segment is the slowest step: the launcher hears that the profile is being written.
        self.progress.emit("exporting", step="segment", segment=self.segments + 1)
        self._switching = True
        if self.site_table is not None:
            # The profiler's own torch calls and the segment's export are not the script's.
            self.site_table.on = False
        try:
            self.profiler.stop()
        finally:
            self._switching = False
        finished = self.profiler
        self.profiler = None
        if not self._hand_over(finished):
            # The disk is full: the window closes with what is on disk.
            self._end_window(None)
            return
        self._switching = True
        try:
            self.profiler = self._start_profiler()
        except Exception as error:
            self.profiler = None
            note = "torch.profiler could not restart after segment %d (%s: %s); profiling stopped there" % (
                self.segments,
                type(error).__name__,
                error,
            )
            self.notes.append(note)
            _say(note)
        finally:
            self._switching = False
        if self.site_table is not None and self.profiler is not None:
            self.site_table.on = True
        flush_end = time.time_ns()
        self.flushes.append([str(flush_start), str(flush_end)])
        self.progress.emit("running", profiling=self.profiler is not None, segments=self.segments)
        if self.profiler is None:
            self._remove_site_mode_now()
            self.state = CLOSED
            self.end_ns = time.time_ns()
        else:
            self._rotate_at = time.monotonic() + self._next_segment_s((flush_end - flush_start) / 1e9)

    def _next_segment_s(self, flush_s):
        """A segment that took long to write held many events: the next one is shorter, so memory, the pause and
        what a kill can cost stay bounded on an op-dense loop (a segment costing FLUSH_TARGET_S or less keeps the
        length asked for)."""
        current = self._current_segment_s or self.segment_s
        if flush_s > FLUSH_TARGET_S:
            current = max(MIN_SEGMENT_S, current * FLUSH_TARGET_S / flush_s)
        else:
            current = min(self.segment_s, current * 2)
        self._current_segment_s = current
        return current

    def _hand_over(self, profiler):
        """Writes one stopped profiler's segment; False when writing must stop (the disk is full)."""
        if profiler is None or self.on_segment is None:
            return True
        try:
            return self._write_segment(profiler)
        finally:
            _release_results(profiler)

    def _write_segment(self, profiler):
        from .segments import DiskFull

        try:
            self.on_segment(profiler)
            self.segments += 1
            return True
        except DiskFull as full:
            self.stopped_by = "disk full"
            note = "the disk of the session folder is full (%s): profiling stopped; the profile captured until then is kept" % full
            self.notes.append(note)
            _say(note)
            return False
        except Exception as error:
            note = "writing segment %d of the trace failed (%s: %s)" % (self.segments + 1, type(error).__name__, error)
            self.notes.append(note)
            _say(note)
            return True

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
            "segmentS": self.segment_s,
            "segments": self.segments,
            # Epoch-ns [start, end] pairs during which the script was paused while a segment was written.
            "flushes": self.flushes,
            "schedule": self._describe_schedule(),
        }

    # -- the step schedule (--schedule) -------------------------------------------------------------------------

    def _install_step_hook(self):
        from .schedule import OptimizerSteps

        self._main_thread = threading.get_ident()
        steps = OptimizerSteps(self.torch, self._optimizer_stepped)
        try:
            installed = steps.install()
        except Exception as error:
            installed = False
            self.notes.append("--schedule: the optimizer step hook could not be registered (%s)" % error)
        if installed:
            self._optimizer_steps = steps
        else:
            note = "--schedule: this torch has no optimizer step hook (torch.optim), so no step can be counted"
            self.notes.append(note)
            _say(note)
        self._sites_follow_recording()

    def _remove_step_hook(self):
        steps = self._optimizer_steps
        if steps is not None:
            steps.remove()

    def _optimizer_stepped(self):
        """torch.optim's post hook, inside Optimizer.step (and its record_function): the step is ended at the
        script's next line, as a script calling prof.step() after optimizer.step() ends it, so torch's
        ProfilerStep spans hold whole Optimizer.step spans."""
        if self.state != OPEN or self.profiler is None:
            return
        if threading.get_ident() != self._main_thread:
            # torch.profiler is switched on the thread that started it.
            self._note_once(
                "thread",
                "--schedule: optimizer steps on threads other than the script's main thread are not counted",
            )
            return
        try:
            if self._step_pending:
                # Two steps before the script's next line: the first one ends now.
                self._cancel_own_code_switch()
                self._step_and_close_when_done()
                if self.state != OPEN:
                    return
            self.steps_counted += 1
            _, own = self._switch_point(sys._getframe(1))
            self._step_pending = True
            if own is None or not self._switch_at(own, calls=False, action=self._step_and_close_when_done):
                # A debugger's trace function, or no frame of the script's: stepped here, inside the optimizer's
                # record_function (its span then straddles the step boundary).
                self._step_and_close_when_done()
        except Exception as error:  # never let the schedule break the script's optimizer step
            self._step_pending = False
            self._note_once("hook", "--schedule: a step could not be counted (%s: %s)" % (type(error).__name__, error))

    def _step_and_close_when_done(self):
        try:
            self._step_profiler()
            if self.state == OPEN and (self._stop_after_step or self.schedule_done_at is not None):
                self.close()
        except Exception as error:  # runs between two lines of the script: nothing may reach its code
            what = "%s: %s" % (type(error).__name__, error)
            self._note_once("step", "--schedule: the profiler could not be stepped (%s)" % what)

    def _step_profiler(self):
        """torch.profiler's step(): ends step N and begins N+1; torch opens, records and closes cycles as its
        schedule says, a finished one through on_trace_ready (_cycle_ready)."""
        self._step_pending = False
        if self.state != OPEN or self.profiler is None:
            return
        with _DeferredStopSignals():
            self._switching = True
            self._in_step = True
            try:
                with warnings.catch_warnings():
                    # "Profiler clears events at the end of each cycle": each cycle is its own segment, by design.
                    warnings.simplefilter("ignore")
                    self.profiler.step()
            except Exception as error:
                note = "torch.profiler's step failed at step %d (%s: %s); profiling stopped there" % (
                    self.profiler.step_num,
                    type(error).__name__,
                    error,
                )
                self.notes.append(note)
                _say(note)
                self._stop_after_step = True
            finally:
                self._in_step = False
                self._switching = False
        if self.schedule.done_at(self.profiler.step_num):
            self.schedule_done_at = self.profiler.step_num
        self._sites_follow_recording()

    def _recording(self):
        action = getattr(self.profiler, "current_action", None)
        return action is not None and action.name in ("RECORD", "RECORD_AND_SAVE")

    def _sites_follow_recording(self):
        """The expression mode records sites only while torch records ops: steps waited or warmed up cost a
        pass-through call per torch call."""
        if self.site_table is not None and self._remove_site_mode is not None:
            self.site_table.on = self._recording()

    def _cycle_ready(self, profiler):
        """on_trace_ready: one cycle's events, from torch's step() at its end or its stop() when the run ends
        inside it, go to disk as one segment."""
        cycle = len(self.cycles)
        first, planned_last = self.schedule.recorded_steps(cycle)
        # In step() torch has already counted the next step; at stop() the current one is the cycle's last.
        last = min(planned_last, profiler.step_num - 1 if self._in_step else profiler.step_num)
        self.cycles.append({"cycle": cycle + 1, "steps": [first, last], "complete": last == planned_last})
        flush_start = time.time_ns()
        self.progress.emit("exporting", step="segment", segment=self.segments + 1)
        if self.site_table is not None:
            self.site_table.on = False
        try:
            if not self._hand_over(profiler):
                self._stop_after_step = True
        except Exception as error:  # an exception out of on_trace_ready would leave torch's schedule half-switched
            self.notes.append("writing cycle %d failed (%s: %s)" % (cycle + 1, type(error).__name__, error))
        self.flushes.append([str(flush_start), str(time.time_ns())])
        if self._in_step:
            # The script goes on (from stop(), the run is ending: the window says so itself).
            self.progress.emit("running", profiling=True, segments=self.segments)

    def _note_once(self, key, note):
        if key not in self._schedule_noted:
            self._schedule_noted.add(key)
            self.notes.append(note)
            _say(note)

    def _describe_schedule(self):
        if self.schedule is None:
            return None
        described = self.schedule.describe()
        described.update(
            text=self.schedule.text(),
            optimizerSteps=self.steps_counted,
            cycles=[dict(c) for c in self.cycles],
            recordedSteps=[c["steps"] for c in self.cycles],
        )
        steps = self._optimizer_steps
        if steps is not None and steps.lead_name is not None:
            described.update(optimizer=steps.lead_name, optimizers=len(steps.optimizers))
        if self.schedule_done_at is not None:
            described["endedAtStep"] = self.schedule_done_at
        return described

    def _schedule_verdict(self):
        """What the schedule recorded, in one note; said aloud when it recorded nothing (the user must never be
        left with no profile and no reason)."""
        schedule = self.schedule
        head = "--schedule %s" % schedule.text()
        steps = self._optimizer_steps
        if self.steps_counted == 0 and not self.cycles:
            note = (
                "%s: no optimizer step seen (the schedule counts torch.optim optimizer steps): the schedule never "
                "started; profiled nothing. Profile without --schedule, or with --delay/--duration" % head
            )
            self.notes.append(note)
            _say(note)
            return
        if not self.cycles:
            first, _ = schedule.recorded_steps(0)
            note = "%s: the run ended at step %d, before the first recorded step (%d); profiled nothing" % (
                head,
                self.steps_counted,
                first,
            )
            self.notes.append(note)
            _say(note)
            return
        spans = [_step_span(*c["steps"]) for c in self.cycles]
        if len(spans) == 1:
            recorded = "recorded step%s %s" % ("s" if "–" in spans[0] else "", spans[0])
        else:
            recorded = "recorded steps %s in %d cycles" % (", ".join(spans), len(spans))
        parts = ["%s: %s (torch's ProfilerStep#N numbering)" % (head, recorded)]
        if self.steps_counted == 0:
            parts.append("no optimizer step seen: the whole run was step 0")
        elif steps is not None and steps.lead_name is not None:
            counted = "steps counted at each %s.step()" % steps.lead_name
            if len(steps.optimizers) > 1:
                counted = "steps counted at the lead optimizer's step() (%s; %d optimizers stepped)" % (
                    steps.lead_name,
                    len(steps.optimizers),
                )
            parts.append(counted)
        cut = [c for c in self.cycles if not c["complete"]]
        if cut:
            first, planned = schedule.recorded_steps(cut[0]["cycle"] - 1)
            parts.append(
                "cycle %d was cut short by the end of the run (steps %d–%d of %d–%d)"
                % (cut[0]["cycle"], first, cut[0]["steps"][1], first, planned)
            )
        if self.schedule_done_at is not None:
            parts.append("profiling stopped after the last cycle, at step %d" % self.schedule_done_at)
        note = "; ".join(parts)
        self.notes.append(note)
        _say(note)

    # -- timer --------------------------------------------------------------------------------------------------

    def _schedule(self):
        """One SIGALRM for the nearest of: the window opening, its end, the next segment."""
        if self.state == WAITING:
            deadlines = [self._open_at]
        elif self.state == OPEN:
            deadlines = [self._close_at, self._rotate_at if self.profiler is not None else None]
        else:
            deadlines = []
        deadlines = [d for d in deadlines if d is not None]
        if not deadlines:
            self._clear_timer()
            return
        self._set_timer(max(0.001, min(deadlines) - time.monotonic()))

    def _set_timer(self, seconds):
        signal.signal(signal.SIGALRM, self._on_timer)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        self._timer_armed = True

    def _clear_timer(self):
        if self._timer_armed:
            # Ignored first: a handler already on its way would otherwise re-arm the timer between the disarm and
            # the default action coming back, and the next alarm would kill the process.
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            self._timer_armed = False

    def _on_timer(self, _signum, frame):
        if self.state == CLOSED:
            return
        if self._unsafe_to_switch(frame):
            if not self._switch_at_own_code(frame):
                # A moment later instead: the callback or torch's few lines end soon.
                self._set_timer(0.001)
            return
        self._switch()

    def _switch(self):
        """Opens, closes or rotates the window, whichever is due."""
        now = time.monotonic() + 0.0005
        try:
            if self.state == WAITING and self._open_at is not None and now >= self._open_at:
                self.open()
            elif self.state == OPEN and self._close_at is not None and now >= self._close_at:
                self.close()
            elif self.state == OPEN and self._rotate_at is not None and now >= self._rotate_at:
                self.rotate()
            self._schedule()
        except Exception as error:  # never let the profiler's trouble surface inside the user's code
            self.notes.append("profiling window could not switch: %s" % error)
            _say("profiling window could not switch: %s" % error)

    def _switch_at_own_code(self, frame):
        """Switches at the script's next own step instead: the next line of its frame that called into torch, or a
        call into its own code, whichever comes first (a timer retried every millisecond rarely lands there: the
        interpreter takes signals mostly in torch's frames and the mode's). Done as debuggers attach (pdb's
        set_trace): a trace function on that frame, and a global one that sees calls until then. False where this
        cannot be done: a debugger's trace function is set, or no frame of the script's is on the stack."""
        if sys.gettrace() is not None or tracing_state.inside():
            return False
        _, own = self._switch_point(frame)
        if own is None:
            return False
        return self._switch_at(own)

    def _switch_at(self, own, calls=True, action=None):
        """Switches (or runs `action`) at the next line of frame `own`, or (with `calls`) at a call into the
        script's own code before it. Either waits while a garbage collection runs or a record_function is open
        (both can come inside torch)."""
        if sys.gettrace() is not None or tracing_state.inside():
            return False
        self._cancel_own_code_switch()
        window = self
        # The timer's own switch can wait for a record_function to end; a step counted in the script's optimizer
        # step cannot (torch's step markers are record_functions of their own).
        timed = action is None
        action = action or self._switch

        def switch_here(_frame, _event, _arg):
            if tracing_state.collecting():
                return switch_here  # a collection ends soon: the frame's next line
            window._cancel_own_code_switch()
            if timed and tracing_state.open_record_functions():
                # Not traced line by line meanwhile (a record_function may stay open for long): the timer again.
                window._set_timer(RETRY_SWITCH_S)
                return None
            action()
            return None

        def on_call(called, event, arg):
            # The walk of the whole stack only for a call into the script's own code (most calls are torch's).
            if calls and window._frame_kind(called) == _SCRIPT and window._switch_point(called)[0]:
                return switch_here(called, event, arg)
            return None

        own.f_trace = switch_here
        sys.settrace(on_call)
        self._own_code_switch = (own, on_call)
        return True

    def _cancel_own_code_switch(self):
        pending, self._own_code_switch = self._own_code_switch, None
        if pending is not None:
            own, on_call = pending
            own.f_trace = None
            if sys.gettrace() is on_call:
                sys.settrace(None)

    def _unsafe_to_switch(self, frame):
        """Whether the signal came where switching the profiler hangs or corrupts it. Stopping torch's profiler
        while one of its RecordFunctions is open on this thread (an op running, torch.ops.profiler's
        record_function) frees the events that scope's end then writes to: the heap is corrupted and the process
        crashes later, anywhere. So not:
        - inside a callback of torch's Python tracer (which runs Python code: the repr of a function it records,
          the hash of a tensor, and checks for signals there);
        - while a garbage collection runs: its finalizers (multiprocessing's, weakref callbacks) run Python code
          from inside whatever allocated, a torch op included, with only the script's frame above;
        - while a record_function is open (DataLoader's __next__ holds one around the script's own __getitem__,
          a script may hold its own);
        - anywhere torch's code (or the exact-sites mode's) is on the stack inward of the script's outermost frame:
          whatever the script's code is called from there runs inside torch.
        A moment later the script is back in its own code: its lines run between torch calls."""
        return not self._switch_point(frame)[0]

    def _switch_point(self, frame):
        """(now, own): whether the profiler may be switched with `frame` running, and the frame of the script's
        whose next line is the nearest point where it may (None: no frame of the script's is on the stack, or none
        outward of torch's).

        The frames outward of the script's outermost one are whatever runs the script (runpy, this agent, a
        launcher's wrapper such as torch.multiprocessing.spawn's) and are not looked at."""
        kinds = []
        frames = []
        while frame is not None:
            kinds.append(self._frame_kind(frame))
            frames.append(frame)
            frame = frame.f_back
        if _SCRIPT in kinds:
            outermost = len(kinds) - 1 - kinds[::-1].index(_SCRIPT)
            torch_at = max((i for i in range(outermost) if kinds[i] == _TORCH), default=-1)
            own = next(frames[i] for i in range(torch_at + 1, outermost + 1) if kinds[i] == _SCRIPT)
        else:
            # Only the standard library's code runs (a Pool worker waiting for its next task): safe unless torch's
            # is among it.
            torch_at = max((i for i, kind in enumerate(kinds) if kind == _TORCH), default=-1)
            own = None
        now = (
            torch_at < 0
            and not tracing_state.inside()
            and not tracing_state.collecting()
            and not tracing_state.open_record_functions()
        )
        return now, own

    def _frame_kind(self, frame):
        """_TORCH (torch's, this agent's, the exact-sites trampolines), _LIBRARY (the standard library's, frozen or
        generated code: looked through) or _SCRIPT (the script's and its other packages')."""
        if self.torch is None:
            return _SCRIPT
        if self._torch_prefixes is None:
            self._torch_prefixes = _torch_prefixes(self.torch)
        torch_dirs, library_dirs = self._torch_prefixes
        name = frame.f_code.co_filename
        if name == SITE_FILE or name.startswith(torch_dirs):
            return _TORCH
        if name.startswith(library_dirs) or name.startswith(("<frozen", "<string>")):
            return _LIBRARY
        return _SCRIPT

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
        tracing_state.unwatch_record_functions()


_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class _DeferredStopSignals:
    """Holds Ctrl-C, SIGTERM and SIGHUP while the profiler is switched, then hands each to the handler that was
    installed (Python runs signal handlers on the main thread only, so swapping them there is enough)."""

    def __enter__(self):
        self.pending = []
        self.saved = {}
        for sig in _STOP_SIGNALS:
            try:
                self.saved[sig] = signal.signal(sig, self._hold)
            except (ValueError, OSError):
                pass
        return self

    def _hold(self, signum, _frame):
        self.pending.append(signum)

    def __exit__(self, *_exc):
        for sig, handler in self.saved.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        for signum in self.pending:
            handler = self.saved.get(signum)
            if callable(handler):
                handler(signum, sys._getframe(0))
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)
        return False


def _step_span(first, last):
    return "%d" % first if first == last else "%d–%d" % (first, last)


def _caller_outside_torch():
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "torch" not in name.replace("\\", "/").split("/")[-3:-1] and "flagprof_agent" not in name:
            return "%s:%d" % (name, frame.f_lineno)
        frame = frame.f_back
    return None


def _torch_prefixes(torch):
    """(folders of torch and of this agent, folders of the standard library), each as path prefixes."""
    import sysconfig

    def folder(path):
        return (os.path.join(path, ""), os.path.join(os.path.realpath(path), ""))

    own = folder(os.path.dirname(os.path.abspath(torch.__file__))) + folder(os.path.dirname(os.path.abspath(__file__)))
    library = ()
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            library += folder(path)
    return own, library


def _release_results(profiler):
    """Frees a written segment's results now, while no profiler runs. Left to the garbage collector (torch's profiler
    objects hold reference cycles), they are freed at some later moment, under the next profiler or at exit, where
    torch now and then crashes freeing them."""
    inner = getattr(profiler, "profiler", None)
    if inner is not None and getattr(inner, "kineto_results", None) is not None:
        inner.kineto_results = None
