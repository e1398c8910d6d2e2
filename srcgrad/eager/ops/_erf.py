"""erf on numpy arrays, for ``Tensor.erf`` (pointwise.py) and exact GELU (norm.py).

numpy has no erf, and math.erf element by element is slow on large arrays; a polynomial does it
in a few dozen array operations. For |x| <= 2.5, erf(x) = x * P(x²); beyond, erf(x) = 1 - exp(-x²) Q(|x|)
with Q(x) = erfc(x) exp(x²) slowly varying (and erf = ±1 to double precision past 6). P and Q
interpolate math.erf at Chebyshev points, computed here at import, of a degree per dtype
enough for its precision (about 1e-14 relative error for float64, 5e-7 for float32).

Example:
    >>> import numpy as np
    >>> erf(np.array([0.0, 1.0]))
    array([0.        , 0.84270079])
"""
import math

import numpy as np

_ERF_SPLIT, _ERF_TOP = 2.5, 6.0

# below this many elements math.erf in a list comprehension is faster than the polynomial, whose
# few dozen numpy calls cost about 25-50 us whatever the size (measured crossover: 500-700)
_SMALL = 512


def _fit(f, degree, lo, hi):
    """Power-series coefficients (highest first) in u = (t - centre) / half of f's interpolant."""
    from numpy.polynomial import Chebyshev, chebyshev
    c = Chebyshev.interpolate(np.vectorize(f, otypes=[np.float64]), degree, domain=[lo, hi])
    return tuple(float(a) for a in chebyshev.cheb2poly(c.coef)[::-1]), (lo + hi) / 2, (hi - lo) / 2


def _erf_over_x(y):
    s = math.sqrt(y)
    return math.erf(s) / s if s else 2 / math.sqrt(math.pi)


def _erfc_scaled(x):
    return math.erfc(x) * math.exp(x * x)


def _erf_fits(small_degree, large_degree):
    return (_fit(_erf_over_x, small_degree, 0.0, _ERF_SPLIT ** 2),
            _fit(_erfc_scaled, large_degree, _ERF_SPLIT, _ERF_TOP))


_ERF_FITS = {np.dtype(np.float64): _erf_fits(18, 14), np.dtype(np.float32): _erf_fits(10, 8)}


def _poly(fit, t):
    coefs, centre, half = fit
    u = (t - centre) * (1 / half)
    out = np.full_like(u, coefs[0])
    for c in coefs[1:]:
        out *= u
        out += c
    return out


def erf(x):
    """erf of a floating-point array, in its dtype (float16 goes through float32)."""
    if x.size <= _SMALL:
        return np.array([math.erf(v) for v in x.ravel().tolist()], dtype=x.dtype).reshape(x.shape)
    fits = _ERF_FITS.get(x.dtype)
    if fits is None:
        return erf(x.astype(np.float32)).astype(x.dtype)
    small, large = fits
    out = np.asarray(x * _poly(small, np.minimum(x * x, _ERF_SPLIT ** 2)))   # an array even when 0-d
    far = np.abs(x) > _ERF_SPLIT
    if far.any():
        a = np.minimum(np.abs(x[far]), _ERF_TOP)
        out[far] = np.copysign(1 - np.exp(-a * a) * _poly(large, a), x[far])
    return out
