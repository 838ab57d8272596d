"""Imported at start-up by the interpreters a profiled run starts (see flagprof_agent/launch.py and children.py): a
torchrun worker that runs the profiled script runs it under the agent, here, and ends with its exit code; a child
process of a profiled script is profiled from its import of torch; every process then goes on to the environment's
own sitecustomize, if there is one."""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _config():
    try:
        config = json.loads(os.environ.get("FLAGPROF_RANKS") or "null")
    except ValueError:
        return None
    if not isinstance(config, dict) or not sys.argv or not sys.argv[0] or sys.argv[0].startswith("-"):
        return None
    return config if os.path.realpath(sys.argv[0]) == config.get("script") else None


def _run_worker(config):
    sys.path.insert(0, config["agent"])
    try:
        from flagprof_agent import launch
        from flagprof_agent.__main__ import main
    finally:
        sys.path.remove(config["agent"])
    # The agent sets sys.path[0] to the script's folder, as Python does after site: give it that slot.
    sys.path.insert(0, os.path.dirname(os.path.realpath(sys.argv[0])))
    argv = config["args"] + ["--session", launch.worker_session(config), "--"] + sys.argv
    try:
        code = main(argv)
    except KeyboardInterrupt:
        code = 130
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    # The script has run: the interpreter must not go on to run it a second time.
    os._exit(code)


def _chain():
    """The sitecustomize this one hides, imported as Python would have."""
    import importlib

    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    own = sys.modules.pop(__name__)
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        # None to chain to: the import system expects to find this module where it put it.
        sys.modules[__name__] = own
    finally:
        sys.path[:] = saved


def _follow_child():
    """A child of a profiled script (multiprocessing's spawn, a subprocess of Python): profiled once it imports
    torch, by the agent's children.py."""
    try:
        config = json.loads(os.environ.get("FLAGPROF_CHILDREN") or "null")
    except ValueError:
        return
    if not isinstance(config, dict) or not config.get("agent") or not config.get("session"):
        return
    sys.path.insert(0, config["agent"])
    try:
        from flagprof_agent import children
    except ImportError:
        return
    finally:
        sys.path.remove(config["agent"])
    children.start_spawned(config)


_found = _config()
if _found is not None:
    _run_worker(_found)
else:
    _follow_child()
    _chain()
