"""Gradients of loops that write into arrays (issue 12), beside JAX and numpy by hand, in one run.

H1 heat equation: explicit 1-D stencil, N = 1,000 cells, T = 10,000 steps, fixed end cells,
loss Σ u_T², gradient in the initial state u0 (array) and the diffusion coefficient k (float).
srcgrad differentiates a plain loop writing un[i] into a fresh copy of u every step, taped
and with checkpoint=100 (100 snapshots, binomial checkpointing: ad/checkpoint.py); JAX is
jit(grad) of lax.fori_loop with u.at[1:-1].set(...); numpy by hand keeps the T+1 states and
runs the adjoint step backwards.
H2 the same heat equation written in place, u[1:-1] = u[1:-1] + k * lap each step: taped, the
undo log keeps every overwritten element (T × N of them); with checkpoint=100 the snapshots
hold copies of u. JAX and numpy by hand as in H1.
R1 vanilla RNN: hidden 64, input 32, T = 1,000 steps, h[t+1] = tanh(W h[t] + U x[t] + b),
loss Σ h_T², gradient in W, U and b. srcgrad writes the rows of a preallocated
h = np.zeros((T + 1, H)); JAX is jit(grad) of lax.scan; numpy by hand is BPTT.

    python benchmarks/array_writes.py [--repeats N] [--backend llvm|python] [--small] [--record]

``--small`` (N = 100, T = 100; RNN T = 100) is a quick check, and the size for the python
backend (its memory figures are then below what the allocator keeps between calls: 0).
The gradients must agree (max |a − b| / max |b| ≤ 1e-9) before anything is timed. Peak
memory is measured in a fresh process per contender (see ``peak_during``). The JAX column
is filled when JAX is installed (benchmarks/array_write_contenders.py). Everything runs on
one thread. Each table is printed when its benchmark is done, the notes at the end.
"""
import os

for _var in ("SRCGRAD_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import ctypes.util  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from array_write_contenders import jax_heat_cases, jax_rnn_cases, numpy_heat_cases, numpy_rnn_cases  # noqa: E402
from compiled_loops import timed  # noqa: E402
from record import record  # noqa: E402


def heat(u0, k, steps):
    u = u0.copy()
    n = u.shape[0]
    for step in range(steps):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = un
    return np.sum(u * u)


def heat_in_place(u0, k, steps):
    u = u0.copy()
    for step in range(steps):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
    return np.sum(u * u)


def rnn(W, U, b, xs, h0):
    steps = xs.shape[0]
    h = np.zeros((steps + 1, h0.shape[0]))
    h[0] = h0
    for t in range(steps):
        h[t + 1] = np.tanh(W @ h[t] + U @ xs[t] + b)
    return np.sum(h[steps] * h[steps])


SIZES = {False: {"cells": 1000, "steps": 10_000, "hidden": 64, "inputs": 32, "rnn_steps": 1000},
         True: {"cells": 100, "steps": 100, "hidden": 64, "inputs": 32, "rnn_steps": 100}}
CONTENDERS = ("srcgrad", "checkpointed", "jax", "numpy")
SNAPSHOTS = 100         # the heat gradient's checkpoint=


def heat_cases(backend, small, fn=heat, title="H1 heat equation"):
    """{contender: gradient callable}, the gradient as a list of arrays, and the benchmark's name."""
    size = SIZES[small]
    n, steps = size["cells"], size["steps"]
    rng = np.random.default_rng(0)
    u0 = np.sin(np.pi * np.linspace(0.0, 1.0, n)) + 0.1 * rng.standard_normal(n)
    k = 0.25                                     # stable: k ≤ 1/2
    g = srcgrad.grad(fn, wrt=(0, 1), backend=backend)
    checkpointed = srcgrad.grad(fn, wrt=(0, 1), backend=backend, checkpoint=SNAPSHOTS)
    cases = {"srcgrad": lambda: g(u0, k, steps), "checkpointed": lambda: checkpointed(u0, k, steps)}
    cases.update(jax_heat_cases(u0, k, steps))
    cases.update(numpy_heat_cases(u0, k, steps))
    name = f"{title}, N = {n:,}, T = {steps:,}: gradient in u0 and k"
    return cases, ("u0", "k"), name


def rnn_cases(backend, small):
    size = SIZES[small]
    hidden, inputs, steps = size["hidden"], size["inputs"], size["rnn_steps"]
    rng = np.random.default_rng(1)
    W = 0.9 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    U = rng.standard_normal((hidden, inputs)) / np.sqrt(inputs)
    b = 0.1 * rng.standard_normal(hidden)
    xs = rng.standard_normal((steps, inputs))
    h0 = np.zeros(hidden)
    g = srcgrad.grad(rnn, wrt=(0, 1, 2), backend=backend)
    cases = {"srcgrad": lambda: g(W, U, b, xs, h0)}
    cases.update(jax_rnn_cases(W, U, b, xs, h0))
    cases.update(numpy_rnn_cases(W, U, b, xs, h0))
    name = f"R1 vanilla RNN, hidden {hidden}, input {inputs}, T = {steps:,}: gradient in W, U, b"
    return cases, ("W", "U", "b"), name


# the cases, the unit and its scale from seconds, calls timed per --repeats (the RNN takes milliseconds)
def heat_in_place_cases(backend, small):
    return heat_cases(backend, small, heat_in_place, "H2 heat equation written in place")


BENCHMARKS = {"heat": (heat_cases, "s", 1.0, 1), "heat_in_place": (heat_in_place_cases, "s", 1.0, 1),
              "rnn": (rnn_cases, "ms", 1e3, 5)}


_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))


