"""Real programs for benchmarks/real_programs.py: ADBench's four objectives, one module each.

Each module holds the objective written for srcgrad in plain numpy (loops where the math loops),
the same objective for JAX, for PyTorch and a derivative written by hand (Numba), and exposes

- ``SIZES``, ``QUICK`` (smaller, for ``--quick``) and ``TINY`` (for tests/test_real_programs.py):
  {label: keyword arguments of ``inputs``};
- ``inputs(**size)``: a dict of seeded numpy inputs of ADBench's shapes;
- ``srcgrad_derivative(inp)``, ``jax_derivative(inp)``, ``torch_derivative(inp)``,
  ``hand_derivative(inp)``: each builds (decorates, jits) its tool's derivative and returns a
  zero-argument callable computing it (the derivative, in the module's own layout; ``flat``
  in benchmarks/real/common.py makes one vector of it for comparisons);
- ``finite_differences(inp, coords)`` (common.py) needs ``fd_point`` / ``fd_value``: the
  differentiated inputs as one vector and the objective's outputs at such a vector.
"""
MODULES = ("gmm", "ba", "hand", "lstm")
