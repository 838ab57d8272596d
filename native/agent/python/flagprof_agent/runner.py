"""Running the user's script as `python script.py args` would, and turning its fate into an exit code."""

import os
import runpy
import signal
import sys
import time

from . import tracing_state

_AGENT_DIR = os.path.dirname(os.path.abspath(__file__))


class Terminated(BaseException):
    """SIGTERM (or SIGHUP), turned into an exception so the profile captured so far can still be written."""

    def __init__(self, signum=signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum


def prepare_interpreter(script, args, module=None):
    """sys.argv, sys.path[0] and the launcher's traces, as a terminal run of `python script.py` (or, with a module,
    `python -m module`) would have them."""
    sys.argv = [script] + list(args)
    # `python -m flagprof_agent` put the current directory first; `python script.py` puts the script's folder,
    # `python -m module` the current directory.
    script_dir = os.getcwd() if module else os.path.dirname(os.path.realpath(script))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    agent_path = os.environ.pop("FLAGPROF_AGENT_PATH", None)
    if agent_path:
        # The launcher put the agent on PYTHONPATH; the script and its children must not see it.
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.abspath(agent_path)]
        original = os.environ.pop("FLAGPROF_ORIGINAL_PYTHONPATH", None)
        if original:
            os.environ["PYTHONPATH"] = original
        else:
            os.environ.pop("PYTHONPATH", None)


def _deferred(signum):
    """True when the signal came inside a profile or trace callback (tracing_state): it is sent again a
    millisecond later, from a thread (sent from here, Python would take it at once, in this same callback), to be
    taken once the callback has returned."""
    if tracing_state.inside():
        import threading

        resend = threading.Timer(0.001, os.kill, (os.getpid(), signum))
        resend.daemon = True
        resend.start()
        return True
    return False


# Set once a Terminated is on its way: a launcher's cancel sequence can send SIGTERM again before the run has
# finished unwinding, and a second Terminated raised there (in an except or finally clause) would end the agent
# before it writes the profile.
_terminating = []


def _on_sigterm(signum, _frame):
    if _terminating or _deferred(signum):
        return
    _terminating.append(signum)
    raise Terminated(signum)


# Set when a Ctrl-C reached the script: what it then ends with (a torchrun rank's collective failing because its
# peer was interrupted first, a library turning the KeyboardInterrupt into its own error) still counts as the
# interruption the user asked for.
_interrupted = []


def _on_sigint(signum, _frame):
    """Python's own Ctrl-C (KeyboardInterrupt), taken outside profile callbacks."""
    if not _deferred(signum):
        _interrupted.append(signum)
        raise KeyboardInterrupt


def run_script(script, before=None, module=None):
    """Runs the script, or the module as `python -m` does (after `before`, which opens the profiling window: a
    Ctrl-C there counts as the script's); returns (exit code, status, the exception it ended with or None)."""
    del _terminating[:]
    del _interrupted[:]
    # Python's own Ctrl-C behaviour even when the launcher's parent ignored SIGINT (a background job).
    signal.signal(signal.SIGINT, _on_sigint)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    # A closed terminal (SIGHUP) ends the script as a terminal run would, but the profile is written first.
    previous_hup = signal.signal(signal.SIGHUP, _on_sigterm) if hasattr(signal, "SIGHUP") else None
    try:
        if before is not None:
            before()
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
        return 0, "completed", None
    except SystemExit as exit_:
        return exit_code_of(exit_), "exited", None
    except KeyboardInterrupt as error:
        return 130, "interrupted", error
    except Terminated as error:
        if getattr(signal, "SIGHUP", None) is not None and error.signum == signal.SIGHUP:
            return 128 + int(signal.SIGHUP), "hangup", error
        return 143, "terminated", error
    except BaseException as error:
        signalled = _launcher_signal(error)
        if signalled is not None:
            return signalled + (error,)
        if _interrupted:
            return 130, "interrupted", error
        follows = _signal_following_peer()
        if follows is not None:
            return follows + (error,)
        return 1, "exception", error
    finally:
        try:
            if signal.getsignal(signal.SIGTERM) is _on_sigterm:
                signal.signal(signal.SIGTERM, previous)
            if previous_hup is not None and signal.getsignal(signal.SIGHUP) is _on_sigterm:
                signal.signal(signal.SIGHUP, previous_hup)
        except (ValueError, TypeError):
            pass


# How long a rank of a job whose collective failed waits for the launcher's signal (below).
PEER_GRACE_S = 1.0


def _signal_following_peer():
    """A rank of a torchrun job whose peer took the job's Ctrl-C (or SIGTERM) first fails in its collective
    ("Connection closed by peer") before its own signal arrives: torchrun passes signals on rank by rank. Such a rank
    waits a moment for it, so that it reports the interruption the user asked for rather than its peer's absence:
    (exit code, status) of the signal that came, else None (a failure of its own)."""
    if int(os.environ.get("WORLD_SIZE", "1") or 1) <= 1:
        return None
    deadline = time.monotonic() + PEER_GRACE_S
    try:
        while time.monotonic() < deadline and not _interrupted:
            time.sleep(0.02)
    except KeyboardInterrupt:
        return 130, "interrupted"
    except Terminated as signalled:
        if getattr(signal, "SIGHUP", None) is not None and signalled.signum == signal.SIGHUP:
            return 128 + int(signal.SIGHUP), "hangup"
        return 143, "terminated"
    return (130, "interrupted") if _interrupted else None


