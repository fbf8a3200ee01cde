"""A small Claude Code home for the search tests: one prompt per everyday query
of issue 16, beside near misses (the same words out of order, a word alone)."""

from __future__ import annotations

import json
from pathlib import Path

#: (session, message id, text): user prompts, one minute apart in this order.
PROMPTS = (
    ("alpha", "m_claude_md", "Please update CLAUDE.md with the new rules"),
    ("alpha", "m_claude_word", "claude answered slowly"),
    ("alpha", "m_dot_claude", "config lives in ~/.claude/settings.json"),
    ("alpha", "m_app", "the bug is in src/app.py line 3"),
    ("alpha", "m_app_other", "an app layout with py files under src"),
    ("alpha", "m_node", "install node.js first"),
    ("alpha", "m_model", "switch to claude-sonnet-4-5 today"),
    ("alpha", "m_dont", "I don't know why"),
    ("alpha", "m_force", "git push --force origin main"),
    ("beta", "m_push_f", "then run git push -f again"),
    ("beta", "m_email", "mail user@example.com please"),
    ("beta", "m_home", "echo $HOME prints the folder"),
    ("beta", "m_issue", "this fixes #123 for good"),
    ("beta", "m_cpp", "rewrite it in C++ soon"),
    ("beta", "m_percent", "coverage is 50% now"),
    ("beta", "m_todo", "TODO: remove this hack"),
    ("beta", "m_url", "see https://github.com/kenn-io/agentsview/issues/7 for details"),
    ("beta", "m_claude_beta", "ask claude about the deploy"),
    # Unspaced scripts, emoji and identifiers (issue 16 part 2), in a session of their own.
    ("gamma", "m_ja", "これは最新のアップデートです。詳細はドキュメントを参照してください"),
    ("gamma", "m_zh", "我们发布了最新版本的搜索功能"),
    ("gamma", "m_ko", "검색어를 입력하세요"),
    ("gamma", "m_emoji", "ship it 🚀 tests pass ✅"),
    ("gamma", "m_rocket_word", "the rocket launched"),
    ("gamma", "m_ident", "call agentlog.index.fts.translate from web/pages.py via multi-word-name"),
)
#: The Bash call in session beta: (call id, command, output).
BASH_CALL = ("toolu_deploy", "ls /srv/deploy", "release.tar")


def _stamp(n: int) -> str:
    return f"2026-03-01T10:{n:02d}:00Z"


def _line(session: str, uuid: str, n: int, message: dict, kind: str) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": session,
            "uuid": uuid,
            "parentUuid": None,
            "timestamp": _stamp(n),
            "cwd": f"/work/{session}",
            "message": message,
        }
    )


def write_prompts(home: Path, prompts: list[tuple[str, str]]) -> Path:
    """A home of one Claude Code session ``delta`` holding ``prompts`` (message id, text)."""
    rows = [
        _line("delta", uuid, n, {"role": "user", "content": text}, "user")
        for n, (uuid, text) in enumerate(prompts)
    ]
    project = home / ".claude/projects/-work"
    project.mkdir(parents=True, exist_ok=True)
    (project / "delta.jsonl").write_text("\n".join(rows) + "\n")
    return home


def write_home(home: Path) -> Path:
    """The home folder with sessions ``alpha``, ``beta`` and ``gamma`` under ``home``."""
    lines: dict[str, list[str]] = {session: [] for session, _, _ in PROMPTS}
    for n, (session, uuid, text) in enumerate(PROMPTS):
        lines[session].append(_line(session, uuid, n, {"role": "user", "content": text}, "user"))
    call_id, command, output = BASH_CALL
    n = len(PROMPTS)
    tool_use = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
    lines["beta"].append(
        _line(
            "beta",
            "u_call",
            n,
            {
                "id": "m_bash",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [tool_use],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
            "assistant",
        )
    )
    result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
    lines["beta"].append(_line("beta", "u_result", n + 1, {"role": "user", "content": [result]}, "user"))
    project = home / ".claude/projects/-work"
    project.mkdir(parents=True, exist_ok=True)
    for session, rows in lines.items():
        (project / f"{session}.jsonl").write_text("\n".join(rows) + "\n")
    return home
