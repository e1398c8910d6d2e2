"""``srcgrad.autograd.profiler``: op names and counts as torch 2.13's profiler records them, its
table layout, ``record_function``, and nothing left behind once the profile closes."""
import re

import pytest

import srcgrad
from srcgrad.autograd import profiler

torch = pytest.importorskip("torch")


def _workload(T):
    x = T.randn(4, 3, requires_grad=True)
    w = T.randn(3, 2, requires_grad=True)
    for _ in range(2):
        y = (x @ w).relu()
        z = (y * y + 1).mean()
        z.backward()
    x.exp(), T.tanh(x), x[0], x[:, 1:], x[[0, 1]], x.view(12), T.cat([x, x]), x.pow(2), 2 - x, -x
    with T.autograd.profiler.record_function("my_block"):
        x.sin()


def _counts(T, prof_module):
    with prof_module.profile() as prof:
        _workload(T)
    return {e.key: e.count for e in prof.key_averages()}, prof


def test_names_and_counts_match_torch():
    ours, prof = _counts(srcgrad, profiler)
    theirs, _ = _counts(torch, torch.autograd.profiler)
    # every event srcgrad records is one PyTorch records under the same name; PyTorch also records
    # the aten ops its backward formulas run, which srcgrad's numpy backward does not have
    assert set(ours) <= set(theirs)
    for key in ("aten::matmul", "aten::relu", "aten::add", "aten::mean", "aten::exp", "aten::tanh",
                "aten::select", "aten::slice", "aten::index", "aten::cat", "aten::pow", "aten::rsub",
                "aten::neg", "aten::sin", "my_block", "MmBackward0", "ReluBackward0", "MulBackward0", "AddBackward0",
                "MeanBackward0", "torch::autograd::AccumulateGrad"):
        assert ours[key] == theirs[key], key
    assert ours["aten::mul"] == 2 and ours["torch::autograd::AccumulateGrad"] == 4
    block = next(e for e in prof.function_events if e.name == "my_block")
    assert [c.name for c in block.cpu_children] == ["aten::sin"]
    assert block.self_cpu_time_total <= block.cpu_time_total


def _layout(table):
    """The table with times and percentages blanked out."""
    return re.sub(r"\d+\.\d+(%|us|ms|s)", "T", table)


def test_table_layout_matches_torch():
    tables = []
    for T, module in ((srcgrad, profiler), (torch, torch.autograd.profiler)):
        x = T.ones(4, requires_grad=True)
        with module.profile() as prof:
            with module.record_function("a_rather_long_block_name"):
                x.exp()
        tables.append(prof.key_averages().table(sort_by="count", row_limit=1))
    ours, theirs = (_layout(t).splitlines() for t in tables)
    assert ours[:3] == theirs[:3]       # the header rows, column for column
    assert ours[3].split()[0] == theirs[3].split()[0] and ours[-1] == "Self CPU time total: T"
    assert len(ours) == len(theirs) == 6
    assert tables[0].endswith("\n")


def test_table_sorting_row_limit_and_shapes():
    x = srcgrad.ones(4, 3, requires_grad=True)
    with profiler.profile(record_shapes=True) as prof:
        for _ in range(3):
            x * 2
        x.sum(0)
    table = prof.key_averages().table(sort_by="count", row_limit=1)
    rows = table.splitlines()
    assert "aten::mul" in rows[3] and rows[3].rstrip().endswith("3") and "aten::sum" not in table
    grouped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in grouped and "[[4, 3], []]" in grouped and "[[4, 3], []]" in grouped
    assert "Input Shapes" not in prof.key_averages().table()
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="bogus")


def test_nothing_is_left_behind_and_errors_are_clear():
    mul, backward_apply = srcgrad.Tensor.__mul__, srcgrad.eager.ops.pointwise.MulBackward0.apply
    with profiler.profile() as outer:
        assert srcgrad.Tensor.__mul__ is not mul
        with profiler.profile() as inner:         # nested profiles both record
            srcgrad.ones(2) * 2
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            outer.key_averages()
    assert srcgrad.Tensor.__mul__ is mul and srcgrad.eager.ops.pointwise.MulBackward0.apply is backward_apply
    assert [e.key for e in inner.key_averages()] == ["aten::ones", "aten::mul"]
    assert [e.key for e in outer.key_averages()] == ["aten::ones", "aten::mul"]
    with profiler.record_function("ignored"):     # no profile open: records nothing, costs nothing
        pass
    with profiler.profile(enabled=False) as off:
        srcgrad.ones(2) * 2
    assert srcgrad.Tensor.__mul__ is mul and off.function_events is None
    with pytest.raises(RuntimeError, match="CPU only"):
        profiler.profile(use_cuda=True)
    with pytest.raises(NotImplementedError, match="with_stack"):
        profiler.profile(with_stack=True)
