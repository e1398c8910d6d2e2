"""The four pieces of Python syntax every expression and statement rule of the python backend
builds with: a name read, a name written, a call, an attribute. The rule modules (exprs.py,
the families' ``*_exprs.py``, indexing.py, undo.py, emit.py) import them from here.

Example:
    >>> import ast
    >>> ast.unparse(ast_call(ast_attr("np", "sum"), [ast_name("x")]))
    'np.sum(x)'
"""
import ast


def ast_name(n):
    return ast.Name(id=n, ctx=ast.Load())


def ast_store(n):
    return ast.Name(id=n, ctx=ast.Store())


def ast_call(fn, args, keywords=()):
    return ast.Call(func=fn, args=list(args), keywords=list(keywords))


def ast_attr(value, name):
    """``value.name``; ``value`` a node or the name of a variable or module."""
    if isinstance(value, str):
        value = ast_name(value)
    return ast.Attribute(value=value, attr=name, ctx=ast.Load())


def np_call(fname):
    """The rule ``np.<fname>(...)``: numpy's functions propagate NaN and infinities as numpy does."""
    return lambda em, op, ins: ast_call(ast_attr("np", fname), ins)


__all__ = ["ast_attr", "ast_call", "ast_name", "ast_store", "np_call"]
