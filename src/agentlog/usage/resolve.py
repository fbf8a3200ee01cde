"""Price tables from genai-prices and the user's overrides: the one module that
imports genai-prices (~0.1 s), loaded by :class:`agentlog.usage.pricing.Pricer`
only when a (model, day, service tier) is not known yet.

Overrides: ``prices.toml`` with genai-prices' key names, USD per million tokens
and optional tiers (see :mod:`agentlog.usage.pricing`).  An override's key is
normalised as recorded ids are (:func:`agentlog.usage.models.normalize`: case,
provider prefixes, Vertex ``@date``, Bedrock ids), and it applies to every
recorded id one of whose :func:`~agentlog.usage.models.candidates` is that key —
``[models."claude-sonnet-4"]`` prices ``claude-sonnet-4-20250514``,
``anthropic/claude-sonnet-4`` and ``claude-sonnet-4-latest`` — before the bundled
table is consulted for any of them: the user's price wins over the table's,
even where the table knows the dated id.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import agentlog.usage.genai  # noqa: F401  # first: genai-prices without its network updater

# isort: split
from genai_prices import data_snapshot
from genai_prices.types import ModelInfo, ModelPrice, Tier, TieredPrices, TimeOfDateConstraint

from agentlog.adapters._values import STANDARD_TIERS
from agentlog.errors import UsageError
from agentlog.readers import open_regular
from agentlog.usage.models import candidates, normalize
from agentlog.usage.money import rate
from agentlog.usage.pricing import PriceTable, Rates
from agentlog.usage.snapshot import load_snapshot

_MTOK = 10**6
_KEYS = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok", "output_mtok")


def _at(value: Decimal | TieredPrices | None, level: int) -> Decimal | None:
    if isinstance(value, TieredPrices):
        price = value.base
        for tier in value.tiers:
            if tier.start <= level:
                price = tier.price
        return price
    return value


def table_from(model: str, provider: str, price: ModelPrice) -> PriceTable:
    """A :class:`PriceTable` from a genai-prices ``ModelPrice`` (USD per MTok), in
    whole pico-dollars per token (:func:`agentlog.usage.money.rate`).

    A missing cache-read or cache-write price falls back to the input price, a
    missing 1-hour price to the 5-minute one (genai-prices' unit decomposition).
    """
    values = {key: getattr(price, key, None) for key in (*_KEYS, "web_searches_kcount")}
    starts = sorted({t.start for v in values.values() if isinstance(v, TieredPrices) for t in v.tiers})
    tiers = []
    for level in (-1, *starts):
        at = {key: _at(value, level) for key, value in values.items()}
        inp = at["input_mtok"] or Decimal(0)
        write = at["cache_write_mtok"] if at["cache_write_mtok"] is not None else inp
        rates = Rates(
            input=rate(inp, _MTOK),
            cache_read=rate(at["cache_read_mtok"] if at["cache_read_mtok"] is not None else inp, _MTOK),
            cache_write_5m=rate(write, _MTOK),
            cache_write_1h=rate(
                at["cache_write_1h_mtok"] if at["cache_write_1h_mtok"] is not None else write, _MTOK
            ),
            output=rate(at["output_mtok"] or Decimal(0), _MTOK),
            web_search=rate(at["web_searches_kcount"] or Decimal(0), 1000),
        )
        tiers.append((level, rates))
    return PriceTable(model=model, provider=provider, tiers=tuple(tiers))


def load_overrides(path: Path | None) -> dict[str, ModelPrice]:
    """Normalised model id (:func:`~agentlog.usage.models.normalize`) → prices
    from an override file; ``{}`` when absent.

    Raises :class:`~agentlog.errors.UsageError` for a malformed file, or two
    entries whose ids normalise to one model.
    """
    if path is None:
        return {}
    try:
        with open_regular(path) as fh:  # a FIFO there is never waited on
            data = tomllib.loads(fh.read().decode("utf-8"))
    except FileNotFoundError:
        return {}
    except OSError as exc:  # EACCES, a FIFO or device ("not a regular file (FIFO)")
        raise UsageError(f"{path}: cannot read price overrides ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read price overrides ({exc})") from None
    models = data.get("models") or {}
    if not isinstance(models, dict):
        raise UsageError(f"{path}: models must be a table of [models.\"<model id>\"] entries")
    out: dict[str, ModelPrice] = {}
    named: dict[str, str] = {}
    for model, spec in models.items():
        if not isinstance(spec, dict):
            raise UsageError(f"{path}: [models.{model!r}] must be a table")
        key = normalize(model)[0]
        if key in named:
            raise UsageError(f"{path}: [models.{named[key]!r}] and [models.{model!r}] both price {key!r}")
        named[key] = model
        out[key] = _override_price(path, model, spec)
    return out


MAX_PRICE = 1_000_000
"""The highest rate a ``prices.toml`` may give, in USD per million tokens (per
thousand web searches): far above any model's, so a typo such as ``1e308`` is
refused instead of printing a 300-digit cost."""


def _override_price(path: Path, model: str, spec: Mapping[str, Any]) -> ModelPrice:
    def number(value: Any, key: str) -> Decimal:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0 <= value <= MAX_PRICE
        ):
            raise UsageError(f"{path}: models.{model}.{key} must be a number from 0 to {MAX_PRICE:,}")
        return Decimal(str(value))

    def start(tier: Any) -> int:
        value = tier.get("start") if isinstance(tier, dict) else None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"{path}: each of models.{model}.tiers needs a whole start >= 0 (tokens)")
        return value

    tiers = spec.get("tiers") or []
    if not isinstance(tiers, list):
        raise UsageError(f"{path}: models.{model}.tiers must be a list of tables")
    known = (*_KEYS, "web_searches_kcount")
    for where, keys, allowed in [
        (f"models.{model}", spec, (*known, "tiers")),
        *((f"models.{model}.tiers", t, (*known, "start")) for t in tiers if isinstance(t, dict)),
    ]:
        if unknown := sorted(set(keys) - set(allowed)):  # a typo would price the model at 0 silently
            raise UsageError(f"{path}: {where}: unknown key {unknown[0]!r} (known: {', '.join(allowed)})")
    prices: dict[str, Decimal | TieredPrices] = {}
    for key in (*_KEYS, "web_searches_kcount"):
        if key not in spec:
            continue
        base = number(spec[key], key)
        steps = [(start(t), number(t[key], key)) for t in tiers if isinstance(t, dict) and key in t]
        if steps:
            prices[key] = TieredPrices(base=base, tiers=[Tier(start=s, price=p) for s, p in steps])
        else:
            prices[key] = base
    return ModelPrice(**prices)


def _price_context(service_tier: str | None) -> dict[str, str] | None:
    """genai-prices' request context for a call's tier: OpenAI and Google price
    ``service_tier`` variants (priority, flex, fast); Anthropic prices fast mode
    as a ``speed`` variant (Claude Code writes ``usage.speed: "fast"``).  A
    variant matches when all its keys do, so both can be given."""
    if not service_tier:
        return None
    return {"service_tier": service_tier, **({"speed": "fast"} if service_tier == "fast" else {})}


class Resolver:
    """Finds the price of a recorded model id at a time, in the overrides first,
    then in a genai-prices snapshot (``None``: the bundled one)."""

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        snapshot: data_snapshot.DataSnapshot | None = None,
    ) -> None:
        self.overrides = dict(overrides or {})
        self._snapshot = snapshot or data_snapshot.get_snapshot()
        self._infos: dict[str, tuple[str, ModelInfo, bool] | None] = {}

    @classmethod
    def from_files(cls, overrides_path: Path | None, snapshot_path: Path | None) -> Resolver:
        """A resolver over an override file and a fetched table (see :class:`Pricer`)."""
        snapshot = load_snapshot(snapshot_path) if snapshot_path else None
        return cls(load_overrides(overrides_path), snapshot)

    def resolve(
        self, model: str, when: datetime, service_tier: str | None = None
    ) -> tuple[PriceTable | None, bool]:
        """``(the rates for model at when, or None; whether they hold all that UTC
        day)``: off-peak prices (DeepSeek) change within a day."""
        ref, provider = normalize(model, when)
        tried = candidates(ref)
        for candidate in tried:  # the user's prices first, for every form of the id
            if candidate in self.overrides:
                return table_from(candidate, "override", self.overrides[candidate]), True
        for candidate in tried:
            found = self._info(candidate, provider)
            if found is not None:
                provider_id, info, time_of_day = found
                context = _price_context(service_tier)
                return table_from(info.id, provider_id, info.get_prices(when, context)), not time_of_day
        return None, True

    def service_tiers(self) -> tuple[str, ...]:
        """The service tier names a price can be asked at, sorted: the standard
        names (:data:`~agentlog.adapters._values.STANDARD_TIERS`), ``fast`` (the
        ``speed`` variant) and every ``service_tier`` a variant in the snapshot
        prices."""
        names = set(STANDARD_TIERS) | {"fast"}
        for provider in self._snapshot.providers:
            for model in provider.models:
                for variant in model.price_variants or ():
                    tier = variant.when.get("service_tier")
                    if isinstance(tier, str):
                        names.add(tier.lower())
        return tuple(sorted(names))

    def _info(self, ref: str, provider: str | None) -> tuple[str, ModelInfo, bool] | None:
        cache_key = f"{provider}|{ref}"
        if cache_key not in self._infos:
            try:
                prov, info = self._snapshot.find_provider_model(ref, None, provider, None)
            except LookupError:
                self._infos[cache_key] = None
            else:
                conditional = info.prices if isinstance(info.prices, list) else []
                time_of_day = any(isinstance(c.constraint, TimeOfDateConstraint) for c in conditional)
                self._infos[cache_key] = (prov.id, info, time_of_day)
        return self._infos[cache_key]
