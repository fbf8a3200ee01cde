"""Regular expressions compiled on first use (#17 part 6).

A module-level ``re.compile`` runs at every start-up, used or not: a warm
``agentlog usage`` imports ~50 of agentlog's modules, whose ~20 patterns took
~5 ms of its start-up to compile (bytecode caches the module's code, never
its compiled patterns).  :func:`pattern` gives an object that compiles on the
first call of one of its methods and then holds the compiled pattern's own
bound methods, so every later call costs what a compiled pattern's does.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")
"""The methods of a pattern that :func:`pattern` serves (the only ones its
callers use: never passed to ``re.sub`` & co., never ``isinstance``-tested)."""


class _Pattern:
    """``re.compile(source, flags)`` done when a method is first looked up."""

    def __init__(self, source: str | bytes, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for a name not set yet
        if name not in METHODS:
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for method in METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def pattern(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(source, flags)``, compiled when one of :data:`METHODS` is
    first called.  Raises ``re.error`` then for a bad ``source``."""
    return cast("re.Pattern[AnyStr]", _Pattern(source, flags))
