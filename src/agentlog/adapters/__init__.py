"""Adapter registry: every format agentlog reads, loaded from the
``agentlog.adapters`` entry-point group (built-ins register the same way, so a
third-party package adds an agent by declaring one entry point)."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from agentlog.adapters.base import (
    Adapter,
    Document,
    DocumentAdapter,
    DocumentResult,
    JsonlAdapter,
    LineParser,
    SourceRef,
    ToolOutput,
)

__all__ = [
    "Adapter",
    "Document",
    "DocumentAdapter",
    "DocumentResult",
    "JsonlAdapter",
    "LineParser",
    "SourceRef",
    "ToolOutput",
    "all_adapters",
    "get_adapter",
]

ENTRY_POINT_GROUP = "agentlog.adapters"


LOAD_ERRORS: list[str] = []
"""Entry points that failed to load (``"name: error"``); shown by ``agentlog agents``."""


@cache
def all_adapters() -> tuple[Adapter, ...]:
    """One instance of every registered adapter, sorted by slug.  An entry point
    that fails to import is recorded in :data:`LOAD_ERRORS` and left out."""
    found: dict[str, Adapter] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
            found.setdefault(cls.slug, cls())
        except Exception as exc:  # a broken plugin must not take the others down
            LOAD_ERRORS.append(f"{ep.name}: {type(exc).__name__}: {exc}")
    return tuple(found[slug] for slug in sorted(found))


def get_adapter(slug: str) -> Adapter:
    """The adapter called ``slug``; raises ``KeyError`` naming the known ones."""
    for adapter in all_adapters():
        if adapter.slug == slug:
            return adapter
    known = ", ".join(a.slug for a in all_adapters())
    raise KeyError(f"unknown agent {slug!r} (known: {known})")
