"""srcgrad.utils.data against torch.utils.data: the same batches, collated values and dtypes,
lengths and error messages wherever the result is deterministic; for the random samplers, a
permutation (or draw) of the right size that ``srcgrad.manual_seed`` makes repeatable."""
import collections
import multiprocessing
import warnings

import numpy as np
import pytest

import srcgrad
import srcgrad.utils.data as sdata

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402

LIBS = [(srcgrad, sdata), (torch, tdata)]
Point = collections.namedtuple("Point", ["x", "label"])


def plain(v):
    """A comparable picture of a value made by either library: tensors as (dtype, values)."""
    if isinstance(v, (srcgrad.Tensor, torch.Tensor)):
        return ("tensor", str(v.dtype), v.tolist())
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (type(v).__name__,) + tuple(plain(x) for x in v)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [plain(x) for x in v])
    if isinstance(v, dict):
        return ("dict", {k: plain(x) for k, x in v.items()})
    return v


def outcome(fn, *args):
    """``plain(fn(*args))``, or the exception's type and message."""
    try:
        return plain(fn(*args))
    except Exception as e:  # the message is part of the behaviour compared
        return f"{type(e).__name__}: {e}"


def same(fn):
    """``fn(lib, data)`` gives the same outcome with srcgrad and with torch; returns it."""
    ours, theirs = (outcome(fn, lib, data) for lib, data in LIBS)
    assert ours == theirs
    return ours


def make_dataset(lib, data, n=10):
    return data.TensorDataset(lib.arange(n * 2.0).reshape(n, 2), lib.arange(n))


class Samples:
    """A map-style dataset (no Dataset base) whose samples mix the types default_collate knows."""

    def __init__(self, n=5):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"array": np.full((2,), i, dtype=np.int16), "scalar": np.float32(i) / 2, "float": i / 4,
                "int": i, "bool": i % 2 == 0, "name": f"s{i}", "raw": b"x" * i,
                "pair": (i, [float(i), -1.0]), "point": Point(np.array([i, i + 1.0]), i)}


# ----------------------------------------------------------------------------- batches


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False),
                                                   (12, True), (None, False)])
def test_sequential_batches_and_len(batch_size, drop_last):
    def batches(lib, data):
        loader = data.DataLoader(make_dataset(lib, data), batch_size=batch_size, shuffle=False,
                                 drop_last=drop_last)
        return len(loader), list(loader), len(list(loader))
    same(batches)


def test_collated_types_and_dtypes():
    out = same(lambda lib, data: list(data.DataLoader(Samples(), batch_size=2)))
    first = out[1][0][1]
    assert first["float"][1] == "torch.float64" and first["int"][1] == "torch.int64"
    assert first["bool"][1] == "torch.bool" and first["scalar"][1] == "torch.float32"
    assert first["array"][1] == "torch.int16" and first["name"] == ("list", ["s0", "s1"])
    same(lambda lib, data: list(data.DataLoader(Samples(), batch_size=None)))   # default_convert


@pytest.mark.parametrize("batch", [
    [1.5, 2], [1, 2, 3], [True, False], [np.float32(1), np.float32(2)], [np.int32(3)], [np.bool_(True)],
    [np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)], [np.zeros((2, 2))], ["a", "b"],
    [b"a", b"b"], [[1, 2], [3, 4]], [(1, "a"), (2, "b")], [{"k": 1.0}, {"k": 2.0}],
    [Point(1, "a"), Point(2, "b")], [collections.OrderedDict(a=1)], [[1, 2], [3]], [object()], [None],
    [np.array(["x"])], [np.array([1, 2]), np.array([1, 2, 3])],
])
def test_default_collate(batch):
    def collate(lib, data):
        converted = [lib.tensor(b) if isinstance(b, np.ndarray) and b.dtype.kind in "f" else b for b in batch]
        return data.default_collate(converted)
    same(collate)


def test_default_collate_stacks_tensors_and_checks_sizes():
    same(lambda lib, data: data.default_collate([lib.ones(2, 3), lib.zeros(2, 3)]))
    same(lambda lib, data: data.default_collate([lib.ones(2, dtype=lib.float64), lib.zeros(2)]))
    same(lambda lib, data: data.default_collate([lib.ones(2), lib.zeros(3)]))


