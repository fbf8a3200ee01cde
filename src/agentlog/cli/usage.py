"""``agentlog usage``: token and cost reports (daily … blocks, limits)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import click
import msgspec

from agentlog.cli import App, main
from agentlog.cli.options import filter_options, given, json_option, pass_app
from agentlog.cli.render import plain_table, print_json
from agentlog.cli.synced import NOT_READ, open_index
from agentlog.errors import NotFound, UsageError
from agentlog.present import clean, compact, project_name
from agentlog.query import parse_day, parse_span, parse_zone, resolve_agent
from agentlog.service.grouped import report_usage
from agentlog.service.index import with_remembered_roots
from agentlog.service.reports import usage_document
from agentlog.service.usage import BLOCKS_AGENT, UsageQuery, codex_limits, log_usage, pricer
from agentlog.usage.pricing import CostMode, PricedCall, cached_prices_path, default_overrides_path
from agentlog.usage.report import GROUPS, Block, Group, Row, Totals, build_blocks, build_rows

if TYPE_CHECKING:
    from rich.table import Table

REPORTS = (*GROUPS, "blocks", "limits")


def _money(cost: float | None) -> str:
    return "" if cost is None else f"${cost:,.2f}"


def _tokens(n: int, narrow: bool) -> str:
    return compact(n) if narrow else f"{n:,}"


def _label(row: Row, group: Group) -> str:
    if group != "session":
        return row.key
    agent, _, sid = row.key.partition(":")
    name = project_name(row.project)
    return f"{sid[:8]} {name}".strip() if agent == "claude_code" else f"{agent[:6]}:{sid[:8]} {name}".strip()


def _table(
    rows: list[Row], total: Totals, group: Group, with_cost: bool, breakdown: bool, width: int
) -> Table:
    narrow = width < 110
    table = plain_table()
    table.add_column(  # the one column a narrow terminal shrinks (ellipsis): never the figures
        {"daily": "date", "weekly": "week of", "monthly": "month"}.get(group, group), overflow="ellipsis"
    )
    for name in ("input", "output", "cache wr", "cache rd", "total"):
        table.add_column(name, justify="right", no_wrap=True)
    if with_cost:
        table.add_column("cost", justify="right", no_wrap=True)

    def line(label: str, t: Totals, style: str | None = None) -> None:
        k = t.tokens
        cells = [
            label,
            _tokens(k["input_tokens"], narrow),
            _tokens(k["output_tokens"], narrow),
            _tokens(k["cache_write_5m_tokens"] + k["cache_write_1h_tokens"], narrow),
            _tokens(k["cache_read_tokens"], narrow),
            _tokens(k["total_tokens"], narrow),
        ]
        if with_cost:
            cost = _money(t.cost_usd if t.priced else None)
            cells.append(cost + ("*" if t.priced and t.priced < t.calls else ""))
        table.add_row(*cells, style=style)

    for row in rows:
        line(clean(_label(row, group)[:32], one_line=True), row.totals)
        if breakdown:
            for model, t in sorted(row.by_model.items()):
                line(clean(f"  {model}"[:32], one_line=True), t, "dim")
    table.add_section()
    line("total", total, "bold")
    return table


@main.command("usage")
@click.argument("report", type=click.Choice(REPORTS), default="daily")
@filter_options("calls")
@click.option(
    "--timezone",
    "--tz",
    "-z",
    "tz_name",
    callback=given,
    help="IANA zone for days, and for times written without an offset (default: local).",
)
@click.option("--breakdown", "-b", is_flag=True, help="Per-model rows under each row.")
@click.option("--no-cost", is_flag=True, help="Tokens only.")
@click.option(
    "--cost-mode",
    type=click.Choice(["auto", "calculate", "recorded"]),
    default="auto",
    show_default=True,
    help="auto: recorded cost when the agent wrote one, else computed. Calls with no "
    "recorded model are computed at an inferred one (named in the warnings; JSON: inferred_models).",
)
@click.option("--no-rollup", is_flag=True, help="session: show subagents and forks apart.")
@click.option(
    "--no-index",
    is_flag=True,
    help="Read the logs directly instead of the index (fast path: Claude Code files decode only usage).",
)
@click.option("--prices", "prices_file", type=click.Path(path_type=Path), help="Price overrides (TOML).")
@json_option
@pass_app
def usage(
    app: App,
    report: str,
    since: str | None,
    until: str | None,
    tz_name: str | None,
    agent: str | None,
    project: str | None,
    breakdown: bool,
    no_cost: bool,
    cost_mode: CostMode,
    no_rollup: bool,
    no_index: bool,
    prices_file: Path | None,
    as_json: bool,
) -> None:
    """Tokens and cost: REPORT is daily (default), weekly, monthly, session,
    model, project, agent, blocks (Claude's 5-hour windows) or limits (Codex)."""
    tz = parse_zone(tz_name)
    if report == "limits":
        _limits(app, tz, as_json)
        return
    query = UsageQuery(
        agent=resolve_agent(agent) or (BLOCKS_AGENT if report == "blocks" else None),
        project=project,
        span=parse_span(since, until, tz),
        cost_mode=cost_mode,
        prices_file=prices_file,
    )
    conn, synced = (None, None) if no_index else open_index(app, first_run=True)
    if conn is None or (synced is not None and synced.building):  # the logs are read instead
        found = log_usage(with_remembered_roots(app.where, app.index_path), query)
    else:
        found = report_usage(conn, query, report, tz)
    priced, warnings = found.calls, found.warnings
    with_cost = not no_cost
    if as_json:
        print_json(
            usage_document(found, report, tz, with_cost=with_cost, breakdown=breakdown, rollup=not no_rollup)
        )
        return
    if report == "blocks":
        _blocks(app, priced, tz, with_cost)
        return
    group: Group = report  # type: ignore[assignment]
    rows, total = build_rows(priced, group, tz, rollup=not no_rollup)
    for warning in warnings:
        app.err.print(f"[yellow]warning:[/yellow] {clean(warning, one_line=True)}")
    if not rows:
        app.err.print(f"no usage found ({NOT_READ})" if app.no_sync else "no usage found")
        return
    app.console.print(_table(rows, total, group, with_cost, breakdown, app.console.width))
    if with_cost and total.priced < total.calls:
        app.console.print("[dim]* some calls have no price (see warnings)[/dim]")


def _blocks(app: App, priced: list[PricedCall], tz: ZoneInfo | None, with_cost: bool) -> None:
    now = datetime.now(UTC)
    blocks = build_blocks(priced, now)
    if not blocks:
        app.err.print("no Claude Code usage found")
        return
    table = plain_table()
    for name in ("block start", "status", "calls", "tokens", *(("cost",) if with_cost else ()), "models"):
        table.add_column(  # a narrow terminal shrinks the models' names, never the figures
            name, justify="right" if name in ("calls", "tokens", "cost") else "left", no_wrap=name != "models"
        )
    for block in blocks:
        cells = [
            block.start.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            "ACTIVE" if block.active else "",
            str(block.totals.calls),
            compact(block.totals.tokens["total_tokens"]),
        ]
        if with_cost:
            cells.append(_money(block.totals.cost_usd if block.totals.priced else None))
        cells.append(clean(", ".join(sorted(block.totals.models))[:30], one_line=True))
        table.add_row(*cells, style="bold" if block.active else None)
    app.console.print(table)
    active = blocks[-1] if blocks[-1].active else None
    if active is not None:
        _burn(app, active, now, tz, with_cost)


def _burn(app: App, block: Block, now: datetime, tz: ZoneInfo | None, with_cost: bool) -> None:
    info = block.as_dict(now, with_cost)
    ends = block.end.astimezone(tz).strftime("%H:%M")
    burn = info.get("burn_rate")
    if burn is None:
        app.console.print(f"active block ends {ends}; too early for a burn rate")
        return
    priced = burn["cost_usd_per_hour"] is not None  # None: no call of the block could be priced
    cost = f", ${burn['cost_usd_per_hour']:,.2f}/h" if priced else ""
    projected = f", ${burn['projected_cost_usd']:,.2f}" if priced else ""
    app.console.print(
        f"active block ends {ends} ({burn['remaining_minutes']} min left): "
        f"{burn['tokens_per_minute']:,.0f} tokens/min{cost}; "
        f"projected {compact(burn['projected_total_tokens'])} tokens{projected}"
    )


def _limits(app: App, tz: ZoneInfo | None, as_json: bool) -> None:
    limits = codex_limits(open_index(app)[0])
    rows: list[dict[str, Any]] = [{"session": key, **msgspec.to_builtins(found)} for key, found in limits]
    if as_json:
        print_json({"latest": rows[0] if rows else None, "sessions": rows})
        return
    if not limits:
        app.err.print("no Codex rate limits recorded")
        return
    key, latest = limits[0]
    seen = latest.observed_at.astimezone(tz).strftime("%Y-%m-%d %H:%M") if latest.observed_at else "?"
    app.console.print(f"Codex rate limits as of {seen} ({clean(key, one_line=True)})")
    for name, window in (("primary", latest.primary), ("secondary", latest.secondary)):
        if window is None:
            continue
        span = f"{window.window_minutes / 60:g} h window" if window.window_minutes else "window"
        resets = window.resets_at.astimezone(tz).strftime("%Y-%m-%d %H:%M") if window.resets_at else "?"
        app.console.print(f"  {name:<9} {window.used_percent:5.1f}% of the {span}, resets {resets}")


@main.group()
def prices() -> None:
    """The price table (genai-prices): show a model's rates, update the table."""


@prices.command("update")
@pass_app
def prices_update(app: App) -> None:
    """Fetch genai-prices' current table (the only command that goes online)."""
    from agentlog.usage.snapshot import update_prices

    count = update_prices()
    app.console.print(f"updated: {count} providers in {cached_prices_path()}")


@prices.command("show")
@click.argument("model")
@click.option(
    "--at",
    "at",
    help="Prices in force on this day (YYYY-MM-DD, or any time the --since rule takes; default today).",
)
@click.option("--tier", "service_tier", help="Service tier (priority, fast, flex …).")
@click.option("--prices", "prices_file", type=click.Path(path_type=Path), help="Price overrides (TOML).")
@json_option
@pass_app
def prices_show(
    app: App, model: str, at: str | None, service_tier: str | None, prices_file: Path | None, as_json: bool
) -> None:
    """The rates agentlog uses for MODEL (USD per million tokens)."""
    day = parse_day(at, UTC) if at else None
    when = datetime(day.year, day.month, day.day, 12, tzinfo=UTC) if day else None
    rates = pricer(None, prices_file)
    asked = service_tier.lower() if service_tier else None
    if asked is not None and asked not in (names := rates.resolver.service_tiers()):
        shown = clean(service_tier or "", one_line=True)
        raise UsageError(f"--tier {shown}: not a service tier (one of {', '.join(names)})")
    table = rates.table(model, when, asked)
    if table is None:
        raise NotFound(f"no price for model {model!r} (add it to {default_overrides_path()})")
    tiers = [  # pico-dollars per token are micro-dollars per million tokens
        {
            "above_prompt_tokens": None if start < 0 else start,
            "input_mtok": r.input / 10**6,
            "cache_read_mtok": r.cache_read / 10**6,
            "cache_write_5m_mtok": r.cache_write_5m / 10**6,
            "cache_write_1h_mtok": r.cache_write_1h / 10**6,
            "output_mtok": r.output / 10**6,
            "web_searches_kcount": r.web_search / 10**9,
        }
        for start, r in table.tiers
    ]
    if as_json:
        print_json({"model": model, "priced_as": table.model, "provider": table.provider, "tiers": tiers})
        return
    priced_as = clean(f"{model} → {table.provider}/{table.model}", one_line=True)
    app.console.print(f"{priced_as} (USD per million tokens)")
    for tier in tiers:
        above = tier["above_prompt_tokens"]
        label = "base" if above is None else f"prompt > {above:,}"
        app.console.print(
            f"  {label:<16} in {tier['input_mtok']:g} · read {tier['cache_read_mtok']:g} · "
            f"write 5m {tier['cache_write_5m_mtok']:g} / 1h {tier['cache_write_1h_mtok']:g} · "
            f"out {tier['output_mtok']:g}"
        )
