"""The user's true call sites for every CPU op, from torch's in-memory event tree.

Kineto's python_function events name the line where a function is *defined*. The event tree keeps, for every
Python call (PyCall) and C call (PyCCall) node, the caller's file, line and function at the moment of the call,
so the chain of callers above a TorchOp gives the exact lines that led to it. The TorchOp's correlation_id is
the number the Chrome trace writes as args["External id"] on its cpu_op / user_annotation event.
"""

import json
import os
import sys
import sysconfig

from .operator_lines import OperatorLines, parse_call_name

_AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
MAX_FRAMES = 16


def _with_sep(path):
    return os.path.join(os.path.abspath(path), "")


class PathResolver:
    """Maps the file names torch reports back to absolute paths and tells the user's files from the rest.

    torch trims sys.path-like prefixes from the file names it records (torch/profiler/python_tracer.py), so a
    user's "model.py" and the standard library's "enum.py" both arrive relative. They are resolved against the
    files of the loaded modules first (exact), then against the same prefixes torch used.
    """

    def __init__(self, torch_module, script):
        self._prefixes = self._prefix_list(torch_module)
        self._known = {}
        self._cache = {}
        skip = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                path = sysconfig.get_paths().get(key)
            except Exception:
                path = None
            if path:
                skip.add(_with_sep(path))
                skip.add(_with_sep(os.path.realpath(path)))
        for base in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
            version = "python%d.%d" % sys.version_info[:2]
            skip.add(_with_sep(os.path.join(base, "lib", version)))
        if torch_module is not None:
            torch_dir = os.path.dirname(os.path.abspath(torch_module.__file__))
            skip.add(_with_sep(torch_dir))
            skip.add(_with_sep(os.path.realpath(torch_dir)))
        skip.add(_with_sep(_AGENT_DIR))
        # A project kept inside the interpreter's prefix (a venv inside the project) is still the user's: only
        # the library folders above are skipped, never the prefix itself.
        self._skip = tuple(sorted(skip, key=len, reverse=True))
        self._learn(os.path.abspath(script))
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and path.endswith(".py"):
                self._learn(os.path.abspath(path))

    @staticmethod
    def _prefix_list(torch_module):
        if torch_module is not None:
            try:
                from torch.profiler.python_tracer import _prefix_regex

                return list(_prefix_regex())
            except Exception:
                pass
        paths = {os.path.abspath(p) for p in sys.path if isinstance(p, str)}
        return [p + os.sep for p in sorted(paths, reverse=True)]

    def _learn(self, absolute):
        self._known.setdefault(absolute, absolute)
        for prefix in self._prefixes:
            if absolute.startswith(prefix):
                self._known.setdefault(absolute[len(prefix) :], absolute)

    def absolute(self, name):
        """The absolute path of a reported file name, or None when it names no file (<frozen ...>, <string>)."""
        if not name or name.startswith("<"):
            return None
        known = self._known.get(name)
        if known is not None:
            return known
        if os.path.isabs(name):
            return name if os.path.isfile(name) else None
        for prefix in self._prefixes:
            candidate = prefix + name
            if os.path.isfile(candidate):
                return candidate
        return None

    def is_user_file(self, absolute):
        if "%ssite-packages%s" % (os.sep, os.sep) in absolute or "%sdist-packages%s" % (os.sep, os.sep) in absolute:
            return False
        for prefix in self._skip:
            if absolute.startswith(prefix):
                return False
        real = os.path.realpath(absolute)
        if real != absolute:
            for prefix in self._skip:
                if real.startswith(prefix):
                    return False
        return True

    def user_file(self, name):
        """Absolute path when the reported file is the user's own code, else None (cached per name)."""
        try:
            return self._cache[name]
        except KeyError:
            pass
        absolute = self.absolute(name)
        result = absolute if absolute is not None and self.is_user_file(absolute) else None
        self._cache[name] = result
        return result