def _launcher_signal(error):
    """torchrun turns SIGINT/SIGTERM/SIGHUP into its SignalException (after passing the signal on to its workers):
    (exit code, status) as the signal would give, else None."""
    signum = getattr(error, "sigval", None)
    if type(error).__name__ != "SignalException" or signum is None:
        return None
    status = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}.get(signum, "hangup")
    return 128 + int(signum), status


def exit_code_of(exit_):
    """SystemExit's code with Python's own rules: None -> 0, an int -> itself, anything else printed -> 1."""
    code = exit_.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    try:
        sys.stderr.write("%s\n" % (code,))
        sys.stderr.flush()
    except Exception:
        pass
    return 1


def print_exception(error, script):
    """The traceback exactly as Python prints it for `python script.py`: the agent's and runpy's frames removed,
    the interpreter's (or the script's own) sys.excepthook used."""
    if isinstance(error, Terminated):
        return
    tb = error.__traceback__
    real_script = os.path.realpath(script)
    probe = tb
    while probe is not None and os.path.realpath(probe.tb_frame.f_code.co_filename) != real_script:
        probe = probe.tb_next
    if probe is not None:
        tb = probe
    else:
        # Raised before the script's first line ran (a syntax error while compiling it): drop our own frames.
        while tb is not None and _is_launcher_frame(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
    error.__traceback__ = _without_site_frames(tb)
    tb = error.__traceback__
    _clean_chained(error)
    try:
        sys.excepthook(type(error), error, tb)
    except Exception:
        import traceback

        try:
            traceback.print_exception(type(error), error, tb)
        except Exception:
            pass  # stderr is gone (a closed terminal): the profile is still written
    try:
        sys.stderr.flush()
    except Exception:
        pass


def exception_record(error):
    """What session.json says of the exception a run ended with: its type, its message's first line, and where in
    the user's code it was raised (the innermost frame outside the agent, torch, the standard library and
    site-packages; for a SyntaxError, the place Python names). The editor shows it as a Problem at that line."""
    message = str(error).strip().split("\n", 1)[0][:300]
    record = {"type": type(error).__name__, "message": message}
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        record.update(file=os.path.abspath(error.filename), line=int(error.lineno))
        if error.offset:
            record["column"] = int(error.offset)
        record["message"] = (error.msg or message)[:300]
        return record
    tb, site = error.__traceback__, None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _is_user_file(filename):
            site = (filename, tb.tb_lineno)
        tb = tb.tb_next
    if site is not None:
        record.update(file=os.path.abspath(site[0]), line=int(site[1]))
    return record


def _library_dirs():
    import sysconfig

    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.join(os.path.realpath(path), ""))
    return tuple(dirs)


def _is_user_file(filename):
    if filename.startswith("<") or _is_launcher_frame(filename):
        return False
    real = os.path.realpath(filename)
    return not real.startswith(_library_dirs()) and "site-packages" not in real


def _is_launcher_frame(filename):
    return filename.startswith("<frozen") or "flagprof_agent" in filename or filename.endswith("runpy.py")


def _is_site_frame(tb):
    """A frame of exact_sites' mode or of one of its trampolines: not there when the script runs unprofiled."""
    filename = tb.tb_frame.f_code.co_filename
    return filename == "<flagprof-site>" or os.path.dirname(os.path.abspath(filename)) == _AGENT_DIR


def _is_dispatch_to_mode(tb):
    code = tb.tb_frame.f_code
    filename = code.co_filename.replace("\\", "/")
    return code.co_name == "handle_torch_function" and filename.endswith("torch/overrides.py")


def _without_site_frames(tb):
    """The traceback as it reads without the mode: its frames dropped, with torch's dispatch to it (a torch Python
    function that handed itself to handle_torch_function is then called again through the trampoline)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    kept = []
    for at, entry in enumerate(entries):
        if _is_site_frame(entry):
            continue
        if _is_dispatch_to_mode(entry) and at + 1 < len(entries) and _is_site_frame(entries[at + 1]):
            after = next((e for e in entries[at + 1 :] if not _is_site_frame(e)), None)
            if kept and after is not None and kept[-1].tb_frame.f_code is after.tb_frame.f_code:
                kept.pop()
            continue
        kept.append(entry)
    if len(kept) == len(entries):
        return entries[0] if entries else None
    for entry, following in zip(kept, kept[1:] + [None]):
        entry.tb_next = following
    return kept[0] if kept else None


def _clean_chained(error):
    seen = {id(error)}
    pending = [error.__cause__, error.__context__]
    while pending:
        chained = pending.pop()
        if chained is None or id(chained) in seen:
            continue
        seen.add(id(chained))
        try:
            chained.__traceback__ = _without_site_frames(chained.__traceback__)
        except (AttributeError, TypeError):
            pass
        pending.extend((chained.__cause__, chained.__context__))
