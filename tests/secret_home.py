"""A home whose one Claude Code session holds a secret, for the redaction tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

SESSION = "claude_code:5ec7e700-0000-4000-8000-000000000001"

TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"  # a GitHub token's shape (36 characters after ghp_)


def secret_home(home: Path, start: datetime = datetime(2026, 11, 30, 10, tzinfo=UTC)) -> Path:
    """A Claude Code home (returned) whose one session, begun at ``start`` and
    ended a second later, holds ``TOKEN`` in its title, prompt and tool call."""
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    common = {"sessionId": "5ec7e700-0000-4000-8000-000000000001", "cwd": "/work/app", "version": "2.1.140"}
    lines = [
        {
            **common,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": start.isoformat(),
            "message": {"role": "user", "content": f"push with token {TOKEN} please"},
        },
        {
            **common,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "timestamp": (start + timedelta(seconds=1)).isoformat(),
            "requestId": "r1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [
                    {"type": "text", "text": "Pushing now."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": f"git push https://{TOKEN}@github.com/o/r"},
                    },
                ],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
    ]
    (folder / "5ec7e700-0000-4000-8000-000000000001.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    return home
