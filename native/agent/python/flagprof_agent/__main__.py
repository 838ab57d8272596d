"""python -m flagprof_agent --session DIR [--mode auto|kineto|agent|cpu] [--delay S] [--duration S]
                           [--schedule wait=W,warmup=U,active=A[,repeat=R]]
                           [--record-shapes|--no-record-shapes] [--profile-memory] [--progress-fd N]
                           -- script.py|-m module [args...]

Runs script.py (or a module, as `python -m` does) as __main__ under the profiler and writes DIR/trace.json.gz, DIR/sites.json and DIR/session.json.
The exit code is the script's: sys.exit(n) -> n, os._exit(n) -> n, an uncaught exception -> 1, SIGINT -> 130,
SIGHUP -> 129, SIGTERM -> 143.

The profile is written while the script runs (segments.py): session.json from the start, the trace every
--segment seconds, so a kill or a crash loses at most the last segment.
"""

import argparse
import json
import os
import platform
import signal
import sys
import time

from . import __version__
from .modes import MODES, device_activities, device_hint, torch_build
from . import launch
from . import schedule as step_schedule
from .progress import Progress
from .runner import Terminated, exception_record, prepare_interpreter, print_exception, run_script
from . import children
from .segments import SegmentWriter
from .window import CaptureWindow

# Seconds of capture per segment: a run that is killed loses at most this much (plus one uninterruptible native
# call of the script). Long enough that restarting the profiler costs nothing measurable, short enough to matter.
DEFAULT_SEGMENT_S = 5.0
# setitimer() overflows on absurd values; a year is more than any profiling window.
MAX_SECONDS = 365 * 24 * 3600.0


def _say(message):
    try:
        sys.stderr.write("flagprof: %s\n" % message)
        sys.stderr.flush()
    except (OSError, ValueError):
        # A closed terminal or a dead launcher: the message is in session.json's notes; the profile matters more.
        pass


def parse_args(argv):
    if "--" in argv:
        split = argv.index("--")
        own, rest = argv[:split], argv[split + 1 :]
    else:
        own, rest = argv, []
    parser = argparse.ArgumentParser(prog="python -m flagprof_agent", description=__doc__.split("\n\n")[1])
    parser.add_argument("--session", required=True, help="folder the profile is written to")
    parser.add_argument("--mode", choices=MODES, default="auto")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before the profiling window opens")
    parser.add_argument("--duration", type=float, default=None, help="length of the profiling window in seconds")
    parser.add_argument("--record-shapes", dest="record_shapes", action="store_true", default=True)
    parser.add_argument("--no-record-shapes", dest="record_shapes", action="store_false")
    parser.add_argument("--profile-memory", action="store_true", default=False)
    parser.add_argument("--progress-fd", type=int, default=None, help="pipe for JSON-line progress reports")
    parser.add_argument(
        "--segment",
        type=float,
        default=None,
        help="seconds of capture written to disk at a time (default %g; 0: once, at the end)" % DEFAULT_SEGMENT_S,
    )
    parser.add_argument(
        "--schedule",
        default=None,
        help="wait=W,warmup=U,active=A[,repeat=R] (or W,U,A[,R]): torch.profiler's step schedule, a step ending at "
        "each optimizer step",
    )
    parser.add_argument("script", nargs="?", help=argparse.SUPPRESS)
    options = parser.parse_args(own)
    if options.script is not None:
        rest = [options.script] + rest
    if not rest:
        parser.error("no script given: python -m flagprof_agent --session DIR -- script.py [args...]")
    options.segment_given = options.segment is not None
    if options.schedule is not None:
        try:
            options.schedule = step_schedule.parse(options.schedule)
        except step_schedule.ScheduleError as error:
            parser.error("--schedule: %s" % error)
        if options.delay or options.duration is not None:
            # Two windows, one in seconds and one in steps, have no one meaning: which would win is a guess.
            parser.error("--schedule cannot be combined with --delay/--duration: the schedule picks the steps itself")
    if options.segment is None:
        env = os.environ.get("FLAGPROF_SEGMENT_S")
        try:
            options.segment = float(env) if env else DEFAULT_SEGMENT_S
        except ValueError:
            parser.error("FLAGPROF_SEGMENT_S must be a number of seconds, got %r" % env[:40])
    for name, value in (("--delay", options.delay), ("--duration", options.duration), ("--segment", options.segment)):
        if value is not None and not (value == value and value <= MAX_SECONDS):
            parser.error("%s must be a number of seconds up to %d" % (name, MAX_SECONDS))
    if options.delay < 0 or (options.duration is not None and options.duration <= 0) or options.segment < 0:
        parser.error("--delay and --segment must be >= 0 and --duration > 0")
    options.module = None
    if rest[0] == "-m":
        if len(rest) < 2:
            parser.error("-m needs a module name: python -m flagprof_agent --session DIR -- -m module [args...]")
        options.module, rest = rest[1], rest[1:]
    options.script, options.args = rest[0], rest[1:]
    return options


