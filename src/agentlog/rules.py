"""The rules every path derives its facts by: one pure function per fact.

The in-memory loader (:mod:`agentlog.assemble`, :mod:`agentlog.link`,
:mod:`agentlog.load`), the index (:mod:`agentlog.index.store`,
:mod:`agentlog.index.sync`) and the Claude Code fast usage scanner
(:mod:`agentlog.usage.scan`) all call these, so they cannot disagree:

* :func:`session_key` — how a session is named, :func:`recorded_session_id` —
  a Claude Code file by the ``sessionId`` of its records;
* :func:`bounded_usage` — token counts out of range (negative, or from 10^12 on)
  count as 0 and are reported (``Diagnostics.invalid_values``);
* :func:`keeps_new_copy` — which copy of a streamed response is kept;
* :func:`first_cwd` — a session's cwd (and so its project), and the one project
  rule over it: :func:`project_folder` (grouping), :func:`project_name`,
  :func:`folder_contains` (``--project``), for POSIX and Windows paths alike;
* :func:`title_wins` and :func:`session_title` — title precedence, and
  :func:`bounded_title`, :func:`prompt_as_title` — a title's length (a first
  prompt may be megabytes);
* :func:`owner_rank` — which session's copy of a replayed call counts, and
  :func:`dedup_candidate` — which messages such copies are (calls; Claude Code
  prompts too), :func:`title_after_replays` — a title that named a replayed prompt;
* :func:`counts_model` — which messages name a session's models, and
  :func:`replaces_model` — when a fallback model gives way to a nearer one;
* :func:`spawning_call` — the tool call that started a subagent or fork;
* :func:`replayed_prefix` — how many of a fork's first calls are its copy of
  the parent's (Codex 0.4x forks, whose copy has no end marker), and
  :func:`fork_title` — the title such a fork then takes;
* :func:`copy_verdict` — whether a later source holding a session key an
  earlier one holds is a copy of it (skipped), a longer copy (it replaces the
  earlier one), a copy that went on apart or a different session (both kept),
  judged by content, and :func:`distinct_id` — the id the later one's sessions
  then take when both are kept.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal, overload

from agentlog import lazy
from agentlog.model import USAGE_COUNTS, Message, Session, Usage, usage_counts

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

MAX_TOKENS = 10**12
"""Token counts from a trillion on (and negative ones) are not believed: no API
call comes near (the largest context windows hold ~10^7 tokens), nor any agent's
total of a session (a heavy one reaches ~10^9).  2**53 − 1, the largest integer
JSON keeps exact (RFC 8259 §6), read as true priced one Claude call at $27
billion (tester14 finding 15)."""

TOKENS_OUT_OF_RANGE = "tokens_out_of_range"
"""The ``Diagnostics.invalid_values`` reason of a token count counted as 0."""


def session_key(agent: str, session_id: str) -> str:
    """The globally unique key of session ``session_id`` of ``agent``: ``"{agent}:{id}"``."""
    return f"{agent}:{session_id}"


def recorded_session_id(file_id: str, recorded: str | None) -> str:
    """The id of a session whose file is named ``file_id`` and whose first line
    that records one says ``recorded``: the recorded id.  Claude Code names a
    session file after the ``sessionId`` its lines carry, so a file renamed or
    copied (``<id> (1).jsonl``, a backup folder) is still that session — one
    copy judged by :func:`copy_verdict` — and is resumed by that id.  Used by the
    Claude Code parser and usage scanner for main session files."""
    return recorded or file_id


def bounded_usage(usage: Usage) -> tuple[Usage, int]:
    """``(usage, n)``: ``usage`` with each count outside ``0 ≤ n < 10^12``
    (:data:`MAX_TOKENS`) set to 0, and how many were.  ``usage`` itself when all
    are in range (the common case: nothing is copied)."""
    values: tuple[int, ...] = usage_counts(usage)
    if min(values) >= 0 and max(values) < MAX_TOKENS:  # all in range
        return usage, 0
    ok = [v if 0 <= v < MAX_TOKENS else 0 for v in values]
    return (
        Usage(
            **dict(zip(USAGE_COUNTS, ok, strict=True)),
            cost_usd=usage.cost_usd,
            cost_source=usage.cost_source,
            service_tier=usage.service_tier,
        ),
        sum(1 for v in values if not 0 <= v < MAX_TOKENS),
    )


def keeps_new_copy(kept: Usage | None, new: Usage | None) -> bool:
    """Whether a later copy ``new`` of one response's usage replaces the ``kept``
    one: unless it is smaller.  Claude Code writes one line per content block,
    each with a copy of ``usage`` whose ``output_tokens`` grows, so the final copy
    wins; copies are never summed (``shared/cost.md`` §1)."""
    return new is not None and (kept is None or new.total_tokens >= kept.total_tokens)


def first_cwd(recorded: Iterable[str | None]) -> str | None:
    """A session's cwd from the cwds its records give, in the order they were
    written: the first.  Claude Code stamps every line with the process's cwd at
    that moment (a ``cd`` in a Bash call moves it) and files the session under the
    folder it started in (``projects/<encoded cwd>``); the first recorded cwd is
    that folder, whichever record type holds it."""
    return next((cwd for cwd in recorded if cwd), None)


_WINDOWS = lazy.pattern(r"^(?:[A-Za-z]:[\\/]|\\\\)")
"""A Windows path: a drive letter (``C:\\Users\\…``, ``D:/Work Space/…``) or a UNC
share (``\\\\server\\share``)."""


def project_folder(cwd: str | None) -> str | None:
    """The folder a recorded ``cwd`` names, written one way so that every record
    of it groups as one project: a Windows path (agents on Windows record
    ``C:\\Users\\me\\app``; Node-based ones, Git Bash and WSL interop also
    ``C:/Users/me/app``, ``c:\\…``) with ``/`` separators and an upper-case drive
    letter; any path without trailing separators (a root keeps its own).  A
    POSIX path is otherwise unchanged (a ``\\`` in it is a character of a name)."""
    if not cwd:
        return None
    folder = cwd
    if _WINDOWS.match(cwd):
        folder = cwd.replace("\\", "/")
        if folder[1] == ":":
            folder = folder[0].upper() + folder[1:]
    stripped = folder.rstrip("/")
    if not stripped or stripped.endswith(":"):
        return stripped + "/"  # "/" and "C:/"
    return stripped


def project_name(cwd: str | None) -> str:
    """A project's name: the last name of its :func:`project_folder`
    (``/home/me/src/weather`` and ``D:\\Work Space\\weather\\`` → ``weather``;
    blank when unknown or a root)."""
    folder = project_folder(cwd)
    return folder.rstrip("/").rsplit("/", 1)[-1] if folder else ""


def folder_contains(cwd: str | None, text: str | None) -> bool:
    """The ``--project`` match: whether the folder ``cwd`` contains ``text``,
    ignoring case (Unicode case folding) and which separator either writes
    (``work space/app`` matches ``D:\\Work Space\\app``, ``src\\app`` matches
    ``/home/me/src/app``); an empty or missing ``text`` matches everything, a
    missing ``cwd`` only that."""
    if not text:
        return True
    return text.replace("\\", "/").casefold() in (cwd or "").replace("\\", "/").casefold()


TITLE_PROMPT, TITLE_SUMMARY, TITLE_AI, TITLE_CUSTOM = 0, 1, 2, 3
"""Title ranks, lowest first: the first real prompt, a summary, a title the agent's
model wrote, one the user set (Claude Code ``summary``/``ai-title``/``custom-title``
lines)."""


def title_wins(rank: int, held: int | None) -> bool:
    """Whether a title of ``rank`` replaces the one of rank ``held`` (``None``:
    none yet): a higher rank wins, and a later title of the same rank replaces an
    earlier one (a renamed session), except the prompt: the first one names it."""
    return held is None or (rank != TITLE_PROMPT and rank >= held)


TITLE_CHARS = 1_000
"""Characters a session title holds at most (:func:`bounded_title`)."""

_SPACES = lazy.pattern(r"\s*")
_SPACES_TO_END = lazy.pattern(r"\s*\Z")


@overload
def bounded_title(title: str) -> str: ...
@overload
def bounded_title(title: None) -> None: ...
def bounded_title(title: str | None) -> str | None:
    """``title`` when it holds at most :data:`TITLE_CHARS` characters (or is
    ``None``); a longer one without its leading and trailing white space, and
    when that is still longer, its first ``TITLE_CHARS - 1`` characters (trailing
    white space dropped) and ``…``.  A bounded title is returned as it is.

    A first prompt names a session (Claude Code, Codex and most agents record no
    title), and a prompt may be a pasted file of many megabytes; the title is
    kept in the parser state, every header and the index, so only its head is
    kept.  The bound is above what real titles hold (the longest first prompt
    among the fixtures is 668 characters), so no title of those changes.  Only
    the head of a long ``title`` is copied."""
    if title is None or len(title) <= TITLE_CHARS:
        return title
    start = _SPACES.match(title).end()  # type: ignore[union-attr]  # always matches
    head = title[start : start + TITLE_CHARS]
    if _SPACES_TO_END.match(title, start + TITLE_CHARS):  # white space after the bound: nothing cut
        return head.rstrip()
    return head[: TITLE_CHARS - 1].rstrip() + "…"


def prompt_as_title(text: str) -> str:
    """The title a prompt's ``text`` gives a session: ``text`` without its
    leading and trailing white space, bounded (:func:`bounded_title`); what
    ``bounded_title(text.strip())`` is, without copying a long ``text`` whole."""
    return bounded_title(text.strip() if len(text) <= TITLE_CHARS else text)


def session_title(held: tuple[int, str] | None, description: str | None) -> str | None:
    """A session's title from the best title seen (``(rank, text)``) and its
    ``description`` (a subagent's task description, which names it better than
    its long first prompt): a summary or better, else the description, else the
    first prompt."""
    if held is not None and held[0] > TITLE_PROMPT:
        return held[1]
    return description or (held[1] if held else None)


def owner_rank(
    kind: str, first_call_at: datetime | None, calls: int, key: str
) -> tuple[bool, datetime, int, str]:
    """Sort key choosing which session owns a call recorded in several (Claude
    Code replays history into resumed/forked files and sidechain logs): main
    sessions first, then the one whose first call is earliest, then the one with
    fewer calls, then the key.  ``first_call_at`` and ``calls`` are over the
    session's messages that carry usage (replayed or not): a resumed file's
    replayed calls keep their original timestamps, so it ties with the original
    on the first, and the original is the one with fewer."""
    return (kind != "main", first_call_at or _EPOCH, calls, key)


def call_stats(messages: Iterable[Message]) -> tuple[datetime | None, int]:
    """``(first call's time, calls)`` of :func:`owner_rank` over ``messages``."""
    first: datetime | None = None
    count = 0
    for m in messages:
        if m.usage is not None:
            count += 1
            if m.timestamp is not None and (first is None or m.timestamp < first):
                first = m.timestamp
    return first, count


REPLAYED_PROMPT_AGENTS = frozenset({"claude_code"})
"""Agents whose user messages carry a global id that a resumed or forked session
file re-persists unchanged: Claude Code writes the earlier chain into the new
file with its original ``uuid``, ``timestamp`` and ``message.id`` and only
``sessionId`` rewritten (``claude --resume … --fork-session``; agentsview
``internal/parser/claude_lineage.go``)."""


def dedup_candidate(agent: str, role: str, has_usage: bool) -> bool:
    """Whether copies of a message (the same id) in several sessions of ``agent``
    are one message replayed, owned by the session :func:`owner_rank` puts first
    and flagged ``replayed`` in the others: a call (it has usage), or a user
    prompt of a :data:`REPLAYED_PROMPT_AGENTS` agent (so a resumed file's copied
    prompts are neither counted nor its title twice)."""
    return has_usage or (role == "user" and agent in REPLAYED_PROMPT_AGENTS)


def dedup_key(agent: str, message: Message) -> tuple[str, str, str, datetime | None]:
    """What copies of a :func:`dedup_candidate` message share: agent, role, id and,
    for a prompt, its recorded time (a replayed entry keeps its ``timestamp``; two
    hand-written files that both call a prompt ``u1`` are no copies)."""
    return agent, message.role, message.id, message.timestamp if message.role == "user" else None


def title_after_replays(title: str | None, messages: Iterable[Message]) -> str | None:
    """A session's ``title`` once its replayed copies are flagged: a title that is
    the text of one of its replayed prompts (the parser named the session after
    its first prompt, which the resumed file copied; compared as titles,
    :func:`prompt_as_title`) becomes its first own visible prompt (unchanged
    when it has none); any other title is kept."""
    if title is None:
        return None
    own = None
    replayed = False
    for m in messages:
        if m.role != "user":
            continue
        text = prompt_as_title(m.text)
        if "replayed" in m.flags:
            replayed = replayed or text == title
        elif own is None and not m.hidden and text:
            own = text
    return own if replayed and own else title


MODEL_INFERRED = "model_inferred"
"""The flag of a call whose model the agent did not record (its ``model`` is a
documented fallback, e.g. :data:`agentlog.adapters.codex.DEFAULT_MODELS`)."""

NO_MODEL_FLAGS = frozenset({"synthetic", "replayed", MODEL_INFERRED})
"""Flags of messages whose model is not one the session ran on (a locally
written placeholder; a copy of another session's call; a fallback)."""


def replaces_model(held_flags: Iterable[str], new: Message) -> bool:
    """Whether fragment ``new`` replaces the model of a message flagged
    ``held_flags`` that already has one: only a fallback by a nearer fallback
    (both flagged :data:`MODEL_INFERRED`: an adapter names the session's nearest
    recorded model once it is written, over the version's default)."""
    return new.model is not None and MODEL_INFERRED in held_flags and MODEL_INFERRED in new.flags


def counts_model(message: Message) -> bool:
    """Whether ``message``'s model is one of its session's ``models``."""
    return bool(message.model) and not NO_MODEL_FLAGS.intersection(message.flags)


def first_user_text(session: Session) -> str:
    for message in session.messages:
        if message.role == "user" and not message.hidden:
            text = message.text.strip()
            if text:
                return text
    return ""


_CHILD_ID_FIELDS = ("agentId", "agent_id", "new_thread_id", "thread_id", "childSessionId")
_PROMPT_FIELDS = ("prompt", "message")
_TASK_ELEMENT = lazy.pattern(r"<task>\s*(.*?)\s*</task>", re.S)


def _prompts(text: str) -> set[str]:
    """``text``, and what one ``<task>`` element wrapping all of it holds (Roo Code
    and Kilo Code start a ``new_task`` child with ``<task>\n{message}\n</task>``)."""
    wrapped = _TASK_ELEMENT.fullmatch(text)
    return {text, wrapped.group(1)} if wrapped else {text}


def spawning_call(parent: Session, child: Session) -> str | None:
    """The parent's tool call that started ``child``: its structured result names
    the child (Claude ``agentId``; Codex ``new_thread_id``/``agent_id``; Vibe
    ``childSessionId``), or its prompt (Claude ``input.prompt``, Codex
    ``spawn_agent`` and Roo/Kilo ``new_task`` ``input.message``) equals the
    child's first visible user text, or the text of one ``<task>`` element
    wrapping it.  ``parent`` needs only its messages with tool calls, ``child``
    only its first visible user message."""
    text = first_user_text(child)
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


CallTokens = tuple[int, int, int, int, int, int]
"""What :func:`replayed_prefix` compares of a call: its token buckets
``(input, cache read, cache write 5m, cache write 1h, output, reasoning)``."""

REPLAY_CANDIDATE = "replay_candidate"
"""The flag of a call an adapter could not place inside or after a fork's copy."""


def call_tokens(usage: Usage) -> CallTokens:
    """A call's :data:`CallTokens`."""
    u = usage
    return (
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_5m_tokens,
        u.cache_write_1h_tokens,
        u.output_tokens,
        u.reasoning_tokens,
    )


def replayed_prefix(parent: Sequence[CallTokens], child: Sequence[tuple[CallTokens, bool]]) -> int:
    """How many of a fork's first calls are copies of its parent's: ``parent`` is
    every call the parent's file records, in order (copies it holds of its own
    parent included: a chained fork's copy holds them too); ``child`` the fork's
    calls in order, each with whether it is flagged :data:`REPLAY_CANDIDATE`.

    A Codex fork copies its parent's rollout, ``token_count`` events included, so
    its first calls — the per-call differences of the same cumulative totals —
    repeat the parent's one for one; the copy ends at the first call that is not
    a candidate or differs from the parent's call at that position (0.4x forks
    have neither a UUIDv7 ``turn_id`` nor a repeated own ``session_meta`` to end
    it; ``shared/cost.md`` §2 "Forks").  Only a fork is compared with its parent,
    never siblings with each other, so two subagents with identical calls both
    count theirs."""
    n = 0
    for (tokens, candidate), theirs in zip(child, parent, strict=False):
        if not candidate or tokens != theirs:
            break
        n += 1
    return n


def fork_title(title: str | None, copied_prompts: set[str], own_prompt: str) -> str | None:
    """A fork's title once its copy of the parent is found
    (:func:`replayed_prefix`): a ``title`` that is one of the copied prompts
    (the parser titled it by the parent's prompt: 0.4x forks have no marker to
    tell it) gives way to the fork's own first prompt ``own_prompt`` (its first
    visible user text), when it has one.  Prompts are compared as titles
    (:func:`prompt_as_title`: ``copied_prompts`` are such titles), and the one
    taken is bounded."""
    return prompt_as_title(own_prompt) if own_prompt and title in copied_prompts else title


Signature = tuple[str, str, datetime | None]
"""What :func:`copy_verdict` compares of a message: ``(id, role, timestamp)``."""


def signature(message: Message) -> Signature:
    """A message's :data:`Signature`."""
    return message.id, message.role, message.timestamp


CopyVerdict = Literal["copy", "supersedes", "overlaps", "different"]
"""What :func:`copy_verdict` says of a later source holding a session key that an
earlier source holds."""


def copy_verdict(held: Iterable[Signature], new: Iterable[Signature]) -> CopyVerdict:
    """How a source whose messages of a session are ``new`` relates to the source
    already holding that session key, whose messages of it are ``held``.  A message
    of one is in the other when they have the same id, or the same role at the
    same recorded instant (Goose 1.10+ imports its legacy JSONL files into
    ``sessions.db`` under the same session id but with new message ids, keeping
    each message's ``created`` time: block/goose ``session/legacy.rs``).

    * ``"copy"``: every message of ``new`` is in ``held`` (a moved or archived
      copy, the same tree reached twice; or neither has any message: nothing
      tells them apart) — the later source is skipped;
    * ``"supersedes"``: ``new`` holds every message of ``held`` and more (a copy
      taken earlier of a session that went on, e.g. Claude Code's
      ``projects/-tmp-a/<id>.jsonl`` copied before the session continued in
      ``-tmp-b``) — the later source replaces the earlier one, which is then the
      skipped copy, so the longer copy wins whichever is read first;
    * ``"overlaps"``: they share messages and each has some the other lacks
      (two copies that went on apart) — both are kept, the later one under
      :func:`distinct_id`, and a call in both counts once (:func:`owner_rank`,
      :func:`dedup_candidate`), so every distinct call counts once;
    * ``"different"``: nothing shared (two sessions whose files merely share a
      name, ``p1/nested/chat.jsonl`` and ``p2/nested/chat.jsonl``), or only one
      has messages — both kept, the later one under :func:`distinct_id`.

    ccusage counts each distinct ``message.id`` + ``requestId`` once across all
    files, which is what these verdicts give for the calls."""
    ids: set[str] = set()
    stamps: set[tuple[str, datetime]] = set()
    held_list = list(held)
    for mid, role, when in held_list:
        ids.add(mid)
        if when is not None:
            stamps.add((role, when))
    new_ids: set[str] = set()
    new_stamps: set[tuple[str, datetime]] = set()
    shared = extra = False
    for mid, role, when in new:
        new_ids.add(mid)
        if when is not None:
            new_stamps.add((role, when))
        if mid in ids or (when is not None and (role, when) in stamps):
            shared = True
        else:
            extra = True
    if not shared:
        return "copy" if not held_list and not new_ids else "different"
    if not extra:
        return "copy"
    lacking = any(
        mid not in new_ids and (when is None or (role, when) not in new_stamps) for mid, role, when in held_list
    )
    return "overlaps" if lacking else "supersedes"


def distinct_id(session_id: str, source_path: str) -> str:
    """The id a session takes when its key is held by another source with a
    different session or a copy that went on apart (:func:`copy_verdict`
    ``"different"`` or ``"overlaps"``): ``{id}~{crc}``, ``crc`` the
    8 hex digits of the CRC-32 of its source's path — stable for that file, so
    every path and every later read gives the same key.  The first source read
    keeps the plain id."""
    return f"{session_id}~{zlib.crc32(source_path.encode('utf-8', 'surrogateescape')):08x}"
