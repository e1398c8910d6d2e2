"""``srcgrad.autograd.profiler``: count and time the eager ops, as ``torch.autograd.profiler``.

While a ``profile`` is open, every Tensor method and operator, every ``srcgrad.<op>`` and
``srcgrad.nn.functional.<op>`` function and every backward node records an event: forward ops
under PyTorch's ``aten::`` names, backward nodes under their own (``MulBackward0``), leaves'
gradient accumulation as ``torch::autograd::AccumulateGrad``. Outside a profile nothing is
recorded and nothing is checked: the timing wrappers are put in place on entry and taken away
on exit.

Example:
    >>> import srcgrad as torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> with torch.autograd.profiler.profile() as prof:
    ...     (x * 2).sum().backward()
    >>> [e.key for e in prof.key_averages()]
    ['aten::mul', 'aten::sum', 'SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))  # doctest: +SKIP

Limitations: events are timed with ``time.perf_counter_ns`` on the Python side, so an op's
time includes srcgrad's own overhead; there is one profiler state for all threads; functions
bound to other names before the profile opened (``from srcgrad import mul``) are not
recorded; CUDA, memory, FLOP and stack profiling are not available (asking for them raises).
"""
import contextlib
import functools
import json
import time
import types

import numpy as np

from ..eager.patching import Patches

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

_active = []          # the profiles open now
_open = []            # the events not finished yet, innermost last
_record_shapes = [False]
_patches = Patches()  # the timers in place, put back when the last profile closes

# method and function names that PyTorch's profiler shows under another aten:: name
_ATEN_NAMES = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
    "__rtruediv__": "div", "__itruediv__": "div_", "__floordiv__": "floor_divide",
    "__rfloordiv__": "floor_divide", "__mod__": "remainder", "__rmod__": "remainder", "__pow__": "pow",
    "__rpow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul", "__rmatmul__": "matmul", "__neg__": "neg",
    "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not", "__eq__": "eq", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__and__": "bitwise_and",
    "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__setitem__": "index_put_",
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div", "negative": "neg",
    "clip": "clamp", "greater": "gt", "less": "lt", "ger": "outer", "absolute": "abs", "concat": "cat",
    "concatenate": "cat", "float": "to", "double": "to", "half": "to", "long": "to", "int": "to", "bool": "to",
    "cross_entropy": "cross_entropy_loss",
}

# srcgrad.<name> functions that are not ops (PyTorch's profiler shows no aten:: event for them)
_NOT_OPS = {"is_tensor", "is_floating_point", "numel", "typename", "set_printoptions", "manual_seed", "seed",
            "get_default_dtype", "set_default_dtype", "promote_types", "is_grad_enabled",
            "is_inference_mode_enabled", "tensor", "as_tensor", "from_numpy"}

_ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class _TimeStrings:
    """The printed forms of an event's times (``prof.key_averages()[0].cpu_time_str``)."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_TimeStrings):
    """One recorded op call: ``name``, start and end, the events it called (``cpu_children``)."""

    def __init__(self, name, start_ns, input_shapes):
        self.name = self.key = name
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.input_shapes = input_shapes
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def cpu_time_total(self):
        """Microseconds from start to end."""
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def self_cpu_time_total(self):
        """Microseconds not spent in the events this one called."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time={self.cpu_time_str} "
                f"self_cpu_time={self.self_cpu_time_total_str} input_shapes={self.input_shapes}>")


class FunctionEventAvg(_TimeStrings):
    """The events of one name (and input shapes, when grouped so) added up."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_parent = None

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        """Average microseconds per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        shapes = self.input_shapes if self.input_shapes is not None else ""
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us input_shapes={shapes} "
                "cpu_memory_usage=0 cuda_memory_usage=0>")


class EventList(list):
    """A list of events (or of their averages) that prints as PyTorch's profiler table."""

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The table: one row per event, sorted by the attribute ``sort_by`` (largest first),
        at most ``row_limit`` rows (-1: all)."""
        return _build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                            top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One ``FunctionEventAvg`` per event name (and input shapes with ``group_by_input_shape``),
        in the order the names first appear."""
        groups = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            avg = groups.get((e.key, shapes))
            if avg is None:
                avg = groups[(e.key, shapes)] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape
                                                                  else None)
            avg.add(e)
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (chrome://tracing, Perfetto)."""
        starts = [e.start_ns for e in self if isinstance(e, FunctionEvent)]
        t0 = min(starts) if starts else 0
        trace = [{"name": e.name, "ph": "X", "cat": "cpu_op", "ts": (e.start_ns - t0) / 1000.0,
                  "dur": e.cpu_time_total, "pid": 0, "tid": 0,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                 for e in self if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def __str__(self):
        return self.table()


def _build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header, top_level_only, time_unit):
    if not events:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width))
    row_format = "".join("{:>" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    self_total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, self_total), fmt_time(e.self_cpu_time_total),
               _format_time_share(e.cpu_time_total, self_total), fmt_time(e.cpu_time_total), fmt_time(e.cpu_time),
               e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:widths[-1]])
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {fmt_time(self_total)}"]
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------
# recording


def _shapes(args):
    return [list(np.shape(a._data if hasattr(a, "_data") else a))
            if hasattr(a, "_data") or isinstance(a, np.ndarray) else [] for a in args]