def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def peak_during(fn):
    """MiB by which this process's resident memory peaked above where it stood just before
    ``fn()``: the rise of VmHWM (/proc/self/status), the high-water mark first reset to the
    current resident set by writing 5 to /proc/self/clear_refs. Native memory (LLVM code, XLA
    buffers) counts, which tracemalloc would not see. The kernel's counters are exact to a few
    pages only (a rise of under 0 reads 0). Memory the allocators kept from an earlier call
    (srcgrad's block cache, glibc's heap) goes back to the system first, so that a call
    reusing it still counts it."""
    gc.collect()
    srcgrad.empty_cache()
    _LIBC.malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = status_kib("VmHWM")
    fn()
    return max(status_kib("VmHWM") - before, 0) / 1024


def child(spec, backend, small):
    """In a fresh process: one contender's peak memory in its first call (compile + gradient)
    and in the next (warm) call, or (``time:`` before the spec) the median time of 5 warm
    calls, printed as JSON."""
    *timing, bench, who = spec.split(":")
    cases = BENCHMARKS[bench][0](backend, small)[0]
    if timing:
        cases[who]()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            cases[who]()
            times.append(time.perf_counter() - t0)
        print(json.dumps({"alone": float(np.median(times))}))
        return
    first = peak_during(cases[who])
    print(json.dumps({"first": first, "warm": peak_during(cases[who])}))


def alone(bench, who, backend, small):
    """The median time of a warm call in a fresh process running only this contender, with
    glibc as it comes: whether the heap a call freed is kept for the next (or returned to the
    system, and faulted in again) depends on what else the process allocated and freed."""
    command = [sys.executable, os.path.abspath(__file__), "--child", f"time:{bench}:{who}", "--backend", backend]
    done = subprocess.run(command + (["--small"] if small else []), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"time of {bench}:{who} alone failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])["alone"]


def memory(bench, who, backend, small):
    """{"first": MiB, "warm": MiB} from a fresh process. glibc's mmap and trim thresholds are
    fixed at 128 KiB there, so that memory a call frees goes back to the system, and the next
    call's peak is not hidden by blocks the allocator kept."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    command = [sys.executable, os.path.abspath(__file__), "--child", f"{bench}:{who}", "--backend", backend]
    done = subprocess.run(command + (["--small"] if small else []), env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"memory of {bench}:{who} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def as_arrays(out):
    return [np.asarray(g, dtype=np.float64) for g in (out if isinstance(out, tuple) else (out,))]


def difference(a, b):
    """max |a − b| / max |b|, the worst over the gradient's parts."""
    return max(float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300)) for x, y in zip(a, b))


class Unsupported(Exception):
    """srcgrad's backend cannot compile a benchmark's program (yet)."""


def run_benchmark(bench, backend, small, repeats):
    """(table row figures, notes): times, peak memory, agreement and first calls."""
    make, unit, scale, per_repeat = BENCHMARKS[bench]
    cases, parts, name = make(backend, small)
    first, grads = {}, {}
    for who, fn in cases.items():
        t0 = time.perf_counter()
        try:
            grads[who] = as_arrays(fn())
        except NotImplementedError as e:
            raise Unsupported(f"srcgrad (backend={backend!r}) cannot compile {bench} yet: {e}\n(python "
                              "benchmarks/array_writes.py --backend python --small runs it on the python backend)")
        first[who] = time.perf_counter() - t0
    agree = {}
    for a, b in (("srcgrad", "numpy"), ("jax", "numpy"), ("srcgrad", "jax"), ("checkpointed", "srcgrad")):
        if a in grads and b in grads:
            assert [g.shape for g in grads[a]] == [g.shape for g in grads[b]], (bench, a, b)
            agree[a, b] = difference(grads[a], grads[b])
            assert agree[a, b] <= (0.0 if a == "checkpointed" else 1e-9), (bench, a, b, agree)   # bit for bit
    t = {k: v * scale for k, v in timed(cases, repeats * per_repeat).items()}
    mem = {who: memory(bench, who, backend, small) for who in cases}
    peak = {k: m["warm"] for k, m in mem.items()}
    solo = {who: alone(bench, who, backend, small) * scale for who in cases}
    rows = [(name, unit, t), (f"{name.split(':')[0]}: each alone in a fresh process", unit, solo),
            (f"{name.split(':')[0]}: peak memory in a gradient call", "MiB", peak)]
    notes = {"parts": parts, "agree": agree, "first": first, "first_mem": {k: m["first"] for k, m in mem.items()},
             "median": {k: v / scale for k, v in t.items()}, "calls": repeats * per_repeat}
    return rows, notes