class Session:
    """What DIR/session.json records, filled in as the run goes."""

    def __init__(self, directory, options):
        self.directory = directory
        self.started = time.time()
        self.record = {
            "version": 1,
            "agent": {"version": __version__, "pid": os.getpid()},
            "python": {
                "version": platform.python_version(),
                "implementation": platform.python_implementation(),
                "executable": sys.executable,
            },
            "torch": None,
            "mode": {"requested": options.mode, "chosen": None, "reason": None},
            "activities": [],
            "devices": [],
            "command": [sys.executable] + (["-m", options.module] if options.module else [options.script]) + list(options.args),
            "script": os.path.abspath(options.script),
            "cwd": os.getcwd(),
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "status": "starting",
            "exitCode": None,
            "wallTimeS": None,
            "scriptTimeS": None,
            "window": None,
            "files": {},
            "sites": None,
            "notes": [],
        }
        if options.module:
            self.record["module"] = options.module
        rank = launch.rank_of_worker()
        if rank is not None:
            self.record["rank"] = rank

    def note(self, message, tell=False):
        self.record["notes"].append(message)
        if tell:
            _say(message)

    def write(self):
        self.record["wallTimeS"] = round(time.time() - self.started, 3)
        files = {}
        for name in ("trace.json.gz", "sites.json", "capture.fpc", "diagnostics.jsonl"):
            path = os.path.join(self.directory, name)
            if os.path.exists(path):
                files[name] = os.path.getsize(path)
        self.record["files"] = files
        path = os.path.join(self.directory, "session.json")
        temporary = path + ".tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as f:
                json.dump(self.record, f, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, path)
        except BaseException:
            try:
                os.remove(temporary)
            except OSError:
                pass
            raise

    def write_quietly(self):
        """write(), telling the user once when it fails (a full disk) instead of failing the run."""
        try:
            self.write()
            return True
        except OSError as error:
            if not getattr(self, "_write_failed", False):
                self._write_failed = True
                _say("session.json could not be written (%s); the run goes on" % os.strerror(error.errno or 0))
            return False


def choose_mode(requested, build, session_dir):
    """(mode, reason, native handle or None). Runs before torch is imported."""
    if requested == "cpu":
        return "cpu", "requested", None
    if requested == "kineto":
        return "kineto", "requested", None
    if requested == "auto" and build is not None:
        traced, why = device_hint(build)
        if traced:
            return "kineto", why, None
        device_reason = why
    elif requested == "auto":
        device_reason = "torch is not installed"
    else:
        device_reason = "requested"
    if requested == "auto" and not accelerator_devices():
        # A vendor library can load on a machine with no device (a CUDA toolkit without a GPU): arming it there only
        # fails at start and fills the log with errors, so auto mode does not try. --mode agent still can.
        return "cpu", "%s, and no accelerator device node was found (%s)" % (device_reason, ", ".join(DEVICE_NODES)), None
    handle, failure = open_native(session_dir)
    if handle is not None:
        return "agent", device_reason + "; the native agent loaded", handle
    if requested == "agent":
        return "cpu", "agent mode unavailable (%s); fell back to CPU-only profiling" % failure, None
    return "cpu", "%s, and the native agent is unavailable (%s)" % (device_reason, failure), None


