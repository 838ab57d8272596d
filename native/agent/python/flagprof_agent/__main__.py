"""python -m flagprof_agent --session DIR [--mode auto|kineto|agent|cpu] [--delay S] [--duration S]
                           [--record-shapes|--no-record-shapes] [--profile-memory] [--progress-fd N] -- script.py [args...]

Runs script.py as __main__ under the profiler and writes DIR/trace.json.gz, DIR/sites.json and DIR/session.json.
The exit code is the script's: sys.exit(n) -> n, an uncaught exception -> 1, SIGINT -> 130, SIGTERM -> 143.
"""

import argparse
import gzip
import json
import os
import platform
import shutil
import signal
import sys
import time

from . import __version__
from .modes import MODES, device_activities, device_hint, torch_build
from .progress import Progress
from .runner import prepare_interpreter, print_exception, run_script
from .window import CaptureWindow


def _say(message):
    sys.stderr.write("flagprof: %s\n" % message)
    sys.stderr.flush()


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
    parser.add_argument("script", nargs="?", help=argparse.SUPPRESS)
    options = parser.parse_args(own)
    if options.script is not None:
        rest = [options.script] + rest
    if not rest:
        parser.error("no script given: python -m flagprof_agent --session DIR -- script.py [args...]")
    if options.delay < 0 or (options.duration is not None and options.duration <= 0):
        parser.error("--delay must be >= 0 and --duration > 0")
    options.script, options.args = rest[0], rest[1:]
    return options


class Session:
    """What DIR/session.json records, filled in as the run goes."""

    def __init__(self, directory, options):
        self.directory = directory
        self.started = time.time()
        self.record = {
            "version": 1,
            "agent": {"version": __version__},
            "python": {
                "version": platform.python_version(),
                "implementation": platform.python_implementation(),
                "executable": sys.executable,
            },
            "torch": None,
            "mode": {"requested": options.mode, "chosen": None, "reason": None},
            "activities": [],
            "devices": [],
            "command": [sys.executable, options.script] + list(options.args),
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
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(self.record, f, indent=2)
            f.write("\n")
        os.replace(temporary, path)


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
    return torch


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


def export_trace(window, directory, session):
    """Chrome trace to a temporary JSON, then gzip (level 3: the export is on the user's wait path)."""
    target = os.path.join(directory, "trace.json.gz")
    temporary = os.path.join(directory, ".trace.json.tmp")
    try:
        window.profiler.export_chrome_trace(temporary)
        with open(temporary, "rb") as source, gzip.open(target + ".tmp", "wb", compresslevel=3) as sink:
            shutil.copyfileobj(source, sink, 1 << 20)
        os.replace(target + ".tmp", target)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def export_sites(window, torch, script, directory, session):
    from .sites import collect_sites, write_sites

    sites, counts = collect_sites(window.profiler, torch, script)
    path = os.path.join(directory, "sites.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        write_sites(f, sites)
    os.replace(path + ".tmp", path)
    session.record["sites"] = counts


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    directory = os.path.abspath(options.session)
    os.makedirs(directory, exist_ok=True)
    progress = Progress(options.progress_fd)
    session = Session(directory, options)
    progress.emit("starting", session=directory)

    script = os.path.abspath(options.script)
    if not os.path.isfile(script):
        # The words Python itself uses for `python missing.py`, exit 2 as Python does.
        sys.stderr.write("%s: can't open file %r: [Errno 2] No such file or directory\n" % (sys.executable, script))
        session.record.update(status="error", exitCode=2)
        session.note("script not found: %s" % script)
        session.write()
        progress.emit("done", exitCode=2, status="error")
        return 2

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

    window = CaptureWindow(
        torch if activities else None,
        activities,
        native_handle,
        options.record_shapes,
        options.profile_memory,
        options.delay,
        options.duration,
        progress,
    )
    window.announce_native_failure = options.mode == "agent"
    prepare_interpreter(options.script, options.args)
    progress.emit("running", profiling=False)
    script_started = time.time()
    code, status, error = run_script(script, before=window.arm)
    # Finishing must survive the cancel sequence's next signals: the launcher kills the group if it takes too long.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        window.close()
    except Exception as failure:
        session.note("stopping the profiler failed: %s" % failure, tell=True)
    window.restore()
    session.record["scriptTimeS"] = round(time.time() - script_started, 3)
    if error is not None:
        print_exception(error, options.script)
    if status == "terminated":
        _say("terminated; writing the profile captured so far")
    session.record.update(status=status, exitCode=code, window=window.describe())
    session.record["notes"].extend(window.notes)
    if window.native_failure and mode == "agent" and window.native is None:
        what = "CPU ops only" if torch is not None else "nothing is captured"
        session.record["mode"].update(chosen="cpu", reason="%s; %s, so %s" % (reason, window.native_failure, what))
    if window.user_profiler:
        session.record["userProfiler"] = window.user_profiler

    progress.emit("exporting")
    if window.profiler is not None and window.captured:
        try:
            started = time.time()
            export_trace(window, directory, session)
            session.record["exportTimeS"] = round(time.time() - started, 3)
        except Exception as failure:
            session.note("exporting the trace failed: %s" % failure, tell=True)
        try:
            started = time.time()
            export_sites(window, torch, script, directory, session)
            session.record["sitesTimeS"] = round(time.time() - started, 3)
        except Exception as failure:
            session.note("finding call sites failed: %s" % failure, tell=True)
    elif torch is not None and not window.captured and options.delay > 0:
        session.note("the script ended before the profiling window opened (--delay %gs): nothing was captured" % options.delay, tell=True)
    if window.native is not None:
        try:
            window.native.close()
        except Exception as failure:
            session.note("closing the native capture failed: %s" % failure, tell=True)
    if torch is not None:
        session.record["devices"] = device_properties(torch)
    session.write()
    progress.emit("done", exitCode=code, status=status)
    progress.close()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return code


def _main_interruptible():
    try:
        return main()
    except KeyboardInterrupt:
        # Cancelled while starting (before the script ran): nothing to keep, Python's exit status for Ctrl-C.
        _say("cancelled before the script started")
        return 130


if __name__ == "__main__":
    sys.exit(_main_interruptible())