@pytest.mark.parametrize("sample", [
    1.5, 3, "s", np.float64(2.0), np.array([1, 2]), np.array(["a"]), (1, np.array([1])),
    [np.int8(1), "x"], {"a": np.array([1.0])}, Point(np.array(0), 1),
])
def test_default_convert(sample):
    same(lambda lib, data: data.default_convert(sample))


def test_batch_sampler_and_sequential_sampler():
    for drop_last in (False, True):
        same(lambda lib, data: (list(data.BatchSampler(data.SequentialSampler(range(10)), 3, drop_last)),
                                len(data.BatchSampler(range(10), 3, drop_last))))
    same(lambda lib, data: list(data.DataLoader(make_dataset(lib, data),
                                                batch_sampler=data.BatchSampler(range(7), 3, False))))
    same(lambda lib, data: list(data.DataLoader(make_dataset(lib, data), sampler=[9, 0, 4], batch_size=2)))


def test_datasets_index_like_torch():
    same(lambda lib, data: (len(make_dataset(lib, data)), make_dataset(lib, data)[4]))
    same(lambda lib, data: make_dataset(lib, data)[1:3])
    same(lambda lib, data: data.Subset(make_dataset(lib, data), [5, 2, 7])[1])
    same(lambda lib, data: list(data.DataLoader(data.Subset(make_dataset(lib, data), [5, 2, 7]), batch_size=2)))
    same(lambda lib, data: data.Subset(list("abcdef"), [5, 2, 7])[[0, 1]])
    concat = lambda lib, data: data.ConcatDataset([make_dataset(lib, data, 3), make_dataset(lib, data, 4)])
    same(lambda lib, data: (len(concat(lib, data)), concat(lib, data).cumulative_sizes, concat(lib, data)[3],
                            concat(lib, data)[-1], concat(lib, data)[2]))
    same(lambda lib, data: concat(lib, data)[-8])
    same(lambda lib, data: concat(lib, data)[7])
    same(lambda lib, data: len(make_dataset(lib, data, 3) + make_dataset(lib, data, 4)))
    same(lambda lib, data: data.StackDataset(list("abc"), make_dataset(lib, data, 3))[2])
    same(lambda lib, data: data.StackDataset(a=list("abc"), b=data.Subset(list("xyzw"), [3, 2, 1]))[0])
    same(lambda lib, data: list(data.DataLoader(data.StackDataset(x=data.Subset(list("xyzw"), [3, 2, 1]),
                                                                  y=range(3)), batch_size=2)))


@pytest.mark.parametrize("make", [
    lambda lib, data: data.TensorDataset(lib.zeros(3, 2), lib.zeros(4)),
    lambda lib, data: data.ConcatDataset([]),
    lambda lib, data: data.ConcatDataset([make_dataset(lib, data), _stream(data, 3)]),
    lambda lib, data: list(data.ChainDataset([_stream(data, 1), [1]])),
    lambda lib, data: data.StackDataset([1], a=[1]),
    lambda lib, data: data.StackDataset([1], [1, 2]),
    lambda lib, data: data.StackDataset(),
    lambda lib, data: data.Dataset()[0],
    lambda lib, data: iter(data.Sampler()),
    lambda lib, data: len(data.Dataset()),
    lambda lib, data: type("Picky", (data.Subset,), {"__getitem__": lambda self, i: i})([1], [0]),
])
def test_dataset_errors(make):
    assert same(make).split(":")[0] in ("AssertionError", "ValueError", "NotImplementedError", "TypeError")


def test_random_split_lengths():
    lengths = lambda lens: lambda lib, data: [len(s) for s in data.random_split(range(10), lens)]
    for lens in ([3, 7], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4], [1 / 3] * 3, [0.1] * 10, [4, 4], [0.5, 0.6],
                 [-0.5, 1.5]):
        same(lengths(lens))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same(lengths([0.05, 0.05, 0.9]))
    assert [str(w.message) for w in caught] == ["Length of split at index 1 is 0. This might result in an "
                                                "empty dataset."] * 2
    srcgrad.manual_seed(3)
    parts = sdata.random_split(make_dataset(srcgrad, sdata), [0.2, 0.8])
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    srcgrad.manual_seed(3)
    assert sdata.random_split(range(10), [2, 8])[0].indices == parts[0].indices


# ----------------------------------------------------------------------------- the loader's arguments


