"""Generate benchmark corpora in compact JSON, shaped like the real writers.

    python benchmarks/corpus.py claude OUT.jsonl --mb 50
    python benchmarks/corpus.py codex-home OUT_DIR --files 2000

Claude Code files follow the 2.x line shapes (one line per content block with a
usage copy, tool results as user lines with ``toolUseResult``); Codex rollouts
follow 0.10x (session_meta, turn_context per request, response_item +
event_msg duplicates, cumulative token_count events emitted twice).
Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import uuid
from pathlib import Path

_COMMON = (
    "the test fails because rounding changed in stats module so we update the helper and run pytest "
    "again refactor parser stream lines decode json index sqlite search token usage cache read write"
)
_SYLLABLES = [c + v for c in "bcdfgklmnprstvz" for v in "aeiou"]


def _vocabulary(size: int = 20_000) -> list[str]:
    """Common English/code words first, then made-up words: text drawn from it with
    Zipf weights has the long tail of real logs (a search matches few messages)."""
    rng = random.Random(0)
    words = list(dict.fromkeys(_COMMON.split()))
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words


WORDS = _vocabulary()
_CUM_WEIGHTS = list(itertools.accumulate(1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))))


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=_CUM_WEIGHTS, k=n))


def _dump(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def claude_lines(
    rng: random.Random,
    session_id: str,
    turns: int | None = None,
    scale: float = 1.0,
    cwd: str = "/home/bench/project",
    start: int = 0,
    agent_id: str | None = None,
):
    """Yield the lines of one Claude Code session, forever unless ``turns`` is set.
    ``start``: seconds after 2026-11-01T00:00Z of its first line; ``agent_id``: the
    lines of a subagent of session ``session_id`` (``isSidechain``, ``agentId``:
    Claude Code 2.1's ``<session>/subagents/agent-<id>.jsonl``)."""
    env = {
        "isSidechain": agent_id is not None,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        **({"agentId": agent_id} if agent_id else {}),
        "version": "2.1.140",
        "gitBranch": "main",
        "entrypoint": "cli",
    }
    parent = None
    turn = 0
    second = start
    while turns is None or turn < turns:
        turn += 1
        second += 7
        day, rest = divmod(second, 86400)
        stamp = f"2026-11-{1 + day % 28:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}.000Z"
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        yield _dump(
            {
                "parentUuid": parent,
                **env,
                "type": "user",
                "message": {"role": "user", "content": _text(rng, max(2, int(rng.randint(5, 60) * scale)))},
                "uuid": uid,
                "timestamp": stamp,
            }
        )
        parent = uid
        for step in range(rng.randint(1, 4)):
            mid = f"msg_{rng.getrandbits(64):016x}"
            req = f"req_{rng.getrandbits(64):016x}"
            call = f"toolu_{rng.getrandbits(64):016x}"
            usage = {
                "input_tokens": rng.randint(1, 50),
                "cache_creation_input_tokens": rng.randint(0, 3000),
                "cache_read_input_tokens": rng.randint(1000, 90000),
                "output_tokens": rng.randint(5, 900),
                "service_tier": "standard",
            }
            blocks = [
                {
                    "type": "thinking",
                    "thinking": _text(rng, max(2, int(rng.randint(10, 80) * scale))),
                    "signature": "sig",
                },
                {"type": "text", "text": _text(rng, max(2, int(rng.randint(5, 120) * scale)))},
                {
                    "type": "tool_use",
                    "id": call,
                    "name": rng.choice(["Bash", "Read", "Edit", "Grep"]),
                    "input": {"command": _text(rng, 6)},
                },
            ]
            for block in blocks:
                aid = str(uuid.UUID(int=rng.getrandbits(128)))
                yield _dump(
                    {
                        "parentUuid": parent,
                        **env,
                        "type": "assistant",
                        "requestId": req,
                        "message": {
                            "id": mid,
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-sonnet-4-5-20250929",
                            "content": [block],
                            "stop_reason": None,
                            "usage": usage,
                        },
                        "uuid": aid,
                        "timestamp": stamp,
                    }
                )
                parent = aid
            rid = str(uuid.UUID(int=rng.getrandbits(128)))
            output = _text(rng, max(2, int(rng.randint(20, 400) * scale)))
            yield _dump(
                {
                    "parentUuid": parent,
                    **env,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"tool_use_id": call, "type": "tool_result", "content": output}],
                    },
                    "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
                    "uuid": rid,
                    "timestamp": stamp,
                }
            )
            parent = rid
            del step


def write_claude(path: Path, megabytes: float, seed: int = 1, scale: float = 1.0) -> int:
    """Write a Claude Code session file of about ``megabytes`` MB; returns its size.
    ``scale`` shrinks (or grows) every text, for corpora of many small messages."""
    rng = random.Random(seed)
    limit = int(megabytes * 1024 * 1024)
    size = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for line in claude_lines(rng, path.stem, scale=scale):
            fh.write(line)
            size += len(line.encode())
            if size >= limit:
                break
    return size


