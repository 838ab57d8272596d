"""The exact expression behind every torch call, from a TorchFunctionMode active while the window is open.

torch's event tree names the line of every Python call, but ops that Python operators dispatch (`q @ k`, `h += r`,
`x[0]`) have no call node: the tree only says which function ran them. Every torch API call — operators, Tensor
methods, torch.*, torch.nn.functional — enters a TorchFunctionMode's __torch_function__, and there the user's frames
are on the stack, each at the instruction that is running (f_lasti). Python's position table (co_positions, 3.11+)
turns each instruction into the expression's line and column span; older Pythons give the line.

Tying a call to its ops without trusting order or time (the profiler is restarted from a signal handler every
segment): each distinct chain of user positions (code object, instruction) gets an index in a table and a trampoline
whose code object is named "<flagprof-site>" with co_firstlineno = that index. The torch function is called through
it, so the event tree holds a PyCall node "<flagprof-site>(index): site_index" above exactly the ops of that call;
sites.collect_sites reads the index back and gives those ops the chain. Its frames are named from the live code
objects: the tree's own caller names are not to be trusted once the script runs code torch's Python tracer has
freed (it then reports callers under names of other functions). The trampolines and the mode never appear as
frames: neither is in a user file.

No Python code runs in the mode beyond its own few lines: frames are made when a segment is written, because Python
code run inside the script's torch call (linecache, say) leaves torch's tracer naming callers wrongly.

Backward calls (Tensor.backward, torch.autograd.backward, torch.autograd.grad) mark their sites 'backward': the
autograd ops run under them (on the CPU, on the same thread; elsewhere collect_sites matches the engine's threads
by the call's interval).

The mode lives on the thread that runs the script (torch keeps the mode stack per thread): ops of the script's own
threads get their lines from the event tree alone. FLAGPROF_EXACT_SITES=0 turns the mode off, as does a torch
without torch.overrides.TorchFunctionMode; then the tree gives the line of every call, and an op a function ran
through an operator is charged to that function (kind 'function', its def line), never to a line that did not run it.
"""

import itertools
import linecache
import os
import stat
import sys

SITE_FILE = "<flagprof-site>"
# The node name torch gives a trampoline's PyCall: "<flagprof-site>(index): site_index".
SITE_PREFIX = SITE_FILE + "("
# User frames a chain keeps, innermost first (sites.json keeps as many).
MAX_FRAMES = 16
_getframe = sys._getframe
_LIBRARY_DIRS = ("%ssite-packages%s" % (os.sep, os.sep), "%sdist-packages%s" % (os.sep, os.sep))


def enabled():
    """False when FLAGPROF_EXACT_SITES says 0/false/no/off."""
    return os.environ.get("FLAGPROF_EXACT_SITES", "1").strip().lower() not in ("0", "false", "no", "off")


def _through(func, args, kwargs):
    return func(*args, **kwargs)


def _utf16_column(text, byte_offset):
    """A 0-based UTF-8 byte offset of `text` (what co_positions gives) as a 1-based UTF-16 column, the unit editors
    count in; None when the offset does not fall on a character boundary of the text (the file changed)."""
    encoded = text.encode("utf-8")
    if byte_offset > len(encoded):
        return None
    try:
        prefix = encoded[:byte_offset].decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Characters past the Basic Multilingual Plane take two UTF-16 units.
    return len(prefix) + sum(1 for ch in prefix if ord(ch) > 0xFFFF) + 1


