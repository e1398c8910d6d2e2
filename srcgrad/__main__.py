"""``python -m srcgrad show path/to/file.py:func [--stage ir|adjoint] [--wrt 0,1] [--args ...]``;
``python -m srcgrad primitives [name ...]`` lists the IR's primitives, each with what it computes
and the facts its record states (docs/architecture.md says what each fact means).

The function is compiled for the argument values given with ``--args`` (Python literals or
``array(n)``/``array(n,m)`` for float64 arrays of ones); by default every argument is 1.0.

Example:
    python -m srcgrad show examples/compiler_demo.py:f --stage adjoint --args "array(3), 0.5"
"""
import argparse
import ast
import importlib.util
import sys

import numpy as np

from .api import grad, jit


def _load(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit("expected path/to/file.py:function")
    mod_spec = importlib.util.spec_from_file_location("_srcgrad_target", path)
    if mod_spec is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules["_srcgrad_target"] = module
    mod_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"{path} has no function {name!r}")
    return fn


def _args(text, n):
    if not text:
        return [1.0] * n
    out = []
    for part in ast.parse(f"({text},)", mode="eval").body.elts:
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "array":
            out.append(np.ones(tuple(ast.literal_eval(a) for a in part.args)))
        else:
            out.append(ast.literal_eval(part))
    return out


def _show_ptx(fn, wrt, a):
    """The kernel of vectorize(grad(f)) (or of f with --jit) for the CUDA target, made without a GPU."""
    import inspect

    from .api import vectorize
    from .backends.cuda.driver import CudaUnavailable
    n = len(inspect.signature(fn).parameters)
    inner = fn if a.jit else grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0])
    kernel = vectorize(inner, target="cuda")
    try:
        kernel(*_args(a.args, n))
    except CudaUnavailable:
        pass                        # the PTX is made before the launch needs a driver
    print(kernel.ptx)


_FACTS = ("elementwise", "writes", "key", "accumulates", "internal", "effect", "may_raise", "allocates", "view",
          "may_alias", "shape_operand", "shaped_like", "index_start", "overflows", "unbounded_slope", "adjoint_shaped",
          "scalar_only")


def _list_primitives(names):
    """One paragraph per primitive: its name, its record's doc, the facts that are set."""
    from .ir.primitives import PRIMITIVES
    unknown = [n for n in names if n not in PRIMITIVES]
    if unknown:
        raise SystemExit(f"no primitive named {', '.join(unknown)}; python -m srcgrad primitives lists them all")
    for name in names or sorted(PRIMITIVES):
        p = PRIMITIVES[name]
        facts = [f if getattr(p, f) is True else f"{f}={getattr(p, f)}" for f in _FACTS
                 if getattr(p, f) is not None and getattr(p, f) is not False]
        if p.adjoint != "rule":
            facts.append(f"adjoint={p.adjoint}")
        print(f"{name}: {p.doc or '(no description)'}" + (f"\n    {', '.join(facts)}" if facts else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m srcgrad", description="Show the stages of a compiled function.")
    sub = ap.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the IR or the generated adjoint source")
    show.add_argument("target", help="path/to/file.py:function")
    show.add_argument("--stage", default="adjoint", choices=["ir", "adjoint", "llvm", "ptx", "stages"])
    show.add_argument("--wrt", default="0", help="argument indices, comma-separated (default 0)")
    show.add_argument("--args", default="", help='argument values, e.g. "array(3), 0.5" (default: all 1.0)')
    show.add_argument("--jit", action="store_true", help="compile the forward function only")
    show.add_argument("--locs", action="store_true", help="with --stage ir: the source line above its ops")
    listing = sub.add_parser("primitives", help="list the IR's primitives and the facts of their records")
    listing.add_argument("names", nargs="*", help="only these primitives (default: all)")
    a = ap.parse_args(argv)
    if a.command == "primitives":
        _list_primitives(a.names)
        return
    fn = _load(a.target)
    import inspect
    n = len(inspect.signature(fn).parameters)
    wrt = tuple(int(w) for w in a.wrt.split(","))
    if a.stage == "ptx":
        _show_ptx(fn, wrt, a)
        return
    backend = "llvm" if a.stage == "llvm" else None
    compiled = jit(fn, backend=backend) if a.jit else grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0], backend=backend)
    compiled(*_args(a.args, n))
    if a.stage == "stages":
        print(compiled.stages)
        return
    print({"ir": compiled.ir_text(a.locs), "adjoint": compiled.adjoint_source}.get(a.stage) or compiled.llvm_ir)


if __name__ == "__main__":
    main()
