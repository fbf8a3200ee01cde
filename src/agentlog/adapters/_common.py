"""Helpers shared by adapters: timestamps, text, tool names, JSON records,
header snapshots, and the parser of tree-shaped logs (Pi, Qwen Code)."""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

import msgspec

from agentlog.adapters.base import LineParser
from agentlog.model import Diagnostics, Message, Part, Role, Session, UnknownPart, Usage

_DECODER = msgspec.json.Decoder()

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string, or epoch seconds/milliseconds, as an aware UTC datetime;
    ``None`` for anything else (agents write placeholders such as ``"[trimmed]"``)."""
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            return None
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def snake(name: str) -> str:
    """``TodoWrite`` → ``todo_write``; ``web-fetch`` → ``web_fetch``."""
    return _SNAKE.sub("_", name).replace("-", "_").lower()


def as_int(value: Any) -> int:
    """A token count as ``int``: missing, ``null`` or non-numeric → 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def block_text(content: Any) -> str:
    """Text of a content value that is a string or a list of ``{type: text}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def decode_json(text: Any) -> Any:
    """``text`` decoded when it is a JSON string, else ``text`` unchanged."""
    if isinstance(text, str):
        try:
            return msgspec.json.decode(text)
        except msgspec.DecodeError:
            return text
    return text


def decode_record(data: bytes, diagnostics: Diagnostics) -> dict[str, Any] | None:
    """One JSON object from ``data``; ``None`` (counted as ``invalid_utf8``,
    ``invalid_json`` or ``not_an_object``) when it is not one."""
    try:
        record = _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        diagnostics.skip("invalid_utf8" if "UTF-8" in str(exc) else "invalid_json")
        return None
    if not isinstance(record, dict):
        diagnostics.skip("not_an_object")
        return None
    return record


def normalise_tool(raw: str, names: Mapping[str, str]) -> str:
    """A tool name through an agent's table of ``raw → normalised`` names; MCP tools
    (``mcp__server__tool``) and names not in the table are kept as they are."""
    return raw if raw.startswith("mcp__") else names.get(raw, raw)


def snapshot_header(session: Session, title: str | None, diagnostics: Diagnostics) -> Session:
    """A copy of a parser's session header for :meth:`LineParser.headers`, with its
    title and a copy of the diagnostics (the parser keeps counting in its own)."""
    header = msgspec.structs.replace(session, sources=list(session.sources))
    header.title = title
    header.diagnostics = msgspec.msgpack.decode(msgspec.msgpack.encode(diagnostics), type=Diagnostics)
    return header


class Branches(msgspec.Struct, kw_only=True):
    """The active path of a tree-shaped append-only log (Pi, Qwen Code): entries
    carry an id and a parent id and the transcript is the path from the last
    appended entry (the leaf) back to the root; older branches stay in the file.

    Only a small map is kept: entry id → parent id, and the message id and role
    emitted per entry so they can be flagged when their branch is left behind.
    """

    parents: dict[str, str | None] = msgspec.field(default_factory=dict)
    leaf: str | None = None
    messages: dict[str, tuple[str, Role]] = msgspec.field(default_factory=dict)

    def advance(self, entry: str, parent: str | None) -> list[Message]:
        """Append ``entry`` under ``parent``; return an ``abandoned`` flag fragment
        for every message the new leaf's path no longer contains.  A parent that is
        no known entry (OpenClaw writes the session id or a tool-call id there)
        continues from the current leaf; ``None`` starts a new root.  An entry seen
        again (one response written as several records) does not move the tree."""
        if parent is not None and parent not in self.parents:
            parent = self.leaf
        left: list[Message] = []
        if self.leaf is not None and parent != self.leaf and entry not in self.parents:
            keep = set(self._path(parent))
            for node in self._path(self.leaf):
                if node in keep:
                    break
                if node in self.messages:
                    mid, role = self.messages[node]
                    left.append(Message(id=mid, role=role, flags=["abandoned"]))
        self.parents.setdefault(entry, parent)
        self.leaf = entry
        return left

    def _path(self, node: str | None) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        while node is not None and node not in seen:
            seen.add(node)
            out.append(node)
            node = self.parents.get(node)
        return out


class TreeState(msgspec.Struct, kw_only=True):
    """Parser state of a tree-shaped log: header, active path, title."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    header: Session | None = None
    branches: Branches = msgspec.field(default_factory=Branches)
    title: str | None = None
    first_prompt: str | None = None


TreeStateT = TypeVar("TreeStateT", bound=TreeState)


class TreeParser(LineParser[TreeStateT]):
    """A :class:`LineParser` for a tree-shaped log (see :class:`Branches`): entries
    name themselves in ``id_field`` and their parent in ``parent_field``; messages
    take :meth:`message_id` (the entry id, else ``<session id>@<byte offset>``)."""

    id_field: ClassVar[str]
    parent_field: ClassVar[str]

    @property
    @abstractmethod
    def session(self) -> Session:
        """The session header this file's messages belong to."""

    def message_id(self, record: dict[str, Any], offset: int) -> str:
        """The id of the message made from ``record``."""
        return as_str(record.get(self.id_field)) or f"{self.session.id}@{offset}"

    def _tree(self, record: dict[str, Any], produced: tuple[str, Role] | None) -> None:
        """Advance the tree with ``record``; flag messages left on a dead branch."""
        entry = as_str(record.get(self.id_field))
        if entry is None:
            return
        for flag in self.state.branches.advance(entry, as_str(record.get(self.parent_field))):
            self.emit(self.session.id, flag)
        if produced is not None:
            self.state.branches.messages.setdefault(entry, produced)

    def _emit(
        self,
        record: dict[str, Any],
        offset: int,
        role: Role,
        parts: list[Part],
        flags: list[str],
        model: str | None = None,
        usage: Usage | None = None,
        counted: bool = False,
    ) -> None:
        """Emit a message for ``record`` (counted as used unless ``counted``)."""
        mid = self.message_id(record, offset)
        self._tree(record, (mid, role))
        if not counted:
            self.diagnostics.use()
        message = Message(
            id=mid,
            role=role,
            timestamp=parse_time(record.get("timestamp")),
            model=model,
            parts=parts,
            usage=usage,
            flags=flags,
            offset=offset,
        )
        self.emit(self.session.id, message)

    def _unknown(self, record: dict[str, Any], offset: int, kind: str) -> None:
        self.diagnostics.unknown(kind)
        self._emit(record, offset, "system", [UnknownPart(raw=record)], ["unknown"], counted=True)

    def headers(self) -> list[Session]:
        if self.diagnostics.records_total == 0:
            return []
        return [snapshot_header(self.session, self.state.title or self.state.first_prompt, self.diagnostics)]
