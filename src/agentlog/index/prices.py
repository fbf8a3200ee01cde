"""The index's ``price_cache``: price tables resolved before, kept under the
fingerprint of the files they came from (:attr:`agentlog.usage.pricing.Pricer.fingerprint`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from agentlog.index.db import transaction
from agentlog.usage.pricing import PriceKey, Pricer, PriceTable, cached_prices_path, default_overrides_path

_TABLE = msgspec.json.Decoder(PriceTable | None)


def kept_pricer(conn: sqlite3.Connection | None, overrides: Path | None = None) -> Pricer:
    """A pricer over the user's price files (``overrides``, else ``prices.toml`` in
    the config folder, and the table ``agentlog prices update`` fetched), seeded
    with the tables the index at ``conn`` kept for exactly those files."""
    pricer = Pricer(overrides or default_overrides_path(), cached_prices_path())
    if conn is not None:
        pricer.known.update(load_prices(conn, pricer.fingerprint))
    return pricer


def load_prices(conn: sqlite3.Connection, fingerprint: str) -> dict[PriceKey, PriceTable | None]:
    """The tables kept under ``fingerprint`` (``None``: the model has no price)."""
    rows = conn.execute(
        "SELECT model, day, service_tier, price FROM price_cache WHERE fingerprint = ?", (fingerprint,)
    )
    return {(model, day, tier): _TABLE.decode(price) for model, day, tier, price in rows}


def save_prices(
    conn: sqlite3.Connection, fingerprint: str, tables: dict[PriceKey, PriceTable | None]
) -> None:
    """Keep ``tables`` under ``fingerprint``, dropping tables kept under another;
    nothing happens on a connection that cannot write."""
    if not tables:
        return
    try:
        with transaction(conn):
            conn.execute("DELETE FROM price_cache WHERE fingerprint != ?", (fingerprint,))
            conn.executemany(
                "INSERT OR REPLACE INTO price_cache VALUES (?, ?, ?, ?, ?)",
                [(fingerprint, *key, msgspec.json.encode(table).decode()) for key, table in tables.items()],
            )
    except sqlite3.OperationalError:  # read-only (the web viewer) or busy past the timeout
        pass
