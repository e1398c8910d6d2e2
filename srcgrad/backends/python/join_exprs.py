"""The python backend's expressions (``EXPR``, see exprs.py) of joining, splitting and
building arrays: numpy's own functions, so values and error messages are numpy's; what numpy
lacks is in srcgrad/runtime.py, called by its name there.

Example:
    JOIN_EXPR["concat"](em, op, [a, b])       # np.concatenate((a, b), axis=0)
"""
import ast

from .syntax import ast_attr, ast_call, ast_name


def _np(fname, ins, **keywords):
    return ast_call(ast_attr("np", fname), ins,
                    [ast.keyword(arg=k, value=ast.Constant(v)) for k, v in keywords.items()])


def _concat(em, op, ins):
    fn, axis = op.attrs.get("fn", "concatenate"), op.attrs["axis"]
    arrays = ast.Tuple(elts=list(ins), ctx=ast.Load())
    if fn in ("concatenate", "stack"):
        return _np(fn, [arrays], axis=axis)
    return _np(fn, [arrays])            # hstack, vstack, column_stack: their axis is their own


def _roll(em, op, ins):
    axis = op.attrs.get("axis")
    return _np("roll", ins) if axis is None else _np("roll", ins, axis=axis)


def _linspace(em, op, ins):
    return _np("linspace", ins) if op.attrs["endpoint"] else _np("linspace", ins, endpoint=False)


def _runtime(fname):
    return lambda em, op, ins: ast_call(ast_name(fname), ins)


def _tile(em, op, ins):
    return _np("tile", [ins[0], ast.Tuple(elts=list(ins[1:]), ctx=ast.Load())])


def _repeat(em, op, ins):
    axis = op.attrs.get("axis")
    return _np("repeat", ins) if axis is None else _np("repeat", ins, axis=axis)


def _summed_back(fname):
    return lambda em, op, ins: ast_call(ast_name(fname), ins + [ast.Constant(op.attrs.get("axis"))]
                                     if fname != "tile_sum" else ins)


JOIN_EXPR = {
    "concat": _concat,
    "split_size": lambda em, op, ins: ast_call(ast_name("split_size"),
                                               ins + [ast.Constant(op.attrs["sections"])]),
    "diagonal": lambda em, op, ins: ast_call(ast_attr(_np("diagonal", ins), "copy"), []),
    "diag_embed": _runtime("diag_embed"),
    "tri": lambda em, op, ins: _np("tri", ins, dtype="bool"),
    "linspace": _linspace,
    "roll": _roll,
    "tile": _tile,
    "tile_sum": _summed_back("tile_sum"),
    "repeat": _repeat,
    "repeat_sum": _summed_back("repeat_sum"),
    "kron": lambda em, op, ins: _np("kron", ins),
    "kron_grad": lambda em, op, ins: ast_call(ast_name("kron_grad"), ins + [ast.Constant(op.attrs["wrt"])]),
    "repeat_each": _repeat,
    "repeat_each_sum": _summed_back("repeat_each_sum"),
}
