"""Real programs: ADBench's four objectives (GMM, bundle adjustment, hand tracking, LSTM), each
differentiated by srcgrad, JAX, PyTorch and by hand (Numba), at two sizes (issue 29, point 1).

    python benchmarks/real_programs.py [--repeats N] [--quick] [--only gmm,ba,hand,lstm] [--record]

The objectives are in benchmarks/real/ (one module each: srcgrad's version is plain numpy with
loops where the math loops; JAX's is jit of grad/jacfwd/vmap with x64; PyTorch's autograd or
torch.func; the hand-written derivative Numba). For each objective, size and tool: the median
time of a derivative call (the tools take turns; a tool stops once it has 3 samples and has
spent the budget), the first call in a fresh process (decoration or jit to the first
derivative; srcgrad and JAX), and the largest relative difference of each tool's derivative
from srcgrad's (max |a - b| / max |b|) and of srcgrad's from central finite differences on a
few coordinates of each differentiated input. Everything runs on one thread. ``--quick``: small
sizes, few repeats, no fresh processes (a smoke run, not figures to quote).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# the times per call are O3's code: a large function's first calls would run on its quick tier
# (docs/compiler.md "Two tiers"); the first calls, in fresh processes, run as a user's do
os.environ.setdefault("SRCGRAD_USER_TIERS", os.environ.get("SRCGRAD_TIERS", "auto"))
os.environ["SRCGRAD_TIERS"] = "off"
os.environ.setdefault("SRCGRAD_NUM_THREADS", "1")      # one thread each (benchmarks/threads.py times more)

from real import common  # noqa: E402
from real import MODULES  # noqa: E402

TITLES = {"gmm": "GMM gradient", "ba": "BA Jacobian", "hand": "hand tracking Jacobian", "lstm": "LSTM gradient"}
TOLERANCE = {"jax": 1e-8, "torch": 1e-8, "hand": 1e-8, "fd": 1e-7}    # central differences: h**2 and rounding


def _message(error):
    text = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    return text[:160]


def run_case(name, module, label, size, repeats, budget, fresh):
    """The rows of the objective ``name`` at ``size``: the tools', then srcgrad's variants
    (module.VARIANTS: the same derivative from code written otherwise), timed in the same turns."""
    inp = module.inputs(**size)
    fns, results, refused = {}, {}, {}
    makers = {tool: (lambda tool=tool: common.derivative(module, tool, inp)) for tool in common.TOOLS}
    variants = getattr(module, "VARIANTS", {})
    makers.update({f"variant:{k}": (lambda make=make: make(inp)) for k, make in variants.items()})
    for key, make in makers.items():
        try:
            fn = make()
            results[key] = module.standard(fn())            # also the warm-up call
            fns[key] = fn
        except ImportError as e:
            refused[key] = f"not installed ({e.name})"
        except Exception as e:                              # noqa: BLE001 - a refusal is a finding
            refused[key] = f"refused: {_message(e)}"
    row = {"objective": TITLES[name], "size": label, "refused": {}, "diffs": {}}
    row["refused"] = {k: v for k, v in refused.items() if not k.startswith("variant:")}
    ref = results.get("srcgrad")
    others = [t for t in common.TOOLS if t != "srcgrad" and t in results]
    if ref is not None:
        for tool in others:
            row["diffs"][tool] = common.relative_difference(results[tool], ref)
        row["diffs"]["fd"] = common.finite_difference_error(module, inp, ref, plain=False)
    elif others:                                           # srcgrad refused: check the others among themselves
        base = results[others[0]]
        for tool in others[1:]:
            row["diffs"][tool] = common.relative_difference(results[tool], base)
    times, samples = common.timed(fns, repeats, budget)
    row["times"] = {k: v for k, v in times.items() if not k.startswith("variant:")}
    row["samples"] = samples
    row["first"] = {}
    if fresh:
        for tool in ("srcgrad", "jax"):
            if tool in fns:
                try:
                    row["first"][tool] = common.first_call(name, tool, size)
                except Exception as e:                      # noqa: BLE001
                    row["first"][tool] = _message(e)
    rows = [row]
    for key in makers:
        if not key.startswith("variant:"):
            continue
        variant = {"objective": f"{TITLES[name]}, srcgrad variant: {key[8:]}", "size": label, "first": {},
                   "samples": {}, "diffs": {}, "refused": {}, "times": {}, "variant": True,
                   "others": {t: times.get(t) for t in ("jax", "hand")}}
        if key in refused:
            variant["refused"]["srcgrad"] = refused[key]
        else:
            variant["times"]["srcgrad"] = times[key]
            variant["samples"]["srcgrad"] = samples[key]
            if ref is not None:
                variant["diffs"]["srcgrad"] = common.relative_difference(results[key], ref)
        rows.append(variant)
    return rows


def run(repeats, budget, quick, only):
    rows = []
    for name in MODULES:
        if only and name not in only:
            continue
        module = __import__(f"real.{name}", fromlist=[name])
        sizes = module.QUICK if quick else module.SIZES
        for label, size in sizes.items():
            case = run_case(name, module, label, size, repeats, budget, fresh=not quick)
            rows += case
            print(f"  {TITLES[name]}, {label}: " + ", ".join(
                f"{k} {v * 1e3:.3f} ms" for k, v in case[0]["times"].items()), file=sys.stderr, flush=True)
    return rows


def _ms(v):
    if v is None:
        return "–"
    return f"{v * 1e3:,.3f}" if v < 0.01 else f"{v * 1e3:,.1f}" if v < 10 else f"{v * 1e3:,.0f}"


def _seconds(v):
    if v is None:
        return "–"
    return f"{v:.2f} s" if isinstance(v, float) else f"failed: {v}"


def _ratio(a, b):
    return f"{a / b:.2f}" if a and b else "–"


def table(rows):
    head = ["objective", "size", "srcgrad (ms)", "JAX (ms)", "PyTorch (ms)", "by hand, Numba (ms)", "srcgrad ÷ JAX",
            "srcgrad ÷ hand", "first call srcgrad", "first call JAX",
            "max rel. diff from srcgrad: JAX / PyTorch / hand / finite diff."]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    findings = []
    for r in rows:
        t = r["times"]
        vs = r.get("others", t)                 # a variant's ratios: to the tools of its objective's row
        cells = []
        for tool in common.TOOLS:
            if tool in r["refused"]:
                cells.append(r["refused"][tool])
            else:
                cells.append(_ms(t.get(tool)))
        diffs = r["diffs"]
        if r.get("variant"):
            dtext = (f"from the row above's srcgrad: {diffs['srcgrad']:.1e}" if "srcgrad" in diffs else "–")
        else:
            dtext = " / ".join(f"{diffs[k]:.1e}" if k in diffs else "–" for k in ("jax", "torch", "hand", "fd"))
        bad = [k for k, v in diffs.items() if not v <= TOLERANCE.get(k, 1e-8)]
        if bad:
            dtext += " **(over 1e-8: " + ", ".join(bad) + ")**"
            findings.append(f"{r['objective']}, {r['size']}: {', '.join(bad)} differ from srcgrad by more than "
                            "1e-8 (finite differences: 1e-7)")
        first = r["first"]
        out.append("| " + " | ".join([r["objective"], r["size"]] + cells
                                     + [_ratio(t.get("srcgrad"), vs.get("jax")),
                                        _ratio(t.get("srcgrad"), vs.get("hand")),
                                        _seconds(first.get("srcgrad")), _seconds(first.get("jax")), dtext]) + " |")
    samples = sorted({n for r in rows for n in r["samples"].values()})
    out.append("")
    out.append(f"Median of {samples[0]}–{samples[-1]} calls per tool (the tools take turns); first calls in a fresh "
               "process, from decoration (srcgrad) or `jax.jit` to the first derivative, imports and inputs "
               "excluded. Relative differences: max |a − b| / max |b| over the whole derivative; finite "
               "differences: central, on the first, middle and last coordinate of each differentiated input.")
    return "\n".join(out + [f"- {f}" for f in findings])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--budget", type=float, default=8.0, help="seconds a tool may spend on one row's repeats")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated objectives (gmm, ba, hand, lstm)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.repeats = min(args.repeats, 3)
    only = [s for s in args.only.split(",") if s]
    text = table(run(args.repeats, args.budget, args.quick, only))
    print(text)
    if args.record:
        from record import record
        command = f"python benchmarks/real_programs.py --repeats {args.repeats} --budget {args.budget:g}"
        command += (" --quick" if args.quick else "") + (f" --only {args.only}" if only else "") + " --record"
        record("real_programs", command, "one thread for every tool; JAX with x64", text)


if __name__ == "__main__":
    main()
