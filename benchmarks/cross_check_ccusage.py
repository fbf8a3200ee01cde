"""Run ccusage and agentlog on the same logs and explain every difference.

    python benchmarks/cross_check_ccusage.py [--ccusage PATH]

Without ``--ccusage`` it installs ``ccusage@20.0.24`` and
``@ccusage/ccusage-linux-x64@20.0.24`` with npm under a temporary prefix (never
a project dependency).  The logs: a Claude Code home holding the repository's
fixtures, the shared real fixtures when present, a generated session
(``corpus.py``) and one crafted file per rule where the two tools are expected
to differ; a Codex home with the real 28-turn rollout and generated rollouts.
Both tools report ``daily`` in UTC; each day's buckets and cost are printed side
by side, and every difference is listed with the rule (``shared/cost.md``)
that explains it — or ``UNEXPLAINED``, which needs a look.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import write_claude, write_codex_home  # noqa: E402

SHARED = Path(os.environ.get("AGENTLOG_SHARED_FIXTURES", ROOT.parent.parent / "shared" / "fixtures"))

#: day (UTC) → (what the logs of that day hold, the rule that explains a difference)
RULES = {
    "2025-06-14": (
        "edge-cases.jsonl and representative-messages.jsonl (upstream test files written with "
        '"key": value spacing) next to todowrite-examples.jsonl, which reuses their message ids',
        "ccusage's byte pre-filter only matches compact JSON, so it skips the two spaced files "
        "(Claude Code itself writes compact JSON); agentlog counts a message.id once across files "
        "even when requestId differs (3 synthetic id collisions) — cost.md §1 keys on message.id + "
        "requestId: an agentlog deviation on colliding ids, reported, not fixed here",
    ),
    "unknown": (
        "assistant lines with usage but no parseable timestamp (all zero tokens here)",
        "agentlog keeps such calls under the day 'unknown'; ccusage drops lines without a timestamp",
    ),
    "2026-10-10": (
        "claude-sonnet-4-5, prompt 215,010 tokens",
        "cost.md §1 long context: the whole call is billed at the >200K rate; ccusage "
        "(cost.rs::tiered_cost) bills only each category's tokens above 200K at the premium",
    ),
    "2026-10-11": (
        "10,000 one-hour cache-write tokens",
        "cost.md §1: 1-hour writes cost 2× input ($6/MTok on Sonnet 4), 5-minute writes 1.25× ($3.75)",
    ),
    "2026-10-12": (
        "one response streamed as 3 lines with requestId null (output 10 → 50 → 120)",
        "cost.md §1 dedup: key message.id alone when requestId is null and keep the final copy; "
        "ccusage has_unsupported_null_field drops such lines",
    ),
    "2026-10-13": (
        "unknown model claude-mystery-9",
        "cost.md §0.6: unknown models are unpriced (tokens shown, cost blank), never $0",
    ),
    "2026-10-14": (
        "3 web-search requests on Sonnet 4",
        "cost.md §1: server_tool_use.web_search_requests at $10 per 1,000",
    ),
}


def _assistant(day: str, mid: str, model: str, usage: dict, request: str | None = "req") -> dict:
    return {
        "type": "assistant",
        "sessionId": "rules",
        "uuid": f"{mid}-{usage.get('output_tokens')}",
        "timestamp": f"{day}T10:00:00.000Z",
        "cwd": "/home/bench/rules",
        "requestId": f"{request}_{mid}" if request else None,
        "message": {"id": mid, "role": "assistant", "model": model, "content": [], "usage": usage},
    }


def rule_records() -> list[dict]:
    sonnet4, sonnet45 = "claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929"
    base = {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return [
        _assistant(
            "2026-10-10",
            "msg_long",
            sonnet45,
            {
                "input_tokens": 10,
                "cache_read_input_tokens": 200_000,
                "cache_creation_input_tokens": 15_000,
                "output_tokens": 1_000,
            },
        ),
        _assistant(
            "2026-10-11",
            "msg_1h",
            sonnet4,
            {
                **base,
                "cache_creation_input_tokens": 10_000,
                "output_tokens": 100,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 10_000},
            },
        ),
        *(
            _assistant("2026-10-12", "msg_null", sonnet4, {**base, "output_tokens": n}, None)
            for n in (10, 50, 120)
        ),
        _assistant("2026-10-13", "msg_unknown", "claude-mystery-9", {**base, "output_tokens": 42}),
        _assistant(
            "2026-10-14",
            "msg_search",
            sonnet4,
            {**base, "output_tokens": 7, "server_tool_use": {"web_search_requests": 3}},
        ),
    ]


def build_homes(tmp: Path) -> tuple[Path, Path]:
    claude = tmp / "claude"
    project = claude / "projects" / "-home-bench-fixtures"
    shutil.copytree(ROOT / "tests" / "fixtures" / "claude_code", project)
    for f in sorted((SHARED / "claude-code").glob("*.jsonl")) if SHARED.exists() else []:
        shutil.copy(f, project / f.name)
    write_claude(claude / "projects" / "-home-bench-project" / "generated.jsonl", 2)
    rules = claude / "projects" / "-home-bench-rules" / "rules.jsonl"
    rules.parent.mkdir(parents=True)
    rules.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rule_records()))
    codex = tmp / "codex"
    write_codex_home(codex, 40)
    real = SHARED / "codex" / "v0.104-desktop-28turns-real-sanitized.jsonl"
    if real.exists():
        shutil.copy(real, codex / "sessions" / "rollout-2026-02-23T12-41-04-019c8a4d.jsonl")
    return claude, codex


def install_ccusage(prefix: Path) -> str:
    subprocess.run(
        [
            "npm",
            "install",
            "--silent",
            "--prefix",
            str(prefix),
            "ccusage@20.0.24",
            "@ccusage/ccusage-linux-x64@20.0.24",
        ],
        check=True,
    )
    return str(prefix / "node_modules" / ".bin" / "ccusage")


def run_json(cmd: list[str], env: dict[str, str]) -> dict:
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def ccusage_days(tool: str, agent: str, env: dict[str, str]) -> dict[str, dict]:
    data = run_json([tool, agent, "daily", "--json", "--offline", "--timezone", "UTC"], env)
    out = {}
    for d in data["daily"]:
        out[d.get("period") or d["date"]] = {
            "input": d["inputTokens"],
            "output": d["outputTokens"],
            "cache_write": d["cacheCreationTokens"],
            "cache_read": d["cacheReadTokens"],
            "cost": d.get("totalCost", d.get("costUSD")),
        }
    return out


def agentlog_days(agent: str, env: dict[str, str]) -> dict[str, dict]:
    cmd = [sys.executable, "-m", "agentlog", "usage", "daily", "--json", "-z", "UTC", "--agent", agent]
    data = run_json(cmd, env)
    return {
        r["key"]: {
            "input": r["input_tokens"],
            "output": r["output_tokens"],
            "cache_write": r["cache_write_5m_tokens"] + r["cache_write_1h_tokens"],
            "cache_read": r["cache_read_tokens"],
            "cost": r["cost_usd"],
        }
        for r in data["rows"]
    }


def compare(name: str, theirs: dict[str, dict], ours: dict[str, dict]) -> int:
    print(f"\n== {name}: daily, UTC ==")
    print(f"{'day':<11}{'tool':<9}{'input':>9}{'output':>9}{'cache wr':>11}{'cache rd':>12}{'cost':>12}")
    unexplained = 0
    differences = []
    for day in sorted(set(theirs) | set(ours)):
        for tool, rows in (("ccusage", theirs), ("agentlog", ours)):
            r = rows.get(day)
            if r is None:
                print(f"{day:<11}{tool:<9}{'(none)':>9}")
                continue
            cost = "unpriced" if r["cost"] is None else f"{r['cost']:.6f}"
            print(
                f"{day:<11}{tool:<9}{r['input']:>9,}{r['output']:>9,}{r['cache_write']:>11,}"
                f"{r['cache_read']:>12,}{cost:>12}"
            )
        a, b = theirs.get(day), ours.get(day)
        same_tokens = a and b and all(a[k] == b[k] for k in ("input", "output", "cache_write", "cache_read"))
        same_cost = (
            a and b and a["cost"] is not None and b["cost"] is not None and abs(a["cost"] - b["cost"]) <= 1e-6
        )
        if same_tokens and same_cost:
            continue
        rule = RULES.get(day)
        differences.append((day, rule))
        unexplained += rule is None
    print(f"\n{len(differences)} difference(s):")
    for day, rule in differences:
        print(f"  {day}: " + (f"{rule[0]} -> {rule[1]}" if rule else "UNEXPLAINED"))
    return unexplained


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ccusage", help="ccusage executable (default: npm-install 20.0.24 into a temp prefix)"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentlog-crosscheck-"))
    tool = args.ccusage or install_ccusage(tmp / "npm")
    claude, codex = build_homes(tmp)
    env = {
        k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")
    }
    env.update(HOME=str(tmp / "nohome"), CLAUDE_CONFIG_DIR=str(claude), CODEX_HOME=str(codex), TZ="UTC")
    bad = compare("Claude Code", ccusage_days(tool, "claude", env), agentlog_days("claude_code", env))
    bad += compare("Codex", ccusage_days(tool, "codex", env), agentlog_days("codex", env))
    print(f"\nlogs kept in {tmp}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
