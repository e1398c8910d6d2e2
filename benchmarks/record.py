"""Recording a benchmark's table in benchmarks/RESULTS.md, with the command, the machine and
the versions, so that every recorded figure says where it was measured.

RESULTS.md has two parts: "## Current results", one ``### <benchmark> — <date>`` subsection per
benchmark holding its newest table, and "## History", the earlier subsections, newest first.
``record`` puts the new table in the benchmark's place under "Current results" (a benchmark
recorded for the first time goes last there) and moves the table it replaces to the top of
"History".

Example:
    >>> record("compile_time", "python benchmarks/compile_time.py --record", "7 fresh processes", table)
"""
import datetime
import os
import platform
import re


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


CURRENT, HISTORY = "## Current results", "## History"
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")


HEADING = re.compile(r"^### (.+?) — \d{4}-\d{2}-\d{2}[ \t]*$", re.M)     # ### <benchmark> — <date>


def _entries(part):
    """``part`` (the text of one "## " part, heading left out) as its preamble and a list of
    ``(benchmark name, text)``, one per ``### <name> — <date>`` subsection with what follows it."""
    starts = [m.start() for m in HEADING.finditer(part)]
    bounds = zip(starts, starts[1:] + [len(part)])
    return (part[:starts[0] if starts else len(part)].strip("\n"),
            [(HEADING.match(part, a).group(1), part[a:b].strip("\n")) for a, b in bounds])


def _join(heading, preamble, entries):
    return "\n\n".join([heading] + ([preamble] if preamble else []) + [text for _, text in entries])


def _line(heading):
    return re.compile(rf"^{re.escape(heading)}[ \t]*$", re.M)


def file_with(text, name, entry):
    """``text`` (RESULTS.md) with ``entry`` as benchmark ``name``'s current table, the one it
    replaces moved to the top of the history."""
    if not _line(CURRENT).search(text):               # a file without the two parts: add them
        found = _line(HISTORY).search(text)
        text = (text[:found.start()] + f"{CURRENT}\n\n" + text[found.start():] if found
                else text.rstrip("\n") + f"\n\n{CURRENT}\n")
    if not _line(HISTORY).search(text, _line(CURRENT).search(text).end()):
        text = text.rstrip("\n") + f"\n\n{HISTORY}\n"
    at_current = _line(CURRENT).search(text)
    at_history = _line(HISTORY).search(text, at_current.end())
    head = text[:at_current.start()].rstrip("\n")
    cur_pre, cur = _entries(text[at_current.end():at_history.start()])
    hist_pre, hist = _entries(text[at_history.end():])
    at = next((i for i, (n, _) in enumerate(cur) if n == name), None)
    if at is None:
        cur.append((name, entry))
    else:
        hist.insert(0, cur[at])
        cur[at] = (name, entry)
    return ((head + "\n\n" if head else "") + _join(CURRENT, cur_pre, cur) + "\n\n"
            + _join(HISTORY, hist_pre, hist) + "\n")


def record(name, command, note, table, path=None):
    """Put ``table`` under a heading naming the benchmark, the command and the machine, as the
    benchmark's current table in RESULTS.md (``path``, or $SRCGRAD_RESULTS, or
    benchmarks/RESULTS.md); the table it replaces moves to the top of the history."""
    path = path or os.environ.get("SRCGRAD_RESULTS") or DEFAULT_PATH
    entry = (f"### {name} — {datetime.date.today()}\n\n`{command}` on {machine()}; {versions()}"
             f"{'; ' + note if note else ''}.\n\n{table.strip(chr(10))}")
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    if not text.strip():
        text = "# Benchmark results\n"
    text = file_with(text, name, entry)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def repeats_main(name, doc, make_text, note=""):
    """The command line of a benchmark timed by repeated calls: ``--repeats N`` (default 15),
    ``--record``; prints ``make_text(repeats)`` and, with ``--record``, records it in RESULTS.md.

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
