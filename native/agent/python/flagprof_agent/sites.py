"""The user's true call sites for every CPU op, from torch's in-memory event tree.

Kineto's python_function events name the line where a function is *defined*. The event tree keeps, for every
Python call (PyCall) and C call (PyCCall) node, the caller's file, line and function at the moment of the call,
so the chain of callers above a TorchOp gives the lines that led to it. A trampoline node of exact_sites
("<flagprof-site>(index): ...") names the chain of the expression that made the torch call, columns included, as
the mode saw it on the stack: the ops under it take that chain. The TorchOp's correlation_id is the number the
Chrome trace writes as args["External id"] on its cpu_op / user_annotation event.

Where the tree has no node to tell the line (an operator in a function, with exact_sites off), the op's innermost
frame is its function, kind 'function' at the def line: never the line of a call in another function.
"""

import ast
import bisect
import json
import linecache
import os
import re
import sys
import sysconfig

from .exact_sites import MAX_FRAMES, SITE_PREFIX

_AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
SITES_VERSION = 3


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
        self.skipped_prefixes = self._skip
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


_CALL_NAME = re.compile(r"^(.*)\((\d+)\): (.*)$")
# torch's Python entry points of autograd: ops under them are the backward of the line that called them.
_BACKWARD_CALLS = {
    ("torch/_tensor.py", "backward"),
    ("torch/autograd/__init__.py", "backward"),
    ("torch/autograd/__init__.py", "grad"),
}


def parse_call_name(name):
    """torch names a Python call "file(first line): function"; (file, first line, function) or None."""
    match = _CALL_NAME.match(name)
    if not match:
        return None
    return match.group(1), int(match.group(2)), match.group(3)


def _is_backward_call(file_name, function):
    file_name = file_name.replace("\\", "/")
    for suffix, name in _BACKWARD_CALLS:
        if function == name and (file_name == suffix or file_name.endswith("/" + suffix)):
            return True
    return False


class _Chains:
    """Frames and chains, each made once: ops under one caller share one chain tuple (sites.json writes it once)."""

    def __init__(self, resolver):
        self.resolver = resolver
        self.scopes = _Scopes()
        self._frames = {}
        self._chains = {}

    def frame(self, file_name, line, function, kind=None):
        """The frame dict of a reported (file, line, function), or None when the file is not the user's."""
        key = (file_name, line, function, kind)
        try:
            return self._frames[key]
        except KeyError:
            pass
        path = self.resolver.user_file(file_name)
        frame = None
        if path is not None:
            if kind == "function":
                line, function = self.scopes.start_of(path, line, function)
            else:
                function = self.scopes.name_at(path, line, function)
            frame = {"file": path, "line": line, "function": function}
            if kind is not None:
                frame["kind"] = kind
        self._frames[key] = frame
        return frame

    def push(self, frame, chain):
        key = (id(frame), id(chain))
        found = self._chains.get(key)
        if found is None:
            found = (frame,) + chain
            self._chains[key] = found
        return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)
