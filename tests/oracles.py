"""Comparing with a reference library (torch, jax, autograd) where the reference's own result
depends on the machine it runs on (issue 27; the policy is written in docs/eager.md).

PyTorch's CPU kernels are picked per machine (vectorised with AVX2 or AVX-512, Sleef's math or
a scalar loop, float32 sums in blocks of the vector width), and they disagree with each other
exactly where the mathematics leaves the floating-point format: at non-finite inputs and
results, at subnormal numbers, and in the rounding of float32 reductions. ``float32``
``gelu(inf)`` is ``inf`` on one x86-64 machine and ``nan`` on the next. srcgrad gives the
mathematically right value there (or numpy's), and a test accepts the reference's value *or*
the right one, never one machine's bits; everywhere else it compares to a tolerance.

Example:
    >>> import numpy as np
    >>> assert_matches_reference(np.array([2.0, np.inf], np.float32),     # srcgrad's
    ...                          np.array([2.0, np.nan], np.float32),     # this machine's torch
    ...                          right=np.array([2.0, np.inf]))           # numpy's, in float64
"""
import numpy as np


def unsettled(*values):
    """Where any of ``values`` is not finite or is subnormal: the places where a reference's
    result depends on its CPU kernel."""
    out = np.zeros(np.shape(values[0]), dtype=bool)
    for v in values:
        v = np.asarray(v)
        if v.dtype.kind == "f":
            tiny = np.finfo(v.dtype).tiny
            out |= ~np.isfinite(v) | ((v != 0) & (np.abs(v) < tiny))
    return out


def assert_matches_reference(ours, theirs, right, rtol=1e-6, atol=0.0):
    """``ours`` is close to the reference's ``theirs`` where the result is settled (finite and
    normal in all three); where it is not, ``ours`` is the ``right`` value (computed
    independently, numpy's or the limit's, in float64) or the reference's, as the kernel the
    reference ran happens to give."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    right = np.asarray(right, dtype=np.float64)
    assert ours.shape == theirs.shape == right.shape, (ours.shape, theirs.shape, right.shape)
    open_ = unsettled(ours, theirs, right.astype(ours.dtype) if ours.dtype.kind == "f" else right)
    np.testing.assert_allclose(ours[~open_], theirs[~open_], rtol=rtol, atol=atol)
    if open_.any():
        mine = ours[open_].astype(np.float64)
        step = 2 * np.finfo(ours.dtype if ours.dtype.kind == "f" else np.float64).tiny
        ok = _same(mine, right[open_].astype(ours.dtype).astype(np.float64), step) | _same(mine, theirs[open_], step)
        assert ok.all(), (f"at {np.argwhere(open_)[~ok].tolist()}: ours {mine[~ok]}, the reference's "
                          f"{theirs[open_][~ok]}, the right value {right[open_][~ok]}")


def _same(a, b, step):
    """Equal, nan to nan, or within ``step`` (the subnormal range of the dtype) of each other."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(invalid="ignore"):
        return (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= step)