@pytest.mark.parametrize("kwargs", [
    dict(shuffle=True, sampler=[0, 1]), dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]],
                                                                                    shuffle=True),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_size=None, drop_last=True), dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1), dict(persistent_workers=True),
    dict(multiprocessing_context="fork"), dict(num_workers=1, multiprocessing_context="nope"),
    dict(num_workers=1, multiprocessing_context=3), dict(batch_size=0), dict(batch_size=True),
    dict(batch_size=2.0), dict(drop_last=1),
])
def test_argument_conflicts(kwargs):
    assert same(lambda lib, data: data.DataLoader(make_dataset(lib, data), **kwargs)).startswith(
        ("ValueError", "TypeError"))


def test_valid_multiprocessing_context_and_timeout():
    ctx = multiprocessing.get_all_start_methods()[0]
    loader = sdata.DataLoader(range(3), num_workers=1, multiprocessing_context=ctx, timeout=5)
    assert isinstance(loader.multiprocessing_context, multiprocessing.context.BaseContext)
    assert [b.tolist() for b in loader] == [[0], [1], [2]]
    same(lambda lib, data: iter(data.DataLoader(range(3), timeout=1)))     # no timeout without workers


def test_attributes_are_fixed_after_init():
    for attr in ("batch_size", "sampler", "dataset", "drop_last", "batch_sampler", "persistent_workers"):
        def change(lib, data):
            setattr(data.DataLoader(range(4)), attr, None)
        same(change)
    loader = sdata.DataLoader(range(4))
    loader.num_workers = 0          # not among the fixed ones
    loader.collate_fn = sum


@pytest.mark.parametrize("sampler", [
    lambda lib, data: data.RandomSampler(range(3), replacement=1),
    lambda lib, data: data.RandomSampler(range(3), num_samples=0),
    lambda lib, data: data.RandomSampler([], num_samples=None),
    lambda lib, data: data.WeightedRandomSampler([1.0, 2.0], 0),
    lambda lib, data: data.WeightedRandomSampler([1.0, 2.0], True),
    lambda lib, data: data.WeightedRandomSampler([1.0, 2.0], 2, replacement=0),
    lambda lib, data: data.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda lib, data: list(data.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
    lambda lib, data: list(data.WeightedRandomSampler([1.0, -2.0], 1)),
    lambda lib, data: list(data.WeightedRandomSampler([0.0, 0.0], 1)),
    lambda lib, data: list(data.WeightedRandomSampler([float("nan"), 1.0], 1)),
])
def test_sampler_errors(sampler):
    assert same(sampler).startswith(("ValueError", "TypeError", "RuntimeError"))


def test_pin_memory_warns_as_torch_on_cpu():
    def messages(lib, data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = list(data.DataLoader(range(3), batch_size=2, pin_memory=True, pin_memory_device="cuda"))
        return batches, [str(w.message) for w in caught]
    assert len(same(messages)[1][1]) == 2


# ----------------------------------------------------------------------------- iterable datasets


def stream_class(data):
    class Stream(data.IterableDataset):
        """0..n-1, split between workers as PyTorch's documentation suggests."""

        def __init__(self, n, with_len=False):
            self.n, self.with_len = n, with_len

        def __iter__(self):
            info = data.get_worker_info()
            if info is None:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))

        def __len__(self):
            if not self.with_len:
                raise TypeError("no len")
            return 3
    return Stream


SStream, TStream = stream_class(sdata), stream_class(tdata)


def _stream(data, n, with_len=False):
    """A Stream of the library whose ``data`` module is given."""
    return (SStream if data is sdata else TStream)(n, with_len)


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                                    dict(batch_size=7), dict(batch_size=1)])
def test_iterable_dataset(kwargs):
    same(lambda lib, data: list(data.DataLoader(_stream(data, 7), **kwargs)))
    same(lambda lib, data: list(data.DataLoader(_stream(data, 2) + _stream(data, 3), **kwargs)))


def test_iterable_dataset_len_and_errors():
    same(lambda lib, data: len(data.DataLoader(_stream(data, 7))))
    same(lambda lib, data: (len(data.DataLoader(_stream(data, 7, True), batch_size=2)),
                            len(data.DataLoader(_stream(data, 7, True), batch_size=2, drop_last=True)),
                            len(data.ChainDataset([_stream(data, 1, True)] * 2))))
    for kwargs in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        same(lambda lib, data: data.DataLoader(_stream(data, 7), **kwargs))

    def too_long(lib, data):
        loader = data.DataLoader(_stream(data, 5, True), batch_size=None)
        len(loader)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = list(loader)
        return out, [str(w.message).split(" was reported")[1] for w in caught]
    assert len(same(too_long)[1][1][1]) == 2


