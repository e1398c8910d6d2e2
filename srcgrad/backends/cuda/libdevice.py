"""libdevice, NVIDIA's bitcode library of GPU math (``__nv_sin``, ...): found, trimmed to the
functions srcgrad's math table calls, and kept (once a process; on disk between processes).

Linking all of libdevice (349 functions) into each kernel costs 60-70 ms and, unless the rest
is dropped, 21,000 lines of PTX; the trimmed copy (about 30 kB) links in 2-4 ms. Where it is
looked for, in order: ``$SRCGRAD_LIBDEVICE`` (the .bc file), ``$CUDA_HOME`` and ``$CUDA_PATH``
(``nvvm/libdevice/``), the toolkit of the ``nvcc`` or ``ptxas`` on PATH, /usr/local/cuda, and
the ``nvidia-nvvm`` wheel (``pip install 'srcgrad[cuda]'``).

Example:
    >>> bitcode = trimmed()          # bytes: libdevice's __nv_* that target.py names
"""
import glob
import hashlib
import os
import threading

import llvmlite.binding as llvm

from ...errors import SrcGradError
from ..llvm.disk_cache import DiskCache
from .target import LIBDEVICE_FUNCTIONS, initialise
from .toolkit import roots

_lock = threading.Lock()
_trimmed = []


def candidates():
    """The places libdevice may be, in the order they are tried."""
    if os.environ.get("SRCGRAD_LIBDEVICE"):
        yield os.environ["SRCGRAD_LIBDEVICE"]
    for root in roots():
        yield from sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice*.bc")))


def path():
    """The path of libdevice's bitcode, or a SrcGradError saying where it was looked for."""
    for p in candidates():
        if os.path.isfile(p):
            return p
    raise SrcGradError("srcgrad: the CUDA target needs libdevice (libdevice.10.bc) for its math and found none; "
                       "install the CUDA toolkit (and set CUDA_HOME), or pip install 'srcgrad[cuda]' (the "
                       "nvidia-nvvm wheel), or point SRCGRAD_LIBDEVICE at the file")


def trimmed():
    """libdevice's bitcode holding only the functions target.py's math table calls (and what
    they call), made once a process and kept on disk, keyed by the file and LLVM's version."""
    with _lock:
        if _trimmed:
            return _trimmed[0]
        source = path()
        with open(source, "rb") as f:
            whole = f.read()
        entry = DiskCache.for_code(f"libdevice {source} {hashlib.sha256(whole).hexdigest()}",
                                   options="trimmed: " + " ".join(LIBDEVICE_FUNCTIONS))
        hit = entry.load()
        if hit is not None:
            _trimmed.append(hit[0])
            return hit[0]
        initialise()
        lib = llvm.parse_bitcode(whole)
        keep = set(LIBDEVICE_FUNCTIONS)
        for fn in lib.functions:
            if not fn.is_declaration and fn.name not in keep:
                fn.linkage = "internal"         # dropped below unless a kept function calls it
        pm = llvm.ModulePassManager()
        pm.add_global_dead_code_eliminate_pass()
        pm.run(lib, llvm.create_pass_builder(llvm.Target.from_triple("nvptx64-nvidia-cuda")
                                             .create_target_machine(cpu="sm_80", opt=0),
                                             llvm.create_pipeline_tuning_options(speed_level=0)))
        bitcode = lib.as_bitcode()
        entry.store(bitcode, "")
        _trimmed.append(bitcode)
        return bitcode