def _begin(name, args):
    event = FunctionEvent(name, time.perf_counter_ns(), _shapes(args) if _record_shapes[0] else [])
    if _open:
        event.cpu_parent = _open[-1]
        _open[-1].cpu_children.append(event)
    _open.append(event)
    for prof in _active:
        prof._events.append(event)
    return event


def _end(event):
    event.end_ns = time.perf_counter_ns()
    # an event left open by an exception inside it is closed with it
    while _open and _open.pop() is not event:
        pass


def _timed(name, fn):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        event = _begin(name, args)
        try:
            return fn(*args, **kwargs)
        finally:
            _end(event)
    timed._srcgrad_profiled = fn
    return timed


def _getitem_name(key):
    """``x[key]`` as PyTorch records it: select for ints, slice for slices, index otherwise."""
    parts = key if isinstance(key, tuple) else (key,)
    kinds = set()
    for k in parts:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            kinds.add("select")
        elif isinstance(k, slice):
            kinds.add("slice")
        elif hasattr(k, "_data") and k._data.ndim == 0 and k._data.dtype.kind in "iu":
            kinds.add("select")
        else:
            return "aten::index"
    if "select" in kinds:
        return "aten::select"
    return "aten::slice" if kinds else "aten::alias"


def _timed_getitem(fn):
    @functools.wraps(fn)
    def timed(x, key):
        event = _begin(_getitem_name(key), (x,))
        try:
            return fn(x, key)
        finally:
            _end(event)
    return timed


def _timed_apply(apply):
    @functools.wraps(apply)
    def timed(node, *grads):
        event = _begin(type(node).__name__, grads)
        try:
            return apply(node, *grads)
        finally:
            _end(event)
    return timed


def _timed_finish_leaf(finish):
    @functools.wraps(finish)
    def timed(acc, grads, *rest):
        event = _begin(_ACCUMULATE_GRAD, grads)
        try:
            return finish(acc, grads, *rest)
        finally:
            _end(event)
    return timed


def _install():
    """Put the timing wrappers in place of the ops, the backward nodes' apply and the leaves'
    accumulation."""
    from .. import eager
    from ..eager import __all__ as eager_names
    from ..eager import graph, methods
    from ..eager.patching import REEXPORTS
    from ..eager.tensor import Tensor
    from ..nn import functional

    for name, fn in {**methods.OPERATORS, **methods.METHODS}.items():
        if Tensor.__dict__.get(name) is fn:
            if name == "__getitem__":
                _patches.put(Tensor, name, _timed_getitem(fn))
            else:
                _patches.put(Tensor, name, _timed("aten::" + _ATEN_NAMES.get(name, name), fn))
    for name in eager_names:
        fn = getattr(eager, name)
        if isinstance(fn, types.FunctionType) and name not in _NOT_OPS and not name[0].isupper():
            op = "aten::" + _ATEN_NAMES.get(name, name)
            for module in (eager, *REEXPORTS):
                if getattr(module, name, None) is fn:
                    _patches.put(module, name, _timed(op, fn))
    for name, fn in list(vars(functional).items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("_"):
            _patches.put(functional, name, _timed("aten::" + _ATEN_NAMES.get(name, name), fn))

    classes, todo = [], [graph.Node]
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo.extend(cls.__subclasses__())
    for cls in classes:
        if "apply" in cls.__dict__:
            _patches.put(cls, "apply", _timed_apply(cls.__dict__["apply"]))
    _patches.put(graph, "finish_leaf", _timed_finish_leaf(graph.finish_leaf))


def _uninstall():
    _patches.undo()


class profile:
    """Context manager recording the eager ops run inside it (see the module docstring).

    ``prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)`` prints the
    table; ``record_shapes=True`` keeps each call's input shapes (``key_averages(
    group_by_input_shape=True)`` groups by them).
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        if use_cuda or (use_device is not None and str(use_device) != "cpu"):
            raise RuntimeError("srcgrad's profiler times the CPU only: its tensors live on the CPU, so use_cuda and "
                               "use_device are not available")
        for flag, name in ((with_flops, "with_flops"), (profile_memory, "profile_memory"),
                           (with_stack, "with_stack"), (with_modules, "with_modules")):
            if flag:
                raise NotImplementedError(f"srcgrad's profiler does not support {name}=True; it records op names, "
                                          "counts, CPU times and (record_shapes=True) input shapes")
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False
        self.function_events = None
        self._events = []

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if not _active:
            _install()
        _active.append(self)
        _record_shapes[0] = any(p.record_shapes for p in _active)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return
        _active.remove(self)
        _record_shapes[0] = any(p.record_shapes for p in _active)
        if not _active:
            _uninstall()
        self.function_events = EventList(self._events)

    def _finished(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events averaged per name (see ``EventList.key_averages``)."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The table of every recorded event (``key_averages().table(...)`` groups them)."""
        return self._finished().table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                      max_shapes_column_width, header, top_level_events_only, time_unit)

    def total_average(self):
        return self._finished().total_average()

    @property
    def self_cpu_time_total(self):
        return self._finished().self_cpu_time_total

    def export_chrome_trace(self, path):
        self._finished().export_chrome_trace(path)

    def __str__(self):
        return str(self._finished())


class record_function(contextlib.ContextDecorator):
    """Record the code inside ``with record_function("name"):`` (or a decorated function) as one
    event named ``name``; does nothing when no profile is open."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        if _active:
            self._event = _begin(self.name, ())
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _end(self._event)
            self._event = None
        return False
