"""Vector math for vectorised loops, from glibc's libmvec.

LLVM's loop vectoriser turns ``math.sin(x[i])`` in a loop into ``llvm.sin.v4f64`` (four
elements at once), which code generation would split back into four calls of libm's scalar
``sin``: the loop is vectorised everywhere but where the time goes. Each such call is renamed
here to the libmvec function of the same width (the vector ABI names GCC uses:
``_ZGVdN4v_sin`` takes four doubles in an AVX2 register), once LLVM has optimised the module.

Accuracy: libmvec's functions are within 4 ulp (glibc's manual), libm's within 1, so results
of loops LLVM vectorised move at that level (the backends are held to agree to 1e-12 relative, not
to the bit: docs/reliability.md). ``SRCGRAD_VECTOR_MATH=0`` keeps libm's scalar calls everywhere. Only functions
this machine's libmvec has, and widths its CPU runs, are renamed; without libmvec nothing is.

Example:
    text = rename("... call <4 x double> @llvm.sin.v4f64(<4 x double> %x) ...")
    "@_ZGVdN4v_sin" in text        # True where libmvec is loaded and the CPU has AVX2
"""
import ctypes.util
import os
import re

import llvmlite.binding as llvm

# LLVM's vector math intrinsics that libmvec implements; two-argument ones take "vv"
_FUNCTIONS = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2", "exp10",
              "log", "log2", "log10", "pow", "atan2")
_TWO_ARGUMENTS = ("pow", "atan2")
_CALL = re.compile(r"@llvm\.(" + "|".join(_FUNCTIONS) + r")\.v(2|4|8)f64\b")
# the vector ABI's ISA letter for each width: SSE4 (2 doubles), AVX2 (4; AVX alone: "c"), AVX-512 (8)
_ISA = {"2": ("b", "+sse4.1"), "4": ("d", "+avx2"), "8": ("e", "+avx512f")}

_available = {}        # vector ABI name -> whether this process can call it


def load(cpu_features):
    """Load libmvec into the process (JIT-compiled code, and code loaded from the disk cache,
    calls it by name) and note which of its functions this CPU runs. Called once."""
    if os.environ.get("SRCGRAD_VECTOR_MATH", "1") == "0" or _available:
        return
    path = ctypes.util.find_library("mvec")
    if path is None:
        return
    try:
        llvm.load_library_permanently(path)
    except RuntimeError:
        return
    for lanes, (letter, feature) in _ISA.items():
        if feature not in cpu_features:
            continue
        for f in _FUNCTIONS:
            name = _name(f, lanes, letter)
            _available[name] = llvm.address_of_symbol(name) is not None


def enabled():
    """Whether compiled code may call libmvec (part of the disk cache's key: code that calls it
    must not be loaded where it is not loaded)."""
    return any(_available.values())


def _name(function, lanes, letter):
    return f"_ZGV{letter}N{lanes}{'vv' if function in _TWO_ARGUMENTS else 'v'}_{function}"


def rename(text):
    """``text`` (an optimised LLVM module) with each vector math intrinsic that libmvec has
    renamed to it; the text unchanged where there is none."""
    def to_libmvec(m):
        name = _name(m.group(1), m.group(2), _ISA[m.group(2)][0])
        return "@" + name if _available.get(name) else m.group(0)
    return _CALL.sub(to_libmvec, text)


def vectorise_math(mod, text):
    """(module, text) with libmvec's vector functions called where the module calls LLVM's
    vector math intrinsics (the module parsed again from the renamed text)."""
    if not _available or not _CALL.search(text):
        return mod, text
    renamed = rename(text)
    if renamed == text:
        return mod, text
    mod = llvm.parse_assembly(renamed)
    mod.verify()
    return mod, renamed


__all__ = ["load", "enabled", "rename", "vectorise_math"]
