"""``srcgrad.nn``: only ``nn.functional`` so far (no Module classes)."""
from . import functional  # noqa: F401
