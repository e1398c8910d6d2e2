"""Run every benchmark, one after the other, each printing its table.

    python benchmarks/run_all.py [--record] [--quick]

``--record`` records each table to benchmarks/RESULTS.md (with the command, machine and
versions); ``--quick`` takes fewer repeats (a smoke run, not figures to quote).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = [("eager_overhead.py", "--repeats", 21, 3), ("compiled_loops.py", "--repeats", 15, 3),
              ("compile_time.py", "--samples", 7, 2), ("memory.py", "--calls", 100_000, 5_000),
              ("array_writes.py", "--repeats", 9, 2), ("second_order.py", "--repeats", 9, 2),
              ("vectorize.py", "--repeats", 9, 2), ("nn_training.py", "--repeats", 15, 2),
              ("real_programs.py", "--repeats", 15, 3),
              ("cuda_vectorize.py", "--repeats", 20, 3)]     # GPU: skips without one


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    failed = []
    for script, flag, full, quick in BENCHMARKS:
        command = [sys.executable, os.path.join(HERE, script), flag, str(quick if args.quick else full)]
        if args.record:
            command.append("--record")
        print(f"\n### {script}\n", flush=True)
        if subprocess.run(command).returncode:
            failed.append(script)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
