"""Run notebook cells against a torch-like module and record what a notebook would show.

``replay(cells, module)`` executes each cell with ``import torch`` resolving to ``module``
(srcgrad or the real torch), and returns per cell: stdout, the repr of a trailing
expression, an exception's type and message, and warnings. Random numbers come from one
seeded numpy generator for both modules, so the two runs see the same values. Object
addresses are masked. ``same_output(ours, theirs)`` compares two such records: the text
exactly, the printed decimal numbers to within float32 rounding (see there).
"""
import ast
import builtins
import contextlib
import io
import re
import warnings

import numpy as np

_ADDR = re.compile(r"0x[0-9a-fA-F]+")
# a number standing on its own (not the digits of a name such as fc1 or MulBackward0)
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _random_fns(module, seed):
    rng = np.random.default_rng(seed)

    def make(sample):
        def fn(*size, requires_grad=False, dtype=None, **kwargs):
            if len(size) == 1 and isinstance(size[0], (tuple, list)):
                size = tuple(size[0])
            vals = sample(size).astype(np.float32)
            return module.tensor(vals, dtype=dtype or module.float32, requires_grad=requires_grad)
        return fn

    return {"randn": make(rng.standard_normal), "rand": make(rng.random)}


def _importer(module):
    real_import = builtins.__import__

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "torch" or name.startswith("torch."):
            target = module.__name__ + name[len("torch"):]
            mod = real_import(target, globals, locals, fromlist, level)
            if not fromlist:
                return module
            return mod
        return real_import(name, globals, locals, fromlist, level)

    return imp


def replay(cells, module, seed=0):
    """Outputs of ``cells`` run in order against ``module`` (see the module docstring)."""
    bi = dict(vars(builtins))
    bi["__import__"] = _importer(module)
    ns = {"__builtins__": bi, "__name__": "__main__"}
    saved = {k: getattr(module, k) for k in ("randn", "rand")}
    for k, fn in _random_fns(module, seed).items():
        setattr(module, k, fn)
    outputs = []
    try:
        for cell in cells:
            outputs.append(_run_cell(cell, ns))
    finally:
        for k, v in saved.items():
            setattr(module, k, v)
    return outputs


def _run_cell(cell, ns):
    tree = ast.parse(cell)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    result = {"stdout": "", "value": None, "error": None, "warnings": []}
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                v = eval(compile(last, "<cell>", "eval"), ns)
                if v is not None:
                    result["value"] = repr(v)
        except Exception as e:  # the notebook shows the error; so do we
            result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    result["stdout"] = _ADDR.sub("0x…", out.getvalue())
    if result["value"]:
        result["value"] = _ADDR.sub("0x…", result["value"])
    result["warnings"] = [f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught
                          if not issubclass(w.category, DeprecationWarning)]
    return result


def same_output(ours, theirs, rtol=1e-4):
    """Whether two records of ``_run_cell`` show the same thing: the text (names, grad_fns,
    shapes, integers, messages) exactly, and each printed decimal number to within one unit of
    its last printed digit plus ``rtol``. The printed values are float32 results of sums,
    matrix products, convolutions and training loops, whose rounding follows the CPU kernel
    (the summation order follows the vector width and the BLAS's blocking, issue 27): the blitz
    tutorial's network output differs from PyTorch's by up to 7e-7 (3e-5 of a small value), so
    a value printed to 4 digits can flip in its last digit from one machine to the next."""
    if ours.keys() != theirs.keys():
        return False
    for key in ours:
        a, b = ours[key], theirs[key]
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b) or not all(_same_text(x, y, rtol) for x, y in zip(a, b)):
                return False
        elif isinstance(a, str) and isinstance(b, str):
            if not _same_text(a, b, rtol):
                return False
        elif a != b:
            return False
    return True


def _same_text(a, b, rtol):
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    # (spaces next to a number aside: one digit more pads the other columns of a tensor's repr)
    ta, tb = ([re.sub(" +", " ", t).strip(" ") for t in _NUMBER.split(s)] for s in (a, b))
    return ta == tb and len(na) == len(nb) and all(_same_number(x, y, rtol) for x, y in zip(na, nb))


def _same_number(x, y, rtol):
    is_float = [any(c in s for c in ".eE") for s in (x, y)]
    if is_float != [True, True]:
        return x == y                     # integers: counts, sizes, indices, labels
    u, v = float(x), float(y)
    return abs(u - v) <= min(_last_digit(x), _last_digit(y)) + rtol * max(abs(u), abs(v))


def _last_digit(s):
    """The value of one unit in the last printed digit of ``s`` (0 for a number printed
    without decimals, as ``1.`` for an integral float: it is exact)."""
    mantissa, _, exponent = s.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals) if decimals else 0.0
