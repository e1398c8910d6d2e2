"""Calls. ``call`` is the handler of every call expression: what the call names decides how it
lowers (a builtin of containers, containers.py; a shape or view function, numpy_shapes.py; an
entry of call_table.CALLS; or a Python function). ``def_stmt`` and ``lambda_value`` are the
handlers of a nested ``def`` and of ``lambda``.

Calls of Python functions are compiled in place: module-level functions (``inline``), functions
defined inside the compiled one — nested ``def`` and ``lambda``, closures over its variables —
and ``custom_vjp`` functions (kept as one call op). Arguments bind as Python binds them: by
position, by keyword, else the default; ``*args`` and ``**kwargs`` become a tuple and a dict
(containers.py), so their length is fixed where the call is compiled.

A nested function is a value of the frontend only (``NestedFunction``): its body is compiled at
each call, its free variables read from the defining function's variables as they are at the
call (Python's closures see the variable, not the value at the ``def``). A module-level function
used as a value (``apply(np.tanh, x)``) is a ``FunctionRef``.

Example:
    >>> def f(x, k):
    ...     scale = lambda v, p=2.0: k * v ** p
    ...     def both(*vs):
    ...         return sum(scale(v) for v in vs)
    ...     return both(x, 2.0 * x)
"""
import ast
import copy
import inspect
import os
import sysconfig

from ..custom import custom_vjp
from ..errors import TypingError, UnsupportedSyntaxError
from ..ir.core import Builder
from ..ir.inline import inline as inline_ir
from ..ir.types import user_name
from ..trees import Tree
from .call_table import ARRAY_METHODS, WHAT_CALLS_WORK, array_method, callee, check_callee
from .containers import container_call, range_of
from .defs import check_def, lower_function
from .dtypes import DType
from .expressions import constant
from .keywords import check_keywords
from .numpy_shapes import lower_shape_call
from .source import source_of
from .values import FunctionRef, NestedFunction


MAX_DEPTH = 32       # calls of one function inside itself, compiled in place
MAX_RECURSIVE_CALLS = 2000      # per compiled function: fib(n) expands into a tree of calls


def _signature(a, defaults):
    """The inspect.Signature of an ast.arguments, with ``defaults`` (values) for its defaults."""
    P = inspect.Parameter
    positional = a.posonlyargs + a.args
    firsts = len(positional) - len(a.defaults)
    params, k = [], 0
    for j, p in enumerate(positional):
        kind = P.POSITIONAL_ONLY if j < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        if j >= firsts:
            params.append(P(p.arg, kind, default=defaults[k]))
            k += 1
        else:
            params.append(P(p.arg, kind))
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is None:
            params.append(P(p.arg, P.KEYWORD_ONLY))
        else:
            params.append(P(p.arg, P.KEYWORD_ONLY, default=defaults[k]))
            k += 1
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def _as_def(node):
    """A lambda as the FunctionDef ``def lambda(args): return body`` (same source positions)."""
    fdef = ast.FunctionDef(name="lambda", args=node.args, body=[ast.Return(value=node.body)], decorator_list=[],
                           returns=None, type_comment=None)
    ast.copy_location(fdef, node)
    ast.copy_location(fdef.body[0], node.body)
    return ast.fix_missing_locations(fdef)


def _free_names(fdef):
    """Names a nested function reads that it does not bind itself."""
    a = fdef.args
    bound = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} | {p.arg for p in (a.vararg, a.kwarg) if p}
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    loaded = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - bound - stored


