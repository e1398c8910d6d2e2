"""Where the CUDA tools the target uses may be: the folders that hold a toolkit's layout
(``bin/ptxas``, ``nvvm/libdevice/``), in the order they are tried, for libdevice.py and ptx.py.

Example:
    [os.path.join(root, "bin", "ptxas") for root in roots()]
"""
import glob
import os
import shutil
import sys


def roots():
    """``$CUDA_HOME``, ``$CUDA_PATH``, the toolkit of the ``nvcc`` or ``ptxas`` on PATH,
    /usr/local/cuda, and the NVIDIA wheels' folders (``nvidia/cu13`` of nvidia-nvvm and
    nvidia-cuda-nvcc: ``pip install 'srcgrad[cuda]'``)."""
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(name):
            yield os.environ[name]
    for tool in ("nvcc", "ptxas"):
        found = shutil.which(tool)
        if found:
            yield os.path.dirname(os.path.dirname(os.path.realpath(found)))
    yield "/usr/local/cuda"
    for site in sys.path:
        yield from sorted(glob.glob(os.path.join(site, "nvidia", "cu*")))
        yield os.path.join(site, "nvidia", "cuda_nvcc")
