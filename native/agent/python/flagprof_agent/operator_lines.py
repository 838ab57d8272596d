"""Lines of ops that Python operators dispatch (``x @ w``, ``z[0]``, ``x.T``, ``h += r``).

Such ops sit in torch's event tree directly under the Python function that ran them, with no call node carrying
the line: the tree says which function, not which line. The function's other calls do carry their lines, and
they bracket the op in time. Among the source lines of the function inside that bracket, the one whose operator
can produce this op (aten::matmul from ``@``, aten::select from a subscript, ...) is the op's line when exactly one
line qualifies; otherwise nothing is claimed and the op keeps the function's own call site.
"""

import ast
import linecache
import re

# The top-level aten op each Python operator dispatches to, as torch 2.x records it.
_BINARY = {
    ast.MatMult: ("aten::matmul",),
    ast.Mult: ("aten::mul",),
    ast.Add: ("aten::add",),
    ast.Sub: ("aten::sub",),
    ast.Div: ("aten::div",),
    ast.FloorDiv: ("aten::floor_divide", "aten::div"),
    ast.Mod: ("aten::remainder",),
    ast.BitAnd: ("aten::bitwise_and", "aten::__and__"),
    ast.BitOr: ("aten::bitwise_or", "aten::__or__"),
    ast.BitXor: ("aten::bitwise_xor", "aten::__xor__"),
    ast.LShift: ("aten::__lshift__", "aten::bitwise_left_shift"),
    ast.RShift: ("aten::__rshift__", "aten::bitwise_right_shift"),
}
_IN_PLACE = {
    ast.MatMult: ("aten::matmul",),
    ast.Mult: ("aten::mul_",),
    ast.Add: ("aten::add_",),
    ast.Sub: ("aten::sub_",),
    ast.Div: ("aten::div_",),
    ast.FloorDiv: ("aten::floor_divide_", "aten::div_"),
    ast.Mod: ("aten::remainder_",),
    ast.BitAnd: ("aten::bitwise_and_", "aten::__iand__"),
    ast.BitOr: ("aten::bitwise_or_", "aten::__ior__"),
    ast.BitXor: ("aten::bitwise_xor_", "aten::__ixor__"),
}
_UNARY = {ast.USub: ("aten::neg",), ast.Invert: ("aten::bitwise_not",)}
_COMPARE = {
    ast.Eq: ("aten::eq",),
    ast.NotEq: ("aten::ne",),
    ast.Lt: ("aten::lt",),
    ast.LtE: ("aten::le",),
    ast.Gt: ("aten::gt",),
    ast.GtE: ("aten::ge",),
}
_SUBSCRIPT_STORE = ("aten::lift_fresh", "aten::fill_", "aten::copy_", "aten::index_put_")


def _subscript_ops(index):
    """The op an index expression dispatches to: x[1:] slice, x[None] unsqueeze, x[0] select, x[mask] index."""
    if isinstance(index, ast.Slice):
        return ("aten::slice",)
    if isinstance(index, ast.Constant):
        if index.value is None:
            return ("aten::unsqueeze",)
        if index.value is Ellipsis:
            return ("aten::alias",)
        return ("aten::select",)
    if isinstance(index, ast.UnaryOp) and isinstance(index.operand, ast.Constant):
        return ("aten::select",)
    if isinstance(index, ast.Tuple):
        ops = set()
        for element in index.elts:
            ops.update(_subscript_ops(element))
        # A multi-dimensional index starts with whichever part is not a full slice; all full slices alias.
        ops.add("aten::alias")
        return tuple(sorted(ops))
    return ("aten::select", "aten::index")
_ATTRIBUTES = {"T": ("aten::numpy_T",), "mT": ("aten::mT",), "H": ("aten::adjoint", "aten::numpy_T"), "mH": ("aten::adjoint",)}

_CALL_NAME = re.compile(r"^(.*)\((\d+)\): (.*)$")


def parse_call_name(name):
    """torch names a Python call "file(first line): function"; (file, first line, function) or None."""
    match = _CALL_NAME.match(name)
    if not match:
        return None
    return match.group(1), int(match.group(2)), match.group(3)


