"""The long fuzz run: random programs checked the four ways of checks.py for N minutes.

    python -m tests.fuzz --minutes N

It prints how many programs were checked (and how many also on the eager mode) and writes
each failing program hypothesis shrank to tests/fuzz/found/, headed by the point it failed
at; move it to tests/fuzz/regressions/ to keep it as a test.
"""
import argparse
import contextlib
import pathlib
import tempfile
import time
import traceback

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import FlakyFailure, UnsatisfiedAssumption

from .array_programs import array_program
from .checks import check_array_program, check_program
from .programs import program
from .test_fuzz import POINTS

FOUND = pathlib.Path(__file__).parent / "found"


def _save(last, error):
    """Write the failing program, headed by its point and the exception. A flaky failure (the
    program failed, then passed when hypothesis ran it again) is headed by the first failure's
    whole traceback, which hypothesis keeps only as a sub-exception."""
    FOUND.mkdir(exist_ok=True)
    path = FOUND / f"found_{time.strftime('%Y%m%d_%H%M%S')}_{len(list(FOUND.glob('*.py')))}.py"
    first = last.get("first_error")
    if isinstance(error, FlakyFailure) and first is not None:
        last = last["first_failed"]
        reason = ["flaky: failed once, then passed when run again; the first failure:"]
        reason += "".join(traceback.format_exception(type(first), first, first.__traceback__)).strip().splitlines()
    else:
        reason = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
    if len(reason) > 23 and not isinstance(error, FlakyFailure):    # the start, and the end where the exception is
        reason = reason[:3] + ["..."] + reason[-20:]
    path.write_text(f"# xy={last.get('x', 0.5)},{last.get('y', 0.5)}\n"
                    + "".join(f"# {line}\n" for line in reason) + last["source"])
    return path


def run(minutes, batch=100):
    deadline = time.time() + 60 * minutes
    folder = pathlib.Path(tempfile.mkdtemp())
    stats = {"programs": 0, "on eager tensors too": 0, "array programs": 0, "failures": 0}
    quick = settings(max_examples=batch, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))

    @quick
    @given(program(), POINTS, POINTS)
    def scalar(source, x, y):
        if time.time() > deadline:
            return
        last.update(source=source, x=x, y=y)
        with _first_error():
            eager = check_program(source, folder, x, y)
        stats["programs"] += 1
        stats["on eager tensors too"] += eager

    @quick
    @given(array_program())
    def arrays(source):
        if time.time() > deadline:
            return
        last.update(source=source)
        with _first_error():
            check_array_program(source, folder)
        stats["array programs"] += 1

    @contextlib.contextmanager
    def _first_error():
        try:
            yield
        except Exception as e:
            if "first_error" not in last and not isinstance(e, UnsatisfiedAssumption):
                last["first_error"] = e
                last["first_failed"] = dict(last)      # the program and point it failed at
            raise

    while time.time() < deadline:
        for test in (scalar, arrays):
            last = {}
            try:
                test()
            except Exception as e:      # hypothesis re-raises after shrinking: `last` is the shrunk one
                stats["failures"] += 1
                print(f"failure, saved to {_save(last, e)}", flush=True)
        print(", ".join(f"{k}: {v}" for k, v in stats.items()), flush=True)
    return stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    args = ap.parse_args()
    stats = run(args.minutes)
    print(f"\n{args.minutes:g} minutes: " + ", ".join(f"{k}: {v}" for k, v in stats.items()))
    raise SystemExit(1 if stats["failures"] else 0)


if __name__ == "__main__":
    main()
