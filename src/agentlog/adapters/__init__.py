"""Adapter registry: every format agentlog reads, loaded from the
``agentlog.adapters`` entry-point group (built-ins register the same way, so a
third-party package adds an agent by declaring one entry point)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

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
    "LazyAdapter",
    "LineParser",
    "SourceRef",
    "ToolOutput",
    "all_adapters",
    "get_adapter",
    "registered",
    "resolved",
]

ENTRY_POINT_GROUP = "agentlog.adapters"


LOAD_ERRORS: list[str] = []
"""Entry points that failed to load (``"name: error"``); shown by ``agentlog agents``."""


@cache
def all_adapters() -> tuple[Adapter, ...]:
    """One instance of every registered adapter, sorted by slug.  An entry point
    that fails to import is recorded in :data:`LOAD_ERRORS` and left out."""
    found: dict[str, Adapter] = {}
    failed = {error.partition(":")[0] for error in LOAD_ERRORS}
    for name, value in entry_point_values():
        if name in failed:  # said once already (by registered)
            continue
        try:
            adapter = _instance(value)
            found.setdefault(adapter.slug, adapter)
        except Exception as exc:  # a broken plugin must not take the others down
            LOAD_ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
    _loaded.add("all_adapters")
    return tuple(found[slug] for slug in sorted(found))


def entry_point_values(cache_file: Path | None = None) -> list[tuple[str, str]]:
    """``(name, "module:attribute")`` of every ``agentlog.adapters`` entry point.

    ``importlib.metadata`` takes ~15 ms to import and scan the installed
    distributions, a sixth of a warm ``agentlog usage``; the list is therefore
    kept in ``cache_file`` (default ``entry-points.json`` in the user cache
    folder) under each folder on ``sys.path``: its mtime and its distributions'
    metadata entries (:func:`_metadata`).  A folder's mtime changes when a
    distribution is installed, upgraded or removed there, but also when any
    other file comes or goes (the working folder that ``python -m agentlog``
    puts first, ``/tmp``); so when a folder's mtime moved, its metadata entries
    are listed again (one ``os.scandir``, a ``stat`` each: ~0.1 ms for ``/tmp``)
    and the scan is kept while they are the same; the cache is not written
    again for that (a write costs more than the listing).  The last
    :data:`KEPT_SCANS` scans are kept: ``python -m agentlog`` in different
    folders and the ``agentlog`` script each have their own ``sys.path``.
    """
    cache_file = cache_file or Path(platformdirs.user_cache_dir("agentlog")) / "entry-points.json"
    folders = list(sys.path)
    mtimes = [_mtime(folder) for folder in folders]
    try:
        scans = [scan for scan in json.loads(cache_file.read_bytes())["scans"] if isinstance(scan, dict)]
        for scan in scans:
            key = scan["key"]
            if [folder for folder, *_ in key] != folders:
                continue
            moved = [at for at, (_, mtime, _) in enumerate(key) if mtime != mtimes[at]]
            if any(key[at][2] is None or _metadata(folders[at]) != key[at][2] for at in moved):
                break  # a distribution came, went or changed there (or the folder is no listing): scan
            return [(name, value) for name, value in scan["entry_points"]]
    except (OSError, ValueError, KeyError, TypeError):
        scans = []
    from importlib.metadata import entry_points

    values = [(ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP)]
    key = [[folder, mtime, _metadata(folder)] for folder, mtime in zip(folders, mtimes, strict=True)]
    _save(cache_file, scans, {"key": key, "entry_points": values})
    return values


def _save(cache_file: Path, scans: list[dict[str, Any]], scan: dict[str, Any]) -> None:
    """``scan`` first in ``cache_file``, then the other ``scans`` (not of the same
    ``sys.path``), :data:`KEPT_SCANS` in all; written whole or not at all."""
    folders = [folder for folder, *_ in scan["key"]]
    others = [s for s in scans if [folder for folder, *_ in s.get("key", [])] != folders]
    tmp = cache_file.with_name(f"{cache_file.name}.{os.getpid()}.tmp")
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"scans": [scan, *others][:KEPT_SCANS]}))
        os.replace(tmp, cache_file)
    except (OSError, TypeError, ValueError):  # a read-only or full cache folder only costs the scan next time
        tmp.unlink(missing_ok=True)


KEPT_SCANS = 8
"""How many ``sys.path`` variants :func:`entry_point_values` remembers."""


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder or ".").st_mtime_ns
    except OSError:
        return None


DISTRIBUTION_SUFFIXES = (".dist-info", ".egg-info")
"""The entries of a ``sys.path`` folder ``importlib.metadata`` reads distributions
from (CPython's ``importlib.metadata.Lookup``: names ending so, any case)."""


def _metadata(folder: str) -> list[list[Any]] | None:
    """The distributions' metadata entries of the ``sys.path`` folder ``folder``
    (:data:`DISTRIBUTION_SUFFIXES`) as ``[name, mtime_ns]``, sorted: a
    distribution installed again under the same name (``pip install -e`` of the
    same version) is a new entry with a new mtime.  ``None`` for what is not a
    plain folder to list (a zip file, an ``.egg``, a missing path): only its
    own mtime counts then."""
    if folder.lower().rstrip(os.sep).endswith(".egg"):
        return None
    try:
        with os.scandir(folder or ".") as entries:
            found = [e for e in entries if e.name.lower().endswith(DISTRIBUTION_SUFFIXES)]
        return sorted([e.name, _entry_mtime(e)] for e in found)
    except OSError:
        return None


def _entry_mtime(entry: os.DirEntry[str]) -> int | None:
    try:
        return entry.stat().st_mtime_ns
    except OSError:
        return None


def _load(value: str) -> type[Adapter]:
    """The object an entry point's ``module:attribute`` names (``EntryPoint.load``)."""
    module, _, attribute = value.partition(":")
    found: object = importlib.import_module(module.strip())
    for part in attribute.strip().split(".") if attribute.strip() else ():
        found = getattr(found, part)
    return found  # type: ignore[return-value]


class _Reading(Mapping[str, str]):
    """The environment as an adapter's ``default_roots`` reads it: which
    variables it looked at (their values are the roots' cache key); ``whole``
    once it went through all of them (then nothing is cached)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.read: set[str] = set()
        self.whole = False

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.env[key]

    def __iter__(self) -> Iterator[str]:
        self.whole = True
        return iter(self.env)

    def __len__(self) -> int:
        self.whole = True
        return len(self.env)


class LazyAdapter:
    """A registered adapter known by what a sync asks of every adapter — its
    ``slug``, ``parser_version``, ``project_files``, ``project_owned`` and the roots
    ``default_roots`` returns — kept in the registry cache
    (:func:`registered`), its module imported only when more is asked of it
    (:meth:`load`; any other attribute).  ``default_roots`` is pure (a function of
    the environment and home folder, ``shared/DESIGN.md`` §4): its result is
    cached under the values of the variables it read, and the module's file."""

    def __init__(self, name: str, value: str, meta: dict[str, Any], cache: _Registry) -> None:
        self.name, self.value, self._meta, self._cache = name, value, meta, cache
        self._real: Adapter | None = None
        self.slug: str = meta["slug"]
        self.parser_version: int = meta["parser_version"]
        self.project_files: tuple[str, ...] = tuple(meta["project_files"])
        self.project_owned: tuple[str, ...] = tuple(meta["project_owned"])

    @property
    def stamp(self) -> list[Any] | None:
        """``[file, size, mtime_ns]`` of the adapter's module as the registry cache
        knew it (:func:`registered` checked it this run), without importing it."""
        found: list[Any] | None = self._meta.get("stamp")
        return found

    def load(self) -> Adapter:
        """The adapter itself (importing its module)."""
        if self._real is None:
            self._real = _instance(self.value)
        return self._real

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        keys = self._meta.get("env_read")
        if keys is not None:
            key = json.dumps([str(home), [env.get(k) for k in keys]])
            roots = self._meta.setdefault("roots", {}).get(key)
            if roots is not None:
                return [Path(r) for r in roots]
        reading = _Reading(env)
        found = self.load().default_roots(reading, home)
        if reading.whole:
            return list(found)
        self._meta["env_read"] = sorted(reading.read | set(keys or ()))
        key = json.dumps([str(home), [env.get(k) for k in self._meta["env_read"]]])
        roots_by_key = self._meta.setdefault("roots", {})
        if len(roots_by_key) >= KEPT_SCANS:
            roots_by_key.clear()
        roots_by_key[key] = [str(r) for r in found]
        self._cache.changed = True
        return list(found)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.load(), name)