class _OperatorCollector(ast.NodeVisitor):
    """{line: {aten op names}} for the operators of one function body, nested functions and classes excluded."""

    def __init__(self):
        self.lines = {}

    def _add(self, line, names):
        self.lines.setdefault(line, set()).update(names)

    def visit_FunctionDef(self, node):  # a nested function runs as its own call
        pass

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_BinOp(self, node):
        self._add(node.lineno, _BINARY.get(type(node.op), ()))
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._add(node.lineno, _IN_PLACE.get(type(node.op), ()))
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        self._add(node.lineno, _UNARY.get(type(node.op), ()))
        self.generic_visit(node)

    def visit_Compare(self, node):
        for op in node.ops:
            self._add(node.lineno, _COMPARE.get(type(op), ()))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        ops = _subscript_ops(node.slice)
        if not isinstance(node.ctx, ast.Load):
            ops = ops + _SUBSCRIPT_STORE
        self._add(node.lineno, ops)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr in _ATTRIBUTES:
            self._add(node.lineno, _ATTRIBUTES[node.attr])
        self.generic_visit(node)


class OperatorLines:
    """Per (file, first line, function): the function's line span and its operator lines, parsed once."""

    def __init__(self):
        self._modules = {}
        self._functions = {}

    def _module(self, path):
        if path not in self._modules:
            try:
                self._modules[path] = ast.parse("".join(linecache.getlines(path)), path)
            except (SyntaxError, ValueError, MemoryError):
                self._modules[path] = None
        return self._modules[path]

    def function(self, path, first_line, name):
        """(start line, end line, {op name: [lines]}) or None when the function is not found."""
        key = (path, first_line, name)
        if key in self._functions:
            return self._functions[key]
        found = None
        tree = self._module(path)
        if tree is not None:
            if name == "<module>":
                collector = _OperatorCollector()
                for statement in tree.body:
                    collector.visit(statement)
                end = max((getattr(s, "end_lineno", s.lineno) for s in tree.body), default=0)
                found = (0, end, collector.lines)
            elif not name.startswith("<"):
                for node in ast.walk(tree):
                    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != name:
                        continue
                    starts = {node.lineno} | {d.lineno for d in node.decorator_list}
                    if first_line not in starts:
                        continue
                    collector = _OperatorCollector()
                    for statement in node.body:
                        collector.visit(statement)
                    found = (node.lineno, getattr(node, "end_lineno", node.lineno), collector.lines)
                    break
        if found is not None:
            by_name = {}
            for line in sorted(found[2]):
                for op_name in found[2][line]:
                    by_name.setdefault(op_name, []).append(line)
            found = (found[0], found[1], by_name)
        self._functions[key] = found
        return found

    def lines_of_ops(self, path, first_line, name, events):
        """events: [(start ns, kind, payload)] of one call's children in any order, kind 'call' (payload: the line
        the function made the call from) or 'op' (payload: (index, op name)). Returns {index: line}."""
        function = self.function(path, first_line, name)
        if function is None:
            return {}
        start, end, operators = function
        if not operators:
            return {}
        events = sorted(events, key=lambda e: e[0])
        calls = [(i, e[2]) for i, e in enumerate(events) if e[1] == "call"]
        result = {}
        previous_line = start
        call_cursor = 0
        for position, (_, kind, payload) in enumerate(events):
            if kind == "call":
                previous_line = payload
                call_cursor += 1
                continue
            index, op_name = payload
            while call_cursor < len(calls) and calls[call_cursor][0] < position:
                call_cursor += 1
            next_line = calls[call_cursor][1] if call_cursor < len(calls) else end
            everywhere = operators.get(op_name, ())
            if previous_line < next_line:
                # Between two calls of the function, in source order: only the lines between them ran.
                lines = [line for line in everywhere if previous_line <= line <= next_line]
            else:
                # Both calls on one line, or a loop wrapped between them: any line may have run, so only an
                # operator the whole function has once is certain.
                lines = everywhere
            if len(lines) == 1:
                result[index] = lines[0]
        return result