def test_num_workers_loads_the_same_batches_in_process():
    seen = []

    def init(worker_id):
        info = sdata.get_worker_info()
        seen.append((worker_id, info.id, info.num_workers, info.dataset is dataset))

    dataset = make_dataset(srcgrad, sdata)
    loader = sdata.DataLoader(dataset, batch_size=4, num_workers=3, worker_init_fn=init)
    expected = [plain(b) for b in sdata.DataLoader(dataset, batch_size=4)]
    assert [plain(b) for b in loader] == expected and [plain(b) for b in loader] == expected
    assert seen == [(0, 0, 1, True)] * 2 and sdata.get_worker_info() is None
    # a stream split between workers comes out whole, once
    assert [b.tolist() for b in sdata.DataLoader(SStream(7), batch_size=3, num_workers=2)] == [[0, 1, 2],
                                                                                                [3, 4, 5], [6]]
    persistent = sdata.DataLoader(dataset, batch_size=4, num_workers=2, persistent_workers=True,
                                  worker_init_fn=init)
    first = iter(persistent)
    assert [plain(b) for b in first] == expected and iter(persistent) is first
    assert [plain(b) for b in persistent] == expected and len(seen) == 3
    assert sdata.get_worker_info() is None


# ----------------------------------------------------------------------------- random order


def test_shuffled_epochs_are_permutations_repeatable_under_manual_seed():
    dataset = make_dataset(srcgrad, sdata, 20)
    loader = sdata.DataLoader(dataset, batch_size=6, shuffle=True)
    assert len(loader) == 4

    def epoch():
        batches = list(loader)
        assert [len(b[1]) for b in batches] == [6, 6, 6, 2]
        labels = [i for b in batches for i in b[1].tolist()]
        assert sorted(labels) == list(range(20))
        for x, y in batches:        # features travel with their labels
            assert x.tolist() == [[2.0 * i, 2.0 * i + 1] for i in y.tolist()]
        return labels

    srcgrad.manual_seed(0)
    first, second = epoch(), epoch()
    assert first != second and first != list(range(20))
    srcgrad.manual_seed(0)
    assert epoch() == first and epoch() == second


def test_random_samplers():
    srcgrad.manual_seed(1)
    s = sdata.RandomSampler(range(7))
    order = list(s)
    assert len(s) == 7 and sorted(order) == list(range(7)) and all(type(i) is int for i in order)
    srcgrad.manual_seed(1)
    assert list(s) == order
    longer = list(sdata.RandomSampler(range(4), num_samples=10))
    assert len(longer) == 10 and sorted(longer[:4]) == sorted(longer[4:8]) == [0, 1, 2, 3]
    drawn = list(sdata.RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) == {0, 1, 2}
    subset = sdata.SubsetRandomSampler([10, 20, 30, 40])
    assert len(subset) == 4 and sorted(subset) == [10, 20, 30, 40]
    weighted = sdata.WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 40)
    assert len(weighted) == 40 and set(weighted) == {1, 2}
    without = list(sdata.WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 4, replacement=False))
    assert sorted(without[:2]) == [1, 2] and sorted(without[2:]) == [0, 3]
    assert str(sdata.WeightedRandomSampler([1, 2], 1).weights.dtype) == "torch.float64"


def test_numpy_generator_argument_gives_an_independent_stream():
    a = list(sdata.RandomSampler(range(9), generator=np.random.default_rng(5)))
    b = list(sdata.RandomSampler(range(9), generator=np.random.default_rng(5)))
    assert a == b and sorted(a) == list(range(9))
    srcgrad.manual_seed(2)
    c = list(sdata.DataLoader(range(9), shuffle=True, generator=srcgrad.manual_seed(2), batch_size=None))
    srcgrad.manual_seed(2)
    assert [int(x) for x in c] == list(sdata.RandomSampler(range(9)))


def test_get_worker_info_is_none_in_the_main_process():
    assert sdata.get_worker_info() is None and tdata.get_worker_info() is None
    assert "DistributedSampler is not supported" in outcome(sdata.DistributedSampler, range(3))
