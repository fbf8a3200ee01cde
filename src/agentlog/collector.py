"""Pausing Python's cyclic garbage collector while many objects are made that
it need not scan (a module with no imports of ours: the entry point uses it
before anything else is loaded)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while parsing allocates millions of
    acyclic objects (it would rescan them over and over: 2x slower on 300 MB).
    The model's structs are ``gc=False`` for the same reason; parsing makes no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