def fmt(v):
    if v is None:
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def table(rows, backend):
    """Figures, then srcgrad's over JAX's and numpy's (below 1: srcgrad is faster or smaller),
    and the checkpointed gradient's over the taped one's."""
    head = ["benchmark", "unit", f"srcgrad ({backend})", f"srcgrad checkpoint={SNAPSHOTS}", "JAX jit(grad)",
            "numpy by hand", "÷ JAX", "÷ numpy", "checkpointed ÷ taped"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, unit, cols in rows:
        ours = cols.get("srcgrad")
        ratios = [f"{ours / cols[c]:,.2f}" if ours and cols.get(c) else "–" for c in ("jax", "numpy")]
        ratios.append(f"{cols['checkpointed'] / ours:,.2f}" if ours and cols.get("checkpointed") is not None else "–")
        out.append("| " + " | ".join([name, unit] + [fmt(cols.get(c)) for c in CONTENDERS] + ratios) + " |")
    return "\n".join(out)


def notes_text(all_notes):
    label = {"srcgrad": "srcgrad", "checkpointed": f"srcgrad checkpoint={SNAPSHOTS}", "jax": "JAX",
             "numpy": "numpy by hand"}
    calls = " and ".join(str(n["calls"]) for n in all_notes.values())
    lines = [f"- Times are medians of {calls} calls, the contenders taking turns call by call; one thread "
             "everywhere (XLA_FLAGS as in benchmarks/contenders.py, OPENBLAS_NUM_THREADS=1)."]
    for bench, n in all_notes.items():
        agree = ", ".join(f"{label[a]} vs {label[b]} {d:.1e}" for (a, b), d in n["agree"].items())
        lines.append(f"- {bench}: gradients in {', '.join(n['parts'])} agree before timing, max |a − b| / max |b| "
                     f"over the parts: {agree}.")
        firsts = ", ".join(f"{label[k]} {n['first'][k]:.3g} s (compile ≈ {n['first'][k] - n['median'][k]:.3g} s)"
                           for k in ("srcgrad", "checkpointed", "jax") if k in n["first"])
        lines.append(f"- {bench}: first call (compile + one gradient), not in the timed figures: {firsts}; peak "
                     "memory in that first call: "
                     + ", ".join(f"{label[k]} {v:.3g} MiB" for k, v in n["first_mem"].items()) + ".")
    lines.append("- Peak memory: a fresh process per contender, inputs made and (for the warm figure) one call "
                 "done; the rise of VmHWM (/proc/self/status) during the call, the high-water mark first reset "
                 "to the resident set through /proc/self/clear_refs, glibc's mmap and trim thresholds fixed at "
                 "128 KiB, and srcgrad.empty_cache() and malloc_trim(0) called first so that freed memory goes back "
                 "to the system. Native memory (LLVM code, XLA buffers) counts.")
    lines.append("- Times are of warm calls. The first row's contenders take turns in one process; \"each alone\" "
                 "runs one contender in a fresh process (the median of 5 warm calls). They differ where a call "
                 "allocates much and its allocator gives the memory back to the system: the next call then faults "
                 "it in again (the heat gradient's 80 MB of taped states, about 30 ms). srcgrad's block cache "
                 "keeps freed blocks for the next call (up to 1 GiB), as XLA's allocator keeps its buffers.")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--backend", choices=("llvm", "python"), default="llvm")
    ap.add_argument("--small", action="store_true", help="N = 100, T = 100; RNN T = 100 (quick check)")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.backend, args.small)
    if args.backend == "python" and not args.small:
        print("note: the python backend takes about a minute per heat gradient at full size; --small is "
              "the size for it", file=sys.stderr)
    tables, all_notes = [], {}
    for bench in BENCHMARKS:
        try:
            rows, notes = run_benchmark(bench, args.backend, args.small, args.repeats)
        except Unsupported as e:
            print(notes_text(all_notes))
            sys.exit(str(e))
        all_notes[rows[0][0].split(":")[0]] = notes
        tables.append(table(rows, args.backend))
        print(tables[-1] + "\n", flush=True)
    print(notes_text(all_notes))
    text = "\n\n".join(tables + [notes_text(all_notes)])
    if args.record:
        trim = os.environ.get("MALLOC_TRIM_THRESHOLD_")        # glibc keeping freed memory (the notes)
        command = ((f"MALLOC_TRIM_THRESHOLD_={trim} " if trim else "")
                   + f"python benchmarks/array_writes.py --repeats {args.repeats} --backend {args.backend}"
                   f"{' --small' if args.small else ''} --record")
        record("array_writes", command, f"srcgrad backend={args.backend}, one thread everywhere", text)


if __name__ == "__main__":
    main()
