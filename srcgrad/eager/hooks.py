"""Where the hooks of tensors and nodes are kept: a dict per kind of hook, and the handle that
``register_hook`` returns to take one out again.

Tensors (tensor.py) and nodes (graph.py) both keep hooks; this module is below both.

Example:
    >>> hooks = HookDict()
    >>> hooks[0] = print
    >>> handle = RemovableHandle(hooks, 0)
    >>> handle.remove()
    >>> hooks
    {}
"""
import weakref


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks, key):
        self._hooks = weakref.ref(hooks) if hooks is not None else None
        self._key = key

    def remove(self):
        hooks = self._hooks() if self._hooks else None
        if hooks is not None:
            hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """A dict that a weakref can point at (plain dicts cannot)."""

    __slots__ = ("__weakref__",)