def _operator_frames(node, children, torch_op, resolver, operator_lines):
    """{child index: frame} for ops a user's function ran through Python operators (see operator_lines)."""
    parsed = parse_call_name(node.name)
    if parsed is None:
        return None
    path = resolver.user_file(parsed[0])
    if path is None:
        return None
    events = []
    has_op = False
    for index, child in enumerate(children):
        child_tag = child.tag
        if child_tag == torch_op:
            events.append((child.start_time_ns, "op", (index, child.name)))
            has_op = True
        else:
            try:
                events.append((child.start_time_ns, "call", child.extra_fields.caller.line_number))
            except Exception:
                continue
    if not has_op:
        return None
    lines = operator_lines.lines_of_ops(path, parsed[1], parsed[2], events)
    return {index: {"file": path, "line": line, "function": parsed[2]} for index, line in lines.items()}


def collect_sites(profiler, torch_module, script):
    """{External id: [frame, ...innermost first]} for every op under user code, and counts for the session."""
    results = profiler.profiler.kineto_results if profiler.profiler is not None else None
    if results is None:
        return {}, {"ops": 0, "withSite": 0, "note": "no profiler results"}
    tree = results.experimental_event_tree()
    from torch._C._profiler import _EventType

    torch_op, py_call, py_c_call = _EventType.TorchOp, _EventType.PyCall, _EventType.PyCCall
    resolver = PathResolver(torch_module, script)
    operator_lines = OperatorLines()
    frames = {}  # (file name, line, function) -> frame dict or None: shared by every op under the same caller
    sites = {}
    ops = 0
    stack = [(root, ()) for root in reversed(tree)]
    skipped = 0
    while stack:
        node, chain = stack.pop()
        try:
            tag = node.tag
        except Exception:
            # torch can fail to convert a node (UnicodeDecodeError on its name): lose that node, not every site.
            skipped += 1
            continue
        if tag == torch_op:
            ops += 1
            try:
                if chain:
                    sites[node.correlation_id] = chain
                children = node.children
            except Exception:
                skipped += 1
                continue
            if children:
                stack.extend((child, chain) for child in reversed(children))
            continue
        if tag == py_call or tag == py_c_call:
            try:
                caller = node.extra_fields.caller
                key = (caller.file_name, caller.line_number, caller.function_name)
            except Exception:
                # torch can fail to decode a caller's name (seen as UnicodeDecodeError on C calls): no frame.
                key = None
            frame = frames.get(key, False) if key is not None else None
            if frame is False:
                path = resolver.user_file(key[0])
                frame = {"file": path, "line": key[1], "function": key[2]} if path is not None else None
                frames[key] = frame
            if frame is not None:
                chain = (frame,) + chain
        try:
            children = node.children
        except Exception:
            skipped += 1
            continue
        if not children:
            continue
        overrides = None
        if tag == py_call:
            try:
                overrides = _operator_frames(node, children, torch_op, resolver, operator_lines)
            except Exception:
                # A name torch cannot decode (UnicodeDecodeError on some nodes): the ops keep the caller's line.
                overrides = None
        if overrides:
            stack.extend(
                (child, (overrides[i],) + chain if i in overrides else chain) for i, child in reversed(list(enumerate(children)))
            )
        else:
            stack.extend((child, chain) for child in reversed(children))
    counts = {"ops": ops, "withSite": len(sites)}
    if skipped:
        counts["nodesSkipped"] = skipped
    return sites, counts


def write_sites(stream, sites):
    """sites.json, version 2: {"version": 2, "chains": [[frame, ...innermost first], ...],
    "sites": [External id, chain index, External id, chain index, ...]}.

    Ops under one caller share one chain tuple, so each chain is written once and every op costs a few bytes: a
    long run with millions of ops stays small enough to read back whole.
    """
    index = {}
    chains = []
    pairs = []
    for external_id, chain in sites.items():
        at = index.get(id(chain))
        if at is None:
            at = len(chains)
            index[id(chain)] = at
            chains.append(list(chain[:MAX_FRAMES]))
        pairs.append(external_id)
        pairs.append(at)
    stream.write('{"version":2,"chains":')
    json.dump(chains, stream, separators=(",", ":"))
    stream.write(',"sites":[')
    step = 1 << 16
    for start in range(0, len(pairs), step):
        if start:
            stream.write(",")
        stream.write(",".join(map(str, pairs[start : start + step])))
    stream.write("]}\n")