_SCOPE_NAMES = {ast.Lambda: "<lambda>", ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>"}


class _Scopes:
    """The code objects of the user's files, by their source spans: each (first line as co_firstlineno counts it, last
    line, name). torch's event tree reports names by reference, and a name whose string was freed while the script ran
    reads as another's (or as bytes): a frame's function is checked against the scopes that hold its line."""

    _parsed = {}

    def of(self, path):
        try:
            stamp = os.stat(path).st_mtime_ns
        except OSError:
            return None
        cached = _Scopes._parsed.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            tree = ast.parse("".join(linecache.getlines(path)), path)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
        scopes = None
        if tree is not None:
            scopes = [(1, 1 << 30, "<module>")]
            for node in ast.walk(tree):
                if isinstance(node, (*_SCOPES, ast.GeneratorExp)):
                    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
                    name = getattr(node, "name", None) or _SCOPE_NAMES.get(type(node), "<genexpr>")
                    scopes.append((first, getattr(node, "end_lineno", node.lineno) or node.lineno, name))
        _Scopes._parsed[path] = (stamp, scopes)
        return scopes

    def holding(self, path, line):
        """The scopes whose span holds the line, innermost first; None when the file cannot be read."""
        scopes = self.of(path)
        if scopes is None:
            return None
        found = [scope for scope in scopes if scope[0] <= line <= scope[1]]
        found.sort(key=lambda scope: scope[1] - scope[0])
        return found

    def name_at(self, path, line, function):
        """The reported name when a scope of that name holds the line, else the innermost scope's."""
        found = self.holding(path, line)
        if not found or any(scope[2] == function for scope in found):
            return function
        return found[0][2]

    def start_of(self, path, line, function):
        """(first line, name) of the function a call node names: torch gives its first line for a call, but the
        line it stopped at for a generator it resumes."""
        found = self.holding(path, line)
        if not found:
            return line, function
        for scope in found:
            if scope[2] == function:
                return scope[0], function
        return found[0][0], found[0][2]


def _same_function(frame, head):
    return head["file"] == frame["file"] and head["function"] == frame["function"]


class _TreeWalk:
    def __init__(self, tree, resolver, table, event_types):
        self.tree = tree
        self.table = table
        self.chains = _Chains(resolver)
        self.torch_op, self.py_call, self.py_c_call = event_types
        self.sites = {}
        self.ops = 0
        self.function_level = 0
        self.skipped = 0
        self._ops_seen = 0
        # (start ns, end ns, thread, chain) of every backward call under a trampoline.
        self.backward_calls = []
        # Ops at the root of a thread with no Python above them (the autograd engine's own threads).
        self.orphans = []

    def run(self):
        self.walk([(root, (), True) for root in reversed(self.tree)])
        if self.orphans and self.backward_calls:
            self._adopt_orphans()
        self.ops = self._ops_seen
        self.function_level = sum(1 for chain in self.sites.values() if chain[0].get("kind") == "function")

    def walk(self, stack):
        torch_op, py_call, py_c_call = self.torch_op, self.py_call, self.py_c_call
        chains = self.chains
        sites = self.sites
        while stack:
            node, chain, root = stack.pop()
            try:
                tag = node.tag
            except Exception:
                # torch can fail to convert a node (UnicodeDecodeError on its name): lose that node, not every site.
                self.skipped += 1
                continue
            if tag == torch_op:
                self._ops_seen += 1
                try:
                    if chain:
                        sites[node.correlation_id] = chain
                    elif root:
                        self.orphans.append(node)
                    children = node.children
                except Exception:
                    self.skipped += 1
                    continue
                if children:
                    stack.extend((child, chain, False) for child in reversed(children))
                continue
            if tag == py_call or tag == py_c_call:
                chain = self._enter_call(node, tag == py_call, chain)
            try:
                children = node.children
            except Exception:
                self.skipped += 1
                continue
            if children:
                stack.extend((child, chain, False) for child in reversed(children))

    def _enter_call(self, node, python, chain):
        """The chain below a call node: the caller's exact frame (replacing its function's 'function' frame), then for
        a call of a user function, that function's own 'function' frame until a deeper node tells the line."""
        chains = self.chains
        name = None
        if python:
            try:
                name = node.name
            except Exception:
                name = None
            if name is not None and name.startswith(SITE_PREFIX):
                return self._enter_site(node, name, chain)
        try:
            caller = node.extra_fields.caller
            frame = chains.frame(caller.file_name, caller.line_number, caller.function_name)
        except Exception:
            # torch can fail to decode a caller's name (seen as UnicodeDecodeError on C calls): no frame.
            frame = None
        if frame is not None:
            if chain and _same_function(frame, chain[0]):
                chain = chain[1:]
            chain = chains.push(frame, chain)
        if name is None:
            return chain
        parsed = parse_call_name(name)
        if parsed is None:
            return chain
        if frame is not None and _is_backward_call(parsed[0], parsed[2]):
            backward = chains.frame(caller.file_name, caller.line_number, caller.function_name, "backward")
            return chains.push(backward, chain[1:])
        callee = chains.frame(parsed[0], parsed[1], parsed[2], "function")
        if callee is not None:
            chain = chains.push(callee, chain)
        return chain

    def _enter_site(self, node, name, chain):
        """The chain the mode saw on the stack replaces the tree's: the ops under this node are the call's."""
        try:
            index = int(name[len(SITE_PREFIX) : name.index(")")])
        except ValueError:
            return chain
        found = self.table.chain(index) if self.table is not None else None
        if found is None or not found[0]:
            return chain
        site, backward = found
        if backward:
            try:
                self.backward_calls.append((node.start_time_ns, node.end_time_ns, node.start_tid, site))
            except Exception:
                pass
        return site

    def _adopt_orphans(self):
        """Ops the autograd engine runs on its own threads (a device's backward) belong to the backward call whose
        interval holds them; on the CPU they run under the call itself and never get here."""
        calls = sorted(self.backward_calls, key=lambda call: call[0])
        starts = [call[0] for call in calls]
        stack = []
        for node in self.orphans:
            try:
                start, thread = node.start_time_ns, node.start_tid
            except Exception:
                continue
            at = bisect.bisect_right(starts, start) - 1
            # Nested backward calls (a backward inside a hook): the innermost that still holds the op.
            while at >= 0 and not (calls[at][1] >= start and calls[at][2] != thread):
                at -= 1
            if at >= 0:
                stack.append((node, calls[at][3], False))
        seen = self._ops_seen
        # The adopted subtrees were walked (and counted) once already, without a chain.
        self.walk(stack)
        self._ops_seen = seen


def collect_sites(profiler, torch_module, script, table=None):
    """{External id: (frame, ...innermost first)} for every op under user code, and counts for the session."""
    results = profiler.profiler.kineto_results if profiler.profiler is not None else None
    if results is None:
        return {}, {"ops": 0, "withSite": 0, "note": "no profiler results"}
    tree = results.experimental_event_tree()
    from torch._C._profiler import _EventType

    event_types = (_EventType.TorchOp, _EventType.PyCall, _EventType.PyCCall)
    walk = _TreeWalk(tree, PathResolver(torch_module, script), table, event_types)
    walk.run()
    counts = {"ops": walk.ops, "withSite": len(walk.sites), "functionLevel": walk.function_level}
    if walk.skipped:
        counts["nodesSkipped"] = walk.skipped
    return walk.sites, counts


def write_sites(stream, sites):
    """sites.json, version 3: {"version": 3, "chains": [[frame, ...innermost first], ...],
    "sites": [External id, chain index, External id, chain index, ...]}. A frame is {"file", "line", "function"}
    and, when known, the expression's span "column", "endLine", "endColumn" (1-based, UTF-16 columns, endColumn
    just past its last character) and "kind" ('function' or 'backward') where the frame is not the exact line.

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
    stream.write('{"version":%d,"chains":' % SITES_VERSION)
    json.dump(chains, stream, separators=(",", ":"))
    stream.write(',"sites":[')
    step = 1 << 16
    for start in range(0, len(pairs), step):
        if start:
            stream.write(",")
        stream.write(",".join(map(str, pairs[start : start + step])))
    stream.write("]}\n")
