"""Turn parser output (session headers + fragments) into whole sessions.

Rules, the same for every agent (an index applies the same ones when it stores
fragments):

* fragments of one message (same ``Message.id`` in one session) are merged in
  arrival order: parts appended, flags united, first timestamp and model kept;
  a later copy's ``usage`` replaces the earlier one unless it is smaller
  (Claude Code writes one line per content block, each with a usage copy whose
  ``output_tokens`` grows: the final copy wins, copies are never summed);
* a :class:`~agentlog.adapters.base.ToolOutput` is merged into the tool call
  with its ``call_id``; one that matches no call is kept as a ``tool`` message
  where it was recorded — never dropped;
* binary payloads in tool results become file parts
  (:func:`agentlog.adapters._binary.binary_free`);
* the session's ``usage`` is the sum of its messages' usage, and its
  ``started_at``/``ended_at``/``models`` fall back to what the messages show.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentlog.adapters._binary import binary_free
from agentlog.adapters.base import Fragment, ToolOutput
from agentlog.model import Message, Session, ToolCallPart, Usage
from agentlog.rules import counts_model, keeps_new_copy, replaces_model, session_key


def merge_message(existing: Message, new: Message) -> None:
    """Merge fragment ``new`` into ``existing`` (same id), in place."""
    existing.parts.extend(new.parts)
    if keeps_new_copy(existing.usage, new.usage):
        existing.usage = new.usage
    for flag in new.flags:
        existing.flag(flag)
    if existing.model is None or replaces_model(existing.flags, new):
        existing.model = new.model
    if existing.timestamp is None:
        existing.timestamp = new.timestamp


def orphan_id(call_id: str, n: int = 0) -> str:
    """Id of the ``n``-th ``tool`` message holding a result whose call is not (yet)
    known.  A call that appears later claims the latest one; earlier ones stay."""
    return f"{ORPHAN_PREFIX}{call_id}" + (f"#{n}" if n else "")


def is_orphan(message_id: str) -> bool:
    """Whether ``message_id`` is an :func:`orphan_id`: a ``tool`` message the
    assembly makes for results whose call is not known, no message a parse yields."""
    return message_id.startswith(ORPHAN_PREFIX)


ORPHAN_PREFIX = "tool-result:"
"""What every :func:`orphan_id` starts with."""


def role_id(message_id: str, role: str) -> str:
    """The id a message takes when another message of its session with another
    role has its id: ``{id}#{role}``."""
    return f"{message_id}#{role}"


