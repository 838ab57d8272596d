"""Launch forms beyond `python script.py`: `python -m module`, and torchrun (`python -m torch.distributed.run`),
whose every worker is profiled into SESSION/ranks/<RANK>/.

How the workers come to run under the agent: torchrun starts each one as `python -u script.py args` with the
launcher's environment. FLAGPROF_RANKS (the session, the script, the agent's options) and ranks_boot/ first on
PYTHONPATH make the worker's interpreter import ranks_boot/sitecustomize.py at start-up, before the script; there,
in a process whose argv[0] is the profiled script (not torchrun, not the script's own subprocesses), the agent runs
the script exactly as `python -m flagprof_agent` would, with its window, segments, sites and signal handling. An
environment variable and sitecustomize need nothing of torchrun's internals, so any launcher version works, and a
worker that is killed keeps the segments it wrote like any single-process run.
"""

import importlib.util
import json
import os
import sys

from .runner import prepare_interpreter, print_exception, run_script

LAUNCHERS = ("torch.distributed.run", "torch.distributed.launch")
RANKS_ENV = "FLAGPROF_RANKS"
RANKS_DIR = "ranks"
AGENT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks_boot")


def module_file(name):
    """The file `python -m name` runs (a package's __main__.py), with the current directory on sys.path as
    `python -m` has it; None when there is no such module."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(name + ".__main__")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return os.path.abspath(spec.origin)


def is_launcher(module):
    return module in LAUNCHERS


def rank_of_worker():
    """RANK, LOCAL_RANK and WORLD_SIZE of a torchrun worker profiled for a multi-process session, else None."""
    if not os.environ.get(RANKS_ENV):
        return None
    rank = {}
    for key, name in (("RANK", "rank"), ("LOCAL_RANK", "localRank"), ("WORLD_SIZE", "worldSize")):
        try:
            rank[name] = int(os.environ[key])
        except (KeyError, ValueError):
            rank[name] = None
    return rank


def worker_options(options):
    """The agent's own options, passed on to every worker."""
    args = ["--mode", options.mode, "--delay", repr(options.delay)]
    # Each worker counts its own optimizer steps: the ranks record the same steps.
    if getattr(options, "schedule", None) is not None:
        args += ["--schedule", options.schedule.text()]
    else:
        args += ["--segment", repr(options.segment)]
    if options.duration is not None:
        args += ["--duration", repr(options.duration)]
    args.append("--record-shapes" if options.record_shapes else "--no-record-shapes")
    if options.profile_memory:
        args.append("--profile-memory")
    return args


def training_script(args):
    """The script torchrun's workers run, by torchrun's own parser; None for `-m module` or --no-python workers."""
    from torch.distributed.run import get_args_parser

    parsed = get_args_parser().parse_args(args)
    if parsed.module or parsed.no_python:
        return None
    return os.path.realpath(parsed.training_script)


def list_parts(directory):
    """SESSION/ranks/<name>/ folders, ordered by rank (numbers first)."""
    ranks = os.path.join(directory, RANKS_DIR)
    try:
        names = [n for n in os.listdir(ranks) if os.path.isfile(os.path.join(ranks, n, "session.json"))]
    except OSError:
        return []
    names.sort(key=lambda n: (not n.isdigit(), int(n) if n.isdigit() else 0, n))
    return [{"rank": int(n) if n.isdigit() else None, "folder": "%s/%s" % (RANKS_DIR, n)} for n in names]


def run_launcher(options, session, progress):
    """Runs torchrun itself unprofiled (it only waits on its workers) and every worker under the agent."""
    launcher_file = options.script
    try:
        script = training_script(options.args)
    except ImportError as error:
        session.record.update(status="error", exitCode=1, torch=None)
        session.note("torchrun could not be started: %s" % error, tell=True)
        session.write_quietly()
        progress.emit("done", exitCode=1, status="error")
        return 1
    except SystemExit as exit_:
        # torchrun's parser has already said what was wrong.
        session.record.update(status="error", exitCode=2 if exit_.code else 0)
        session.write_quietly()
        progress.emit("done", exitCode=session.record["exitCode"], status="error")
        return session.record["exitCode"]
    import torch

    session.record["torch"] = {"version": getattr(torch, "__version__", None)}
    # Parsing imported the launcher's module: runpy runs it afresh as __main__, as `python -m` would.
    sys.modules.pop(options.module, None)
    prepare_interpreter(launcher_file, options.args, options.module)
    multi = {"launcher": options.module, "script": script, "parts": []}
    session.record.update(multiProcess=multi, status="running")
    if script is None:
        session.note("torchrun runs a module or a non-Python program: its workers are not profiled", tell=True)
    else:
        session.record["script"] = script
        export_to_workers(session.directory, script, worker_options(options))
    session.write_quietly()
    progress.emit("running", profiling=script is not None)
    code, status, error = run_script(launcher_file, module=options.module)
    if error is not None:
        print_exception(error, launcher_file)
    multi["parts"] = list_parts(session.directory)
    session.record.update(status=status, exitCode=code)
    session.write_quietly()
    progress.emit("done", exitCode=code, status=status)
    progress.close()
    return code


def export_to_workers(directory, script, agent_args):
    config = {"session": directory, "script": script, "agent": AGENT_ROOT, "args": agent_args}
    os.environ[RANKS_ENV] = json.dumps(config)
    put_boot_dir_on_pythonpath()


def put_boot_dir_on_pythonpath():
    """ranks_boot/ first on PYTHONPATH (once): the interpreters this process starts import its sitecustomize."""
    rest = os.environ.get("PYTHONPATH", "")
    if BOOT_DIR not in rest.split(os.pathsep):
        os.environ["PYTHONPATH"] = BOOT_DIR + (os.pathsep + rest if rest else "")


def worker_session(config):
    """SESSION/ranks/<RANK> (the pid where torchrun gave no RANK)."""
    rank = os.environ.get("RANK") or str(os.getpid())
    return os.path.join(config["session"], RANKS_DIR, rank)
