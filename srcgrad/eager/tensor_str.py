"""``repr`` of tensors exactly as PyTorch prints them: one formatter per tensor decides between
integer, fixed (4 digits) and scientific notation; columns are right-aligned to the widest
value; long tensors are summarised with ``...``; suffixes such as ``grad_fn=<MulBackward0>``.

Example:
    >>> import srcgrad as torch
    >>> torch.tensor([1e-5, 1.0])
    tensor([1.0000e-05, 1.0000e+00])
"""
import math

import numpy as np

from . import dtypes


class PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


OPTS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """PyTorch's ``set_printoptions``: digits, summarisation threshold, line width, sci_mode."""
    if profile == "default":
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


class _Formatter:
    """Decides one format for all values of a tensor (from the summarised values)."""

    def __init__(self, values, is_float):
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = OPTS.precision
        if not is_float:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        absv = np.abs(finite).astype(np.float64)
        vmin, vmax = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = OPTS.sci_mode
        vals = finite.tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in vals)

    def format(self, v):
        p = OPTS.precision
        if self.is_float:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return " " * (self.max_width - len(s)) + s


def _summarized(a):
    """The values the formatter looks at: only the edges of a summarised tensor."""
    e = OPTS.edgeitems
    if a.ndim == 0:
        return a.reshape(-1)
    if a.shape[0] > 2 * e:
        parts = [a[:e], a[-e:]] if e else []
        a = np.concatenate(parts) if parts else a[:0]
    if a.ndim == 1:
        return a
    return np.concatenate([_summarized(row) for row in a]) if len(a) else a.reshape(-1)


def _vector_str(a, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((OPTS.linewidth - indent) / element_length))
    e = OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = [_array_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + \
               [_array_str(a[i], indent + 1, summarize, fmt) for i in range(len(a) - e, len(a))]
    else:
        rows = [_array_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def array_str(a, indent):
    """The bracketed values of array ``a`` as PyTorch prints them, lines indented by ``indent``."""
    if a.size == 0:
        return "[]"
    summarize = a.size > OPTS.threshold
    is_float = a.dtype.kind == "f"
    fmt = _Formatter(_summarized(a) if summarize else a.reshape(-1), is_float)
    return _array_str(a, indent, summarize, fmt)


def _add_suffixes(s, suffixes, indent):
    out = [s]
    last_line_len = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, prefix="tensor("):
    """The full ``repr`` of a Tensor."""
    a = t._data
    d = t.dtype
    indent = len(prefix)
    suffixes = []
    default = dtypes.get_default_dtype()
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if d is not default:
            suffixes.append("dtype=" + repr(d))
        body = "[]"
    else:
        if d not in (default, dtypes.int64, dtypes.bool_):
            suffixes.append("dtype=" + repr(d))
        body = array_str(a, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
