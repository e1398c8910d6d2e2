"""AST -> AST, before lowering: the loop exits the IR has no op for become plain Python that
lowers to structured loops. The output is Python a person can print (``astor.to_source``) and
run; it computes what the input does.

- ``return`` inside a loop stores its values in made-up slots (``retval0 = None`` before the
  loop: the lowering types a slot by what is stored in it), sets ``returned0`` and breaks
  out; after the loop, ``if returned0: return retval0``.
- ``break`` sets a flag and ends the iteration (``broken0 = True; continue``), and the loop's
  test reads ``not broken0 and ...``, so no iteration starts with the flag set (the test of
  every ``while`` nested in it reads the flag too: it is False there).
- ``for row in x`` (not over ``range``) is ``for index0 in range(len(iter0)): row = iter0[index0]``
  with ``iter0 = x`` before the loop.
- ``for i in range(...)`` with ``break`` runs as a ``while`` over the trip count (the IR's ``for``
  runs every trip: a flag would only skip bodies, and ``for i in range(2**62): ... break``
  must stop): ``range0 = range(...)``, ``k0 = 0``, ``while k0 < len(range0): i = range0[k0]; k0 = k0 + 1``.

Loops the lowering refuses (``for ... else``, a loop variable that is not a name, a ``return``
without a value) are left as they are, for the lowering to refuse in source order.

Example:
    >>> import ast, astor
    >>> tree = desugar(ast.parse('''
    ... def first_big(x):
    ...     for i in range(10):
    ...         if x * i > 3.0:
    ...             return i
    ...     return -1'''))
    >>> print(astor.to_source(tree))        # doctest: +NORMALIZE_WHITESPACE
    def first_big(x):
        retval0 = None
        returned0 = False
        range0 = range(10)
        k0 = 0
        broken0 = False
        while not broken0 and k0 < len(range0):
            i = range0[k0]
            k0 = k0 + 1
            if x * i > 3.0:
                retval0 = i
                returned0 = True
                broken0 = True
                continue
        if returned0:
            return retval0
        return -1
    <BLANKLINE>
"""
import ast

from ..errors import UnsupportedSyntaxError
from .names import FreshNames


