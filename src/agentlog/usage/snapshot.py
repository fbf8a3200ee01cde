"""The price table in use: genai-prices' bundled snapshot, or a newer copy
fetched on request by ``agentlog prices update``.

Nothing here touches the network unless :func:`update_prices` is called.  The
copy is genai-prices' own data file (``genai_prices.update_prices.DEFAULT_UPDATE_URL``,
the JSON that ``UpdatePrices`` polls), validated with genai-prices' loader and
kept as ``genai-prices.json`` in the user cache folder (``platformdirs``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agentlog.usage.genai  # noqa: F401  # first: genai-prices without its network updater

# isort: split
from genai_prices import data_snapshot
from genai_prices.types import _providers_from_raw  # the loader UpdatePrices uses

from agentlog.errors import AgentlogError
from agentlog.usage.pricing import cached_prices_path


def load_snapshot(path: Path | None = None) -> data_snapshot.DataSnapshot:
    """The fetched table at ``path`` (default :func:`cached_prices_path`) when it
    exists and loads, else the bundled one."""
    path = path or cached_prices_path()
    try:
        raw = json.loads(path.read_bytes())
        return data_snapshot.DataSnapshot(providers=_providers_from_raw(raw), from_auto_update=False)
    except (OSError, ValueError):
        return data_snapshot.get_snapshot()


def _download(url: str) -> bytes:
    import httpx2

    response = httpx2.get(url, timeout=httpx2.Timeout(timeout=30, connect=10))
    response.raise_for_status()
    return response.content


def update_prices(
    path: Path | None = None, url: str | None = None, fetch: Callable[[str], bytes] = _download
) -> int:
    """Fetch genai-prices' current table from ``url`` (default genai-prices'
    ``DEFAULT_UPDATE_URL``) into ``path``; returns the number of providers.  The old copy is replaced only by a table that loads.

    Raises :class:`~agentlog.errors.AgentlogError` when the download or the data fails.
    """
    if url is None:
        from genai_prices.update_prices import DEFAULT_UPDATE_URL  # its updater: httpx2, asyncio

        url = DEFAULT_UPDATE_URL
    path = path or cached_prices_path()
    try:
        data = fetch(url)
        raw: Any = json.loads(data)
        providers = _providers_from_raw(raw)
    except Exception as exc:
        raise AgentlogError(f"could not update prices from {url}: {type(exc).__name__}: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return len(providers)