class SiteTable:
    """Every distinct chain of user positions a torch call was made from, by index, with its trampoline.

    The table outlives profiler restarts: a segment's event tree names indices, the table turns them into frames.
    """

    def __init__(self, resolver):
        # sites.PathResolver: its skipped folders answer the mode's question (is this file the user's?) by prefix;
        # its full rule (symbolic links resolved) is applied when frames are made.
        self._resolver = resolver
        self._skip = tuple(resolver.skipped_prefixes)
        self.on = False
        # The mode's lookups, all by keys that are cheap to hash (hashing a code object hashes its constants,
        # nested code objects included): co_filename -> whether it is the user's;
        # (co_filename, co_firstlineno, f_lasti) -> (code object, position id); tuple of position ids -> trampoline.
        self.files = {}
        self.positions = {}
        self.trampolines = {}
        # Two code objects with one file and first line (two lambdas on one line): told apart by identity.
        self._collisions = {}
        # Position id -> (code, lasti) until a segment is written, then its frame dict (or None: not the user's).
        # Ids and indices come from counters (one C call each, atomic): a hook the autograd engine runs on another
        # thread can reach the mode too. Position 0 is the backward mark, site index 0 is never used.
        self._frames = {}
        self._position_ids = itertools.count(1)
        # Site index -> [position ids, backward, frames tuple once a segment is written].
        self._sites = {}
        self._site_ids = itertools.count(1)
        self._code_positions = {}

    # -- the mode's slow paths: no Python code but these lines (see the module's docstring) ---------------------

    def learn_file(self, name):
        if name and name[0] == "/" and os.sep == "/":
            user = False
            if not name.startswith(self._skip) and _LIBRARY_DIRS[0] not in name and _LIBRARY_DIRS[1] not in name:
                try:
                    user = stat.S_ISREG(os.stat(name).st_mode)
                except (OSError, ValueError):
                    pass
        else:
            # A relative or Windows name: the resolver's own rule (Python code, once per file name).
            user = self._resolver.user_file(name) is not None
        self.files[name] = user
        return user

    def position(self, frame, where):
        entry = self._new_position(frame)
        self.positions[where] = entry
        return entry

    def collision(self, frame, where):
        entries = self._collisions.setdefault(where, [])
        for entry in entries:
            if entry[0] is frame.f_code:
                return entry
        entry = self._new_position(frame)
        entries.append(entry)
        return entry

    def _new_position(self, frame):
        # The code object is kept with its id, so `entry[0] is code` stays a true identity test.
        entry = (frame.f_code, next(self._position_ids))
        self._frames[entry[1]] = (frame.f_code, frame.f_lasti, frame.f_lineno)
        return entry

    def site(self, key, backward):
        index = next(self._site_ids)
        self._sites[index] = [key, backward, None]
        trampoline_code = _through.__code__.replace(
            co_filename=SITE_FILE, co_firstlineno=index, co_name="site_%d" % index
        )
        # This module's globals: torch imports modules from C through the calling frame's builtins.
        trampoline = type(_through)(trampoline_code, globals())
        self.trampolines[key] = trampoline
        return trampoline

    # -- when a segment is written ---------------------------------------------------------------------------------

    def chain(self, index):
        """(frames innermost first, backward) of a site index from the event tree, or None."""
        site = self._sites.get(index)
        if site is None:
            return None
        key, backward, frames = site
        if frames is None:
            # A frame that is not the user's after all (a link into a library) leaves the next one innermost.
            frames = tuple(frame for frame in map(self._frame_of, key) if frame is not None)
            if backward and frames:
                frames = (dict(frames[0], kind="backward"),) + frames[1:]
            site[2] = frames
        return frames, backward

    def _frame_of(self, position):
        """The frame dict of a position id, None for one that is not the user's (or 0, the backward mark)."""
        made = self._frames.get(position)
        if isinstance(made, tuple):
            made = self._frames[position] = self._frame(*made)
        return made

    def _frame(self, code, lasti, line):
        filename = self._resolver.user_file(code.co_filename)
        if filename is None:
            return None
        span = self._span(code, lasti)
        if span is None:
            return {"file": filename, "line": line, "function": code.co_name}
        line, end_line, column, end_column = span
        frame = {"file": filename, "line": line, "function": code.co_name}
        start_text = linecache.getline(filename, line)
        end_text = start_text if end_line == line else linecache.getline(filename, end_line)
        first = _utf16_column(start_text, column) if start_text else None
        last = _utf16_column(end_text, end_column) if end_text else None
        if first is not None and last is not None:
            frame.update(column=first, endLine=end_line, endColumn=last)
        return frame

    def _span(self, code, lasti):
        """(line, end line, start byte, end byte) of the instruction at lasti, or None (Python < 3.11, no position)."""
        positions_of = getattr(code, "co_positions", None)
        if positions_of is None or lasti < 0:
            return None
        cached = self._code_positions.get(id(code))
        if cached is None or cached[0] is not code:
            cached = (code, list(positions_of()))
            self._code_positions[id(code)] = cached
        positions = cached[1]
        at = lasti // 2
        if at >= len(positions):
            return None
        line, end_line, column, end_column = positions[at]
        if line is None or end_line is None or column is None or end_column is None:
            return None
        return line, end_line, column, end_column


