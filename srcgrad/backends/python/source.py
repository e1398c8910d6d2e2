"""Printing the emitted ``ast`` (astor), compiling it, and saying numpy's IndexErrors from the
generated code as the llvm backend says them (the user's array, index, size and line).

Example:
    source, externals = generate(fn)
    f = compile_function(fn, source, externals)
"""
import ast
import re

import astor
import astor.source_repr
import numpy as np

from ... import runtime
from .emit import COMMENT, Emitter, is_comment

_MARKER = re.compile(r"^(\s*)" + COMMENT + r"(\d+)__$", re.M)


def generate(fn):
    """(readable Python source of IR function ``fn``, the objects its code calls by name)."""
    return _generate(fn)[:2]


def _generate(fn):
    em = Emitter(fn)
    function = em.function()
    tree = ast.Module(body=_imports(function) + [function], type_ignores=[])
    text = astor.to_source(tree, pretty_source=_lines)
    source = _MARKER.sub(lambda m: m.group(1) + em.comments[int(m.group(2))], text)
    first, rest = source.split("\n", 1)
    source = f"{first}\n{_externals_comment(em.externals)}{rest}"
    _drop_markers(tree.body)
    return source, em.externals, em, tree


def _imports(function):
    """The first line, ``from srcgrad.runtime import ...``: the modules (np, math) and the
    helpers ``function`` calls, so that its source runs as printed."""
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names = [name for name in runtime.__all__ if name in used] or ["np"]
    return [ast.ImportFrom(module="srcgrad.runtime", names=[ast.alias(name=n) for n in names], level=0)]


def _externals_comment(externals):
    """A line below the imports naming the objects the code uses that it does not define (array
    constants and Python functions the compiled function passes in), where there are any."""
    if not externals:
        return ""
    return f"# passed in by the compiled function, not defined here: {', '.join(externals)}\n"


def _lines(source):
    """astor's line splitting, at 120 characters rather than 79."""
    return "".join(astor.source_repr.split_lines(source, maxline=120))


def _drop_markers(stmts):
    """The emitted statements without the comment markers: node for node what the source parses to."""
    stmts[:] = [s for s in stmts if not is_comment(s)]
    for s in stmts:
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                _drop_markers(getattr(s, field))


def to_source(fn):
    """Readable Python source of IR function ``fn``."""
    return generate(fn)[0]


def _index_sites(fn, source):
    """{line of ``source``: [(the index as printed there, its op)]} — ``source`` generated from
    ``fn`` again, the printed tree matched node for node with the emitted one."""
    again, _, em, tree = _generate(fn)
    if again != source:
        return {}
    printed = {}
    for made, read in zip(ast.walk(tree), ast.walk(ast.parse(source))):
        if type(made) is not type(read):
            return {}
        printed[id(made)] = read
    sites = {}
    for node, op in em.sites:
        read = printed.get(id(node))
        if read is not None:
            sites.setdefault(read.lineno, []).append((read, op))
    return sites


def _out_of_bounds(read, op, values, namespace):
    """The IndexError of an index that ``read`` (a printed subscript of ``op``) makes with the
    variables ``values``, or None where it is in bounds."""
    def value(node):
        if isinstance(node, ast.Name):
            return values.get(node.id)
        try:
            return ast.literal_eval(node)
        except ValueError:      # a folded expression, ``i - 1``: computed again (pure)
            code = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<index>", "eval")
            return eval(code, namespace, dict(values))
    if not isinstance(read.value, ast.Name):
        return None
    arr = values.get(read.value.id)
    parts = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
    parts = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]     # new axes
    for axis, part in enumerate(parts):
        if isinstance(part, ast.Slice) or axis >= np.ndim(arr):
            continue
        i, n = value(part), np.shape(arr)[axis]
        if isinstance(i, (int, np.integer, bool, np.bool_)) and not -n <= int(i) < n:
            name = op.attrs.get("array") or op.operands[0].name or "array"
            where = f" ({op.loc})" if op.loc is not None else ""
            return IndexError(f"index {int(i)} is out of bounds for axis {axis} of '{name}' with size {n}{where}")
    return None


def _index_error(fn, source, filename, error):
    """numpy's IndexError from the generated code, said as the llvm backend says it: the
    user's array (also for the adjoint arrays of gradient code), the index, the size and the
    source line. None where the error is not an out-of-bounds index of the code's arrays."""
    tb, frame = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None:
        return None
    for read, op in _index_sites(fn, source).get(line, []):
        try:
            better = _out_of_bounds(read, op, frame.f_locals, frame.f_globals)
        except Exception:      # an index that cannot be computed again here
            better = None
        if better is not None:
            return better
    return None


def _function_name(source):
    return next(s.name for s in ast.parse(source).body if isinstance(s, ast.FunctionDef))


def compile_function(fn, source=None, externals=None):
    """A Python callable running IR function ``fn``."""
    if source is None:
        source, externals = generate(fn)
    namespace = dict(externals or {})
    filename = f"<srcgrad {fn.name}>"
    exec(compile(source, filename, "exec"), namespace)
    compiled = namespace[_function_name(source)]

    def run(*args):
        try:
            return compiled(*args)
        except IndexError as e:
            better = _index_error(fn, source, filename, e)
            if better is None:
                raise
            e.__traceback__ = None      # frees the frame of the generated code
        raise better

    run.__wrapped__ = compiled
    return run
