"""Appending a benchmark's table to benchmarks/RESULTS.md, with the command, the machine and
the versions, so that every recorded figure says where it was measured.

Example:
    >>> record("compile_time", "python benchmarks/compile_time.py --record", "7 fresh processes", table)
"""
import datetime
import os
import platform


def machine():
    """The CPU model, architecture and core count of this machine."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{model or platform.processor() or 'unknown CPU'}, {platform.machine()}, {os.cpu_count()} cores"


def versions():
    """srcgrad, numpy, llvmlite/LLVM, Numba, JAX and PyTorch (when installed) and Python versions."""
    import llvmlite
    import llvmlite.binding as llvm
    import numpy as np

    import srcgrad
    parts = [f"srcgrad {srcgrad.__version__}", f"numpy {np.__version__}",
             f"llvmlite {llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})"]
    for name in ("numba", "jax", "torch"):
        try:
            parts.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            pass
    return ", ".join(parts + [f"Python {platform.python_version()}"])


def record(name, command, note, table):
    """Append ``table`` under a heading naming the benchmark, the command and the machine."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
    with open(path, "a") as f:
        f.write(f"\n## {name} — {datetime.date.today()}\n\n`{command}` on {machine()}; {versions()}"
                f"{'; ' + note if note else ''}.\n\n{table}\n")


def repeats_main(name, doc, make_text, note=""):
    """The command line of a benchmark timed by repeated calls: ``--repeats N`` (default 15),
    ``--record``; prints ``make_text(repeats)`` and, with ``--record``, appends it to RESULTS.md.

    >>> repeats_main("second_order", __doc__, lambda repeats: table(run(repeats)))
    """
    import argparse
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    text = make_text(args.repeats)
    print(text)
    if args.record:
        record(name, f"python benchmarks/{name}.py --repeats {args.repeats} --record", note, text)
