"""Where the random samplers and ``random_split`` draw their numbers from: the ``generator=``
argument (a ``srcgrad.Generator``, or a ``numpy.random.Generator``), else srcgrad's default
generator (``srcgrad.manual_seed`` reseeds it, so seeding makes epochs repeatable), looked up
at draw time. The orders are srcgrad's, not PyTorch's.
"""

from ...eager import creation as _creation


def numpy_rng(generator=None):
    """The numpy generator to draw from for a ``generator=`` argument."""
    return _creation.numpy_rng(generator)


def permutation(n, generator=None):
    """A random permutation of ``range(n)`` as a list of Python ints."""
    return numpy_rng(generator).permutation(n).tolist()
