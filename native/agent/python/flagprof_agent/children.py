"""The child processes of a profiled run: DataLoader workers, multiprocessing children, scripts the script starts.
Each one that imports torch is profiled into a part of its own, SESSION/procs/<pid>/ (a whole session: session.json,
trace.json.gz written in segments, sites), which the opener merges with the main process on one timeline.

How a child comes to be profiled:
- forked (DataLoader workers and multiprocessing's default start method on Linux): os.register_at_fork runs in the
  child inside os.fork(); when the parent was profiling, the child drops the copy of the parent's profiler it
  inherited (its events are the parent's, written by the parent) and starts its own. Device activity APIs cannot be
  used after a fork (CUDA refuses a forked child), so a forked child records CPU ops, with their call sites.
- spawned (multiprocessing's spawn and forkserver, `subprocess.run([sys.executable, ...])`): a fresh interpreter
  finds FLAGPROF_CHILDREN and the agent's boot folder on PYTHONPATH (ranks_boot/sitecustomize.py) and starts
  profiling when torch has been imported, with the run's Kineto activities where torch sees the device.
A child is profiled until it exits: os._exit (how multiprocessing ends a forked child), sys.exit or the end of its
code (atexit). A child killed on the way keeps the segments it wrote, as any run does.
"""

import atexit
import faulthandler
import json
import os
import signal
import sys
import time
import types

CHILDREN_ENV = "FLAGPROF_CHILDREN"
PROCS_DIR = "procs"

# (window, config) of the process whose children are profiled: the script's process, then each profiled child for
# its own children.
_parent = None
_fork_hook_installed = False


def follow(directory, script, window, options, activities):
    """Profiles the children of this process from now on into DIRECTORY/procs/<pid>/."""
    global _parent, _fork_hook_installed
    # Here, not at the top: a spawned child imports this module at start-up and needs none of launch's imports.
    from . import launch

    config = {
        "session": directory,
        "script": script,
        "agent": launch.AGENT_ROOT,
        "parentPid": os.getpid(),
        "recordShapes": bool(options.record_shapes),
        "profileMemory": bool(options.profile_memory),
        "segment": options.segment if getattr(options, "schedule", None) is None else None,
        "activities": [name for name, _ in activities],
    }
    os.environ[CHILDREN_ENV] = json.dumps(config)
    launch.put_boot_dir_on_pythonpath()
    _parent = (window, config)
    if not _fork_hook_installed:
        os.register_at_fork(after_in_child=_after_fork)
        _fork_hook_installed = True


def _after_fork():
    global _parent
    parent, _parent = _parent, None
    if parent is None:
        return
    window, config = parent
    from .window import OPEN

    recording = window.state == OPEN and window.profiler is not None
    try:
        # The parent's hooks (its guard around torch's profiler, its call-site mode) are the parent's business.
        window._cancel_own_code_switch()
        window._remove_site_mode_now()
        window.restore()
        window.state = "forked"
    except Exception:
        pass
    if not recording:
        # Forked outside the parent's window (before --delay ran out, after the window closed): not captured.
        return
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        # The copy of the parent's profiler: its events are the parent's own, written by the parent.
        if torch.autograd._profiler_enabled():
            torch.autograd._disable_profiler()
        torch.autograd.profiler._is_profiler_enabled = False
    except Exception as error:
        _say_child("could not take over the profiler inherited from the parent (%s); this child is not profiled" % error)
        return
    try:
        _start(torch, config, "fork")
    except Exception as error:
        _say_child("profiling could not start (%s: %s)" % (type(error).__name__, error))


def start_spawned(config):
    """In a fresh interpreter started by a profiled process: profiles it from the moment torch is imported."""
    torch = sys.modules.get("torch")
    if torch is not None:
        _start(torch, config, "spawn")
        return
    sys.meta_path.insert(0, _TorchImport(config))


class _TorchImport:
    """Finds nothing itself: when `torch` is first imported, wraps the real loader so profiling starts the moment
    the torch package has run, before the importer's next statement."""

    def __init__(self, config):
        self.config = config

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None) if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        config, exec_module = self.config, loader.exec_module

        def exec_then_profile(module):
            exec_module(module)
            if _runs_torch_itself(module):
                return
            try:
                _start(module, config, "spawn")
            except Exception as error:
                _say_child("profiling could not start (%s: %s)" % (type(error).__name__, error))

        loader.exec_module = exec_then_profile
        return spec


def _runs_torch_itself(torch):
    """torch's own helper processes (torch.compile's compile workers, `python -m torch.utils...`) are not the user's
    children: profiling them would slow compilation and show torch's internals as a process of the run."""
    main = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    home = os.path.dirname(os.path.realpath(getattr(torch, "__file__", "") or ""))
    return bool(main and home and main.startswith(home + os.sep))


