"""A pytest plugin that runs every ``grad``, ``value_and_grad`` and ``vjp`` of the tests under
``checkpoint=N`` (N from $SRCGRAD_TEST_CHECKPOINT, 2 by default), so the suites that check
gradients against finite differences, PyTorch and the python backend check the checkpointed
reverse sweep too (docs/reliability.md):

    SRCGRAD_TEST_CHECKPOINT=2 python -m pytest -p tests.checkpoint_everywhere tests/compiler/test_undo_log.py

N = 1 makes every long loop quadratic (one snapshot: each iteration recomputed from the start).
"""
import os

import srcgrad

SLOTS = int(os.environ.get("SRCGRAD_TEST_CHECKPOINT", "2"))


def _checkpointed(make):
    def wrapped(fun=None, **options):
        options.setdefault("checkpoint", SLOTS)
        return make(**options) if fun is None else make(fun, **options)
    return wrapped


def _checkpointed_vjp(vjp):
    def wrapped(fun, *primals, **options):
        options.setdefault("checkpoint", SLOTS)
        return vjp(fun, *primals, **options)
    return wrapped


srcgrad.grad = _checkpointed(srcgrad.grad)
srcgrad.value_and_grad = _checkpointed(srcgrad.value_and_grad)
srcgrad.vjp = _checkpointed_vjp(srcgrad.vjp)
