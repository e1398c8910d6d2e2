"""The python backend's expressions of the shape primitives: numpy's own calls, so that views
and copies, values and errors are numpy's.

Example:
    SHAPE_EXPR["restride"](em, op, [_name("x")])      # np.transpose(x, (1, 0))
"""
import ast

from ...ir.types import BOOL, F32, F64, I64

_NP_NAMES = {F64: "float64", F32: "float32", I64: "int64", BOOL: "bool_"}


def _np(name):
    return ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name, ctx=ast.Load())


def _call(func, args, keywords=()):
    return ast.Call(func=func, args=list(args), keywords=list(keywords))


def _tuple(items):
    return ast.Tuple(elts=list(items), ctx=ast.Load())


def _ints(values):
    return _tuple(ast.Constant(int(k)) for k in values)


def _dtype(t):
    return ast.keyword(arg="dtype", value=_np(_NP_NAMES[t]))


def _reshape(em, op, ins):
    return _call(_np("reshape"), [ins[0], _tuple(ins[1:])])


_RESTRIDE = {"permute": "transpose", "flip": "flip", "squeeze": "squeeze", "expand": "expand_dims"}


def _restride(em, op, ins):
    return _call(_np(_RESTRIDE[op.attrs["kind"]]), [ins[0], _ints(op.attrs["axes"])])


def _astype(em, op, ins):
    return _call(ast.Attribute(value=ins[0], attr="astype", ctx=ast.Load()), [_np(_NP_NAMES[op.attrs["dtype"]])])


def _pack(em, op, ins):
    shape = op.attrs["shape"]
    items = ast.List(elts=list(ins), ctx=ast.Load())
    if len(shape) == 2:
        rows = [ins[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]
        items = ast.List(elts=[ast.List(elts=list(r), ctx=ast.Load()) for r in rows], ctx=ast.Load())
        if shape[0] == 0 or shape[1] == 0:
            return _call(_np("zeros"), [_ints(shape)], [_dtype(op.attrs["dtype"])])
    return _call(_np("array"), [items], [_dtype(op.attrs["dtype"])])


def _stack(em, op, ins):
    return _call(_np("array"), [ast.List(elts=list(ins), ctx=ast.Load())], [_dtype(op.attrs["dtype"])])


SHAPE_EXPR = {"reshape": _reshape, "restride": _restride, "astype": _astype, "pack": _pack, "stack": _stack}
