"""cache=True: object code on disk, reused by a fresh process, rebuilt when damaged."""
import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import math, sys
    import srcgrad

    def f(x, n):
        s = 0.0
        for i in range(n):
            s += math.sin(x * i)
        return s

    g = srcgrad.grad(f, cache=True)
    print(g(0.3, 100), g._last.run.from_cache)
""")


def _run(tmp_path, env):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, check=True).stdout
    value, hit = out.split()
    return float(value), hit == "True"


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["SRCGRAD_CACHE_DIR"] = str(tmp_path / "cache")
    return e


def test_second_process_loads_from_the_cache(tmp_path, env):
    v1, hit1 = _run(tmp_path, env)
    v2, hit2 = _run(tmp_path, env)
    assert (hit1, hit2) == (False, True) and v1 == v2
    assert any(n.endswith(".o") for n in os.listdir(tmp_path / "cache"))


@pytest.mark.parametrize("damage", ["truncate", "tamper"])
def test_damaged_entry_is_compiled_again(tmp_path, env, damage):
    v1, _ = _run(tmp_path, env)
    cache = tmp_path / "cache"
    for name in os.listdir(cache):
        if name.endswith(".o"):
            data = (cache / name).read_bytes()
            (cache / name).write_bytes(data[: len(data) // 2] if damage == "truncate"
                                       else data[:-8] + bytes(8))
    v2, hit = _run(tmp_path, env)
    assert not hit and v2 == v1
    v3, hit3 = _run(tmp_path, env)          # rewritten whole
    assert hit3 and v3 == v1


def test_two_processes_writing_at_once(tmp_path, env):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    procs = [subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate()[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0][0] == outs[1][0]
    _, hit = _run(tmp_path, env)
    assert hit