def resolved(adapter: Adapter | LazyAdapter) -> Adapter:
    """``adapter`` itself, a :class:`LazyAdapter` loaded."""
    return adapter.load() if isinstance(adapter, LazyAdapter) else adapter


class _Registry:
    """The registry cache file (``adapters.json`` beside the entry points'):
    per entry point, its module file's size and mtime and what
    :class:`LazyAdapter` keeps."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        try:
            data = json.loads(path.read_bytes())
            self.entries: dict[str, dict[str, Any]] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.entries = {}

    def save(self) -> None:
        if not self.changed:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self.entries))
            os.replace(tmp, self.path)
        except OSError:  # a read-only or full cache folder only costs the imports next time
            tmp.unlink(missing_ok=True)
        self.changed = False


def _module_stamp(value: str) -> list[Any] | None:
    """``[file, size, mtime_ns]`` of the module an entry point names (found, not imported)."""
    from importlib.util import find_spec

    try:
        spec = find_spec(value.partition(":")[0].strip())
        origin = spec.origin if spec is not None else None
        st = os.stat(origin) if origin else None
    except (ImportError, ValueError, OSError):
        return None
    return [origin, st.st_size, st.st_mtime_ns] if st is not None else None


@cache
def registered() -> tuple[Adapter | LazyAdapter, ...]:
    """Every registered adapter as :func:`all_adapters` lists them, each a
    :class:`LazyAdapter` when the registry cache knows it (its module is then
    imported only when a sync finds files of it): a command that reads two
    agents' logs does not import thirty parsers (~20 ms of a warm report)."""
    if "all_adapters" in _loaded:
        return all_adapters()
    registry = _Registry(Path(platformdirs.user_cache_dir("agentlog")) / "adapters.json")
    found: dict[str, Adapter | LazyAdapter] = {}
    for name, value in entry_point_values():
        stamp = _module_stamp(value)
        meta = registry.entries.get(value)
        if meta is None or meta.get("stamp") != stamp or stamp is None or "project_owned" not in meta:
            try:
                adapter = _instance(value)
            except Exception as exc:  # a broken plugin must not take the others down
                LOAD_ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            meta = {
                "stamp": stamp,
                "slug": adapter.slug,
                "parser_version": adapter.parser_version,
                "project_files": list(adapter.project_files),
                "project_owned": list(getattr(adapter, "project_owned", ())),
            }
            registry.entries[value] = meta
            registry.changed = True
            lazy = LazyAdapter(name, value, meta, registry)
            lazy._real = adapter
        else:
            lazy = LazyAdapter(name, value, meta, registry)
        found.setdefault(lazy.slug, lazy)
    _registries.append(registry)
    return tuple(found[slug] for slug in sorted(found))


_loaded: set[str] = set()
_registries: list[_Registry] = []


def save_registry() -> None:
    """Write what :class:`LazyAdapter` objects learnt this run (roots) to the cache."""
    for registry in _registries:
        registry.save()


@cache
def _instances() -> dict[str, Adapter]:
    return {}


def _instance(value: str) -> Adapter:
    """One instance per entry point value (shared with :func:`all_adapters`)."""
    made = _instances()
    if value not in made:
        made[value] = _load(value)()
    return made[value]


def get_adapter(slug: str) -> Adapter:
    """The adapter called ``slug`` (only its module imported, when the registry
    cache knows it); raises ``KeyError`` naming the known ones."""
    for adapter in registered():
        if adapter.slug == slug:
            return resolved(adapter)
    known = ", ".join(a.slug for a in registered())
    raise KeyError(f"unknown agent {slug!r} (known: {known})")
