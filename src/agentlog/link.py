"""Links across sessions: subagent/fork trees and replayed copies.

* A child session (``parent_key`` set) that does not yet know the tool call that
  spawned it is matched to a tool call of its parent by
  :func:`agentlog.rules.spawning_call`.
* A fork whose copy of its parent's history has no end marker (calls flagged
  ``replay_candidate``) has its first :func:`agentlog.rules.replayed_prefix`
  calls, and every message up to the last of them, flagged ``replayed`` and
  their usage dropped: the fork counts only its own calls (and takes its own
  first prompt as title, :func:`agentlog.rules.fork_title`).
* A message id seen with usage in several sessions of one agent (Claude Code
  replays history into resumed/forked files and sidechain logs) carries its usage
  once: in the session :func:`agentlog.rules.owner_rank` puts first; the other
  copies are flagged ``replayed`` and their usage is dropped.  Claude Code's user
  prompts are judged alike (:func:`agentlog.rules.dedup_candidate`), and a title
  that named a replayed prompt is the session's own first prompt
  (:func:`agentlog.rules.title_after_replays`).  Adapters give
  messages without a global id a session-scoped id, so only real replays collide.
"""

from __future__ import annotations

from datetime import datetime

from agentlog.assemble import finalize
from agentlog.live.status import session_log_status, store
from agentlog.model import Session
from agentlog.rules import (
    REPLAY_CANDIDATE,
    call_stats,
    call_tokens,
    dedup_candidate,
    dedup_key,
    first_user_text,
    fork_title,
    owner_rank,
    prompt_as_title,
    replayed_prefix,
    spawning_call,
    title_after_replays,
)


def link_sessions(sessions: list[Session]) -> list[Session]:
    """Link children to spawning tool calls, drop replayed usage and derive each
    session's status (:func:`agentlog.live.status.log_status`); returns ``sessions``."""
    by_key = {s.key: s for s in sessions}
    for child in sessions:
        if child.parent_key and not child.parent_tool_call_id:
            parent = by_key.get(child.parent_key)
            if parent is not None:
                child.parent_tool_call_id = spawning_call(parent, child)
    _drop_fork_copies(sessions, by_key)
    _drop_replayed_usage(sessions)
    for session in sessions:
        store(session, session_log_status(session))
    return sessions


def _drop_fork_copies(sessions: list[Session], by_key: dict[str, Session]) -> None:
    cuts: list[tuple[Session, int]] = []
    for child in sessions:  # every cut first, from the calls as parsed (chains share them)
        parent = by_key.get(child.parent_key) if child.parent_key else None
        calls = [m for m in child.messages if m.usage is not None]
        if parent is None or not any(REPLAY_CANDIDATE in m.flags for m in calls):
            continue
        theirs = [call_tokens(m.usage) for m in parent.messages if m.usage is not None]
        n = replayed_prefix(theirs, [(call_tokens(m.usage), REPLAY_CANDIDATE in m.flags) for m in calls])  # type: ignore[arg-type]
        if n:
            cuts.append((child, child.messages.index(calls[n - 1])))
    for child, last in cuts:
        copied = child.messages[: last + 1]
        for message in copied:
            message.usage = None
            message.flag("replayed")
        prompts = {prompt_as_title(m.text) for m in copied if m.role == "user"}
        child.title = fork_title(child.title, prompts, first_user_text(child))
        finalize(child)


def _drop_replayed_usage(sessions: list[Session]) -> None:
    def rank(s: Session) -> tuple[object, ...]:
        return owner_rank(s.kind, *call_stats(s.messages), s.key)

    order = sorted(sessions, key=rank)
    owner: dict[tuple[str, str, str, datetime | None], str] = {}
    changed: set[str] = set()
    for session in order:
        for message in session.messages:
            if not dedup_candidate(session.agent, message.role, message.usage is not None):
                continue
            key = dedup_key(session.agent, message)
            first = owner.setdefault(key, session.key)
            if first != session.key:
                message.usage = None
                message.flag("replayed")
                changed.add(session.key)
    for session in sessions:
        if session.key in changed:
            finalize(session)
            session.title = title_after_replays(session.title, session.messages)
