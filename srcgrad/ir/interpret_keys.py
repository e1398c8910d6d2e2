"""The numpy keys of the IR's element and slice accesses, as the interpreter computes them.

Example:
    >>> index_key([1, True])        # a bool index is an int (numpy would read True as a new axis)
    (1, 1)
"""


def index_key(ins):
    # a bool index is an int (numpy would read True as a new axis)
    return tuple(int(i) for i in ins)


def slice_key(op, bounds):
    """The key of a slice op (or a write or save with its ``spec``) from its bound operands."""
    it = iter(bounds)
    key = []
    for s in op.attrs["spec"]:
        if s[0] == "i":
            key.append(int(next(it)))
        elif s[0] == "n":
            key.append(None)
        else:
            lo, hi, st = (int(next(it)) if has else None for has in s[1:])
            key.append(slice(lo, hi, st))
    return tuple(key)
