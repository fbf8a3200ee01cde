"""Session status from the logs alone: one pure rule set every path calls.

Two steps, both pure:

1. :func:`log_status` — what the session's *records* say, independent of the
   clock: the adapter's recorded status (``Session.status`` as the parser left it:
   Codex ``task_complete``, Kimi ``TurnEnd``, Mistral Vibe ``session.status``,
   Cline ``completion_result`` …) refined by the last messages (:data:`TAIL`):
   pending ``tool_call`` parts without a ``tool_result``, the message flags
   (``interrupted``, ``api_error``, ``turn_end``), question tools.  The in-memory
   loader (:func:`agentlog.link.link_sessions`) and the index
   (:meth:`agentlog.index.store.Store.refresh_sessions`) both store its result in
   the session (``status``, ``status_evidence``, ``status_at``, ``status_since``,
   ``status_inferred``, ``status_reason``).
2. :func:`refine` — what the clock adds at read time: the source's last write
   (file mtime), ``now``, and optionally whether an agent process runs in the
   session's folder (:mod:`agentlog.live.procs`; ``None`` = unknown).  A pending
   quick call that stays pending becomes ``needs_you`` (inferred: a permission
   prompt), a turn without writes becomes ``stale``, a finished turn whose process
   is gone becomes ``done``; a spawn call whose children are all finished stops
   being ``waiting_for_subagents``.

What each agent can tell (the evidence its writer records):

* **Claude Code** — prompts, tool calls and results, ``stop_reason: end_turn``
  (flag ``turn_end``), interruptions, API errors, ``AskUserQuestion`` /
  ``ExitPlanMode`` calls (``needs_you``).  It writes *nothing* while a permission
  prompt waits: a pending edit/write/read that stays pending past
  :data:`PROMPT_AFTER` is ``needs_you`` with ``status_inferred``.  A long ``bash``
  call cannot be told from a permission prompt: it stays ``running_tool``.
* **Codex** — ``task_started`` / ``task_complete`` / ``turn_aborted`` / ``error``
  recorded by the adapter; ``request_user_input`` calls are ``needs_you``.  Exec and
  patch approval requests are never persisted to rollouts (openai/codex
  ``codex-rs/core/src/rollout/policy.rs``): a pending patch (a quick call) is an
  inferred ``needs_you`` as for Claude Code; a command waiting for approval looks
  like ``running_tool`` (then ``stale``).
* **Gemini CLI** — the chat file is rewritten per message: prompts, tool calls
  with their status; no turn-end marker, so an assistant text with no pending
  call is ``waiting_for_user`` (inferred).
* **OpenCode** — message/part files; tool parts carry their state
  (``pending``/``running`` stay pending); ``question`` tool → ``needs_you``.
* **Cline / Roo / Kilo** — ``ui_messages.json`` asks (``completion_result`` →
  ``done`` by the adapter); ``ask_followup_question`` → ``needs_you``.
* **Mistral Vibe** — ``session.status`` (``running``/``blocked``/``idle``/
  ``failed``/``archived``) is recorded: ``blocked`` is ``waiting_for_user`` from the
  adapter, read here as ``needs_you`` (an approval or question waits).
* **Kimi** — ``TurnBegin``/``TurnEnd``/``StepInterrupted`` wire records.
* Every other agent: what its messages show (pending calls, last role), inferred.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from agentlog.model import CompactionPart, Message, Session, SessionStatus, ToolCallPart

TAIL = 200
"""How many of a session's last messages :func:`log_status` reads (both paths)."""

PROMPT_AFTER = timedelta(seconds=8)
"""A quick call (:data:`QUICK_TOOLS`) pending this long, with no write since, waits
on a permission prompt (agents in :data:`SILENT_PROMPTS`)."""
STALE_AFTER = timedelta(minutes=30)
"""A turn in progress with no write this long, and no process known alive, is stale."""
IDLE_AFTER = timedelta(hours=2)
"""A finished turn with no write this long and no process known alive is done."""
GONE_AFTER = timedelta(seconds=60)
"""A turn in progress whose process is gone, and no write this long, is stale."""

IN_TURN: frozenset[SessionStatus] = frozenset({"working", "running_tool", "waiting_for_subagents"})
"""Statuses of a turn in progress."""
ACTIVE: frozenset[SessionStatus] = IN_TURN | {"needs_you"}
"""Statuses of a session that is doing something or blocked on the user."""

QUESTION_TOOLS = frozenset(
    {
        "askuserquestion",  # Claude Code
        "exitplanmode",  # Claude Code: the plan waits for approval
        "exit_plan_mode",
        "request_user_input",  # Codex
        "ask_user",  # Gemini CLI
        "question",  # OpenCode
        "ask_followup_question",  # Cline, Roo, Kilo
        "plan_mode_respond",  # Cline
        "ask_user_question",
    }
)
"""Raw tool names (lower case) whose pending call is a question to the user."""
SPAWN_TOOLS = frozenset({"task", "spawn_agent", "new_task", "agent"})
"""Normalised or raw tool names whose call starts a subagent."""
QUICK_TOOLS = frozenset({"read", "write", "edit", "glob", "grep", "list", "delete", "notebook_edit", "todo"})
"""Tools that normally finish at once: left pending, a permission prompt waits."""
SILENT_PROMPTS = frozenset({"claude_code", "codex", "gemini_cli", "opencode", "qwen"})
"""Agents that record nothing while a permission prompt waits."""

