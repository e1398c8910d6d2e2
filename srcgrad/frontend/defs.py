"""One ``def`` lowered whole into an IR Function: its source read (source.py), its parameters
(a container argument passed as its leaves, named after its place), its body through the
context's tables and its ``return``. lower.py's ``lower`` calls ``lower_function`` with its
tables; a call of a ``custom_vjp`` function (functions.py) lowers the function it wraps so.

Also ``check_def``, which refuses what makes a ``def`` other than a plain function, before its
body is compiled (here and for every function compiled in place at a call).

Example:
    >>> from srcgrad.frontend.lower import TABLES
    >>> from srcgrad.ir.types import F64
    >>> def f(x):
    ...     return x * x
    >>> print(lower_function(f, [F64], TABLES))
    func f(%x: f64) -> f64 {
      %0 = mul %x, %x : f64
      return %0
    }
"""
import ast
import inspect

from ..custom import custom_vjp
from ..errors import UnsupportedSyntaxError
from ..ir.core import Builder, Function
from .containers import leaf_params, refill
from .context import WHAT_INSTEAD, Context
from .numpy_shapes import refuse_layout_dependent_writes
from .source import source_of


def lower_function(fn, arg_types, tables, name=None, unit_axes=None):
    """The IR Function of ``fn`` specialised on ``arg_types`` (a list of compiler types), its
    statements and expressions lowered by ``tables`` (context.Tables); ``unit_axes``, if given:
    for each leaf parameter, the axes of size 1 of an array argument (``x.squeeze()`` of an
    argument needs them; else it raises NeedsUnitAxes)."""
    if isinstance(fn, custom_vjp):
        return _lower_custom(fn, arg_types, tables, name)
    src, file, first = source_of(fn)
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise UnsupportedSyntaxError(f"srcgrad compiles functions defined with `def`, not {type(fdef).__name__}")
    return _lower_def(Context(fn, fdef, file, first, tables), arg_types, name, unit_axes)


def _lower_custom(fobj, arg_types, tables, name):
    """A custom_vjp function on its own: one call op."""
    params = list(inspect.signature(fobj.fun).parameters)
    if len(params) != len(arg_types):
        raise TypeError(f"{fobj.__name__}() takes {len(params)} arguments but {len(arg_types)} were given")
    fn = Function(name or fobj.__name__, list(zip(params, arg_types)))
    result_types = lower_function(fobj.fun, arg_types, tables).result_types
    with Builder(fn.body) as b:
        out = b.emit("call_custom", fn.params, {"fn": fobj, "result_types": result_types},
                     result_types=result_types, name="y")
        b.ret(out if isinstance(out, list) else [out])
    return fn


def _lower_def(lw, arg_types, name, unit_axes=None):
    """The Function of the ``def`` that ``lw`` holds: parameters, body, return."""
    check_def(lw)
    a = lw.fdef.args
    # in inspect.signature's order; api.py binds defaults and keywords, *args as a tuple, **kwargs a dict
    params = [p.arg for p in a.posonlyargs + a.args + [a.vararg] + a.kwonlyargs + [a.kwarg] if p is not None]
    if len(params) != len(arg_types):
        raise TypeError(f"{lw.fdef.name}() takes {len(params)} arguments but {len(arg_types)} were given")
    leaves = []           # a container argument is passed as its leaves, named after its place
    for p, t in zip(params, arg_types):
        leaves += leaf_params(p, t)
    fn = Function(name or lw.fdef.name, leaves, lw.loc(lw.fdef))
    lw.params = frozenset(fn.params)
    if unit_axes is not None:
        lw.unit_axes = {v: u for v, u in zip(fn.params, unit_axes) if u is not None}
    values = iter(fn.params)
    env = {p: refill(t, values) for p, t in zip(params, arg_types)}
    lw.b = Builder(fn.body)
    with lw.b:
        env, ret = lw.body(lw.fdef.body, env)
        if ret is None:
            lw.unsupported(lw.fdef, "a function without a `return` of a value",
                           "end the function with `return <value>`")
        lw.b.ret(list(ret))
    fn.result_tree = ret.tree
    fn.arg_trees = list(arg_types)
    refuse_layout_dependent_writes(fn)      # numpy_shapes.py: a reshape's view-or-copy must not show
    return fn


def check_def(lw):
    """Refuse what makes a `def` something other than a plain function, before its body
    could be compiled as if it were one (an `async def` returns a coroutine, a `def` with
    `yield` a generator, whatever its `return` says)."""
    if isinstance(lw.fdef, ast.AsyncFunctionDef):
        lw.unsupported(lw.fdef, "`async def` (calling it makes a coroutine, not a value)",
                       "define the function with a plain `def`")
    for node in _own_nodes(lw.fdef.body):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            word = "yield from" if isinstance(node, ast.YieldFrom) else "yield"
            lw.unsupported(node, f"generators (`{word}` makes {lw.fdef.name} a generator)",
                           WHAT_INSTEAD[type(node)])


def _own_nodes(stmts):
    """The nodes of a function body, without those of functions and classes defined in it."""
    for node in stmts:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(ast.iter_child_nodes(node))
