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


def sample(backend, folder):
    path = os.path.join(folder, "model.py")      # a real file: the compiler reads the function's source
    with open(path, "w") as f:
        f.write(PROGRAM.replace("BACKEND", repr(backend)))
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for backend in ("python", "llvm"):
            times = [sample(backend, folder) for _ in range(args.samples)]
            med = statistics.median(times)
            rows.append(f"| decoration → first gradient, 30-line loop+branch function | {backend} | {med * 1e3:.1f} ms | "
                        f"{min(times) * 1e3:.1f} ms | {max(times) * 1e3:.1f} ms |")
    table = "| benchmark | backend | median of samples | min | max |\n|---|---|---|---|---|\n" + "\n".join(rows)
    print(table)
    if args.record:
        record("compile_time", f"python benchmarks/compile_time.py --samples {args.samples} --record",
               f"{args.samples} fresh processes", table)

if __name__ == "__main__":
    main()