# Device nodes of the accelerators the tracer family serves: NVIDIA (and CUPTI-compatible PPU), AMD/DCU (KFD),
# Ascend, MetaX, MUSA, GCU.
DEVICE_NODES = ("/dev/nvidia[0-9]*", "/dev/kfd", "/dev/davinci[0-9]*", "/dev/mxcd", "/dev/mtgpu*", "/dev/gcu*")


def accelerator_devices():
    import glob

    return [path for pattern in DEVICE_NODES for path in glob.glob(pattern)]


def open_native(session_dir):
    if not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "native.py")):
        return None, "flagprof_agent.native is not installed"
    try:
        from . import native  # provided by the native agent build; loads its library before torch
    except ImportError as error:
        return None, "flagprof_agent.native could not be imported: %s" % error
    except Exception as error:
        return None, "flagprof_agent.native failed to load: %s" % error
    try:
        return native.open_capture(session_dir), None
    except Exception as error:  # RuntimeError with a one-line reason, by contract
        return None, str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def import_torch(session):
    try:
        import torch  # noqa: F401 (imported before the script so the window can open at its first line)
    except Exception as error:
        session.note("torch could not be imported (%s: %s); the script ran without profiling" % (type(error).__name__, error), tell=True)
        return None
    info = {"version": getattr(torch, "__version__", None)}
    version = getattr(torch, "version", None)
    for key in ("cuda", "hip", "xpu", "git_version"):
        info[key] = getattr(version, key, None)
    try:
        info["kineto"] = bool(torch.autograd.kineto_available())
    except Exception:
        info["kineto"] = None
    try:
        info["privateuse1Backend"] = torch._C._get_privateuse1_backend_name()
    except Exception:
        pass
    session.record["torch"] = info
    _import_lazy_profiler_modules(torch)
    return torch


def _import_lazy_profiler_modules(torch):
    """Torch imports torch.profiler._cupti_monitor the first time a record_function runs (Optimizer.step does). In
    the window, torch's Python tracer records that module's import, and one of its frames gets a name with bare
    double quotes (`_cupti_monitor.py(0): "segment"`) that torch 2.13 writes into the trace unescaped: the whole
    file is then not JSON. Imported here, before the window opens, it never runs under the tracer."""
    lazy = getattr(getattr(torch.autograd, "profiler", None), "_maybe_cupti_monitor", None)
    if lazy is None:
        return
    try:
        lazy()
    except Exception:
        pass  # torch's own import failed: it says so itself, and then nothing is imported in the window either


def device_properties(torch):
    devices = []
    try:
        if torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(index)
                devices.append(
                    {
                        "type": "cuda",
                        "index": index,
                        "name": p.name,
                        "totalMemory": p.total_memory,
                        "computeCapability": "%d.%d" % (p.major, p.minor),
                        "multiProcessorCount": p.multi_processor_count,
                    }
                )
    except Exception:
        pass
    try:
        backend = torch._C._get_privateuse1_backend_name()
        module = getattr(torch, backend, None) if backend != "privateuseone" else None
        if module is not None and module.is_available():
            for index in range(module.device_count()):
                entry = {"type": backend, "index": index}
                try:
                    entry["name"] = module.get_device_name(index)
                except Exception:
                    pass
                devices.append(entry)
    except Exception:
        pass
    return devices


def die_with_launcher():
    """The run ends when its launcher dies (a closed terminal, a killed flagprof or VS Code): SIGTERM then, which
    writes the last segment. Linux only (prctl); elsewhere the launcher's own signal handling has to do. Returns
    the parent's pid at start (its change later means the parent is gone)."""
    launcher = os.environ.pop("FLAGPROF_LAUNCHER_PID", None)
    if not launcher or not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        launcher = int(launcher)
    except Exception:
        return None
    parent = os.getppid()
    if parent != launcher:
        # Either a wrapper runs us (`--python` naming a script that starts Python without exec: the death signal
        # then follows the wrapper, which dies with the launcher's group) or the launcher was gone before the
        # signal was armed.
        try:
            os.kill(launcher, 0)
        except ProcessLookupError:
            os.kill(os.getpid(), signal.SIGTERM)
        except OSError:
            pass
    return parent


