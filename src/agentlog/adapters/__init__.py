"""Adapter registry: every format agentlog reads, loaded from the
``agentlog.adapters`` entry-point group (built-ins register the same way, so a
third-party package adds an agent by declaring one entry point)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from functools import cache
from pathlib import Path

import platformdirs

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
    for name, value in entry_point_values():
        try:
            cls = _load(value)
            found.setdefault(cls.slug, cls())
        except Exception as exc:  # a broken plugin must not take the others down
            LOAD_ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
    return tuple(found[slug] for slug in sorted(found))


def entry_point_values(cache_file: Path | None = None) -> list[tuple[str, str]]:
    """``(name, "module:attribute")`` of every ``agentlog.adapters`` entry point.

    ``importlib.metadata`` takes ~15 ms to import and scan the installed
    distributions, a sixth of a warm ``agentlog usage``; the list is therefore
    kept in ``cache_file`` (default ``entry-points.json`` in the user cache
    folder) under the mtime of every folder on ``sys.path``, which changes when a
    distribution is installed, upgraded or removed there.  The last
    :data:`KEPT_SCANS` scans are kept: ``python -m agentlog`` in different
    folders and the ``agentlog`` script each have their own ``sys.path``.
    """
    cache_file = cache_file or Path(platformdirs.user_cache_dir("agentlog")) / "entry-points.json"
    key = [[folder, _mtime(folder)] for folder in sys.path]
    try:
        scans = [scan for scan in json.loads(cache_file.read_bytes())["scans"] if isinstance(scan, dict)]
        for scan in scans:
            if scan["key"] == key:
                return [(name, value) for name, value in scan["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        scans = []
    from importlib.metadata import entry_points

    values = [(ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP)]
    tmp = cache_file.with_name(f"{cache_file.name}.{os.getpid()}.tmp")
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        scans = [{"key": key, "entry_points": values}, *scans][:KEPT_SCANS]
        tmp.write_text(json.dumps({"scans": scans}))
        os.replace(tmp, cache_file)
    except OSError:  # a read-only or full cache folder only costs the scan next time
        tmp.unlink(missing_ok=True)
    return values


KEPT_SCANS = 8
"""How many ``sys.path`` variants :func:`entry_point_values` remembers."""


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder or ".").st_mtime_ns
    except OSError:
        return None


def _load(value: str) -> type[Adapter]:
    """The object an entry point's ``module:attribute`` names (``EntryPoint.load``)."""
    module, _, attribute = value.partition(":")
    found: object = importlib.import_module(module.strip())
    for part in attribute.strip().split(".") if attribute.strip() else ():
        found = getattr(found, part)
    return found  # type: ignore[return-value]


def get_adapter(slug: str) -> Adapter:
    """The adapter called ``slug``; raises ``KeyError`` naming the known ones."""
    for adapter in all_adapters():
        if adapter.slug == slug:
            return adapter
    known = ", ".join(a.slug for a in all_adapters())
    raise KeyError(f"unknown agent {slug!r} (known: {known})")
