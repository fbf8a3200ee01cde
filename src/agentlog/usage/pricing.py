"""Prices per call from genai-prices' bundled table (plus user overrides).

Rules (``shared/cost.md`` §0–§2, §6):

* the price in force at the call's timestamp (genai-prices ``ConditionalPrice``
  start dates and time-of-day windows; the variant for a recorded
  ``service_tier`` such as ``priority``/``fast``);
* the context tier from that call's whole prompt, ``input + cache read + cache
  writes``: above a tier's ``start`` (200,000 for Anthropic/Google, 272,000 for
  GPT-5.4+) **every** token of the call is billed at that tier; exactly at the
  threshold stays on the base rate (genai-prices ``TieredPrices``);
* 5-minute writes at ``cache_write_mtok``, 1-hour writes at ``cache_write_1h_mtok``;
  output once at the output rate (reasoning is inside it); web searches at
  ``web_searches_kcount`` per 1,000 requests;
* a missing cache-read or cache-write price falls back to the input price, a
  missing 1-hour price to the 5-minute one (what genai-prices' unit
  decomposition does for an unpriced sub-unit).

genai-prices costs ~200 µs per ``calc_price``; here each (model, UTC day,
service tier) is resolved once into float per-token rates and every call is
plain arithmetic.  Unknown models are *unpriced* (cost ``None``), never $0.

Overrides: ``prices.toml`` in the user config folder (``platformdirs``;
``agentlog usage --prices FILE`` for another) with genai-prices' key names, USD
per million tokens, and optional tiers::

    [models."qwen3-coder-plus"]
    input_mtok = 1.0
    output_mtok = 5.0
    cache_read_mtok = 0.1
    [[models."qwen3-coder-plus".tiers]]
    start = 200000
    input_mtok = 2.0
    output_mtok = 10.0

An override applies to the normalised id (:mod:`agentlog.usage.models`) and wins
over the bundled table.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import msgspec
import platformdirs
from genai_prices import data_snapshot
from genai_prices.types import ModelInfo, ModelPrice, TieredPrices, TimeOfDateConstraint

from agentlog.errors import UsageError
from agentlog.model import CostSource
from agentlog.usage.calls import Call
from agentlog.usage.models import candidates, normalize

CostMode = Literal["auto", "calculate", "recorded"]
_KEYS = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok", "output_mtok")


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token (per request for ``web_search``) of one context tier."""

    input: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    output: float
    web_search: float


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The rates of one model for one price period: ``tiers`` as ``(start, rates)``,
    ascending, the first with start ``-1`` (base)."""

    model: str
    provider: str
    tiers: tuple[tuple[int, Rates], ...]

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The tier of a call whose whole prompt is ``prompt_tokens``."""
        chosen = self.tiers[0][1]
        for start, rates in self.tiers[1:]:
            if prompt_tokens > start:
                chosen = rates
        return chosen

    def cost(self, call: Call) -> float:
        """USD of one call (see the module rules)."""
        u = call.usage
        r = self.rates_for(
            u.input_tokens + u.cache_read_tokens + u.cache_write_5m_tokens + u.cache_write_1h_tokens
        )
        return (
            u.input_tokens * r.input
            + u.cache_read_tokens * r.cache_read
            + u.cache_write_5m_tokens * r.cache_write_5m
            + u.cache_write_1h_tokens * r.cache_write_1h
            + u.output_tokens * r.output
            + u.web_search_requests * r.web_search
        )


def _at(value: Decimal | TieredPrices | None, level: int) -> Decimal | None:
    if isinstance(value, TieredPrices):
        price = value.base
        for tier in value.tiers:
            if tier.start <= level:
                price = tier.price
        return price
    return value


def table_from(model: str, provider: str, price: ModelPrice) -> PriceTable:
    """A :class:`PriceTable` from a genai-prices ``ModelPrice`` (USD per MTok)."""
    values = {key: getattr(price, key, None) for key in (*_KEYS, "web_searches_kcount")}
    starts = sorted({t.start for v in values.values() if isinstance(v, TieredPrices) for t in v.tiers})
    tiers = []
    for level in (-1, *starts):
        at = {key: _at(value, level) for key, value in values.items()}
        inp = at["input_mtok"] or Decimal(0)
        write = at["cache_write_mtok"] if at["cache_write_mtok"] is not None else inp
        rates = Rates(
            input=float(inp) / 1e6,
            cache_read=float(at["cache_read_mtok"] if at["cache_read_mtok"] is not None else inp) / 1e6,
            cache_write_5m=float(write) / 1e6,
            cache_write_1h=float(
                at["cache_write_1h_mtok"] if at["cache_write_1h_mtok"] is not None else write
            )
            / 1e6,
            output=float(at["output_mtok"] or 0) / 1e6,
            web_search=float(at["web_searches_kcount"] or 0) / 1e3,
        )
        tiers.append((level, rates))
    return PriceTable(model=model, provider=provider, tiers=tuple(tiers))


