"""Claude Code's prompt history, ``~/.claude/history.jsonl`` (one file per config
folder, ``$CLAUDE_CONFIG_DIR`` honoured): what the user typed, kept after the
transcripts are deleted (``cleanupPeriodDays``), so the prompts of a session
whose transcript is gone are still known.

One JSON object per line, appended as each prompt is sent (the up-arrow history
of the prompt box)::

    {"display": "fix the flaky retry test", "pastedContents": {}, "timestamp": 1759105062139,
     "project": "/home/me/repo", "sessionId": "0fd6a5d1-c1e4-494f-82d6-9391ccc1797d"}

``display`` is the prompt as shown (a paste appears as ``[Pasted text #1 +12
lines]``, its text in ``pastedContents["1"]["content"]`` when it is kept inline:
``{"id": 1, "type": "text", "content": "…"}``; a paste not kept inline is not
read here), ``timestamp`` is Unix epoch milliseconds, ``project`` the working
folder.  ``sessionId`` is written by newer versions only; a record without one
cannot be tied to a session and is counted (``no_session_id``), not guessed into
one.  Format as peers that read the file document it: letta-ai/letta-code
``src/skills/builtin/migrating-from-codex-and-claude-code/references/claude-format.md``
(with ``sessionId``), denisraison/claude-plugins
``plugins/history-analyser/skills/history-analysis/references/data-formats.md``
(without it).

:func:`parse_history` is pure: bytes in, one prompt-only :class:`Session` per
``sessionId`` out (``prompt_only``: the user's prompts only, no reply, no usage).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from agentlog.adapters._values import epoch_time
from agentlog.model import Diagnostics, Message, Session, TextPart

SLUG = "claude_code"
TITLE_CHARS = 200
_DECODE = msgspec.json.Decoder()


def parse_history(data: bytes, offset: int = 0) -> tuple[list[Session], Diagnostics]:
    """The prompt-only sessions ``history.jsonl`` bytes hold (``data`` read from
    byte ``offset`` of the file, at a line start), in order of their first prompt,
    and what was used or skipped (a half-written last line is not read).  Each
    session: key ``claude_code:<sessionId>``, ``cwd`` its project, ``title`` its
    first prompt, one visible user message per prompt (id ``history-<byte offset
    of its line>``: the same whether the file is read whole or from ``offset``;
    its pasted texts appended)."""
    diagnostics = Diagnostics()
    sessions: dict[str, Session] = {}
    lines = data.split(b"\n")
    if lines and lines[-1].strip():
        diagnostics.incomplete_tail_bytes = len(lines[-1])
    at = offset
    for line in lines[:-1]:
        start, at = at, at + len(line) + 1
        if not line.strip():
            continue
        try:
            record = _DECODE.decode(line)
        except (msgspec.DecodeError, RecursionError):
            diagnostics.skip("invalid_json")
            continue
        reason = _add(sessions, record, start)
        if reason:
            diagnostics.skip(reason)
        else:
            diagnostics.use()
    for session in sessions.values():
        session.message_count = len(session.messages)
        session.started_at = session.messages[0].timestamp
        session.ended_at = session.messages[-1].timestamp
    return list(sessions.values()), diagnostics


def _add(sessions: dict[str, Session], record: Any, offset: int) -> str | None:
    """Add the prompt of the record at byte ``offset``; the reason it was skipped, else ``None``."""
    if not isinstance(record, dict):
        return "not_an_object"
    sid, display, stamp = record.get("sessionId"), record.get("display"), record.get("timestamp")
    if not isinstance(sid, str) or not sid:
        return "no_session_id"
    if not isinstance(display, str) or not display.strip():
        return "no_prompt"
    when = _time(stamp)
    if when is None:
        return "bad_timestamp"
    project = record.get("project")
    session = sessions.get(sid)
    if session is None:
        session = sessions[sid] = Session(
            key=f"{SLUG}:{sid}",
            agent=SLUG,
            id=sid,
            cwd=project if isinstance(project, str) and project else None,
            title=_title(display),
            prompt_only=True,
        )
    texts = [display, *_pasted(record.get("pastedContents"))]
    session.messages.append(
        Message(
            id=f"history-{offset}",
            role="user",
            timestamp=when,
            parts=[TextPart(text=t) for t in texts],
        )
    )
    return None


def _time(stamp: Any) -> datetime | None:
    """Epoch milliseconds as an aware UTC time (``None`` when not a plausible one)."""
    if isinstance(stamp, bool) or not isinstance(stamp, int | float):
        return None
    return epoch_time(stamp / 1000)


def _pasted(value: Any) -> list[str]:
    """The inline pasted texts of a record, in paste order."""
    if not isinstance(value, dict):
        return []
    out = []
    for key in sorted(value, key=lambda k: (len(str(k)), str(k))):
        paste = value[key]
        if isinstance(paste, dict) and paste.get("type") == "text" and isinstance(paste.get("content"), str):
            out.append(paste["content"])
    return out


def _title(display: str) -> str:
    line = " ".join(display[: TITLE_CHARS * 4].split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