def desugar(tree, names=None, is_range=None):
    """Rewrite each function of ``tree`` (a ``def`` or a module) in place; returns ``tree``.
    ``names`` makes up the new names (a ``FreshNames`` of the function); ``is_range(name_node)``
    says whether a call ``name(...)`` calls the builtin ``range`` (default: by its spelling)."""
    fdefs = [tree] if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
        [n for n in getattr(tree, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fdef in fdefs:
        rewrite = _Desugarer(names if names is not None else FreshNames(fdef),
                             is_range or (lambda name: name.id == "range"))
        fdef.body = rewrite.block(fdef.body, None)
    return tree


def break_guard(test, names):
    """``(flag, test)`` of a ``while`` test guarded by a break flag (``not broken0 and test``);
    ``(None, test)`` for any other."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2:
        first = test.values[0]
        if isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.Not) and \
                isinstance(first.operand, ast.Name) and names.kind(first.operand.id) == "broken":
            return first.operand, test.values[1]
    return None, test


def check_returns(loop):
    """Raise the error of the first malformed ``return`` in ``loop`` (no value; not as many values
    as the first), in the order the rewrite meets them; nothing when all are well formed."""
    n = _return_arity(loop.body)

    def visit(stmts):
        for s in stmts:
            if isinstance(s, ast.Return):
                if s.value is None:
                    raise UnsupportedSyntaxError("srcgrad does not support `return` without a value")
                if len(_values(s)) != n:
                    raise UnsupportedSyntaxError("srcgrad needs every `return` to give the same number of values")
            elif isinstance(s, ast.If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, (ast.For, ast.While)) and _contains_return(s.body):
                visit(s.body)
    visit(loop.body)


class _Desugarer:
    def __init__(self, names, is_range):
        self.names, self.is_range = names, is_range

    def block(self, stmts, flag):
        """``stmts`` rewritten; ``flag`` is the break flag of the nearest loop that has one."""
        out = []
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)) and _contains_return(s.body) and _well_formed(s):
                *inits, loop, after = self.with_return_flag(s)
                out += inits + self.loop(loop, flag) + [after]
            elif isinstance(s, (ast.For, ast.While)):
                out += self.loop(s, flag)
            elif isinstance(s, ast.If):
                s.body, s.orelse = self.block(s.body, flag), self.block(s.orelse, flag)
                out.append(s)
            else:
                out.append(s)
        return out

    def loop(self, s, flag):
        if s.orelse:
            return [s]
        if isinstance(s, ast.While):
            return self.while_loop(s, flag)
        if not (isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) and self.is_range(s.iter.func)):
            return self.for_over_array(s, flag)
        if not isinstance(s.target, ast.Name):
            return [s]
        if _has_break(s.body):
            return self.for_as_while(s, flag)
        s.body = self.block(s.body, flag)
        return [s]

    def with_return_flag(self, loop):
        """A loop containing `return`: the return stores its values and breaks out; after the
        loop, `if returned0: return retval0`. Statements after the loop then fold into the `else`."""
        values = [self.names("retval") for _ in range(_return_arity(loop.body))]
        returned = self.names("returned")
        inits = [_at(ast.Assign(targets=[_name(v, True)], value=ast.Constant(None)), loop) for v in values]
        inits.append(_at(ast.Assign(targets=[_name(returned, True)], value=ast.Constant(False)), loop))
        body = _replace_returns(loop.body, returned, values)
        new = ast.For(target=loop.target, iter=loop.iter, body=body, orelse=loop.orelse) \
            if isinstance(loop, ast.For) else ast.While(test=loop.test, body=body, orelse=loop.orelse)
        loads = [_name(v) for v in values]
        ret = ast.Return(value=loads[0] if len(values) == 1 else ast.Tuple(elts=loads, ctx=ast.Load()))
        after = _at(ast.If(test=_name(returned), body=[ret], orelse=[]), loop)
        return inits + [ast.copy_location(new, loop), after]

    def for_over_array(self, s, flag):
        """``for row in x``: a loop over the first axis, as ``for i in range(len(x)): row = x[i]``."""
        seq, i = self.names("iter"), self.names("index")
        bind = _at_shallow(ast.Assign(targets=[_name(seq, True)], value=s.iter), s)
        count = ast.Call(func=_name("len"), args=[_name(seq)], keywords=[])
        first = ast.Assign(targets=[s.target], value=ast.Subscript(value=_name(seq), slice=_name(i), ctx=ast.Load()))
        loop = ast.For(target=_name(i, True), iter=ast.Call(func=_name("range"), args=[count], keywords=[]),
                       body=[_at(first, s)] + s.body, orelse=s.orelse)
        return [bind] + self.loop(_at_shallow(loop, s), flag)

    def for_as_while(self, s, flag):
        """A `for` over a range with `break` as a `while` over its trip count."""
        rng, k = self.names("range"), self.names("k")
        header = [_at_shallow(ast.Assign(targets=[_name(rng, True)], value=s.iter), s),
                  _at(ast.Assign(targets=[_name(k, True)], value=ast.Constant(0)), s)]
        body = [ast.Assign(targets=[_name(s.target.id, True)],
                           value=ast.Subscript(value=_name(rng), slice=_name(k), ctx=ast.Load())),
                ast.Assign(targets=[_name(k, True)], value=ast.BinOp(left=_name(k), op=ast.Add(),
                                                                     right=ast.Constant(1)))]
        count = ast.Call(func=_name("len"), args=[_name(rng)], keywords=[])
        loop = _at(ast.While(test=ast.Compare(left=_name(k), ops=[ast.Lt()], comparators=[count]), body=body,
                             orelse=[]), s)      # the made-up parts point at the `for`; the body keeps its lines
        loop.body += s.body
        return header + self.while_loop(loop, flag)

    def while_loop(self, s, flag):
        """With `break`: a flag of its own (set, then the iteration ends; the test reads it)."""
        inits = []
        if _has_break(s.body):
            flag = self.names("broken")
            inits = [_at(ast.Assign(targets=[_name(flag, True)], value=ast.Constant(False)), s)]
            s.body = _replace_breaks(s.body, flag)
        if flag is not None:
            s.test = ast.BoolOp(op=ast.And(), values=[_at(ast.UnaryOp(op=ast.Not(), operand=_name(flag)), s), s.test])
            ast.copy_location(s.test, s)
        s.body = self.block(s.body, flag)
        return inits + [s]


def _well_formed(loop):
    try:
        check_returns(loop)
    except UnsupportedSyntaxError:
        return False
    return True


def _contains_return(stmts):
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _return_arity(stmts):
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Return):
                return len(n.value.elts) if isinstance(n.value, ast.Tuple) else 1
    return 1


def _values(ret):
    return ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]


def _has_break(stmts):
    """A `break` that belongs to this loop (not to a loop nested in it)."""
    for s in stmts:
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, ast.If) and (_has_break(s.body) or _has_break(s.orelse)):
            return True
    return False


def _replace_returns(stmts, returned, values):
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            out += [_at(ast.Assign(targets=[_name(v, True)], value=e), s) for v, e in zip(values, _values(s))]
            out += [_at(ast.Assign(targets=[_name(returned, True)], value=ast.Constant(True)), s), _at(ast.Break(), s)]
        elif isinstance(s, ast.If):
            out.append(ast.copy_location(ast.If(test=s.test, body=_replace_returns(s.body, returned, values),
                                                orelse=_replace_returns(s.orelse, returned, values)), s))
        elif isinstance(s, (ast.For, ast.While)) and _contains_return(s.body):
            body = _replace_returns(s.body, returned, values)
            loop = ast.For(target=s.target, iter=s.iter, body=body, orelse=s.orelse) if isinstance(s, ast.For) \
                else ast.While(test=s.test, body=body, orelse=s.orelse)
            out.append(ast.copy_location(loop, s))
            out.append(_at(ast.If(test=_name(returned), body=[ast.Break()], orelse=[]), s))
        else:
            out.append(s)
    return out


def _replace_breaks(stmts, flag):
    out = []
    for s in stmts:
        if isinstance(s, ast.Break):
            out += [_at(ast.Assign(targets=[_name(flag, True)], value=ast.Constant(True)), s), _at(ast.Continue(), s)]
        elif isinstance(s, ast.If):
            out.append(ast.copy_location(ast.If(test=s.test, body=_replace_breaks(s.body, flag),
                                                orelse=_replace_breaks(s.orelse, flag)), s))
        else:
            out.append(s)
    return out


def _at(node, like):
    """``node`` and all its parts at ``like``'s location (for made-up statements)."""
    for n in ast.walk(node):
        ast.copy_location(n, like)
    return node


def _at_shallow(node, like):
    """Give ``node`` and its new parts ``like``'s location, keeping the user's nodes' own."""
    for n in ast.walk(node):
        if not hasattr(n, "lineno"):
            ast.copy_location(n, like)
    return ast.copy_location(node, like)


def _name(id, store=False):
    return ast.Name(id=id, ctx=ast.Store() if store else ast.Load())