def default_overrides_path() -> Path:
    """``prices.toml`` in the user config folder (e.g. ``~/.config/agentlog/``)."""
    return Path(platformdirs.user_config_dir("agentlog")) / "prices.toml"


def load_overrides(path: Path) -> dict[str, ModelPrice]:
    """Model id (lower case) → prices from an override file; ``{}`` when absent.

    Raises :class:`~agentlog.errors.UsageError` for a malformed file.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read price overrides ({exc})") from None
    out = {}
    for model, spec in (data.get("models") or {}).items():
        if not isinstance(spec, dict):
            raise UsageError(f"{path}: [models.{model!r}] must be a table")
        out[model.lower()] = _override_price(path, model, spec)
    return out


def _override_price(path: Path, model: str, spec: Mapping[str, Any]) -> ModelPrice:
    def number(value: Any, key: str) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise UsageError(f"{path}: models.{model}.{key} must be a non-negative number")
        return Decimal(str(value))

    tiers = spec.get("tiers") or []
    prices: dict[str, Decimal | TieredPrices] = {}
    for key in (*_KEYS, "web_searches_kcount"):
        if key not in spec:
            continue
        base = number(spec[key], key)
        steps = [(int(t["start"]), number(t[key], key)) for t in tiers if key in t]
        if steps:
            from genai_prices.types import Tier

            prices[key] = TieredPrices(base=base, tiers=[Tier(start=s, price=p) for s, p in steps])
        else:
            prices[key] = base
    return ModelPrice(**prices)


class PricedCall(msgspec.Struct, gc=False, kw_only=True, frozen=True):
    """A call with its cost: ``cost_usd`` (``None`` when unpriced), where it came
    from, and the price-table model id used (``None`` unless estimated)."""

    call: Call
    cost_usd: float | None
    cost_source: CostSource
    priced_as: str | None = None


class Pricer:
    """Prices calls; resolves each (model, UTC day, tier) once.

    ``snapshot`` is the genai-prices table to use (default: the bundled one;
    see :mod:`agentlog.usage.snapshot` for a fetched copy).
    ``unpriced`` counts the tokens of calls whose model has no price, by the
    model id as recorded (``"<none>"`` when no model was recorded).
    """

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        snapshot: data_snapshot.DataSnapshot | None = None,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.unpriced: Counter[str] = Counter()
        self._snapshot = snapshot or data_snapshot.get_snapshot()
        self._cache: dict[tuple[str, object, str | None], PriceTable | None] = {}
        self._infos: dict[str, tuple[str, ModelInfo, bool] | None] = {}

    def table(self, model: str, when: datetime | None, service_tier: str | None = None) -> PriceTable | None:
        """The rates for ``model`` at ``when`` (aware; ``None`` = now), or ``None``."""
        when = (when or datetime.now(UTC)).astimezone(UTC)
        key = (model, when.date(), service_tier)
        if key in self._cache:
            return self._cache[key]
        ref, provider = normalize(model, when)
        table = None
        for candidate in candidates(ref):
            if candidate in self.overrides:
                table = table_from(candidate, "override", self.overrides[candidate])
                break
            found = self._info(candidate, provider)
            if found is not None:
                provider_id, info, time_of_day = found
                context = {"service_tier": service_tier} if service_tier else None
                table = table_from(info.id, provider_id, info.get_prices(when, context))
                if time_of_day:  # DeepSeek-style off-peak prices: never cache by day
                    return table
                break
        self._cache[key] = table
        return table

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

    def price(self, call: Call, mode: CostMode = "auto") -> PricedCall:
        """One call's cost under ``mode`` (``auto``: the recorded cost when the agent
        wrote one, else estimated; ``calculate``: always estimated; ``recorded``:
        only recorded costs, others blank)."""
        recorded = call.usage.cost_usd if call.usage.cost_source == "recorded" else None
        if recorded is not None and mode != "calculate":
            return PricedCall(call=call, cost_usd=recorded, cost_source="recorded")
        if mode == "recorded":
            return PricedCall(call=call, cost_usd=None, cost_source="unpriced")
        table = self.table(call.model, call.timestamp, call.service_tier) if call.model else None
        if table is None:
            self.unpriced[call.model or "<none>"] += call.usage.total_tokens
            return PricedCall(call=call, cost_usd=None, cost_source="unpriced")
        return PricedCall(
            call=call, cost_usd=table.cost(call), cost_source="estimated", priced_as=table.model
        )

    def price_all(self, calls: Iterable[Call], mode: CostMode = "auto") -> Iterator[PricedCall]:
        """:meth:`price` over ``calls``, lazily."""
        for call in calls:
            yield self.price(call, mode)