# ---------------------------------------------------------------------- the call
def call(lw, node, env):
    """A call, by what it calls: a range's length, a local function, a compiled one, a builtin
    of containers, a shape or view function, an array method, else ``_call_of``."""
    if len(node.args) == 1 and range_of(node.args[0], env) is not None:
        return range_of(node.args[0], env).n          # len(range0)
    fobj = lw.global_object(node.func)
    if fobj is None and isinstance(node.func, ast.Name) and node.func.id in lw.locals:
        target = lw.expr_any(node.func, env)
        if not hasattr(target, "type") and not isinstance(target, (Tree, FunctionRef)):
            return call_value(lw, node, target, env)
        if isinstance(target, FunctionRef):
            fobj = target.obj
        elif not isinstance(target, Tree):
            lw.typing_error(node, f"'{node.func.id}' is a {user_name(target.type)}, not a function")
    if hasattr(fobj, "as_primal"):          # a function srcgrad compiled (api.Compiled)
        return compiled_call(lw, node, fobj, env)
    special = container_call(lw, node, fobj, env)
    if special is not None:
        return special
    shaped = lower_shape_call(lw, node, fobj, env)        # reshape, transpose, np.array([...]), ...
    if shaped is not None:
        return shaped
    plain_function = inspect.isfunction(fobj) and not isinstance(fobj, custom_vjp)
    if node.keywords and not plain_function:      # each table entry declares its keywords
        check_keywords(lw, node, callee(array_method(node.func, fobj) or fobj), ast.unparse(node.func))
    if fobj is None and isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
        arr = lw.expr(node.func.value, env)
        if not arr.type.is_array:
            lw.typing_error(node, f".copy() needs an array, got {arr.type}")
        return lw.emit(node, "copy", [arr])
    method = array_method(node.func, fobj)
    if method is not None:
        arr = lw.expr(node.func.value, env)
        if arr.type.is_array:
            args = [arr] + [None if callee(method).takes_none and _is_none(a) else lw.expr(a, env)
                            for a in node.args]
            return callee(method).lower(lw, node, args, env)
    return _call_of(lw, node, fobj, env)


def _call_of(lw, node, fobj, env):
    """A call of ``fobj`` with its arguments lowered here: a table entry, a custom_vjp or a
    Python function (compiled in place)."""
    called = ast.unparse(node.func)         # the user's spelling: np.linalg.det, math.gamma
    if fobj is None:
        lw.unsupported(node, f"calling {called}", "call math/numpy functions, plain module-level functions "
                                                   "or the array methods " + ", ".join(
                                                       f"x.{m}()" for m in sorted(ARRAY_METHODS)))
    check_callee(lw, node, fobj, called)
    entry = callee(fobj)
    if entry is not None and entry.raw_args:
        out = entry.lower(lw, node, None, env)
        return Tree(tuple, out) if isinstance(out, list) else out     # several values (np.split): a tuple
    if entry is not None:
        args = [None if entry.takes_none and _is_none(a) else _lowered_arg(lw, a, env)
                for a in node.args[1 if entry.shape_first else 0:entry.static_after]]
        out = entry.lower(lw, node, [None] + args if entry.shape_first else args, env)
        return Tree(tuple, out) if isinstance(out, list) else out
    args = [lw.expr_any(a, env) for a in node.args]       # a Python function may take containers
    if isinstance(fobj, custom_vjp):
        return custom_call(lw, node, fobj, args)
    if inspect.isfunction(fobj):
        return inline(lw, node, fobj, args, {k.arg: lw.expr_any(k.value, env) for k in node.keywords})
    lw.unsupported(node, f"calling {called} with these arguments (yet)", WHAT_CALLS_WORK)


def _lowered_arg(lw, node, env):
    """An argument of a call: lowered now, unless container_call lowered it already."""
    v = lw.lowered_args.pop(id(node), None)
    return lw.value(node, v) if v is not None else lw.expr(node, env)


# ---------------------------------------------------------------------- functions defined in the compiled one
def def_stmt(lw, s, env):
    """``def g(...)`` inside the compiled function: ``g`` names a NestedFunction."""
    for d in s.decorator_list:
        lw.unsupported(d, "decorators on a function defined inside the compiled one",
                       "define it without a decorator")
    env[s.name] = NestedFunction(s, default_values(lw, s.args, env), lw, env)
    return env, None


def lambda_value(lw, node, env):
    """``lambda v: ...``: a NestedFunction whose body returns the expression."""
    return NestedFunction(_as_def(node), default_values(lw, node.args, env), lw, env)


def default_values(lw, a, env):
    """The values of a nested function's defaults, computed where it is defined (as Python does)."""
    return [lw.expr_any(d, env) for d in a.defaults + [d for d in a.kw_defaults if d is not None]]


# ---------------------------------------------------------------------- calls compiled in place
def call_nested(lw, node, nf, args, keywords):
    """A call of a nested function: its body compiled here, its free variables bound to the
    definer's values."""
    check_depth(lw, node, nf.fdef, nf.fdef.name)
    fdef = copy.deepcopy(nf.fdef)          # desugaring rewrites the body: each call starts from the source
    sub = lw.for_call(nf.definer.fn, fdef, nf.definer.file, nf.definer.first, nf.fdef, node)
    free = {n for n in _free_names(fdef) if n in nf.definer.locals}
    sub.locals |= free
    check_def(sub)
    values = bind_call(lw, node, fdef.name, _signature(fdef.args, nf.defaults), args, keywords)
    scope = {n: nf.env[n] for n in free if n in nf.env}
    return _run_body(sub, fdef, {**scope, **values})