def _start(torch, config, how):
    import threading

    from .__main__ import Session, _import_lazy_profiler_modules, exact_site_table
    from .progress import Progress
    from .segments import SegmentWriter
    from . import tracing_state
    from .window import CaptureWindow

    pid = os.getpid()
    directory = os.path.join(config["session"], PROCS_DIR, str(pid))
    os.makedirs(directory, exist_ok=True)
    argv = list(sys.argv)
    options = types.SimpleNamespace(mode="cpu", module=None, script=config["script"], args=[])
    session = Session(directory, options)
    session.record["command"] = [sys.executable] + argv
    session.record["torch"] = {"version": getattr(torch, "__version__", None)}
    session.record["process"] = {"start": how, "parentPid": config["parentPid"], "label": None}
    activities = [("CPU", torch.profiler.ProfilerActivity.CPU)]
    if how == "fork":
        reason = "a forked child process: device activity APIs cannot be used after a fork, its CPU ops are profiled"
    else:
        reason = "a child process of the profiled run: profiled from its import of torch"
        activities += _device_activities(torch, config["activities"])
    session.record["mode"].update(requested="child", chosen="kineto" if len(activities) > 1 else "cpu", reason=reason)
    session.record["activities"] = [name for name, _ in activities]
    session.record["status"] = "running"
    # A child's progress goes nowhere: the launcher's pipe is the parent's.
    progress = Progress(None)
    _import_lazy_profiler_modules(torch)
    # Each op's own expression, as in the main process: a DataLoader worker's ops land on the dataset's lines.
    site_table = exact_site_table(torch, config["script"], session)
    writer = SegmentWriter(directory, session, progress, torch, config["script"], site_table)

    def write_segment(profiler):
        session.record["window"] = window.describe()
        writer.add(profiler, time.monotonic)

    window = CaptureWindow(
        torch,
        activities,
        None,
        config["recordShapes"],
        config["profileMemory"],
        0,
        None,
        progress,
        # Segments are cut on SIGALRM, which only the main thread can take.
        segment_s=config.get("segment") if threading.current_thread() is threading.main_thread() else None,
        on_segment=write_segment,
        site_table=site_table,
    )
    window.announce_native_failure = False
    # Before the profiler starts (arm() does it in the main process): the SIGTERM handler below must know when the
    # signal came inside a callback of torch's Python tracer, where stopping the profiler deadlocks it.
    tracing_state.calibrate()
    window.open()
    if not window.captured:
        session.record.update(status="exited", notes=session.record["notes"] + window.notes)
        session.write_quietly()
        return
    # Its own children are profiled too, into the same session's procs/.
    follow(config["session"], config["script"], window, _Options(config), activities)
    finished = []

    def finish(code, status="exited"):
        if finished or os.getpid() != pid:
            return
        finished.append(code)
        try:
            window.close()
        except Exception as error:
            session.note("stopping the profiler failed: %s" % error)
        window.restore()
        process = session.record["process"]
        process["label"] = _label(torch, how)
        session.record.update(status=status, exitCode=code, window=window.describe())
        session.record["notes"].extend(window.notes)
        writer.seal()
        session.record["exportTimeS"] = round(writer.export_s, 3)
        session.write_quietly()

    real_exit = os._exit

    def _exit(code):
        try:
            finish(code if isinstance(code, int) else 1)
        except BaseException:
            pass
        real_exit(code)

    os._exit = _exit
    atexit.register(lambda: finish(None))
    if threading.current_thread() is threading.main_thread():
        _finish_on_sigterm(window, finish, directory)


# How long writing the profile on SIGTERM may take before the process ends anyway (a parent waiting to join it).
TERM_FINISH_LIMIT_S = 30


def _finish_on_sigterm(window, finish, directory):
    """A child is often ended by SIGTERM (multiprocessing's Pool on leaving its `with`, a DataLoader whose worker
    outlives its join): the profile is written first, then the signal does what it would have done. Where the
    signal lands inside torch (stopping the profiler there can crash it), a millisecond later."""
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def on_term(signum, frame):
        if window._unsafe_to_switch(frame):
            signal.signal(signal.SIGALRM, on_term)
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        watchdog = _watchdog(directory)
        try:
            finish(128 + signal.SIGTERM, "terminated")
        finally:
            if watchdog is not None:
                faulthandler.cancel_dump_traceback_later()
                watchdog.close()
                _remove_quietly(watchdog.name)  # it did not fire: nothing to keep
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)


def _watchdog(directory):
    """A bound on finishing when the pool that sent SIGTERM waits to join this process: should writing the
    profile hang, the interpreter's own watchdog thread writes where it was to terminate-hang.txt and ends the
    process (the session, still "running", is sealed as a run that died)."""
    try:
        out = open(os.path.join(directory, "terminate-hang.txt"), "w")
        faulthandler.dump_traceback_later(TERM_FINISH_LIMIT_S, exit=True, file=out)
        return out
    except (OSError, ValueError, RuntimeError):
        return None


def _remove_quietly(path):
    try:
        os.remove(path)
    except OSError:
        pass


class _Options:
    def __init__(self, config):
        self.record_shapes = config["recordShapes"]
        self.profile_memory = config["profileMemory"]
        self.segment = config.get("segment")
        self.schedule = None


def _device_activities(torch, wanted):
    """The parent's Kineto device activities that torch sees in this process."""
    from .modes import device_activities

    return [(name, activity) for name, activity in device_activities(torch) if name in wanted]


def _label(torch, how):
    """What the child was, in the user's words: "DataLoader worker 1", or how it started."""
    try:
        info = torch.utils.data.get_worker_info()
    except Exception:
        info = None
    if info is not None:
        return "DataLoader worker %d" % info.id
    try:
        import multiprocessing

        name = multiprocessing.current_process().name
        if name and name != "MainProcess":
            return name
    except Exception:
        pass
    return "forked process" if how == "fork" else "child process"


def _say_child(message):
    try:
        sys.stderr.write("flagprof (pid %d): %s\n" % (os.getpid(), message))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
