"""G1, G2: ``vectorize(grad(f), target="cuda")`` over 10^8 float64 points on the GPU.

G1 f(x) = x * x (memory-bound: 16 bytes an element for two flops), G2 f(x, a) = sin(x) exp(-a x)
(the gradient in x, about 50 flops an element). For each: the kernel's time (CUDA events),
its bandwidth against a device-to-device copy of the same bytes (the practical ceiling), and
beside it JAX's jit(vmap(grad(f))) on the same GPU (where JAX's CUDA build is installed) and
Numba's @cuda.jit with the derivative written by hand (where numba.cuda runs). Then the
launch overhead (µs a call at n = 1, 10^4 calls, through ctypes) and the first call's time by
stage (srcgrad's IR and derivative, the kernel's LLVM IR, O3 and PTX, the driver's JIT).
Targets (issue 14): ≥ 80% of the copy's bandwidth on G1; ≤ 1.0x JAX's time.

    python benchmarks/cuda_vectorize.py [--points N] [--repeats N] [--record]

Without a GPU it says so and exits (status 0): nothing can be measured here.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcgrad  # noqa: E402
from srcgrad.backends.cuda.driver import CudaUnavailable, driver  # noqa: E402
from srcgrad.backends.cuda.kernel import kernel_module  # noqa: E402
from srcgrad.backends.cuda.launch import Kernel, to_device  # noqa: E402
from srcgrad.backends.cuda.ptx import ptx  # noqa: E402
from srcgrad.backends.cuda.target import cuda_target  # noqa: E402
from srcgrad.ir.types import F64, ArrayType  # noqa: E402
from record import record  # noqa: E402


def square(x):
    return x * x


def damped(x, a):
    return math.sin(x) * math.exp(-a * x)


CASES = {"G1 x*x": (square, (), lambda x: 2.0 * x),
         "G2 sin(x) exp(-a x)": (damped, (0.5,), None)}


def srcgrad_kernel_ms(gpu, fun, extra, xs, repeats):
    """(median kernel ms, the kernel, the result on the device)."""
    element = srcgrad.grad(fun).as_primal([F64] * (1 + len(extra)))
    kernel = Kernel(element, [ArrayType(F64, 1)] + [F64] * len(extra))
    out = kernel.run(gpu, [xs] + list(extra), fun.__name__, ["x", "a"][:1 + len(extra)])
    function = kernel.function(gpu)
    grid, block, params = function.last
    times = [gpu.timed(lambda: function.launch(grid, block, params, wait=False)) for _ in range(repeats)]
    return float(np.median(times)), kernel, out


def copy_ms(gpu, xs, repeats):
    dst = gpu.allocate(xs.shape[0] * 8)
    try:
        return float(np.median([gpu.timed(lambda: gpu.copy(dst, xs.pointer, xs.shape[0] * 8))
                                for _ in range(repeats)]))
    finally:
        gpu.free(dst)


def jax_ms(fun, extra, n, repeats):
    try:
        import jax
        import jax.numpy as jnp
        if not jax.devices("gpu"):
            return None
    except Exception:           # noqa: BLE001 - no JAX, or JAX without CUDA
        return None
    jax.config.update("jax_enable_x64", True)
    jf = {"square": lambda x: x * x, "damped": lambda x, a: jnp.sin(x) * jnp.exp(-a * x)}[fun.__name__]
    g = jax.jit(jax.vmap(jax.grad(jf), in_axes=(0,) + (None,) * len(extra)))
    x = jax.device_put(jnp.linspace(0.0, 1.0, n))
    g(x, *extra).block_until_ready()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        g(x, *extra).block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def numba_ms(fun, extra, n, repeats):
    try:
        from numba import cuda
        if not cuda.is_available():
            return None
    except Exception:           # noqa: BLE001
        return None
    if fun.__name__ == "square":
        @cuda.jit
        def k(x, out):
            for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
                out[i] = 2.0 * x[i]
        args = ()
    else:
        @cuda.jit
        def k(x, a, out):
            for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
                e = math.exp(-a * x[i])
                out[i] = math.cos(x[i]) * e - a * math.sin(x[i]) * e
        args = extra
    x = cuda.to_device(np.linspace(0.0, 1.0, n))
    out = cuda.device_array(n)
    k[1024, 256](x, *args, out)
    cuda.synchronize()
    start, stop = cuda.event(), cuda.event()
    times = []
    for _ in range(repeats):
        start.record()
        k[1024, 256](x, *args, out)
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop))
    return float(np.median(times))


def launch_overhead_us(gpu, calls=10_000):
    f = srcgrad.vectorize(square, target="cuda")
    one = to_device(np.ones(1), gpu)
    f(one)
    t0 = time.perf_counter()
    for _ in range(calls):
        f(one)
    return (time.perf_counter() - t0) / calls * 1e6


def first_call_stages(gpu):
    """Seconds of each stage of a first call of vectorize(grad(damped), target="cuda")."""
    t0 = time.perf_counter()
    element = srcgrad.grad(damped).as_primal([F64, F64])
    t1 = time.perf_counter()
    module, name, _, _ = kernel_module(element, [ArrayType(F64, 1), F64], cuda_target(gpu.arch))
    t2 = time.perf_counter()
    text, _ = ptx(module, name, gpu.arch)
    t3 = time.perf_counter()
    gpu.load(text).function(name)
    t4 = time.perf_counter()
    return {"srcgrad IR and derivative": t1 - t0, "kernel LLVM IR": t2 - t1, "libdevice, O3, PTX": t3 - t2,
            "driver JIT (cuModuleLoadDataEx)": t4 - t3}


def run(points, repeats):
    gpu = driver()
    xs = to_device(np.linspace(0.0, 1.0, points), gpu)
    ceiling = copy_ms(gpu, xs, repeats)
    rows = []
    for title, (fun, extra, exact) in CASES.items():
        ms, kernel, out = srcgrad_kernel_ms(gpu, fun, extra, xs, repeats)
        if exact is not None:
            host = out.copy_to_host()
            np.testing.assert_allclose(host[:1000], exact(np.linspace(0.0, 1.0, points)[:1000]), rtol=1e-15)
        gbs = 16 * points / ms / 1e6
        jx, nb = jax_ms(fun, extra, points, repeats), numba_ms(fun, extra, points, repeats)
        rows.append((title, ms, gbs, ceiling / ms, jx, nb))
    return gpu, rows, ceiling, launch_overhead_us(gpu), first_call_stages(gpu)


def table(gpu, rows, ceiling, overhead, stages, points):
    fmt = lambda v: "–" if v is None else f"{v:.3g}"   # noqa: E731
    lines = [f"GPU: {gpu.arch}, {gpu.multiprocessors} multiprocessors; {points:,} float64 points; "
             f"device-to-device copy of the same bytes: {ceiling:.3f} ms ({16 * points / ceiling / 1e6:.0f} GB/s)", "",
             "| benchmark | srcgrad kernel (ms) | GB/s | ÷ copy's bandwidth | JAX vmap(grad) (ms) | ÷ JAX | "
             "Numba hand-written (ms) |", "|---|---|---|---|---|---|---|"]
    for title, ms, gbs, frac, jx, nb in rows:
        lines.append(f"| {title} | {ms:.3f} | {gbs:.0f} | {frac:.2f} | {fmt(jx)} | "
                     f"{fmt(ms / jx if jx else None)} | {fmt(nb)} |")
    lines += ["", f"- launch overhead, n = 1, a call through vectorize and ctypes: {overhead:.1f} µs",
              "- first call by stage: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in stages.items())]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=100_000_000)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    try:
        result = run(a.points, a.repeats)
    except CudaUnavailable as e:
        print(f"no GPU here, nothing measured: {e}")
        return
    text = table(*result, a.points)
    print(text)
    if a.record:
        record("cuda_vectorize", f"python benchmarks/cuda_vectorize.py --points {a.points} --repeats {a.repeats} "
                                 "--record", "", text)


if __name__ == "__main__":
    main()
