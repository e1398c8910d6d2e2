"""``vectorize``: a function of numbers mapped elementwise over array arguments, with numpy's
broadcasting, as one IR function: nested ``for`` loops over the broadcast shape around the
scalar function compiled in place (``ir/inline.py``), each result stored into its own array.

Broadcasting is by index: along an axis where an argument has length 1 its index stays 0
(``i * (n != 1)``), so no argument is copied or expanded. Arguments of lower rank line up with
the last axes, as in numpy. Numbers (not arrays) are passed to every call as they are.

Example:
    fn = vectorize_function(scalar_ir, [ArrayType(F64, 1), F64])   # (x[n], y) -> out[n]
"""
from ..errors import TypingError
from .core import Block, Builder, Function, Value, for_op, if_op
from .inline import inline
from .types import BOOL, F32, F64, I64, ArrayType


def element_type(t):
    """The type of one element of an argument of type ``t`` (a number stays itself)."""
    if isinstance(t, ArrayType):
        return F64 if t.dtype is F32 else t.dtype
    return t


def output_dtype(result, types, scalar=None):
    """The dtype of the array holding a result of type ``result``: float64, or float32 where
    every array argument is float32 (float32 in, float32 out); ints and bools as they are.
    ``scalar`` (the function, for the error) returns it."""
    if result is F64:
        arrays = [t for t in types if isinstance(t, ArrayType)]
        return F32 if arrays and all(t.dtype is F32 for t in arrays) else F64
    if result in (I64, BOOL):
        return result
    ret = scalar.body.terminator if scalar is not None else None
    raise TypingError(f"vectorize maps a function of numbers returning numbers; {scalar.name if scalar else 'it'} "
                      f"returns {result} here, for elements of types "
                      f"{', '.join(str(element_type(t)) for t in types)}", ret.loc if ret is not None else None)


def vectorize_function(scalar, types, name, into=False):
    """(args of ``types``) -> one array per result of ``scalar`` (an IR function of numbers),
    of the arguments' broadcast shape; with no array argument, the results themselves.
    ``into``: the arrays come as parameters after the arguments instead (of the broadcast
    shape, which the caller checked), the function fills them and returns 0: a part of a
    long call, run on one thread of several (srcgrad/threads.py)."""
    params = [(p.name, t) for p, t in zip(scalar.params, types)]
    rank = max((t.ndim for t in types if isinstance(t, ArrayType)), default=0)
    if into:
        if rank == 0:
            raise ValueError("vectorize_function(into=True) needs an array argument")
        params += [(f"out{k}", ArrayType(output_dtype(t, types, scalar), rank))
                   for k, t in enumerate(scalar.result_types)]
    fn = Function(scalar.name + ("_vectorized_into" if into else "_vectorized"), params, scalar.loc)
    fn.result_tree = None if into else scalar.result_tree   # one array per result, in their container
    arrays = [p for p in fn.params[:len(types)] if p.type.is_array]
    with Builder(fn.body, scalar.loc) as b:
        if rank == 0:
            b.ret(inline(scalar, list(fn.params)))
            return fn
        lengths = [_length(b, arrays, rank, a, name) for a in range(rank)]
        steps = {x: [_step(b, x, rank, a) for a in range(rank)] for x in arrays}
        if into:
            outs = fn.params[len(types):]
        else:
            outs = [b.emit("full", lengths, {"value": 0, "dtype": output_dtype(t, types, scalar)}, name="out")
                    for t in scalar.result_types]
        # where no argument is broadcast (the common case) the loops index every array with the
        # loop variables themselves: the bounds checks go before the loop and LLVM vectorises it
        whole = None
        for x in arrays:
            for step in steps[x]:
                if step is not None:
                    one = b.emit("eq", [step, b.const(1)])
                    whole = one if whole is None else b.emit("and", [whole, one])
        regions = []
        for by_step in (False, True):
            blk = Block([])
            with Builder(blk, b.loc) as bb:
                bb.yield_(_loops(bb, scalar, fn.params[:len(types)], steps if by_step else None, lengths, outs, 0, []))
            regions.append(blk)
        filled = b.append(if_op(whole, regions[0], regions[1], [o.type for o in outs], b.loc, ["out"] * len(outs)))
        b.ret([b.const(0)] if into else filled)
    return fn


def _axis(x, rank, a):
    """The axis of array ``x`` that lines up with axis ``a`` of the broadcast shape, or None."""
    k = a - (rank - x.type.ndim)
    return k if k >= 0 else None


def _length(b, arrays, rank, a, name):
    """The broadcast length along axis ``a``: the arguments' lengths there must be 1 or equal."""
    dims = [(x, b.emit("shape", [x], {"axis": _axis(x, rank, a)}, name="n"))
            for x in arrays if _axis(x, rank, a) is not None]
    n = dims[0][1]
    for _, d in dims[1:]:
        n = b.emit("select", [b.emit("eq", [n, b.const(1)]), d, n], name="n")
    for x, d in dims if len(dims) > 1 else ():
        fits = b.emit("or", [b.emit("eq", [d, n]), b.emit("eq", [d, b.const(1)])])
        b.emit("assert", [fits], {"message": f"vectorize({name}): argument '{x.name}' cannot be broadcast with "
                                             f"the others (axis {_axis(x, rank, a)} is neither 1 nor their length)"})
    return n


def _step(b, x, rank, a):
    """1 where x's index follows the loop over axis ``a``, 0 where x has length 1 there (None:
    x has no such axis)."""
    k = _axis(x, rank, a)
    if k is None:
        return None
    return b.emit("to_i64", [b.emit("ne", [b.emit("shape", [x], {"axis": k}), b.const(1)])], name="step")


def _loops(b, scalar, params, steps, lengths, outs, a, index):
    """The loop over axis ``a`` (and, inside it, the deeper axes), carrying the output arrays;
    ``index`` holds the loop variables of the axes outside it. Returns the arrays it yields."""
    rank = len(lengths)
    body = Block([Value(I64, "i" if rank == 1 else f"i{a}")] + [Value(o.type, o.name) for o in outs])
    with Builder(body, b.loc) as bb:
        index = index + [body.args[0]]
        carried = list(body.args[1:])
        if a + 1 < rank:
            bb.yield_(_loops(bb, scalar, params, steps, lengths, carried, a + 1, index))
        else:
            elements = [_element(bb, p, steps[p] if steps else None, index) if p.type.is_array else p
                        for p in params]
            results = inline(scalar, elements)
            bb.yield_([bb.emit("setitem", [o, r] + index, name=o.name) for o, r in zip(carried, results)])
    loop = for_op(b.const(0), lengths[a], b.const(1), outs, body, [o.type for o in outs], b.loc,
                  [o.name for o in outs])
    return b.append(loop)


def _element(b, x, steps, index):
    """x's element at the broadcast position ``index`` (index 0 along its axes of length 1);
    ``steps`` None: x has the broadcast shape."""
    if steps is None:
        return b.emit("index", [x] + index[len(index) - x.type.ndim:], name=x.name)
    idx = [b.emit("mul", [i, step]) for i, step in zip(index, steps) if step is not None]
    return b.emit("index", [x] + idx, name=x.name)


__all__ = ["vectorize_function", "element_type", "output_dtype"]
