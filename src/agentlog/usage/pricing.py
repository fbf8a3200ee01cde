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

genai-prices costs ~200 µs per ``calc_price`` and ~0.1 s to import; here each
(model, UTC day, service tier) is resolved once into whole pico-dollar per-token
rates (:mod:`agentlog.usage.money`: costs are integers, exact in any grouping)
(:mod:`agentlog.usage.resolve`, the only module that imports genai-prices) and
every call is plain arithmetic.  Resolved tables can be kept (the index's
``price_cache``) under a :attr:`Pricer.fingerprint` of the files they came from,
so a report whose models and days were all seen before never loads the price
library.  Unknown models are *unpriced* (cost ``None``), never $0.

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

An override's id is normalised like recorded ids (:mod:`agentlog.usage.models`),
applies to every recorded id that normalises to it (dated ids, provider
prefixes, ``-latest`` aliases) and wins over the bundled table
(:mod:`agentlog.usage.resolve`).
"""

from __future__ import annotations

import importlib.machinery
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec
import platformdirs

from agentlog.model import CostSource
from agentlog.usage.calls import Call
from agentlog.usage.money import PICO_PER_NANO, recorded_nano, usd_float

if TYPE_CHECKING:
    from agentlog.usage.resolve import Resolver

CostMode = Literal["auto", "calculate", "recorded"]
PriceKey = tuple[str, str, str]
"""``(model as recorded, UTC day YYYY-MM-DD, service tier or "")``."""


class Rates(msgspec.Struct, frozen=True, gc=False):
    """Pico-dollars per token (per request for ``web_search``) of one context tier
    (:func:`agentlog.usage.money.rate`)."""

    input: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    web_search: int


class PriceTable(msgspec.Struct, frozen=True, gc=False):
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

    def splits(self, call: Call) -> bool:
        """Whether the calls summed in ``call`` fall in different context tiers."""
        low, high = call.prompt_tokens
        return self.rates_for(low) is not self.rates_for(high)

    def cost(self, call: Call) -> int:
        """Pico-dollars of ``call`` (all its calls in one tier: see :meth:`splits`)."""
        u = call.usage
        r = self.rates_for(call.prompt_tokens[1])
        return (
            u.input_tokens * r.input
            + u.cache_read_tokens * r.cache_read
            + u.cache_write_5m_tokens * r.cache_write_5m
            + u.cache_write_1h_tokens * r.cache_write_1h
            + u.output_tokens * r.output
            + u.web_search_requests * r.web_search
        )


def default_overrides_path() -> Path:
    """``prices.toml`` in the user config folder (e.g. ``~/.config/agentlog/``)."""
    return Path(platformdirs.user_config_dir("agentlog")) / "prices.toml"


def cached_prices_path() -> Path:
    """Where ``agentlog prices update`` keeps the fetched table."""
    return Path(platformdirs.user_cache_dir("agentlog")) / "genai-prices.json"


class PricedCall(msgspec.Struct, gc=False, kw_only=True, frozen=True):
    """A call with its cost: ``cost`` in pico-dollars (``None`` when unpriced;
    :mod:`agentlog.usage.money`), where it came from, and the price-table model id
    used (``None`` unless estimated)."""

    call: Call
    cost: int | None
    cost_source: CostSource
    priced_as: str | None = None

    @property
    def cost_usd(self) -> float | None:
        """:attr:`cost` in USD, unrounded."""
        return None if self.cost is None else usd_float(self.cost)


class Pricer:
    """Prices calls; resolves each (model, UTC day, service tier) once.

    ``overrides_path`` is a TOML override file (``None``: no overrides);
    ``snapshot_path`` a fetched genai-prices table (``None``: the bundled one;
    a missing or broken file also means the bundled one).  ``known`` seeds the
    resolved tables (``None`` for a model without a price), e.g. from the index's
    price cache; :attr:`resolved` collects the ones resolved here, to keep.
    ``unpriced`` counts the tokens of calls whose model has no price, by the
    model id as recorded (``"<none>"`` when no model was recorded);
    ``inferred`` counts ``(calls, tokens)`` of the calls estimated at a fallback model
    (:attr:`~agentlog.usage.calls.Call.model_inferred`), by that model.
    Raises :class:`~agentlog.errors.UsageError` for a malformed override file
    (when a price is first resolved).
    """

    def __init__(
        self,
        overrides_path: Path | None = None,
        snapshot_path: Path | None = None,
        known: Mapping[PriceKey, PriceTable | None] | None = None,
    ) -> None:
        self.overrides_path = overrides_path
        self.snapshot_path = snapshot_path
        self.known: dict[PriceKey, PriceTable | None] = dict(known or {})
        self.resolved: dict[PriceKey, PriceTable | None] = {}
        self.unpriced: Counter[str] = Counter()
        self.inferred: dict[str, tuple[int, int]] = {}
        self._resolver: Resolver | None = None
        self._by_day: dict[tuple[str, date, str | None], PriceTable | None] = {}

    @cached_property
    def fingerprint(self) -> str:
        """What the resolved tables depend on: the override file, the fetched
        table, genai-prices' bundled data and agentlog's model-id rules (path,
        size and mtime of each, read once per pricer)."""
        bundled = importlib.machinery.PathFinder.find_spec("genai_prices")
        folders = (bundled.submodule_search_locations or []) if bundled else []
        files = [
            self.overrides_path,
            self.snapshot_path,
            *(Path(f) / "data.py" for f in folders),
            Path(__file__).with_name("models.py"),
            Path(__file__).with_name("money.py"),
            Path(__file__),
            Path(__file__).with_name("resolve.py"),
        ]
        return "|".join(_stat_sig(f) for f in files)

    @property
    def resolver(self) -> Resolver:
        """The resolver over this pricer's files, made when first needed."""
        if self._resolver is None:
            from agentlog.usage.resolve import Resolver

            self._resolver = Resolver.from_files(self.overrides_path, self.snapshot_path)
        return self._resolver

    def table(self, model: str, when: datetime | None, service_tier: str | None = None) -> PriceTable | None:
        """The rates for ``model`` at ``when`` (aware; ``None`` = now), or ``None``."""
        when = when or datetime.now(UTC)
        day = _utc_day(when)
        try:  # the per-call path: one look-up
            return self._by_day[(model, day, service_tier)]
        except KeyError:
            pass
        key = (model, day.isoformat(), service_tier or "")
        if key in self.known:
            table = self.known[key]
        else:
            table, by_day = self.resolver.resolve(model, when.astimezone(UTC), service_tier)
            if not by_day:  # off-peak prices change within a day: never kept
                return table
            self.known[key] = self.resolved[key] = table
        self._by_day[(model, day, service_tier)] = table
        return table

    def price(self, call: Call, mode: CostMode = "auto") -> PricedCall:
        """One call's cost under ``mode`` (``auto``: the recorded cost when the agent
        wrote one, else estimated; ``calculate``: always estimated; ``recorded``:
        only recorded costs, others blank)."""
        recorded = call.usage.cost_usd if call.usage.cost_source == "recorded" else None
        if recorded is not None and mode != "calculate":
            cost = call.recorded_nano if call.recorded_nano is not None else recorded_nano(recorded)
            return PricedCall(call=call, cost=cost * PICO_PER_NANO, cost_source="recorded")
        if mode == "recorded":
            return PricedCall(call=call, cost=None, cost_source="unpriced")
        table = self.table(call.model, call.timestamp, call.service_tier) if call.model else None
        if table is None:
            self.unpriced[call.model or "<none>"] += call.usage.total_tokens
            return PricedCall(call=call, cost=None, cost_source="unpriced")
        if call.model_inferred and call.model:
            calls, tokens = self.inferred.get(call.model, (0, 0))
            self.inferred[call.model] = (calls + call.calls, tokens + call.usage.total_tokens)
        return PricedCall(call=call, cost=table.cost(call), cost_source="estimated", priced_as=table.model)

    def price_all(
        self,
        calls: Iterable[Call],
        mode: CostMode = "auto",
        members: Callable[[Call], Iterable[Call]] | None = None,
    ) -> Iterator[PricedCall]:
        """:meth:`price` over ``calls``, lazily.  A record summing calls that fall
        in different context tiers is replaced by its ``members`` (one record per
        call).  Raises ``ValueError`` for such a record when ``members`` is ``None``."""
        for call in calls:
            if call.calls > 1 and self._splits(call, mode):
                if members is None:
                    raise ValueError(f"{call.session_key}: summed calls span price tiers")
                for member in members(call):
                    yield self.price(member, mode)
            else:
                yield self.price(call, mode)

    def prices_whole(self, call: Call, mode: CostMode = "auto") -> bool:
        """Whether ``call``, a sum of calls of one model, service tier, cost origin
        (recorded or not) and UTC day, costs under ``mode`` exactly what its calls
        cost one by one (:meth:`price`): its cost is recorded, or none is
        estimated, or one price table holds for its whole UTC day (no time-of-day
        window, such as genai-prices' off-peak prices) and all its calls fall in
        one context tier of it.  Costs are integers, so a sum's cost is then the
        sum of its calls' costs (:mod:`agentlog.usage.money`)."""
        recorded = call.usage.cost_source == "recorded" and call.usage.cost_usd is not None
        if mode == "recorded" or (recorded and mode == "auto") or not call.model:
            return True
        when = call.timestamp or datetime.now(UTC)
        table = self.table(call.model, when, call.service_tier)
        if (call.model, _utc_day(when), call.service_tier) not in self._by_day:  # priced by the time of day
            return False
        return table is None or not table.splits(call)

    def _splits(self, call: Call, mode: CostMode) -> bool:
        recorded = call.usage.cost_source == "recorded" and call.usage.cost_usd is not None
        if mode == "recorded" or (recorded and mode == "auto") or not call.model:
            return False
        table = self.table(call.model, call.timestamp, call.service_tier)
        return table is not None and table.splits(call)


def _utc_day(when: datetime) -> date:
    """The UTC calendar day of aware ``when`` (the price period of genai-prices' dated prices)."""
    return (when if when.tzinfo is UTC else when.astimezone(UTC)).date()


def _stat_sig(path: Path | None) -> str:
    if path is None:
        return "-"
    try:
        st = path.stat()
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"