def inline(lw, node, fobj, args, keywords=None):
    """A call to a plain Python function: its body is compiled in place (and so differentiated).
    Arguments bind to parameters as in Python: by position, by keyword, else the default
    (read at compile time, like a global)."""
    check_depth(lw, node, fobj, fobj.__name__)
    src, file, first = source_of(fobj)
    fdef = ast.parse(src).body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        lambdas = [n for n in ast.walk(fdef) if isinstance(n, ast.Lambda)]
        if fobj.__name__ != "<lambda>" or len(lambdas) != 1:
            lw.unsupported(node, f"calling {fobj.__name__}, which is not defined with `def` (or is one of "
                                 "several lambdas on one line)", "define it with def")
        fdef = _as_def(lambdas[0])
    sub = lw.for_call(fobj, fdef, file, first, fobj, node)
    if not _is_library(file):
        return _inline_body(lw, sub, node, fobj, fdef, args, keywords)
    try:
        return _inline_body(lw, sub, node, fobj, fdef, args, keywords)
    except (UnsupportedSyntaxError, TypingError) as e:
        if e.loc is not None and e.loc.file == lw.file and not hasattr(e, "in_library"):
            raise                    # said at the user's own line already
        # a library's function: say so at the user's call, with where in the library it stopped
        # (the innermost place, where its own calls were compiled in place too)
        where, why = getattr(e, "in_library", None) or (f"{e.loc.file}:{e.loc.line}" if e.loc else "",
                                                      e.plain.removeprefix("srcgrad does not support "))
        called = ast.unparse(node.func) if isinstance(node, ast.Call) else fobj.__name__
        try:
            lw.unsupported(node, f"calling {called} (yet): its source{f' ({where})' if where else ''} uses what "
                                 f"compiled code does not: {why}", WHAT_CALLS_WORK)
        except UnsupportedSyntaxError as said:
            said.in_library = where, why
            raise said from None


def _inline_body(lw, sub, node, fobj, fdef, args, keywords):
    check_def(sub)
    sig = inspect.signature(fobj)
    defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not p.empty}
    values = bind_call(lw, node, fobj.__name__, sig, args, keywords)
    for n in defaults:
        if values.get(n) is _DEFAULT:
            if defaults[n] is None:
                lw.unsupported(node, f"calling {fobj.__name__} without its argument '{n}': its default is None, "
                                     "which compiled code cannot hold yet", f"pass {n}= explicitly")
            values[n] = constant(lw, defaults[n], node)
    return _run_body(sub, fdef, values)


def _is_library(file):
    """Whether ``file`` is installed code (the standard library, site-packages), not the user's."""
    path = os.path.realpath(file)
    roots = {os.path.realpath(p) for key, p in sysconfig.get_paths().items() if key in ("stdlib", "purelib", "platlib")}
    return any(path.startswith(root + os.sep) for root in roots)


def check_depth(lw, node, fn, name):
    """Recursion is compiled in place, call by call: it ends where a condition on constant
    arguments (``n == 0`` with ``n`` known while compiling) stops it, within MAX_DEPTH calls."""
    if fn not in lw.stack:
        return
    lw.recursive_calls[0] += 1
    if lw.recursive_calls[0] > MAX_RECURSIVE_CALLS:
        lw.unsupported(node, f"recursion that expands into more than {MAX_RECURSIVE_CALLS} calls while "
                             f"compiling ({name})", "write it as a loop")
    if sum(f is fn for f in lw.stack) >= MAX_DEPTH:
        lw.unsupported(node, f"recursion deeper than {MAX_DEPTH} calls ({name} calls itself, and what ends "
                             "it is not known while compiling)",
                       "recursion compiles when constant arguments bound its depth (fact(3)); otherwise "
                       "write it as a loop")


