"""``cache=True``: compiled object code on disk, keyed by what determines it.

The key hashes the IR being compiled (which holds the source and the argument signature),
the compile options, the srcgrad and LLVM versions, the host CPU and the llvm backend's own
source files (so code from a changed backend is never loaded, even where the version number
stayed the same). An entry is the object code behind its SHA-256; a truncated, tampered or
unreadable entry fails the check and is compiled again — never loaded. Writes go to a
temporary file renamed into place, so two processes compiling the same function at once
both end with a whole entry. No code is pickled: the entry is LLVM's object file.

Example:
    cache = DiskCache.for_code(str(ir_function), options="boundscheck=True")
    cache.load() or None        # bytes of object code, or None
"""
import hashlib
import os
import tempfile

import llvmlite
import llvmlite.binding as llvm
from ...version import __version__

_DIGEST = 32
_BACKEND = []


def cache_dir():
    """$SRCGRAD_CACHE_DIR, else ~/.cache/srcgrad."""
    return os.environ.get("SRCGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "srcgrad")


def _backend_digest():
    """A hash of the source files of the llvm backend (this package), once per process."""
    if not _BACKEND:
        h = hashlib.sha256()
        folder = os.path.dirname(os.path.abspath(__file__))
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
        _BACKEND.append(h.hexdigest())
    return _BACKEND[0]


class DiskCache:
    def __init__(self, path):
        self.path = path

    @classmethod
    def for_code(cls, code, options=""):
        h = hashlib.sha256()
        for part in (code, options, __version__, llvmlite.__version__, str(llvm.llvm_version_info),
                     llvm.get_host_cpu_name(), llvm.get_process_triple(), _backend_digest()):
            h.update(part.encode())
            h.update(b"\0")
        return cls(os.path.join(cache_dir(), h.hexdigest()[:40]))

    def load(self):
        """The cached object code and IR text, or None when missing or damaged."""
        try:
            with open(self.path + ".o", "rb") as f:
                blob = f.read()
            with open(self.path + ".ll", "r") as f:
                text = f.read()
        except OSError:
            return None
        digest, payload = blob[:_DIGEST], blob[_DIGEST:]
        if len(digest) != _DIGEST or hashlib.sha256(payload + text.encode()).digest() != digest:
            return None          # truncated or tampered: compile again
        return payload, text

    def store(self, payload, text):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        digest = hashlib.sha256(payload + text.encode()).digest()
        for suffix, data, mode in ((".ll", text, "w"), (".o", digest + payload, "wb")):
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".tmp-")
            with os.fdopen(fd, mode) as f:
                f.write(data)
            os.replace(tmp, self.path + suffix)     # atomic: readers see the old or the new file
