"""Real programs for benchmarks/real_programs.py: ADBench's four objectives, one module each.

Each module holds the objective written for srcgrad in plain numpy (loops where the math loops),
the same objective for JAX, for PyTorch and a derivative written by hand (Numba), and exposes

- ``SIZES`` and ``QUICK`` (smaller, for ``--quick``): {label: keyword arguments of ``inputs``};
  ``TINY``: the keyword arguments tests/test_real_programs.py uses;
- ``inputs(**size)``: a dict of seeded numpy inputs of ADBench's shapes;
- ``srcgrad_derivative(inp)``, ``jax_derivative(inp)``, ``torch_derivative(inp)``,
  ``hand_derivative(inp)``: each builds (decorates, jits) its tool's derivative and returns a
  zero-argument callable computing it (srcgrad's derivatives are decorated once, at the
  module's top level, as a user would);
- ``standard``, ``blocks``, ``outputs`` and ``column``: one layout for every tool's derivative and
  what finite differences need (benchmarks/real/common.py says what each does);
- ``VARIANTS`` (some modules): srcgrad's derivative of the same objective written otherwise.
"""
MODULES = ("gmm", "ba", "hand", "lstm")
