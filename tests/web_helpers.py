"""Shared by the web viewer tests: index builders and a hostile transcript."""

from __future__ import annotations

import json
from pathlib import Path

from agentlog.adapters import all_adapters
from agentlog.demo import demo_home
from agentlog.index import db
from agentlog.index.sync import sync

HOSTILE_ID = "0badc0de-0000-4000-8000-00000000e71e"
HOSTILE_CWD = "/tmp/evil\"><script>alert('cwd')</script>"
#: Payloads that would run script if the viewer let them through.
PAYLOADS = (
    "<script>alert('prompt')</script>",
    "<img src=x onerror=\"alert('img')\">",
    "[click me](javascript:alert('md'))",
    "<a href=\"javascript:alert('a')\">raw link</a>",
    "<svg onload=alert('svg')>",
)


def build_index(path: Path, home: Path) -> Path:
    """An index at ``path`` synced from the agent logs under ``home``."""
    conn = db.connect(path)
    try:
        sync(conn, all_adapters(), {"HOME": str(home)}, home)
    finally:
        conn.close()
    return path


def demo_index(path: Path) -> Path:
    return build_index(path, demo_home())


def _line(kind: str, uuid: str, parent: str | None, message: dict, stamp: str) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": HOSTILE_CWD,
            "sessionId": HOSTILE_ID,
            "version": "2.1.140",
            "gitBranch": "<b>main</b>",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": stamp,
        }
    )


def hostile_home(home: Path) -> Path:
    """A home folder holding one Claude Code session whose prompt, assistant text,
    tool input, tool output, folder and branch carry every payload in :data:`PAYLOADS`
    (written for agentlog)."""
    text = "\n\n".join(PAYLOADS)
    folder = home / ".claude" / "projects" / "-tmp-evil"
    folder.mkdir(parents=True)
    lines = [
        _line("user", "u1", None, {"role": "user", "content": text}, "2026-11-22T10:00:00.000Z"),
        _line(
            "assistant",
            "a1",
            "u1",
            {
                "id": "msg_evil_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": "toolu_evil", "name": "Bash", "input": {"command": text}},
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
            "2026-11-22T10:00:01.000Z",
        ),
        _line(
            "user",
            "u2",
            "a1",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_evil", "content": text}],
            },
            "2026-11-22T10:00:02.000Z",
        ),
    ]
    (folder / f"{HOSTILE_ID}.jsonl").write_text("\n".join(lines) + "\n")
    return home
