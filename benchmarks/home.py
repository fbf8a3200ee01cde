"""Generate a realistic multi-agent home for the benchmarks of issue #17.

    python benchmarks/home.py OUT_HOME                     # 3,000 Claude files, 400 Codex, 3 OpenCode dbs
    python benchmarks/home.py OUT_HOME --claude 2500 --codex 1200 --mb 1600

Shaped like real homes (issue #17: power users have 5–20k files):

* Claude Code 2.1: ``~/.claude/projects/<project>/<session>.jsonl`` spread over many
  project folders and days, a share of them with subagents in
  ``<session>/subagents/agent-<id>.jsonl`` beside an ``agent-<id>.meta.json``
  (the layout of ``shared/fixtures/claude-code/v2.1-subagents-layout``); session
  sizes drawn from a long-tailed distribution (most small, a few large);
* Codex 0.10x: ``~/.codex/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl``, a share of
  them forks: a ``session_meta`` with ``forked_from_id``, then the parent's
  rollout copied (its own meta first), the fork's meta repeated, then its own turns
  (the replay rule in ``agentlog.adapters.codex``);
* a few SQLite-backed agents: OpenCode ``opencode.db`` files
  (``~/.local/share/opencode``, ``$OPENCODE_DATA_DIR`` style folders), schema as
  ``tests/fixtures/opencode/opencode-db.sql`` (anomalyco/opencode
  ``session.sql.ts@063e8306d989``).

``--mb`` scales every Claude session so the home totals about that many MB.
Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path

from corpus import _text, claude_lines, codex_lines, codex_meta


@dataclass
class HomeShape:
    """How many sources of each kind a generated home holds."""

    claude: int = 3000
    subagent_share: float = 0.25
    codex: int = 400
    fork_share: float = 0.15
    opencode: int = 3
    megabytes: float | None = None
    """Total Claude bytes to aim for (``None``: natural small sessions, ~10 KB each)."""
    seed: int = 17


@dataclass
class HomeStats:
    files: int = 0
    bytes: int = 0
    claude_files: int = 0
    codex_files: int = 0
    sqlite_files: int = 0


def _write(path: Path, lines, limit: int | None, stats: HomeStats) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with open(path, "w") as fh:
        for line in lines:
            fh.write(line)
            size += len(line)
            if limit is not None and size >= limit:
                break
    stats.files += 1
    stats.bytes += size


def write_home(home: Path, shape: HomeShape | None = None) -> HomeStats:
    """Write a home under ``home`` with ``shape``'s sources (default
    :class:`HomeShape`); returns what was written."""
    shape = shape or HomeShape()
    rng = random.Random(shape.seed)
    stats = HomeStats()
    projects = [f"-home-bench-{_text(rng, 1)}-{n}" for n in range(max(1, shape.claude // 40))]
    # Long tail: most sessions one or two turns, a few hundreds (Pareto turns).
    turns = [min(300, int(rng.paretovariate(1.6))) for _ in range(shape.claude)]
    limit_per_turn = None
    if shape.megabytes:
        limit_per_turn = int(shape.megabytes * 1e6 / max(1, sum(turns)) / (1 + shape.subagent_share * 0.3))
    for n in range(shape.claude):
        project = projects[n % len(projects)]
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        start = n * 86400 * 28 // max(1, shape.claude)
        folder = home / ".claude" / "projects" / project
        cwd = "/home/bench/" + project.rsplit("-", 2)[1]
        limit = turns[n] * limit_per_turn if limit_per_turn else None
        lines = claude_lines(rng, sid, None if limit else turns[n], scale=0.3, cwd=cwd, start=start)
        _write(folder / f"{sid}.jsonl", lines, limit, stats)
        stats.claude_files += 1
        if rng.random() < shape.subagent_share:
            for _ in range(rng.randint(1, 3)):
                agent = f"a{rng.getrandbits(64):016x}"[:18]
                sub = folder / sid / "subagents" / f"agent-{agent}.jsonl"
                size = limit // 4 if limit else None
                sub_lines = claude_lines(
                    rng, sid, None if size else max(1, turns[n] // 3), 0.3, cwd, start + 5, agent_id=agent
                )
                _write(sub, sub_lines, size, stats)
                meta = {"agentType": rng.choice(["general-purpose", "Explore", "Plan"]), "spawnDepth": 1}
                sub.with_name(f"agent-{agent}.meta.json").write_text(json.dumps(meta))
                stats.claude_files += 1
    rollouts: list[tuple[str, str, list[str]]] = []
    for n in range(shape.codex):
        sid = str(uuid.uuid7()) if hasattr(uuid, "uuid7") else str(uuid.UUID(int=rng.getrandbits(128)))
        day = f"2026-11-{1 + n % 28:02d}"
        folder = home / ".codex" / "sessions" / "2026" / "11" / day[-2:]
        name = f"rollout-{day}T10-00-00-{sid}.jsonl"
        if rollouts and rng.random() < shape.fork_share:
            parent_id, parent_day, parent_lines = rng.choice(rollouts)
            meta = json.dumps(
                {
                    "timestamp": f"{day}T10:00:00.000Z",
                    "type": "session_meta",
                    "payload": codex_meta(sid, day, parent_id),
                },
                separators=(",", ":"),
            )
            lines = [
                meta + "\n",
                *parent_lines,
                meta + "\n",
                *codex_lines(rng, sid, rng.randint(1, 6), day, meta=False),
            ]
            del parent_day
        else:
            lines = list(codex_lines(rng, sid, rng.randint(1, 12), day))
            rollouts.append((sid, day, lines))
        _write(folder / name, lines, None, stats)
        stats.codex_files += 1
    for n in range(shape.opencode):
        folder = home / ".local" / "share" / "opencode" if n == 0 else home / f".opencode-{n}"
        stats.bytes += _write_opencode(folder / "opencode.db", rng, sessions=rng.randint(20, 60))
        stats.files += 1
        stats.sqlite_files += 1
    return stats


_OPENCODE_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT, version TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""


def _write_opencode(path: Path, rng: random.Random, sessions: int) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(_OPENCODE_SCHEMA)
    t = 1_793_000_000_000  # 2026-10-26
    for s in range(sessions):
        sid = f"ses_{rng.getrandbits(48):012x}"
        conn.execute(
            "INSERT INTO session VALUES (?, 'prj_1', NULL, ?, '/home/bench/oc', ?, '1.2.10', ?, ?)",
            (sid, f"slug-{s}", _text(rng, 4), t, t + 60_000),
        )
        for m in range(rng.randint(2, 20)):
            t += 3_000
            user = m % 2 == 0
            mid = f"msg_{rng.getrandbits(48):012x}"
            data: dict = {"role": "user" if user else "assistant", "time": {"created": t}}
            if not user:
                data.update(
                    modelID="claude-sonnet-4-5",
                    providerID="anthropic",
                    cost=0.001,
                    tokens={
                        "input": rng.randint(10, 2000),
                        "output": rng.randint(10, 800),
                        "reasoning": 0,
                        "cache": {"read": rng.randint(0, 9000), "write": 0},
                    },
                )
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, json.dumps(data)))
            part = {"type": "text", "text": _text(rng, rng.randint(5, 80))}
            conn.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (f"prt_{rng.getrandbits(48):012x}", mid, sid, t, t, json.dumps(part)),
            )
    conn.commit()
    conn.close()
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--claude", type=int, default=HomeShape.claude)
    parser.add_argument("--codex", type=int, default=HomeShape.codex)
    parser.add_argument("--opencode", type=int, default=HomeShape.opencode)
    parser.add_argument("--mb", type=float, help="total Claude MB to aim for")
    args = parser.parse_args()
    stats = write_home(
        args.out, HomeShape(claude=args.claude, codex=args.codex, opencode=args.opencode, megabytes=args.mb)
    )
    print(f"wrote {stats.files:,} files ({stats.bytes / 1e6:.1f} MB) under {args.out}: {stats}")


if __name__ == "__main__":
    main()
