"""Compile time against program size: decoration to the first gradient of generated geometry
objectives of 50 to 1,000 statements, beside JAX's first ``jit(grad)`` call, each in a fresh
process; with the stages of srcgrad's first call and the time until its O3 build is in place.

Each block of the objective is what geometry code does (8 statements): a 3x3 rotation from a
helper of three angles, ``pts @ R.T`` plus a translation, residuals against targets, a branch
on their mean (``jnp.where`` in JAX), and reductions.

    python benchmarks/compile_scaling.py [--sizes 50,100,300,1000] [--record]
"""
import argparse
import tempfile

from compile_time import fresh_output
from record import record

HEAD = '''import math, os, sys, time
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
import numpy as np
TOOL_IMPORT

def rotation(a, b, c):
    ca, sa = NP.cos(a), NP.sin(a)
    cb, sb = NP.cos(b), NP.sin(b)
    cc, sc = NP.cos(c), NP.sin(c)
    return NP.array([[cb * cc, -cb * sc, sb],
                     [sa * sb * cc + ca * sc, ca * cc - sa * sb * sc, -sa * cb],
                     [sa * sc - ca * sb * cc, ca * sb * sc + sa * cc, ca * cb]])

def objective(theta, pts, targets):
    total = 0.0
'''
BLOCK = {
    "srcgrad": '''    R{k} = rotation(theta[{a}], theta[{b}], theta[{c}])
    q{k} = pts @ R{k}.T + theta[{a}:{a} + 3]
    d{k} = q{k} - targets[{k}]
    r{k} = np.sum(d{k} * d{k}, axis=1)
    if np.mean(r{k}) > 1.0:
        total = total + np.sum(np.sqrt(r{k} + 1e-3))
    else:
        total = total + 0.5 * np.sum(r{k})
    total = total + 0.01 * np.max(np.abs(q{k}[:, 2]))
''',
    "jax": '''    R{k} = rotation(theta[{a}], theta[{b}], theta[{c}])
    q{k} = pts @ R{k}.T + theta[{a}:{a} + 3]
    d{k} = q{k} - targets[{k}]
    r{k} = NP.sum(d{k} * d{k}, axis=1)
    big{k} = NP.mean(r{k}) > 1.0
    total = total + NP.where(big{k}, NP.sum(NP.sqrt(r{k} + 1e-3)), 0.0)
    total = total + NP.where(big{k}, 0.0, 0.5 * NP.sum(r{k}))
    total = total + 0.01 * NP.max(NP.abs(q{k}[:, 2]))
''',
}
TAIL = '''    return total

nb = NB
rng = np.random.default_rng(0)
theta = rng.standard_normal(3 * nb + 3)
pts = rng.standard_normal((64, 3))
targets = rng.standard_normal((nb, 64, 3))
t0 = time.perf_counter()
FIRST_CALL
print("first", time.perf_counter() - t0)
AFTER
sys.stdout.flush()
os._exit(0)         # not waiting for a build still running (the table says when it is done)
'''
TOOLS = {
    "srcgrad": dict(
        imports="import srcgrad\nNP = np",
        first="g = srcgrad.grad(objective)\nout = g(theta, pts, targets)",
        after=("spec = g.specialisation\n"
               "for stage, s in spec.timings.items(): print('stage', repr(stage), s)\n"
               "if WAIT: spec.llvm_ir; print('o3', time.perf_counter() - t0)")),
    "jax": dict(
        imports="import jax\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as NP",
        first="out = jax.jit(jax.grad(objective))(theta, pts, targets).block_until_ready()",
        after=""),
}
STATEMENTS_PER_BLOCK = 8


def program(tool, blocks, wait):
    body = "".join(BLOCK[tool].format(k=k, a=3 * k, b=3 * k + 1, c=3 * k + 2) for k in range(blocks))
    t = TOOLS[tool]
    return (HEAD.replace("TOOL_IMPORT", t["imports"]) + body + TAIL.replace("NB", str(blocks))
            .replace("FIRST_CALL", t["first"]).replace("AFTER", t["after"]).replace("WAIT", str(wait)))


def sample(source, folder):
    """{"first": s, "o3": s or absent, "stages": {stage: s}} of one fresh process; None: no tool."""
    printed = fresh_output(source, folder)
    if printed is None:
        return None
    out = {"stages": {}}
    for line in printed.splitlines():
        word, rest = line.split(" ", 1)
        if word == "stage":
            name, seconds = rest.rsplit(" ", 1)
            out["stages"][name.strip("'")] = float(seconds)
        elif word in ("first", "o3"):
            out[word] = float(rest)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,100,300,1000", help="statements of the objective")
    ap.add_argument("--wait-up-to", type=int, default=300,
                    help="wait for the O3 build of objectives up to this many statements")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for statements in [int(s) for s in args.sizes.split(",")]:
            blocks = max(1, statements // STATEMENTS_PER_BLOCK)
            lines = 15 + blocks * STATEMENTS_PER_BLOCK
            ours = sample(program("srcgrad", blocks, statements <= args.wait_up_to), folder)
            jax = sample(program("jax", blocks, False), folder)
            st = ours["stages"]
            front = st.get("frontend", 0) + st.get("derivative", 0) + st.get("python source", 0)
            llvm = sum(v for k, v in st.items() if k.startswith(("llvm", "machine")) and "background" not in k)
            o3 = f"{ours['o3']:.1f} s" if "o3" in ours else "–"
            jax_first = f"{jax['first']:.2f} s" if jax else "–"
            ratio = f"{ours['first'] / jax['first']:.2f}" if jax else "–"
            rows.append(f"| {blocks * STATEMENTS_PER_BLOCK} ({lines} lines) | {ours['first']:.2f} s | {front:.2f} s | "
                        f"{st.get('llvm lowering', 0):.2f} s | {llvm - st.get('llvm lowering', 0):.2f} s | {o3} | "
                        f"{jax_first} | {ratio} |")
            print(rows[-1], flush=True)
    table = ("| statements | srcgrad first gradient | of which frontend + derivative + source | llvm lowering | "
             "quick (or O3) build | O3 build in place | JAX first jit(grad) | srcgrad / JAX |\n"
             "|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))
    print(table)
    if args.record:
        record("compile_scaling", f"python benchmarks/compile_scaling.py --sizes {args.sizes} --record",
               "one fresh process per cell; JAX x64, one thread", table)


if __name__ == "__main__":
    main()