class Run:
    """One profiled run, finished exactly once: at the script's end, at os._exit, or on a signal."""

    def __init__(self, options, directory, session, progress, window, writer, torch, mode, reason, launcher):
        self.options = options
        self.directory = directory
        self.session = session
        self.progress = progress
        self.window = window
        self.writer = writer
        self.torch = torch
        self.mode = mode
        self.reason = reason
        self.launcher = launcher
        self.script_started = None
        self.finished = False
        # A child the script forks returns through the same frames: its end is not the run's (children.py).
        self.pid = os.getpid()

    def finish(self, code, status, error):
        if self.finished or os.getpid() != self.pid:
            return code
        self.finished = True
        # Finishing must survive the cancel sequence's next signals: the launcher waits while progress arrives.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (ValueError, OSError):
                pass
        session, window = self.session, self.window
        self.progress.emit("exporting", step="stop")
        try:
            window.close()
        except Exception as failure:
            session.note("stopping the profiler failed: %s" % failure, tell=True)
        window.restore()
        if self.script_started is not None:
            session.record["scriptTimeS"] = round(time.time() - self.script_started, 3)
        if error is not None:
            print_exception(error, self.options.script)
            if not isinstance(error, (KeyboardInterrupt, Terminated)):
                session.record["exception"] = exception_record(error)
        if status in ("terminated", "hangup"):
            _say("%s; the profile captured so far is kept" % ("terminated" if status == "terminated" else "hung up"))
        session.record.update(status=status, exitCode=code, window=window.describe())
        session.record["notes"].extend(window.notes)
        if window.native_failure and self.mode == "agent" and window.native is None:
            what = "CPU ops only" if self.torch is not None else "nothing is captured"
            session.record["mode"].update(
                chosen="cpu", reason="%s; %s, so %s" % (self.reason, window.native_failure, what)
            )
        if window.user_profiler:
            session.record["userProfiler"] = window.user_profiler
        self.progress.emit("exporting", step="seal")
        if self.writer is not None:
            self.writer.seal()
            session.record["exportTimeS"] = round(self.writer.export_s, 3)
            session.record["sitesTimeS"] = round(self.writer.sites_s, 3)
        if self.torch is not None and not window.captured and self.options.delay > 0:
            session.note(
                "the script ended before the profiling window opened (--delay %gs): nothing was captured" % self.options.delay,
                tell=True,
            )
        if window.native is not None:
            try:
                window.native.close()
            except Exception as failure:
                session.note("closing the native capture failed: %s" % failure, tell=True)
        if self.torch is not None:
            session.record["devices"] = device_properties(self.torch)
        session.write_quietly()
        self.progress.emit("done", exitCode=code, status=status)
        self.progress.close()
        if self.launcher is not None and os.getppid() != self.launcher:
            # The launcher is gone, so nobody else ends what the script started (its process group is ours).
            try:
                os.killpg(os.getpgrp(), signal.SIGTERM)
            except OSError:
                pass
        for sig, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL), (signal.SIGHUP, signal.SIG_DFL)):
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        return code

    def patch_exit(self):
        """os._exit skips every finally: the profile is finished first, in the agent's own process only (a
        forked child's os._exit is its own business)."""
        real_exit = os._exit
        pid = os.getpid()
        run = self

        def _exit(code):
            if os.getpid() == pid and not run.finished:
                try:
                    os._exit = real_exit
                    run.finish(code if isinstance(code, int) else 1, "exited", None)
                except BaseException:
                    pass
            real_exit(code)

        os._exit = _exit
        return real_exit


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    directory = os.path.abspath(options.session)
    os.makedirs(directory, exist_ok=True)
    launcher = die_with_launcher()
    progress = Progress(options.progress_fd)
    found = launch.module_file(options.module) if options.module else options.script
    if found is not None:
        options.script = found
    session = Session(directory, options)
    progress.emit("starting", session=directory)
    # From the first moment a crash leaves a session that says what ran and how far it got.
    session.write_quietly()
    if found is None:
        # Python's own words for `python -m missing`, and its exit code.
        sys.stderr.write("%s: No module named %s\n" % (sys.executable, options.module))
        session.record.update(status="error", exitCode=1)
        session.note("no module named %s" % options.module)
        session.write_quietly()
        progress.emit("done", exitCode=1, status="error")
        return 1
    if launch.is_launcher(options.module):
        return launch.run_launcher(options, session, progress)

    script = os.path.abspath(options.script)
    if not os.path.isfile(script):
        # The words Python itself uses for `python missing.py`, exit 2 as Python does.
        sys.stderr.write("%s: can't open file %r: [Errno 2] No such file or directory\n" % (sys.executable, script))
        session.record.update(status="error", exitCode=2)
        session.note("script not found: %s" % script)
        session.write_quietly()
        progress.emit("done", exitCode=2, status="error")
        return 2
    syntax = compile_error(script)
    if syntax is not None:
        # Before torch is imported: a typo costs a second, not the time it takes to start profiling.
        print_exception(syntax, options.script)
        session.record.update(status="exception", exitCode=1, exception=exception_record(syntax))
        session.note("the script does not compile: %s" % syntax.__class__.__name__)
        session.write_quietly()
        progress.emit("done", exitCode=1, status="exception")
        return 1

    build = torch_build()
    mode, reason, native_handle = choose_mode(options.mode, build, directory)
    torch = import_torch(session) if build is not None else None
    if build is None:
        session.note("torch is not installed in %s: the script runs without op or device profiling" % sys.executable, tell=True)
    activities = []
    if torch is not None:
        activities = [("CPU", torch.profiler.ProfilerActivity.CPU)]
        if mode == "kineto":
            found = device_activities(torch)
            if found:
                activities += found
            else:
                mode, reason = "cpu", "%s, but torch sees no device it can trace (%s)" % (
                    "requested kineto" if reason == "requested" else reason,
                    "torch.cuda.is_available() is False and no PrivateUse1/XPU backend is registered",
                )
    elif mode == "kineto":
        mode, reason = "cpu", "kineto mode needs torch, which is not available"
    session.record["mode"].update(chosen=mode, reason=reason)
    session.record["activities"] = [name for name, _ in activities]
    progress.emit("starting", mode=mode, reason=reason)
    if mode != options.mode and options.mode != "auto":
        _say("%s mode unavailable: %s" % (options.mode, reason))

    site_table = exact_site_table(torch, script, session) if activities else None
    writer = SegmentWriter(directory, session, progress, torch, script, site_table) if activities else None

    def write_segment(profiler):
        # The window as it stands goes with each segment: a run killed later still tells its pauses.
        session.record["window"] = window.describe()
        writer.add(profiler, time.monotonic)

    window = CaptureWindow(
        torch if activities else None,
        activities,
        native_handle,
        options.record_shapes,
        options.profile_memory,
        options.delay,
        options.duration,
        progress,
        # A scheduled run writes one segment per recorded cycle, never by time.
        segment_s=options.segment if options.schedule is None else None,
        on_segment=write_segment if writer is not None else None,
        site_table=site_table,
        schedule=options.schedule,
    )
    if options.schedule is not None and options.segment_given:
        session.note("--segment is off with --schedule: each recorded cycle is written as one segment", tell=True)

    window.announce_native_failure = options.mode == "agent"
    if torch is not None and mode in ("cpu", "kineto") and options.mode != "cpu":

        def on_device_backend(name):
            # The script brought its own device backend: its Kineto profiler traces the device from here on.
            session.record["mode"].update(
                chosen="kineto",
                reason="the script registered the PrivateUse1 device %r: its backend's Kineto profiler traces it"
                % name,
            )
            session.record["activities"] = [n for n, _ in window.activities] + ["PrivateUse1:%s" % name]
            session.note("device %r registered by the script: profiled from the statement after it" % name)
            progress.emit("starting", mode="kineto", reason=session.record["mode"]["reason"])

        window.on_device_backend = on_device_backend
    elif torch is not None and mode == "agent" and native_handle is not None:
        _import_adaptor_builder()
        window.on_device_backend = lambda name: _torch_ids_through_adaptor(torch, name, window, session)
    run = Run(options, directory, session, progress, window, writer, torch, mode, reason, launcher)
    prepare_interpreter(options.script, options.args, options.module)
    if activities and os.environ.get("FLAGPROF_CHILDREN_OFF") != "1":
        # DataLoader workers, multiprocessing children, Python subprocesses: each into a part of this session (after
        # prepare_interpreter, which gives the script the PYTHONPATH it was launched with).
        children.follow(directory, script, window, options, activities)
    session.record["status"] = "running"
    session.write_quietly()
    progress.emit("running", profiling=False)
    run.script_started = time.time()
    real_exit = run.patch_exit()
    try:
        code, status, error = run_script(script, before=window.arm, module=options.module)
    finally:
        if os._exit is not real_exit:
            os._exit = real_exit
    return run.finish(code, status, error)


