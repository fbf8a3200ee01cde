"""Links across sessions: subagent/fork trees and replayed copies.

* A child session (``parent_key`` set) that does not yet know the tool call that
  spawned it is matched to a tool call of its parent by
  :func:`agentlog.rules.spawning_call`.
* A message id seen with usage in several sessions of one agent (Claude Code
  replays history into resumed/forked files and sidechain logs) carries its usage
  once: in the session :func:`agentlog.rules.owner_rank` puts first; the other
  copies are flagged ``replayed`` and their usage is dropped.  Claude Code's user
  prompts are judged alike (:func:`agentlog.rules.replay_candidate`), and a title
  that named a replayed prompt is the session's own first prompt
  (:func:`agentlog.rules.title_after_replays`).  Adapters give
  messages without a global id a session-scoped id, so only real replays collide.
"""

from __future__ import annotations

from agentlog.assemble import finalize
from agentlog.model import Session
from agentlog.rules import call_stats, owner_rank, replay_candidate, spawning_call, title_after_replays


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


def _drop_replayed_usage(sessions: list[Session]) -> None:
    def rank(s: Session) -> tuple[object, ...]:
        return owner_rank(s.kind, *call_stats(s.messages), s.key)

    order = sorted(sessions, key=rank)
    owner: dict[tuple[str, str, str], str] = {}
    changed: set[str] = set()
    for session in order:
        for message in session.messages:
            if not replay_candidate(session.agent, message.role, message.usage is not None):
                continue
            key = (session.agent, message.role, message.id)
            first = owner.setdefault(key, session.key)
            if first != session.key:
                message.usage = None
                message.flag("replayed")
                changed.add(session.key)
    for session in sessions:
        if session.key in changed:
            finalize(session)
            session.title = title_after_replays(session.title, session.messages)