_RECORDED_FINAL: frozenset[SessionStatus] = frozenset(
    {"waiting_for_user", "done", "interrupted", "errored", "needs_you"}
)


@dataclass(frozen=True)
class StatusFacts:
    """A status with its evidence: ``evidence`` names the record (``"<role> message
    <id>: …"`` or the adapter's recorded event), ``at`` its time (UTC), ``since``
    when the status began, ``inferred`` whether it is a guess and ``reason`` why.
    ``pending`` are the normalised tool names (``ToolCallPart.tool``) of the calls
    of the current turn still waiting for a result, in order."""

    status: SessionStatus = "unknown"
    evidence: str | None = None
    at: datetime | None = None
    since: datetime | None = None
    inferred: bool = False
    reason: str | None = None
    pending: tuple[str, ...] = ()


def facts_of(session: Session) -> StatusFacts:
    """The status facts stored in ``session`` (``pending`` unknown: empty)."""
    return StatusFacts(
        session.status,
        session.status_evidence,
        session.status_at,
        session.status_since,
        session.status_inferred,
        session.status_reason,
        tuple(session.status_pending),
    )


def store(session: Session, facts: StatusFacts) -> None:
    """Write ``facts`` into ``session``'s status fields, in place."""
    session.status = facts.status
    session.status_evidence = facts.evidence
    session.status_at = facts.at
    session.status_since = facts.since
    session.status_inferred = facts.inferred
    session.status_reason = facts.reason
    session.status_pending = list(facts.pending)


def _counts(message: Message) -> bool:
    return not any(f in ("replayed", "abandoned", "unknown", "meta") for f in message.flags)


def is_prompt(message: Message) -> bool:
    """Whether ``message`` is a prompt a person typed (a user message with text, not synthetic)."""
    if message.role != "user" or "synthetic" in message.flags:
        return False
    text = message.text
    return bool(text) and not text.isspace()  # not text.strip(): a copy of a long prompt


def _where(message: Message) -> str:
    return f"{message.role} message {message.id}"


def log_status(
    agent: str, kind: str, recorded: SessionStatus, recorded_evidence: str | None, tail: Sequence[Message]
) -> StatusFacts:
    """The status the records show: ``recorded`` (the adapter's, with its evidence)
    refined by ``tail``, the session's last :data:`TAIL` messages in order.

    A recorded final status (``waiting_for_user``, ``done``, ``interrupted``,
    ``errored``, ``needs_you``) is kept, unless a question is pending.  Otherwise the last counted message
    decides: interrupted/api_error flags; a pending question → ``needs_you``;
    pending spawn calls only → ``waiting_for_subagents``; other pending calls →
    ``running_tool``; a manual compaction (and its summary) last →
    ``waiting_for_user`` (inferred; an automatic one goes on: ``working``); an
    assistant message ending in text with no pending call → ``waiting_for_user``
    (inferred unless flagged ``turn_end``); a prompt or a result → ``working``.  A subagent never waits at a prompt: its
    ``waiting_for_user`` is ``done``."""
    facts = _from_tail(agent, recorded, recorded_evidence, [m for m in tail if _counts(m)])
    if kind == "subagent" and facts.status == "waiting_for_user":
        facts = replace(facts, status="done", reason=facts.reason or "a subagent's turn ended")
    return facts