def _import_adaptor_builder():
    """What registering the adaptor imports (its builder, torch's cpp_extension: about 50 ms), imported before the
    window opens: the registration runs inside the window, where torch's Python tracer records every import, and
    torch 2.13 writes some import frames' names unescaped (see _import_lazy_profiler_modules)."""
    try:
        from . import kineto_plugin  # noqa: F401
        from torch.utils import cpp_extension  # noqa: F401
    except Exception:
        pass  # the registration says why it cannot build the plugin, when it comes to that


def _torch_ids_through_adaptor(torch, name, window, session):
    """Agent mode, and the script registered a PrivateUse1 device: where its backend brings no Kineto profiler,
    the project's adaptor is registered for it in ids-only mode (FLAGPROF_KINETO_IDS_ONLY: the capture stays the
    agent's), so torch pushes each op's correlation id to the tracer and the device events link by External id.
    Returns False when the device is not followed (its backend's own profiler, or no plugin here)."""
    from . import kineto_plugin

    os.environ["FLAGPROF_KINETO_IDS_ONLY"] = "1"
    try:
        result = kineto_plugin.load(torch)
    except kineto_plugin.PluginUnavailable as error:
        session.note(
            "device %r registered by the script; torch's correlation ids are not recorded (%s): device events are "
            "linked by enclosure" % (name, error),
            tell=True,
        )
        return False
    if result != "registered":
        session.note(
            "device %r registered by the script with a Kineto profiler of its own: agent mode records the device "
            "itself, linked by enclosure (profile with --mode kineto to use the backend's profiler)" % name
        )
        return False
    session.record["activities"] = [n for n, _ in window.activities] + ["PrivateUse1:%s" % name]
    session.record["torchIds"] = {"device": name, "through": "the Kineto adaptor, ids only"}
    session.note(
        "device %r registered by the script: torch's correlation ids reach the tracer from the statement after it "
        "(device events link by External id)" % name
    )
    return True


def exact_site_table(torch, script, session):
    """The table of expression sites (exact_sites), or None when FLAGPROF_EXACT_SITES turns them off."""
    from . import exact_sites
    from .sites import PathResolver

    if not exact_sites.enabled():
        session.note("exact expression sites are off (FLAGPROF_EXACT_SITES=0): operators are charged to their functions")
        return None
    return exact_sites.SiteTable(PathResolver(torch, script))


def compile_error(script):
    """The SyntaxError (or ValueError for NUL bytes) `python script.py` would stop at, else None."""
    try:
        with open(script, "rb") as f:
            source = f.read()
        compile(source, script, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return error
    except OSError:
        return None
    return None


def _main_interruptible():
    try:
        return main()
    except KeyboardInterrupt:
        # Cancelled while starting (before the script ran): nothing to keep, Python's exit status for Ctrl-C.
        _say("cancelled before the script started")
        return 130


if __name__ == "__main__":
    sys.exit(_main_interruptible())
