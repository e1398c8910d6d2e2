"""Compile time: from decoration to the first gradient of a 30-line function with a loop and a
branch, each sample in a fresh Python process (imports excluded, as a user pays them once).

    python benchmarks/compile_time.py [--samples N] [--record]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from record import record

PROGRAM = r'''
import math, time
import numpy as np
import srcgrad

t0 = time.perf_counter()

@srcgrad.grad(wrt=(0, 1), backend=BACKEND)
def model(x, w, n):
    s = 0.0
    prev = 0.0
    for i in range(n):
        t = x * i + w
        if t > 1.0:
            u = math.sin(t) * math.exp(-0.01 * i)
        elif t > 0.0:
            u = t * t - 0.5 * t
        else:
            u = -math.tanh(t)
        prev = 0.9 * prev + 0.1 * u
        s += prev * prev + math.log1p(abs(u))
    k = 0
    y = s
    while y > 1.0 and k < 20:
        y = math.sqrt(y) + 0.01 * w
        k += 1
    a = y * x - w / (1.0 + x * x)
    b = max(a, 0.0) + min(a, 0.0) * 0.1
    c = math.atan2(b, 1.0 + w * w)
    d = math.hypot(c, x) + math.cos(w) ** 2
    e = d / (1.0 + abs(c))
    return e + 0.5 * s

g = model(0.3, 0.7, 50)
print(time.perf_counter() - t0)
'''


B1 = r'''
import math, os, time
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
import numpy as np
TOOL_IMPORT

def b1(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i) * math.exp(-1e-3 * i)
    return s + x * x

t0 = time.perf_counter()
TOOL_CALL
print(time.perf_counter() - t0)
'''

# B1 in each tool: (what is timed, the import, the decoration and first call)
B1_TOOLS = {
    "srcgrad (llvm), gradient": ("import srcgrad", "srcgrad.grad(b1)(0.3, 1000)"),
    "Numba, forward": ("import numba", "numba.njit(b1)(0.3, 1000)"),
    "JAX, jit(grad)": ("import jax; jax.config.update('jax_enable_x64', True); from jax import lax, numpy as jnp",
                       "jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, s: s + jnp.sin(x * i) * "
                       "jnp.exp(-1e-3 * i), 0.0) + x * x), static_argnums=1)(0.3, 1000).block_until_ready()"),
}


def fresh_output(source, folder):
    """What a fresh process running ``source`` prints (None where it lacks a tool's module)."""
    path = os.path.join(folder, "model.py")      # a real file: the compiler reads the function's source
    with open(path, "w") as f:
        f.write(source)
    done = subprocess.run([sys.executable, path], capture_output=True, text=True)
    if done.returncode:
        if "ModuleNotFoundError" in done.stderr:
            return None
        raise RuntimeError(done.stderr[-3000:])
    return done.stdout


def sample(source, folder):
    """Seconds one fresh process takes from decoration to the first result (None: tool missing)."""
    out = fresh_output(source, folder)
    return None if out is None else float(out.strip().splitlines()[-1])


def row(name, tool, times):
    med = statistics.median(times)
    return f"| {name} | {tool} | {med * 1e3:.1f} ms | {min(times) * 1e3:.1f} ms | {max(times) * 1e3:.1f} ms |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for backend in ("python", "llvm"):
            times = [sample(PROGRAM.replace("BACKEND", repr(backend)), folder) for _ in range(args.samples)]
            rows.append(row("decoration → first gradient, 30-line loop+branch function", f"srcgrad ({backend})",
                            times))
        for tool, (imports, call) in B1_TOOLS.items():
            times = [sample(B1.replace("TOOL_IMPORT", imports).replace("TOOL_CALL", call), folder)
                     for _ in range(args.samples)]
            if None not in times:
                rows.append(row("decoration → first result, B1", tool, times))
    table = "| benchmark | tool | median of samples | min | max |\n|---|---|---|---|---|\n" + "\n".join(rows)
    print(table)
    if args.record:
        record("compile_time", f"python benchmarks/compile_time.py --samples {args.samples} --record",
               f"{args.samples} fresh processes", table)

if __name__ == "__main__":
    main()