def big_session(home: Path, megabytes: float) -> Path:
    """The Claude Code session ``big-session`` of about ``megabytes`` MB in ``home``
    (:func:`write_claude`), written only when it is not there yet (the benches
    that keep a work folder reuse it): its path."""
    path = home / ".claude" / "projects" / "-home-bench-project" / "big-session.jsonl"
    if not path.exists():
        write_claude(path, megabytes)
    return path


def write_record(path: Path, mib: int) -> int:
    """Write a Claude Code session of one line of about ``mib`` MiB (a prompt of one
    word repeated), in pieces (this process stays small, and a child's peak RSS,
    which starts from this process's at the fork, stays its own); returns its size."""
    head = {
        "type": "user",
        "sessionId": path.stem,
        "uuid": "u1",
        "timestamp": "2026-11-01T10:00:00Z",
        "message": {"role": "user", "content": "@"},
    }
    before, after = json.dumps(head).split('"@"')
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write(before + '"')
        for _ in range(mib):
            fh.write("word " * ((1 << 20) // 5))
        fh.write('"' + after + "\n")
    return path.stat().st_size


def codex_meta(session_id: str, day: str = "2026-11-20", forked_from: str | None = None) -> dict:
    """The ``session_meta`` payload of a Codex 0.10x rollout (a fork's names its parent)."""
    return {
        "id": session_id,
        "timestamp": f"{day}T10:00:00.000Z",
        "cwd": "/home/bench/project",
        "originator": "codex_cli_rs",
        "cli_version": "0.104.0",
        "source": "cli",
        "model_provider": "openai",
        **({"forked_from_id": forked_from} if forked_from else {}),
    }


def codex_lines(rng: random.Random, session_id: str, turns: int, day: str = "2026-11-20", meta: bool = True):
    """The lines of one Codex rollout on ``day`` (``meta``: starting with its ``session_meta``)."""

    def ev(i: int, kind: str, payload: dict) -> str:
        return _dump(
            {
                "timestamp": f"{day}T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z",
                "type": kind,
                "payload": payload,
            }
        )

    if meta:
        yield ev(0, "session_meta", codex_meta(session_id, day))
    totals = [0, 0, 0, 0]
    for i in range(1, turns + 1):
        prompt = _text(rng, rng.randint(5, 40))
        yield ev(i, "event_msg", {"type": "user_message", "message": prompt})
        yield ev(
            i,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
        )
        yield ev(
            i,
            "turn_context",
            {"cwd": "/home/bench/project", "model": "gpt-5.1-codex", "approval_policy": "on-request"},
        )
        call = f"call_{rng.getrandbits(64):016x}"
        yield ev(
            i,
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", _text(rng, 4)]}),
                "call_id": call,
            },
        )
        yield ev(
            i,
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": _text(rng, rng.randint(10, 300))},
        )
        text = _text(rng, rng.randint(10, 100))
        yield ev(
            i,
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
        )
        yield ev(i, "event_msg", {"type": "agent_message", "message": text})
        last = [rng.randint(2000, 9000), 0, rng.randint(10, 800), 0]
        last[1] = rng.randint(0, last[0])
        last[3] = rng.randint(0, last[2])
        totals = [a + b for a, b in zip(totals, last, strict=True)]
        info = {
            "total_token_usage": {
                "input_tokens": totals[0],
                "cached_input_tokens": totals[1],
                "output_tokens": totals[2],
                "reasoning_output_tokens": totals[3],
                "total_tokens": totals[0] + totals[2],
            },
            "last_token_usage": {
                "input_tokens": last[0],
                "cached_input_tokens": last[1],
                "output_tokens": last[2],
                "reasoning_output_tokens": last[3],
                "total_tokens": last[0] + last[2],
            },
            "model_context_window": 258400,
        }
        for _ in range(2):  # Codex emits each token_count twice
            yield ev(i, "event_msg", {"type": "token_count", "info": info, "rate_limits": None})


def write_codex_home(root: Path, files: int, seed: int = 2) -> int:
    """Write ``files`` small rollouts under ``root/sessions/YYYY/MM/DD``; returns bytes written."""
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        day = root / "sessions" / "2026" / "11" / f"{1 + n % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        data = "".join(codex_lines(rng, sid, rng.randint(1, 12)))
        (day / f"rollout-2026-11-{1 + n % 28:02d}T10-00-00-{sid}.jsonl").write_text(data)
        total += len(data.encode())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=["claude", "codex-home"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    if args.kind == "claude":
        size = write_claude(args.out, args.mb)
        print(f"wrote {args.out} ({size / 1e6:.1f} MB)")
    else:
        size = write_codex_home(args.out, args.files)
        print(f"wrote {args.files} rollouts under {args.out} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
