"""Homes for the export tests: a Claude Code session holding an AWS key and a
GitHub token, and one whose content tries to run script and load from the network."""

from __future__ import annotations

import base64
import json
from pathlib import Path

AWS_KEY = "AKIAZ3QWERTY2TYUIOPA"
GITHUB_TOKEN = "ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
SECRET_ID = "5ec7e700-0000-4000-8000-000000000001"
HOSTILE_ID = "0badc0de-0000-4000-8000-0000000e4b0e"
#: A 1×1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc00000030101005c2d8ba70000000049454e44ae426082"
    )
).decode()
HOSTILE_TEXT = "\n\n".join(
    (
        "<script>alert('prompt')</script>",
        "<img src=https://example.com/pixel.png onerror=\"alert('img')\">",
        "![tracker](https://example.com/track.png)",
        "[click me](javascript:alert('md'))",
        "<link rel=stylesheet href=https://example.com/x.css><style>body{background:url(https://example.com/b.png)}</style>",
        "<iframe src=https://example.com/></iframe><svg onload=alert('svg')>",
        "</style><script>alert('break out')</script>",
    )
)


def _line(
    session_id: str, kind: str, uuid: str, parent: str | None, message: dict, stamp: str, cwd: str
) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": "2.1.140",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": stamp,
        }
    )


def _session(home: Path, session_id: str, prompt: str, command: str, output: list | str, cwd: str) -> Path:
    folder = home / ".claude" / "projects" / cwd.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        _line(
            session_id,
            "user",
            "u1",
            None,
            {"role": "user", "content": prompt},
            "2026-11-22T10:00:00.000Z",
            cwd,
        ),
        _line(
            session_id,
            "assistant",
            "a1",
            "u1",
            {
                "id": "msg_a1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [
                    {"type": "text", "text": prompt},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}},
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
            "2026-11-22T10:00:01.000Z",
            cwd,
        ),
        _line(
            session_id,
            "user",
            "u2",
            "a1",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}],
            },
            "2026-11-22T10:00:02.000Z",
            cwd,
        ),
    ]
    path = folder / f"{session_id}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def secret_home(home: Path) -> Path:
    """One session whose prompt, reply, tool input and tool output hold an AWS
    access key and a GitHub token (written for agentlog)."""
    prompt = f"deploy with key {AWS_KEY} and push with token {GITHUB_TOKEN} please"
    command = f"AWS_ACCESS_KEY_ID={AWS_KEY} GH_TOKEN={GITHUB_TOKEN} ./deploy.sh"
    _session(home, SECRET_ID, prompt, command, f"using {GITHUB_TOKEN}\nok", "/home/me/deploy")
    return home


def hostile_export_home(home: Path) -> Path:
    """One session whose every text carries HTML that would run script or load
    from the network if an export let it through, and a tool output with a PNG, an
    SVG and a remote image (only the PNG may show, inline)."""
    output = [
        {"type": "text", "text": HOSTILE_TEXT},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/remote.png"}},
    ]
    _session(
        home, HOSTILE_ID, HOSTILE_TEXT, HOSTILE_TEXT, output, "/tmp/evil\"><script>alert('cwd')</script>"
    )
    return home
