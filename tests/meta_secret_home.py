"""A home whose one Claude Code session holds a token outside its text: in its
folder (``cwd``, and so its project folder's name), its git branch and its tool
names (an MCP tool, a hostile non-MCP name), for the redaction surface tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

SESSION_ID = "eeeeeeee-0000-4000-8000-000000000005"
SESSION = f"claude_code:{SESSION_ID}"
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MANGLED = "ghp_a1b2_c3d4"
"""The token as the tool-name normaliser's snake case wrote it before it kept secrets."""
CWD = f"/tmp/clone-{TOKEN}"
EVIL = f"Evil<svg onload=alert(1)>{TOKEN}"


def meta_secret_home(home: Path, start: datetime = datetime(2026, 11, 1, tzinfo=UTC)) -> Path:
    """A Claude Code home (returned): one session in :data:`CWD` on branch
    ``fix/<TOKEN>``, prompt ``hi <TOKEN>``, a ``Read`` of a file in its folder,
    then two calls left pending: ``mcp__gh__<TOKEN>`` and :data:`EVIL`."""
    folder = home / ".claude" / "projects" / CWD.replace("/", "-")
    folder.mkdir(parents=True)
    common = {"sessionId": SESSION_ID, "cwd": CWD, "gitBranch": f"fix/{TOKEN}", "version": "2.1.140"}

    def at(seconds: int) -> str:
        return (start + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")

    def assistant(uuid: str, parent: str, seconds: int, content: list[dict]) -> dict:
        message = {"id": f"m{uuid}", "model": "claude-sonnet-4-5", "role": "assistant", "content": content}
        message["usage"] = {"input_tokens": 1, "output_tokens": 1}
        return {
            **common,
            "type": "assistant",
            "uuid": uuid,
            "parentUuid": parent,
            "timestamp": at(seconds),
            "requestId": f"r{uuid}",
            "message": message,
        }

    lines = [
        {
            **common,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": at(0),
            "message": {"role": "user", "content": f"hi {TOKEN}"},
        },
        assistant(
            "a1",
            "u1",
            1,
            [{"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": f"{CWD}/app.py"}}],
        ),
        {
            **common,
            "type": "user",
            "uuid": "u2",
            "parentUuid": "a1",
            "timestamp": at(2),
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "x = 1"}],
            },
        },
        assistant(
            "a2",
            "u2",
            3,
            [
                {"type": "tool_use", "id": "t1", "name": f"mcp__gh__{TOKEN}", "input": {"q": "x"}},
                {"type": "tool_use", "id": "t2", "name": EVIL, "input": {"q": "y"}},
            ],
        ),
    ]
    (folder / f"{SESSION_ID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return home
