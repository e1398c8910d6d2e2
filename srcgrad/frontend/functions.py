"""Calls of Python functions, compiled in place: module-level functions (``inline``), functions
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

from .dtypes import DType
from ..custom import custom_vjp
from ..ir.core import Builder
from ..trees import Tree
from .source import source_of


MAX_DEPTH = 32       # calls of one function inside itself, compiled in place
MAX_RECURSIVE_CALLS = 2000      # per compiled function: fib(n) expands into a tree of calls


class NestedFunction:
    """A ``def`` or ``lambda`` of the function being compiled: its AST (a FunctionDef), the
    values of its defaults (computed at the ``def``), the lowerer that defined it and the
    variables it sees (the definer's, as they are where the function is read)."""

    def __init__(self, fdef, defaults, definer, env):
        self.fdef, self.defaults, self.definer, self.env = fdef, defaults, definer, env

    def seen_from(self, env):
        """This function as read in ``env`` of its definer: its free variables take their values there."""
        return NestedFunction(self.fdef, self.defaults, self.definer, env)


class FunctionRef:
    """A module-level function (or a numpy/math function) used as a value: called where it ends up."""

    def __init__(self, obj):
        self.obj = obj


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


class Functions:
    """Calls of Python functions (a mixin of lower._Lowerer)."""

    def define(self, s, env):
        """``def g(...)`` inside the compiled function: ``g`` names a NestedFunction."""
        for d in s.decorator_list:
            self.unsupported(d, "decorators on a function defined inside the compiled one",
                             "define it without a decorator")
        env[s.name] = NestedFunction(s, self.default_values(s.args, env), self, env)
        return env

    def lambda_value(self, node, env):
        """``lambda v: ...``: a NestedFunction whose body returns the expression."""
        return NestedFunction(_as_def(node), self.default_values(node.args, env), self, env)

    def default_values(self, a, env):
        """The values of a nested function's defaults, computed where it is defined (as Python does)."""
        return [self.expr_any(d, env) for d in a.defaults + [d for d in a.kw_defaults if d is not None]]

    def call_nested(self, node, nf, args, keywords):
        """A call of a nested function: its body compiled here, its free variables bound to the
        definer's values."""
        self.check_depth(node, nf.fdef, nf.fdef.name)
        fdef = copy.deepcopy(nf.fdef)          # desugaring rewrites the body: each call starts from the source
        sub = type(self)(nf.definer.fn, fdef, nf.definer.file, nf.definer.first)
        free = {n for n in _free_names(fdef) if n in nf.definer.locals}
        sub.locals |= free
        sub.stack = self.stack + (nf.fdef,)
        sub.recursive_calls = self.recursive_calls
        sub.params, sub.unit_axes = self.params, self.unit_axes
        sub.b = self.b
        sub.check_def()
        values = self.bind_call(node, fdef.name, _signature(fdef.args, nf.defaults), args, keywords)
        scope = {n: nf.env[n] for n in free if n in nf.env}
        return self.run_body(sub, fdef, {**scope, **values})

    def inline(self, node, fobj, args, keywords=None):
        """A call to a plain Python function: its body is compiled in place (and so differentiated).
        Arguments bind to parameters as in Python: by position, by keyword, else the default
        (read at compile time, like a global)."""
        self.check_depth(node, fobj, fobj.__name__)
        src, file, first = source_of(fobj)
        fdef = ast.parse(src).body[0]
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lambdas = [n for n in ast.walk(fdef) if isinstance(n, ast.Lambda)]
            if fobj.__name__ != "<lambda>" or len(lambdas) != 1:
                self.unsupported(node, f"calling {fobj.__name__}, which is not defined with `def` (or is one of "
                                       "several lambdas on one line)", "define it with def")
            fdef = _as_def(lambdas[0])
        sub = type(self)(fobj, fdef, file, first)
        sub.stack = self.stack + (fobj,)
        sub.recursive_calls = self.recursive_calls
        sub.params, sub.unit_axes = self.params, self.unit_axes
        sub.b = self.b
        sub.check_def()
        sig = inspect.signature(fobj)
        defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not p.empty}
        values = self.bind_call(node, fobj.__name__, sig, args, keywords)
        for n in defaults:
            if values.get(n) is _DEFAULT:
                values[n] = self.constant(defaults[n], node)
        return self.run_body(sub, fdef, values)

    def check_depth(self, node, fn, name):
        """Recursion is compiled in place, call by call: it ends where a condition on constant
        arguments (``n == 0`` with ``n`` known while compiling) stops it, within MAX_DEPTH calls."""
        if fn not in self.stack:
            return
        self.recursive_calls[0] += 1
        if self.recursive_calls[0] > MAX_RECURSIVE_CALLS:
            self.unsupported(node, f"recursion that expands into more than {MAX_RECURSIVE_CALLS} calls while "
                                   f"compiling ({name})", "write it as a loop")
        if sum(f is fn for f in self.stack) >= MAX_DEPTH:
            self.unsupported(node, f"recursion deeper than {MAX_DEPTH} calls ({name} calls itself, and what ends "
                                   "it is not known while compiling)",
                             "recursion compiles when constant arguments bound its depth (fact(3)); otherwise "
                             "write it as a loop")

    def bind_call(self, node, name, sig, args, keywords):
        """Parameter name -> value, as Python binds ``args`` and ``keywords``: a ``*args``
        parameter gets a tuple, ``**kwargs`` a dict; a module-level default is _DEFAULT (read
        by the caller), a nested function's is its value."""
        try:
            bound = sig.bind(*args, **(keywords or {}))
        except TypeError as e:
            self.typing_error(node, f"{name}(): {e}")
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

    def run_body(self, sub, fdef, values):
        _, ret = sub.body(fdef.body, values)
        if ret is None:
            sub.unsupported(fdef, "a called function that returns nothing", "return a value")
        return ret.value()

    def custom_call(self, node, fobj, args):
        """A call to a ``custom_vjp`` function: kept as a call; its vjp gives the gradient."""
        from .lower import lower
        if fobj.vjp is None:
            self.unsupported(node, f"calling custom_vjp function {fobj.__name__} before its vjp is defined",
                             f"decorate its derivative with @{fobj.__name__}.defvjp")
        for a, arg in zip(args, node.args):
            if isinstance(a, Tree):
                self.unsupported(arg, f"passing {a.words()} to the custom_vjp function {fobj.__name__}",
                                 "pass its numbers and arrays one by one")
        inner = lower(fobj.fun, [self.value(arg, a).type for a, arg in zip(args, node.args)])
        result_types = inner.result_types
        self.b.loc = self.loc(node)
        out = self.b.emit("call_custom", args, {"fn": fobj, "result_types": result_types},
                          result_types=result_types)
        outs = out if isinstance(out, list) else [out]
        return inner.result_tree.refill(iter(outs)) if inner.result_tree is not None else outs[0]

    def compiled_call(self, node, obj, env):
        """A call of a function srcgrad compiled (``jit``, ``grad``, ``hessian``...): its IR for
        these argument types compiled in place (and so differentiated, when the caller is),
        not a call out of the compiled code."""
        from ..ir.inline import inline
        args = [self.expr_any(a, env) for a in node.args]
        keywords = {k.arg: self.expr_any(k.value, env) for k in node.keywords}
        values = self.bind_call(node, obj.__name__, obj._sig, args, keywords)
        for n in values:
            if values[n] is _DEFAULT:
                values[n] = self.constant(obj._sig.parameters[n].default, node)
        leaves = []
        for n, v in values.items():
            if isinstance(v, Tree):
                self.unsupported(node, f"passing {v.words()} ('{n}') to the compiled function {obj.__name__}",
                                 "pass its numbers and arrays one by one, or call the plain function")
            leaves.append(self.value(node, v))
        try:
            fn = obj.as_primal([v.type for v in leaves])
        except TypeError as e:
            self.unsupported(node, f"calling {obj!r} here: {e}")
        with Builder(self.b.block, self.loc(node)):
            outs = inline(fn, leaves)
        return fn.result_tree.refill(iter(outs)) if fn.result_tree is not None else outs[0]

    def call_value(self, node, target, env):
        """A call of a local name bound to a function (nested, or a module-level one passed in)."""
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                t = self.expr_any(a.value, env)
                if not isinstance(t, Tree) or t.kind is dict:
                    self.unsupported(a, "`*` of something other than a tuple or list")
                args += list(t.items)
            else:
                args.append(self.expr_any(a, env))
        keywords = {}
        for k in node.keywords:
            if k.arg is None:
                d = self.expr_any(k.value, env)
                if not isinstance(d, Tree) or d.kind is not dict:
                    self.unsupported(k, "`**` of something other than a dict")
                keywords.update(zip(d.keys, d.items))
            else:
                keywords[k.arg] = self.expr_any(k.value, env)
        if isinstance(target, NestedFunction):
            return self.call_nested(node, target, args, keywords)
        return None


class _Default:
    def __repr__(self):
        return "DEFAULT"


_DEFAULT = _Default()


def _is_python_default(d):
    """Whether a parameter default is a Python object (a module-level function's), not a lowered value."""
    return not (hasattr(d, "type") or isinstance(d, (Tree, NestedFunction, FunctionRef, DType)))


def is_plain_function(fobj):
    return inspect.isfunction(fobj) and not isinstance(fobj, custom_vjp)