class SessionBuilder:
    """Applies one session's fragments in order, on top of messages already known.

    ``seed`` registers messages assembled earlier (e.g. loaded from an index) so
    that new fragments merge into them; ``touched`` then holds every message
    that is new or changed and ``removed`` the ids of orphan tool messages that
    found their call.  :class:`Assembler` uses it with no seed.
    """

    __slots__ = (
        "by_id",
        "call_owner",
        "calls",
        "messages",
        "orphan_counts",
        "orphans",
        "removed",
        "session",
        "touched",
    )

    def __init__(self, session: Session) -> None:
        self.session = session
        self.messages: list[Message] = []
        self.by_id: dict[str, Message] = {}
        self.calls: dict[str, ToolCallPart] = {}
        self.call_owner: dict[str, Message] = {}
        self.orphans: dict[str, Message] = {}
        self.orphan_counts: dict[str, int] = {}
        self.touched: dict[str, Message] = {}
        self.removed: set[str] = set()

    def seed(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.by_id[message.id] = message
            self.messages.append(message)
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    if message.role == "tool" and message.id.startswith(orphan_id(part.call_id)):
                        self.orphans[part.call_id] = message
                        self.orphan_counts[part.call_id] = self.orphan_counts.get(part.call_id, 0) + 1
                    else:
                        self.calls[part.call_id] = part
                        self.call_owner[part.call_id] = message

    def add(self, item: Message | ToolOutput) -> None:
        if isinstance(item, ToolOutput):
            binary_free(item.result)
            call = self.calls.get(item.call_id)
            if call is not None:
                call.result = item.result
                owner = self.call_owner[item.call_id]
                self.touched[owner.id] = owner
            else:
                count = self.orphan_counts.get(item.call_id, 0)
                self.orphan_counts[item.call_id] = count + 1
                orphan = Message(
                    id=orphan_id(item.call_id, count),
                    role="tool",
                    timestamp=item.timestamp,
                    offset=item.offset,
                    parts=[
                        ToolCallPart(call_id=item.call_id, tool="unknown", raw_name="", result=item.result)
                    ],
                )
                self.orphans[item.call_id] = orphan
                self.by_id[orphan.id] = orphan
                self.messages.append(orphan)
                self.touched[orphan.id] = orphan
            return
        known = self.by_id.get(item.id)
        if known is not None and known.role != item.role:
            # Same id, different role: never one message (seen only in damaged logs).
            item.id = role_id(item.id, item.role)
            known = self.by_id.get(item.id)
        if known is None:
            self.by_id[item.id] = item
            self.messages.append(item)
            known = item
        else:
            merge_message(known, item)
        self.touched[known.id] = known
        for part in item.parts:
            if isinstance(part, ToolCallPart):
                if part.result is not None:
                    binary_free(part.result)
                self.calls[part.call_id] = part
                self.call_owner[part.call_id] = known
                claimed = self.orphans.pop(part.call_id, None)
                if claimed is not None:
                    orphan_call = claimed.parts[0]
                    assert isinstance(orphan_call, ToolCallPart)
                    part.result = part.result or orphan_call.result
                    self.messages.remove(claimed)
                    del self.by_id[claimed.id]
                    self.touched.pop(claimed.id, None)
                    self.removed.add(claimed.id)


class Assembler:
    """Collects headers and fragments from any number of sources."""

    def __init__(self) -> None:
        self._builds: dict[str, SessionBuilder] = {}

    def add_headers(self, headers: Iterable[Session]) -> None:
        for header in headers:
            build = self._builds.get(header.key)
            if build is None:
                self._builds[header.key] = SessionBuilder(header)
            else:
                _merge_header(build.session, header)

    def add_fragments(self, agent: str, fragments: Iterable[Fragment]) -> None:
        for session_id, item in fragments:
            key = session_key(agent, session_id)
            build = self._builds.get(key)
            if build is None:
                build = self._builds[key] = SessionBuilder(Session(key=key, agent=agent, id=session_id))
            build.add(item)

    def sessions(self) -> list[Session]:
        """The assembled sessions (messages attached, usage summed)."""
        out = []
        for build in self._builds.values():
            session = build.session
            session.messages = build.messages
            finalize(session)
            out.append(session)
        return out


def _merge_header(into: Session, other: Session) -> None:
    for field in (
        "agent_version",
        "title",
        "cwd",
        "git_branch",
        "parent_key",
        "parent_tool_call_id",
        "subagent_type",
        "description",
        "resume_command",
    ):
        if getattr(into, field) is None:
            setattr(into, field, getattr(other, field))
    for source in other.sources:
        if source not in into.sources:
            into.sources.append(source)
    into.diagnostics.merge(other.diagnostics)


def finalize(session: Session) -> None:
    """Derive ``usage``, times and models of ``session`` from its messages."""
    total = Usage()
    models = list(session.models)
    for message in session.messages:
        if message.usage is not None:
            total = total + message.usage
        if counts_model(message) and message.model not in models:
            models.append(message.model)  # type: ignore[arg-type]  # counts_model: not None
    session.usage = total
    session.models = models
    session.message_count = sum(1 for m in session.messages if not m.hidden)
    stamps = [m.timestamp for m in session.messages if m.timestamp is not None]
    if stamps:
        first, last = min(stamps), max(stamps)
        if session.started_at is None or first < session.started_at:
            session.started_at = first
        if session.ended_at is None or last > session.ended_at:
            session.ended_at = last
