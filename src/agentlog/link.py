"""Links across sessions: subagent/fork trees and replayed copies.

* A child session (``parent_key`` set) that does not yet know the tool call that
  spawned it is matched to a tool call of its parent by
  :func:`agentlog.rules.spawning_call`.
* A message id seen with usage in several sessions of one agent (Claude Code
  replays history into resumed/forked files and sidechain logs) carries its usage
  once: in the session :func:`agentlog.rules.owner_rank` puts first; the other
  copies are flagged ``replayed`` and their usage is dropped.  Adapters give
  messages without a global id a session-scoped id, so only real replays collide.
"""

from __future__ import annotations

from agentlog.assemble import finalize
from agentlog.live.status import session_log_status, store
from agentlog.model import Session
from agentlog.rules import call_stats, owner_rank, spawning_call


def link_sessions(sessions: list[Session]) -> list[Session]:
    """Link children to spawning tool calls, drop replayed usage and derive each
    session's status (:func:`agentlog.live.status.log_status`); returns ``sessions``."""
    by_key = {s.key: s for s in sessions}
    for child in sessions:
        if child.parent_key and not child.parent_tool_call_id:
            parent = by_key.get(child.parent_key)
            if parent is not None:
                child.parent_tool_call_id = spawning_call(parent, child)
    _drop_replayed_usage(sessions)
    for session in sessions:
        store(session, session_log_status(session))
    return sessions


def _drop_replayed_usage(sessions: list[Session]) -> None:
    def rank(s: Session) -> tuple[object, ...]:
        return owner_rank(s.kind, *call_stats(s.messages), s.key)

    order = sorted(sessions, key=rank)
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
                message.flag("replayed")
                changed.add(session.key)
    for session in sessions:
        if session.key in changed:
            finalize(session)