def bind_call(lw, node, name, sig, args, keywords):
    """Parameter name -> value, as Python binds ``args`` and ``keywords``: a ``*args``
    parameter gets a tuple, ``**kwargs`` a dict; a module-level default is _DEFAULT (read
    by the caller), a nested function's is its value."""
    try:
        bound = sig.bind(*args, **(keywords or {}))
    except TypeError as e:
        lw.typing_error(node, f"{name}(): {e}")
    values = {}
    for n, p in sig.parameters.items():
        if p.kind is p.VAR_POSITIONAL:
            values[n] = Tree(tuple, bound.arguments.get(n, ()))
        elif p.kind is p.VAR_KEYWORD:
            kw = bound.arguments.get(n, {})
            values[n] = Tree(dict, list(kw.values()), list(kw.keys()))
        elif n in bound.arguments:
            values[n] = bound.arguments[n]
        else:
            values[n] = p.default if not _is_python_default(p.default) else _DEFAULT
    return values


def _run_body(sub, fdef, values):
    """The value ``sub`` (the context of a function compiled in place) returns for ``values``."""
    _, ret = sub.body(fdef.body, values)
    if ret is None:
        sub.unsupported(fdef, "a called function that returns nothing", "return a value")
    return ret.value()


def custom_call(lw, node, fobj, args):
    """A call to a ``custom_vjp`` function: kept as a call; its vjp gives the gradient."""
    if fobj.vjp is None:
        lw.unsupported(node, f"calling custom_vjp function {fobj.__name__} before its vjp is defined",
                       f"decorate its derivative with @{fobj.__name__}.defvjp")
    for a, arg in zip(args, node.args):
        if isinstance(a, Tree):
            lw.unsupported(arg, f"passing {a.words()} to the custom_vjp function {fobj.__name__}",
                           "pass its numbers and arrays one by one")
    inner = lower_function(fobj.fun, [lw.value(arg, a).type for a, arg in zip(args, node.args)], lw.tables)
    result_types = inner.result_types
    lw.b.loc = lw.loc(node)
    out = lw.b.emit("call_custom", args, {"fn": fobj, "result_types": result_types},
                    result_types=result_types)
    outs = out if isinstance(out, list) else [out]
    return inner.result_tree.refill(iter(outs)) if inner.result_tree is not None else outs[0]


def compiled_call(lw, node, obj, env):
    """A call of a function srcgrad compiled (``jit``, ``grad``, ``hessian``...): its IR for
    these argument types compiled in place (and so differentiated, when the caller is),
    not a call out of the compiled code."""
    args = [lw.expr_any(a, env) for a in node.args]
    keywords = {k.arg: lw.expr_any(k.value, env) for k in node.keywords}
    values = bind_call(lw, node, obj.__name__, obj._sig, args, keywords)
    for n in values:
        if values[n] is _DEFAULT:
            values[n] = constant(lw, obj._sig.parameters[n].default, node)
    leaves = []
    for n, v in values.items():
        if isinstance(v, Tree):
            lw.unsupported(node, f"passing {v.words()} ('{n}') to the compiled function {obj.__name__}",
                           "pass its numbers and arrays one by one, or call the plain function")
        leaves.append(lw.value(node, v))
    try:
        fn = obj.as_primal([v.type for v in leaves])
    except TypeError as e:
        lw.unsupported(node, f"calling {obj!r} here: {e}")
    with Builder(lw.b.block, lw.loc(node)):
        outs = inline_ir(fn, leaves)
    return fn.result_tree.refill(iter(outs)) if fn.result_tree is not None else outs[0]


def call_value(lw, node, target, env):
    """A call of a local name bound to a function (nested, or a module-level one passed in)."""
    args = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            t = lw.expr_any(a.value, env)
            if not isinstance(t, Tree) or t.kind is dict:
                lw.unsupported(a, "`*` of something other than a tuple or list")
            args += list(t.items)
        else:
            args.append(lw.expr_any(a, env))
    keywords = {}
    for k in node.keywords:
        if k.arg is None:
            d = lw.expr_any(k.value, env)
            if not isinstance(d, Tree) or d.kind is not dict:
                lw.unsupported(k, "`**` of something other than a dict")
            keywords.update(zip(d.keys, d.items))
        else:
            keywords[k.arg] = lw.expr_any(k.value, env)
    if isinstance(target, NestedFunction):
        return call_nested(lw, node, target, args, keywords)
    return None


class _Default:
    def __repr__(self):
        return "DEFAULT"


_DEFAULT = _Default()


def _is_python_default(d):
    """Whether a parameter default is a Python object (a module-level function's), not a lowered value."""
    return not (hasattr(d, "type") or isinstance(d, (Tree, NestedFunction, FunctionRef, DType)))


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None
