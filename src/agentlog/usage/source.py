"""Where calls come from: the fast Claude Code scanner, and the full model for
every other agent (until the index can feed :class:`~agentlog.usage.calls.Call`
records directly)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from agentlog.adapters import all_adapters, get_adapter
from agentlog.adapters.claude_code import SLUG as CLAUDE
from agentlog.load import LoadReport, discover_sources, load_sessions
from agentlog.usage.calls import Call, calls_from_sessions
from agentlog.usage.scan import scan_calls


def collect_calls(
    env: Mapping[str, str],
    home: Path,
    roots: Iterable[Path] = (),
    agents: Iterable[str] | None = None,
    fast: bool = True,
    report: LoadReport | None = None,
) -> list[Call]:
    """Every deduplicated call of ``agents`` (all when ``None``) found under the
    default roots and ``roots``.  With ``fast``, Claude Code files are read by
    :mod:`agentlog.usage.scan`; other agents (and Claude without ``fast``) are
    parsed into sessions first.  Unreadable files are listed in ``report.errors``.
    """
    report = report if report is not None else LoadReport()
    roots = list(roots)
    wanted = list(agents) if agents else [a.slug for a in all_adapters()]
    calls: list[Call] = []
    cwds: set[str] = set()
    if fast and CLAUDE in wanted:
        wanted.remove(CLAUDE)
        refs = [ref for _, ref in discover_sources([get_adapter(CLAUDE)], env, home, roots, report)]
        calls.extend(scan_calls(refs, report.errors, cwds))
    if wanted:  # project sources are looked for in the scanned sessions' folders too (as a sync does)
        calls.extend(calls_from_sessions(load_sessions(wanted, env, home, roots, report, cwds=cwds)))
    return calls
