"""The llvm backend's tables (backends/llvm/lowering.py): every primitive of the IR has
exactly one lowering there, so a new primitive without one fails here, not in a user's
program; and the lowering finds each by its name."""
import math

import pytest

import srcgrad
from srcgrad.backends.llvm.lowering import tables
from srcgrad.backends.llvm.target import CPU
from srcgrad.ir.primitives import UNARY_MATH


def _all_tables():
    scalar, ops = tables(CPU)
    return scalar + ops


def test_the_target_math_table_holds_the_math_functions():
    assert set(CPU.math) == set(UNARY_MATH) | {"atan2", "hypot", "pow"}       # pow: llvm.pow or __nv_pow


def _sine(x):
    return math.sin(x)


def test_a_primitive_without_a_rule_is_reported(monkeypatch):
    monkeypatch.delitem(CPU.math, "sin")
    with pytest.raises(NotImplementedError, match="no rule for primitive 'sin'"):
        srcgrad.jit(_sine, backend="llvm")(0.5)
