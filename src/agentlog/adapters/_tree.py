"""The parser of tree-shaped append-only logs (Pi, Qwen Code, OpenClaw): entries with
an id and a parent id, the transcript the path from the last entry back to the root."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, TypeVar

import msgspec

from agentlog.adapters._headers import snapshot_header
from agentlog.adapters._values import as_str, parse_time
from agentlog.adapters.base import LineParser
from agentlog.model import (
    Diagnostics,
    Message,
    MessageFlag,
    Part,
    Role,
    Session,
    UnknownPart,
    Usage,
)


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
    missing_parent_continues: ClassVar[bool] = False
    """Whether an entry without a ``parent_field`` key at all continues from the
    current leaf (Pi, OpenClaw) rather than starting a new root, which only an
    explicit ``null`` parent does."""

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
        if self.missing_parent_continues and self.parent_field not in record:
            parent = self.state.branches.leaf
        else:
            parent = as_str(record.get(self.parent_field))
        for flag in self.state.branches.advance(entry, parent):
            self.emit(self.session.id, flag)
        if produced is not None:
            self.state.branches.messages.setdefault(entry, produced)

    def _emit(
        self,
        record: dict[str, Any],
        offset: int,
        role: Role,
        parts: list[Part],
        flags: list[MessageFlag],
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
