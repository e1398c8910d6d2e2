"""What PyTorch code asks about accelerators, answered for the eager mode, which runs on the
CPU only: ``torch.cuda.is_available()``, ``torch.accelerator.is_available()`` and
``torch.backends.mps.is_available()`` are False, so the usual device selection picks "cpu";
anything that would need a GPU (``torch.cuda.synchronize()``, ``torch.compile``, the
``distributed`` package) raises an error naming what is missing. (Compiled kernels do run on
NVIDIA GPUs: ``srcgrad.vectorize(f, target="cuda")``.)

Example:
    >>> import srcgrad as torch
    >>> "cuda" if torch.cuda.is_available() else "cpu"
    'cpu'
"""
import types

_NO_GPU = ("srcgrad: {what} is not supported: the eager mode runs on the CPU only (GPU work: compile a function "
           "with srcgrad.vectorize(f, target='cuda'))")


_NO_DISTRIBUTED = ("srcgrad: {what} is not supported: the eager mode trains in one process (compiled gradients "
                   "do travel to worker processes and Dask: docs/distributed.md)")


class _CpuOnly(types.ModuleType):
    """A module whose queries say "none here" and whose other attributes raise ``message``."""

    def __init__(self, name, answers, message=_NO_GPU):
        super().__init__(name)
        self.__dict__.update(answers)
        self._message = message

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise RuntimeError(self._message.format(what=f"{self.__name__.replace('srcgrad', 'torch')}.{attr}"))


def _nothing(*args, **kwargs):
    return None


cuda = _CpuOnly("srcgrad.cuda", {"is_available": lambda: False, "device_count": lambda: 0,
                                 "is_initialized": lambda: False, "manual_seed": _nothing,
                                 "manual_seed_all": _nothing, "empty_cache": _nothing})
accelerator = _CpuOnly("srcgrad.accelerator", {"is_available": lambda: False, "device_count": lambda: 0,
                                               "current_accelerator": _nothing})
mps = _CpuOnly("srcgrad.backends.mps", {"is_available": lambda: False, "is_built": lambda: False})
distributed = _CpuOnly("srcgrad.distributed", {"is_available": lambda: False, "is_initialized": lambda: False},
                       _NO_DISTRIBUTED)


def compile(model=None, **kwargs):
    """``torch.compile``: not here — the eager mode runs as written; compile numpy functions
    with ``srcgrad.jit``/``srcgrad.grad`` instead."""
    raise RuntimeError("srcgrad: torch.compile is not supported: the eager mode runs as written (compile plain "
                       "Python/numpy functions with srcgrad.jit or srcgrad.grad)")


def tensor_cuda(self, device=None, non_blocking=False, memory_format=None):
    raise RuntimeError(_NO_GPU.format(what="Tensor.cuda()"))
