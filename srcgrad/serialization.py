"""``torch.save`` and ``torch.load`` for the eager mode: a pickle of the object (tensors,
Parameters, state_dicts, optimizer states, modules). ``load(..., weights_only=True)`` — the
default, as in PyTorch 2.6+ — unpickles only tensors, numpy arrays and plain containers and
numbers, so a checkpoint from elsewhere cannot run code.

Example:
    >>> import os, tempfile
    >>> import srcgrad as torch
    >>> model = torch.nn.Linear(2, 1)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "model.pt")
    ...     torch.save(model.state_dict(), path)
    ...     model.load_state_dict(torch.load(path, weights_only=True))
    <All keys matched successfully>
"""
import io
import os
import pickle

# what a weights-only load may build: tensors and the containers state_dicts are made of
_SAFE = {
    ("collections", "OrderedDict"), ("builtins", "dict"), ("builtins", "list"), ("builtins", "tuple"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "int"), ("builtins", "float"),
    ("builtins", "bool"), ("builtins", "str"), ("builtins", "complex"), ("builtins", "slice"), ("_codecs", "encode"),
    ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("srcgrad.eager.tensor", "_rebuild"), ("srcgrad.nn.parameter", "_rebuild_parameter"),
    ("srcgrad.nn.parameter", "Parameter"), ("srcgrad.eager.tensor", "Tensor"),
    ("srcgrad.eager.dtypes", "dtype"),
}


class _WeightsOnly(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _SAFE or module.startswith("numpy.dtypes"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed: unsupported global: GLOBAL {module}.{name}. The file holds more than tensors "
            "and containers of them; load it with weights_only=False only if you trust where it came from.")


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True, **kwargs):
    """Write ``obj`` to the path or binary file ``f``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=max(pickle_protocol, 4))
    else:
        pickle_module.dump(obj, f, protocol=max(pickle_protocol, 4))


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read an object that ``save`` wrote; ``map_location`` may only name the CPU."""
    if map_location is not None:
        name = map_location if isinstance(map_location, str) else getattr(map_location, "type", "cpu")
        if not str(name).startswith("cpu"):
            raise RuntimeError(f"srcgrad: map_location={map_location!r}: the eager mode runs on the CPU only")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    if weights_only:
        return _WeightsOnly(io.BytesIO(data)).load()
    return (pickle_module or pickle).loads(data)