def install(torch, table):
    """Pushes the mode; returns a function that removes it (or only switches it off when the script pushed a mode of
    its own above it since), or None when this torch has no TorchFunctionMode."""
    try:
        from torch.overrides import TorchFunctionMode
    except Exception:
        return None
    compiling = _compile_watch(torch)
    mode = _mode_class(TorchFunctionMode, table, _backward_functions(torch), compiling)()
    try:
        torch._C._push_on_torch_function_stack(mode)
    except Exception:
        compiling.restore()
        return None
    table.on = True

    def remove():
        table.on = False
        compiling.restore()
        try:
            stack = torch.overrides._get_current_function_mode_stack()
            if stack and stack[-1] is mode:
                torch._C._pop_torch_function_stack()
        except Exception:
            pass  # the mode stays, switched off: a call through it costs one Python call

    return remove


class _compile_watch(list):
    """Non-empty (holding torch.compiler.is_compiling) once the script uses torch.compile. torch.compile traces the
    mode like the script's code, where the stack walk would break the graph at every op: the mode then asks whether
    it is being traced and steps aside. Asking costs a Python call, so only scripts that compile pay it."""

    def __init__(self, torch):
        super().__init__()
        self._torch = torch
        self._original = getattr(torch, "compile", None)
        is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
        if self._original is None or is_compiling is None:
            return
        utils = sys.modules.get("torch._dynamo.utils")
        try:
            compiled_before = bool(utils is not None and utils.counters["frames"]["total"])
        except Exception:
            compiled_before = True
        if compiled_before:
            self.append(is_compiling)
            return
        watch, original = self, self._original

        def compile(*args, **kwargs):
            if not watch:
                watch.append(is_compiling)
            return original(*args, **kwargs)

        compile.__wrapped__ = original
        for name in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(compile, name, getattr(original, name, None))
        torch.compile = compile

    def restore(self):
        if self._original is not None and getattr(self._torch.compile, "__wrapped__", None) is self._original:
            self._torch.compile = self._original


def _backward_functions(torch):
    owners = ((torch.Tensor, "backward"), (torch.autograd, "backward"), (torch.autograd, "grad"))
    return [getattr(owner, name, None) for owner, name in owners]


def _mode_class(base, table, backward_functions, compiling):
    files = table.files
    positions = table.positions
    trampolines = table.trampolines
    learn_file = table.learn_file
    new_position = table.position
    collision = table.collision
    new_site = table.site
    tensor_backward, autograd_backward, autograd_grad = backward_functions

    class ExactSiteMode(base):
        """Calls every torch function through the trampoline of the chain of user positions it was called from.

        The hot path makes no C call but sys._getframe and the torch function itself (with with_stack=True each C
        call is one more event the profiler records) and reads the table through closure cells."""

        def __init__(self):
            # TorchFunctionMode.__init__ only exists on some versions; nothing of it is needed.
            pass

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if not table.on:
                return func(*args, **kwargs)
            if compiling and compiling[0]():
                # Traced by torch.compile: the compiled ops keep the lines the event tree gives them.
                return func(*args, **kwargs)
            key = ()
            depth = 0
            frame = _getframe(1)
            while frame is not None:
                code = frame.f_code
                name = code.co_filename
                try:
                    user = files[name]
                except KeyError:
                    user = learn_file(name)
                if user:
                    where = (name, code.co_firstlineno, frame.f_lasti)
                    try:
                        entry = positions[where]
                    except KeyError:
                        entry = new_position(frame, where)
                    if entry[0] is not code:
                        entry = collision(frame, where)
                    key += (entry[1],)
                    depth += 1
                    if depth == MAX_FRAMES:
                        break
                frame = frame.f_back
            if not key:
                # Called from no user code (the interpreter's shutdown, a library's own thread of work).
                return func(*args, **kwargs)
            backward = func is tensor_backward or func is autograd_backward or func is autograd_grad
            if backward:
                key += (0,)
            try:
                trampoline = trampolines[key]
            except KeyError:
                trampoline = new_site(key, backward)
            return trampoline(func, args, kwargs)

    return ExactSiteMode
