"""Links across sessions: subagent/fork trees and replayed copies.

* A child session (``parent_key`` set) that does not yet know the tool call that
  spawned it is matched to a tool call of its parent whose ``input.prompt``
  equals the child's first user text (or that text inside one wrapping
  ``<task>`` element), or whose result names the child (see :func:`spawning_call`).
* A message id seen in several sessions of one agent (Claude Code replays
  history into resumed/forked files and sidechain logs) carries its usage once:
  the copy in the earliest (then shortest) main session keeps it; the others are
  flagged ``replayed`` and their usage is dropped.  Adapters give messages
  without a global id a session-scoped id, so only real replays collide.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from agentlog.assemble import finalize
from agentlog.model import Session

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def link_sessions(sessions: list[Session]) -> list[Session]:
    """Link children to spawning tool calls and drop replayed usage; returns ``sessions``."""
    by_key = {s.key: s for s in sessions}
    for child in sessions:
        if child.parent_key and not child.parent_tool_call_id:
            parent = by_key.get(child.parent_key)
            if parent is not None:
                child.parent_tool_call_id = spawning_call(parent, child)
    _drop_replayed_usage(sessions)
    return sessions


def _first_user_text(session: Session) -> str:
    for message in session.messages:
        if message.role == "user" and not message.hidden:
            text = message.text.strip()
            if text:
                return text
    return ""


_CHILD_ID_FIELDS = ("agentId", "agent_id", "new_thread_id", "thread_id", "childSessionId")
_PROMPT_FIELDS = ("prompt", "message")
_TASK_ELEMENT = re.compile(r"<task>\s*(.*?)\s*</task>", re.S)


def _prompts(text: str) -> set[str]:
    """``text``, and what one ``<task>`` element wrapping all of it holds (Roo Code
    and Kilo Code start a ``new_task`` child with ``<task>\n{message}\n</task>``)."""
    wrapped = _TASK_ELEMENT.fullmatch(text)
    return {text, wrapped.group(1)} if wrapped else {text}


def spawning_call(parent: Session, child: Session) -> str | None:
    """The parent's tool call that started ``child``: its structured result names
    the child (Claude ``agentId``; Codex ``new_thread_id``/``agent_id``; Vibe
    ``childSessionId``), or its
    prompt (Claude ``input.prompt``, Codex ``spawn_agent`` and Roo/Kilo ``new_task``
    ``input.message``) equals the child's first user text, or the text of one
    ``<task>`` element wrapping it."""
    text = _first_user_text(child)
    prompts = _prompts(text) if text else set()
    ids = {child.id, child.id.removeprefix("agent-")}
    for call in parent.tool_calls():
        structured = call.result.structured if call.result else None
        if isinstance(structured, dict) and any(structured.get(f) in ids for f in _CHILD_ID_FIELDS):
            return call.call_id
        if isinstance(call.input, dict) and any(
            str(call.input.get(f, "")).strip() in prompts for f in _PROMPT_FIELDS
        ):
            return call.call_id
    return None


def owner_rank(
    kind: str, started_at: datetime | None, message_count: int, key: str
) -> tuple[bool, datetime, int, str]:
    """Sort key choosing which session owns a message recorded in several: main
    sessions first, then the earliest.  Replayed copies keep their original
    timestamps, so a resumed session often starts at the same instant as the
    original; the original is then the shorter one (the resumed file holds the
    old history plus its own)."""
    return (kind != "main", started_at or _EPOCH, message_count, key)


def _drop_replayed_usage(sessions: list[Session]) -> None:
    order = sorted(sessions, key=lambda s: owner_rank(s.kind, s.started_at, len(s.messages), s.key))
    owner: dict[tuple[str, str], str] = {}
    changed: set[str] = set()
    for session in order:
        for message in session.messages:
            if message.usage is None:
                continue
            key = (session.agent, message.id)
            first = owner.setdefault(key, session.key)
            if first != session.key:
                message.usage = None
                message.flags.append("replayed")
                changed.add(session.key)
    for session in sessions:
        if session.key in changed:
            finalize(session)