def _from_tail(
    agent: str, recorded: SessionStatus, recorded_evidence: str | None, tail: list[Message]
) -> StatusFacts:
    if not tail:
        return StatusFacts(recorded, recorded_evidence)
    last = tail[-1]
    start = max((i for i, m in enumerate(tail) if is_prompt(m)), default=0)
    turn = tail[start:]
    pending = [
        (m, p)
        for m in turn
        for p in m.parts
        if isinstance(p, ToolCallPart) and (p.result is None or p.result.status == "pending")
    ]
    ids = tuple(p.tool for _, p in pending)
    questions = [(m, p) for m, p in pending if p.raw_name.lower() in QUESTION_TOOLS]
    if questions:
        m, p = questions[-1]
        return StatusFacts(
            "needs_you", f"{_where(m)}: pending question {p.raw_name} {p.call_id}", m.timestamp, m.timestamp,
            pending=ids,
        )
    if recorded in _RECORDED_FINAL:
        return StatusFacts(recorded, recorded_evidence, last.timestamp, last.timestamp, pending=ids)
    if "interrupted" in last.flags:
        return StatusFacts("interrupted", f"{_where(last)}: flagged interrupted", last.timestamp, last.timestamp)
    if "api_error" in last.flags:
        return StatusFacts("errored", f"{_where(last)}: flagged api_error", last.timestamp, last.timestamp)
    if pending:
        m, p = pending[-1]
        spawns = all(q.tool in SPAWN_TOOLS or q.raw_name.lower() in SPAWN_TOOLS for _, q in pending)
        status: SessionStatus = "waiting_for_subagents" if spawns else "running_tool"
        return StatusFacts(
            status, f"{_where(m)}: pending tool_call {p.raw_name} {p.call_id}", last.timestamp, m.timestamp,
            pending=ids,
        )
    if _ending_compaction(tail) == "manual":
        return StatusFacts(
            "waiting_for_user",
            f"{_where(last)}: a manual compaction ends the log",
            last.timestamp,
            last.timestamp,
            inferred=True,
            reason="a compaction the user asked for (/compact) leaves the agent at its prompt",
        )
    if last.role == "assistant" and last.parts and not isinstance(last.parts[-1], ToolCallPart):
        if "turn_end" in last.flags:
            return StatusFacts("waiting_for_user", f"{_where(last)}: turn_end", last.timestamp, last.timestamp)
        return StatusFacts(
            "waiting_for_user",
            f"{_where(last)}: the assistant's reply, no pending tool_call",
            last.timestamp,
            last.timestamp,
            inferred=True,
            reason="the last record is the assistant's reply; the agent records no turn end",
        )
    if last.role in ("user", "tool", "assistant"):
        what = "the prompt" if is_prompt(last) else "a tool_result"
        evidence = f"{_where(last)}: {what} is the last record"
        return StatusFacts("working", evidence, last.timestamp, last.timestamp)
    return StatusFacts(recorded, recorded_evidence, last.timestamp, last.timestamp)


def _ending_compaction(tail: list[Message]) -> str | None:
    """The ``trigger`` of the compaction that ends ``tail`` (its part, then only
    messages flagged ``compaction_summary``), or ``None`` when something else ends it."""
    for message in reversed(tail):
        found = [p for p in message.parts if isinstance(p, CompactionPart)]
        if found:
            return found[-1].trigger
        if "compaction_summary" not in message.flags:
            return None
    return None


def session_log_status(session: Session) -> StatusFacts:
    """:func:`log_status` of an assembled session (its recorded status and last
    :data:`TAIL` messages)."""
    return log_status(
        session.agent, session.kind, session.status, session.status_evidence, session.messages[-TAIL:]
    )


def _age(now: datetime, then: datetime | None) -> timedelta | None:
    return None if then is None else now - then


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def _stale(facts: StatusFacts, now: datetime, quiet: timedelta, why: str) -> StatusFacts:
    reason = f"turn in progress, no write for {_span(quiet)} {why}"
    return replace(facts, status="stale", since=now - quiet, inferred=True, reason=reason)


def refine(
    facts: StatusFacts,
    agent: str,
    *,
    last_write: datetime | None,
    now: datetime,
    alive: bool | None = None,
    children: Iterable[SessionStatus] | None = None,
) -> StatusFacts:
    """``facts`` (from :func:`log_status`) with what the clock and the processes add.

    ``last_write`` is the latest modification of the session's source (UTC),
    ``alive`` whether a process of the agent runs in the session's folder (``None``
    when unknown), ``children`` the statuses of the subagents started by pending spawn calls
    (``None``: not known).  Raises nothing."""
    quiet = _age(now, last_write or facts.at)
    status = facts.status
    if status == "waiting_for_subagents" and children is not None:
        kids = list(children)
        if kids and not any(k in ACTIVE for k in kids):
            facts = replace(facts, status="working", inferred=True, reason="every subagent of the pending spawn calls has finished")
            status = "working"
    if quiet is None:
        return facts
    if status in IN_TURN and alive is False and quiet > GONE_AFTER:
        return _stale(facts, now, quiet, f"and no {agent} process in its folder")
    quick = bool(facts.pending) and all(t in QUICK_TOOLS for t in facts.pending)
    if (
        status == "running_tool"
        and agent in SILENT_PROMPTS
        and quick
        and quiet > PROMPT_AFTER
        and (alive is True or quiet <= STALE_AFTER)
    ):
        return replace(
            facts,
            status="needs_you",
            inferred=True,
            reason=f"a {'/'.join(dict.fromkeys(facts.pending))} call pending for {_span(quiet)} with no write: "
            f"{agent} records nothing while a permission prompt waits",
        )
    if status in IN_TURN and alive is not True and quiet > STALE_AFTER:
        return _stale(facts, now, quiet, "(agent process not known to run)")
    if status == "waiting_for_user" and (alive is False or (alive is None and quiet > IDLE_AFTER)):
        why = "its agent process is gone" if alive is False else f"no write for {_span(quiet)}"
        return replace(facts, status="done", inferred=True, reason=f"the turn ended and {why}")
    return facts
