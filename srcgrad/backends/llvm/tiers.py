"""Two tiers of native code for a large function, so that its first call does not wait for
LLVM's O3 pipeline: the *quick* tier (the module through a few cheap passes -- SROA,
instcombine, simplifycfg -- and the code generator without optimisation) runs the first calls,
while the O3 build (jit.py's, the same module) runs on a thread of its own and replaces it
when it is ready (specialisation.py swaps it in between two calls).

Why: O3 and its code generator take 80-90% of a first call and grow faster than the module
(a 130-line geometry objective: 17.6 s of 19.6 s); the quick tier builds the same module in
0.5 s, and its code runs 1.3-7x slower than O3's (measured on benchmarks/real's objectives).

Which functions: those whose LLVM module has at least ``QUICK_MIN_LINES`` lines (below that,
O3 takes under ~0.4 s and a second build would cost more than it saves). ``SRCGRAD_TIERS``
says otherwise: ``off`` (always wait for O3), ``always`` (every function, for tests).

The two tiers compute the same IR; their results can differ where O3 may change the rounding
(a sum it reassociates to vectorise, a math function from the vector library), as the llvm
and python backends' results may (docs/compiler.md).

The O3 builds run one at a time on one thread. llvmlite lets one thread into LLVM at a time
(two builds at once inside LLVM, without its lock, crashed it), so a
function compiled while a build runs waits for that build's current LLVM call; calls of code
already built never wait. At exit, the build in progress finishes and those queued are
dropped; ``os.fork`` waits for the build in progress, and the child builds the queued ones
(its own thread: the parent's did not come along).

Example:
    >>> import srcgrad
    >>> from srcgrad.backends.llvm import tiers
    >>> tiers.wanted("; a small module\\n")
    False
"""
import atexit
import collections
import os
import threading

QUICK_MIN_LINES = 8_000     # O3 + machine code of a module of 6,300 lines took 0.37 s on this machine


def mode():
    """``SRCGRAD_TIERS``: "auto" (the default: large functions get a quick tier), "off" or "always"."""
    value = os.environ.get("SRCGRAD_TIERS", "auto")
    if value not in ("auto", "off", "always"):
        raise ValueError(f"SRCGRAD_TIERS is 'auto', 'off' or 'always', not {value!r}")
    return value


def wanted(module_text):
    """Whether a function whose unoptimised LLVM module is ``module_text`` runs on the quick
    tier while its O3 build runs on another thread."""
    m = mode()
    return m == "always" or (m == "auto" and module_text.count("\n") >= QUICK_MIN_LINES)


class Cancelled(Exception):
    """The interpreter is exiting: a build in the background stops between two stages."""


def check():
    """Raise ``Cancelled`` when the interpreter is exiting (called between a build's stages)."""
    if _exiting:
        raise Cancelled


class Build:
    """``work()``, queued for the builder thread: ``done()`` says whether it has finished,
    ``result()`` waits for its value (or raises its exception)."""

    def __init__(self, work):
        self._work = work
        self._finished = threading.Event()
        self._value = self._error = None
        with _ready:
            _queue.append(self)
            _ready.notify()
        _builder()

    def _run(self):
        try:
            if _exiting:
                raise Cancelled
            self._value = self._work()
        except BaseException as e:          # noqa: B036 -- handed to result()'s caller
            self._error = e
        self._finished.set()

    def done(self):
        return self._finished.is_set()

    def result(self):
        self._finished.wait()
        if self._error is not None:
            raise self._error
        return self._value


_queue = collections.deque()     # builds not started yet, in order
_ready = threading.Condition()   # guards _queue; notified when a build is queued
_running = threading.Lock()      # held while a build runs (fork and exit wait for it)
_thread = []                     # the builder thread, once started
_exiting = False


def _builder():
    """Start the builder thread, if it is not running in this process."""
    if not _thread or not _thread[0].is_alive():
        _thread[:] = [threading.Thread(target=_build_queued, name="srcgrad O3 builder", daemon=True)]
        _thread[0].start()


def _build_queued():
    while True:
        with _ready:
            while not _queue:
                _ready.wait()
        with _running:              # a build leaves the queue only while _running is held
            with _ready:
                build = _queue.popleft() if _queue else None
            if build is not None:
                build._run()


@atexit.register
def _finish_at_exit():
    # the daemon thread would go on inside LLVM while the interpreter finalises, and LLVM's
    # static objects are destroyed after it: wait for the build in progress, drop the rest
    global _exiting
    _exiting = True
    with _running:
        pass


def _before_fork():
    _running.acquire()      # no build inside LLVM (or holding llvmlite's lock) in the child
    _ready.acquire()


def _after_fork_in_parent():
    _ready.release()
    _running.release()


def _after_fork_in_child():
    global _running, _ready
    _running, _ready = threading.Lock(), threading.Condition()
    if _queue:
        _builder()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


__all__ = ["QUICK_MIN_LINES", "mode", "wanted", "Cancelled", "check", "Build"]
