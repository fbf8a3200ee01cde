"""Small pure helpers shared by adapters: timestamps, text, tool names, JSON text and
records, Anthropic-style content blocks, VS Code-family folders, header snapshots, and
the parser of tree-shaped logs (Pi, Qwen Code)."""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import msgspec

from agentlog import probe
from agentlog.adapters.base import LineParser, ToolOutput
from agentlog.model import (
    Diagnostics,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    Role,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files

_DECODER = msgspec.json.Decoder()

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What converting a record whose shape defies its format raises.  Document adapters
catch these per record and count it as skipped ``malformed:<exception>``, as
:meth:`~agentlog.adapters.base.LineParser.feed` does for lines."""


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


MAX_COUNT = 1 << 53
"""Larger token counts are not real (and would not survive JSON or SQLite)."""


def as_int(value: Any) -> int:
    """A token count as ``int``: missing, ``null``, non-numeric, negative or
    absurdly large (≥ 2**53) → 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value or not 0 <= value < MAX_COUNT:  # NaN, negative, huge
        return 0
    return int(value)


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


STANDARD_TIERS = frozenset({"standard", "default"})
"""Recorded tier names that mean the standard rates: Claude Code ``usage.service_tier``
``"standard"``, Codex ``thread_settings.service_tier`` ``"default"`` (openai/codex
``SERVICE_TIER_DEFAULT_REQUEST_VALUE``)."""


def service_tier(tier: Any, speed: Any = None) -> str | None:
    """The service tier a call is priced at: ``"fast"`` when ``speed`` is
    ``"fast"`` (Claude Code ``usage.speed``), else ``tier`` lower-cased, ``None``
    for a standard tier (:data:`STANDARD_TIERS`) or none recorded."""
    if speed == "fast":
        return "fast"
    name = as_str(tier)
    if name is None or name.lower() in STANDARD_TIERS:
        return None
    return name.lower()


def block_text(content: Any) -> str:
    """Text of a content value that is a string or a list of ``{type: text}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def json_value(value: Any) -> Any:
    """A JSON text (``str`` or ``bytes``) decoded; ``None`` when it is not valid JSON
    (e.g. SQLite values that hold JSON text, tool arguments stored as strings) or
    nests too deep to decode."""
    if not isinstance(value, str | bytes) or not value:
        return None
    try:
        return msgspec.json.decode(value)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: absurdly deep nesting
        return None


def file_url_path(url: Any) -> str | None:
    """``file:///home/me/my%20proj`` → ``/home/me/my proj``; ``file:///c%3A/x`` →
    ``c:/x``; a remote URL (``vscode-remote://…/path``) → its path; ``None`` for
    anything that is not a string."""
    if not isinstance(url, str) or not url:
        return None
    import urllib.parse  # only for the agents that record folders as URLs

    parsed = urllib.parse.urlsplit(url)
    if not parsed.scheme:
        return url
    path = urllib.parse.unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path or None


def vscode_user_dirs(env: Mapping[str, str], home: Path, products: Iterable[str]) -> list[Path]:
    """The ``User`` folders of VS Code-family editors called ``products`` (``Code``,
    ``Cursor``, ``Trae`` …) on Linux (``$XDG_CONFIG_HOME`` or ``~/.config``), macOS
    (``~/Library/Application Support``) and Windows (``%APPDATA%``).  Pure."""
    bases = [Path(env["XDG_CONFIG_HOME"])] if env.get("XDG_CONFIG_HOME") else []
    bases += [home / ".config", home / "Library" / "Application Support"]
    if env.get("APPDATA"):
        bases.append(Path(env["APPDATA"]))
    out: list[Path] = []
    for product in products:
        for base in bases:
            path = base / product / "User"
            if path not in out:
                out.append(path)
    return out


def workspace_folder(data: bytes | None) -> str | None:
    """The folder of a VS Code ``workspaceStorage/<id>/workspace.json``
    (``{"folder": "file:///…"}`` or ``{"workspace": "file:///….code-workspace"}``)."""
    doc = json_value(data)
    if not isinstance(doc, dict):
        return None
    return file_url_path(doc.get("folder")) or file_url_path(doc.get("workspace"))


def normalise_tool(raw: str, names: Mapping[str, str]) -> str:
    """An agent's tool name in snake case, mapped through ``names`` (the agent's
    table of standard names: ``bash``, ``read``, ``edit`` …) when listed there."""
    name = snake(raw)
    return names.get(name, name)


def vscode_state_dbs(root: Path) -> list[tuple[Path, Path | None]]:
    """The ``state.vscdb`` files of a VS Code-family user dir, each with its
    ``workspace.json`` (``None`` for ``globalStorage``): the global one first, then
    one per ``workspaceStorage/<id>/``.  A folder that is no user dir is searched
    whole for ``*.vscdb`` files (a user-given root)."""
    folders = probe.entries(root / "workspaceStorage")
    glob = root / "globalStorage" / "state.vscdb"
    global_db = probe.is_file(glob)
    if not global_db and not folders:
        return [(path, None) for path in walk_files(root, ".vscdb")]
    found: list[tuple[Path, Path | None]] = [(glob, None)] if global_db else []
    for folder in folders:
        if probe.is_file(folder / "state.vscdb"):
            meta = folder / "workspace.json"
            found.append((folder / "state.vscdb", meta if probe.is_file(meta) else None))
    return found


# --- Anthropic-style content blocks (Cline, Roo, Kilo, Factory Droid) --------


def content_parts(
    content: Any, tool_name: Callable[[str, Any], str]
) -> tuple[list[Part], list[dict[str, Any]]]:
    """Parts of an Anthropic ``MessageParam.content`` (a string or a list of blocks),
    and apart from them the ``tool_result`` blocks (to merge into their calls).

    ``text`` → text; ``thinking``/``redacted_thinking``/``reasoning`` → reasoning;
    ``tool_use`` → tool call named ``tool_name(raw_name, input)``; ``image``/
    ``document``/``file`` → file; anything else is kept as an unknown part."""
    if isinstance(content, str):
        return ([TextPart(text=content)] if content else []), []
    parts: list[Part] = []
    results: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict):
            parts.append(UnknownPart(raw=block))
        elif kind == "tool_result":
            results.append(block)
        elif kind == "text":
            parts.append(TextPart(text=str(block.get("text") or "")))
        elif kind in ("thinking", "reasoning"):
            text = str(block.get("thinking") or block.get("text") or "")
            parts.append(ReasoningPart(text=text, encrypted=not text and bool(block.get("signature"))))
        elif kind == "redacted_thinking":
            parts.append(ReasoningPart(encrypted=True))
        elif kind == "tool_use":
            raw = str(block.get("name") or "")
            parts.append(
                ToolCallPart(
                    call_id=str(block.get("id") or ""),
                    tool=tool_name(raw, block.get("input")),
                    raw_name=raw,
                    input=block.get("input"),
                )
            )
        elif kind in ("image", "document", "file"):
            source = block.get("source") if isinstance(block.get("source"), dict) else {}
            parts.append(
                FilePart(
                    media_type=str(source.get("media_type") or block.get("mediaType") or ""),
                    name=str(block.get("path") or block.get("name") or ""),
                    ref=str(source.get("url") or block.get("path") or ""),
                )
            )
        else:
            parts.append(UnknownPart(raw=block))
    return parts, results


def tool_output(block: dict[str, Any], when: datetime | None, offset: int | None = None) -> ToolOutput:
    """A ``tool_result`` block (``tool_use_id``, ``content``, ``is_error``) as a tool output."""
    is_error = block.get("is_error") is True
    return ToolOutput(
        call_id=str(block.get("tool_use_id") or ""),
        result=ToolResult(
            output=block.get("content"),
            is_error=is_error,
            status="error" if is_error else "completed",
            ended_at=when,
        ),
        timestamp=when,
        offset=offset,
    )


def decode_json(data: bytes) -> Any:
    """``data`` decoded as JSON, or ``None`` when it is not valid JSON / UTF-8 or is
    nested too deeply to decode."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


# --- VS Code-family user folders --------------------------------------------

VSCODE_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor")
"""Editor folder names under the platform's config folder (VS Code, Insiders, VSCodium, Cursor)."""
VSCODE_SERVERS = (".vscode-server", ".vscode-server-insiders", ".cursor-server")
"""Remote-server folders in the home folder (SSH, WSL, containers): ``<server>/data/User``."""


def vscode_global_storage(env: Mapping[str, str], home: Path) -> list[Path]:
    """Every VS Code-family ``User/globalStorage`` folder, for all platforms at once:
    ``$XDG_CONFIG_HOME`` (default ``~/.config``, Linux), ``~/Library/Application Support``
    (macOS), ``$APPDATA`` (default ``~/AppData/Roaming``, Windows) for each editor of
    :data:`VSCODE_EDITORS`; the remote servers of :data:`VSCODE_SERVERS`; and
    ``$VSCODE_PORTABLE/user-data`` for a portable install.  Pure."""
    bases = [
        Path(env.get("XDG_CONFIG_HOME") or home / ".config"),
        home / "Library" / "Application Support",
        Path(env.get("APPDATA") or home / "AppData" / "Roaming"),
    ]
    users = [base / editor / "User" for base in bases for editor in VSCODE_EDITORS]
    users += [home / server / "data" / "User" for server in VSCODE_SERVERS]
    if env.get("VSCODE_PORTABLE"):
        users.insert(0, Path(env["VSCODE_PORTABLE"]) / "user-data" / "User")
    return [user / "globalStorage" for user in users]


# --- one-session JSONL parsers (Factory Droid, Grok) -------------------------


class OneSessionState(msgspec.Struct, kw_only=True):
    """Parser state of a file that holds exactly one session: its header and diagnostics."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    header: Session


def one_header(state: OneSessionState) -> list[Session]:
    """``LineParser.headers()`` for a :class:`OneSessionState`: a copy of the header
    owning a copy of the diagnostics."""
    header = msgspec.structs.replace(state.header, sources=list(state.header.sources))
    header.diagnostics = msgspec.msgpack.decode(msgspec.msgpack.encode(state.diagnostics), type=Diagnostics)
    return [header]


# --- project-local stores (Aider, Crush) --------------------------------------

PROJECT_PARENTS = ("src", "code", "projects", "Projects", "dev", "work", "repos", "git", "Developer")
"""Folders under the home folder where repositories usually live; with the home folder
itself they are the default roots of agents that keep history inside each project."""


def project_roots(home: Path) -> list[Path]:
    """The home folder and its :data:`PROJECT_PARENTS` (pure)."""
    return [home, *(home / name for name in PROJECT_PARENTS)]


def project_files(root: Path, relative: str, depth: int = 2) -> Iterator[Path]:
    """Files ``<root>/[<dir>/…]<relative>`` with at most ``depth`` folders between,
    sorted; folders whose name starts with ``.`` are not entered (``relative`` itself
    may name one, e.g. ``.crush/crush.db``).  Bounded so a home folder is cheap to scan."""
    folders = [root]
    for level in range(depth + 1):
        for folder in folders:
            if probe.is_file(folder / relative):
                yield folder / relative
        if level < depth:
            folders = [p for folder in folders for p in probe.subfolders(folder) if not p.name.startswith(".")]


def database_headers(
    agent: str, headers: list[Session], fallback_id: str, orphans: Diagnostics, path: str
) -> list[Session]:
    """The session headers of a database holding many sessions: each gets ``path`` as
    its source; rows no session owns (``orphans``) are counted on the first one; a
    database without sessions still yields one empty header (id ``fallback_id``)
    carrying those diagnostics."""
    headers = headers or [Session(key=f"{agent}:{fallback_id}", agent=agent, id=fallback_id)]
    headers[0].diagnostics.merge(orphans)
    for header in headers:
        header.sources = [path]
    return headers


def unknown_message(
    mid: str, raw: Any, timestamp: datetime | None = None, offset: int | None = None
) -> Message:
    """A record of a type the adapter does not know, kept verbatim: a ``system``
    message flagged ``unknown`` holding one :class:`UnknownPart` (count it with
    ``Diagnostics.unknown``)."""
    return Message(
        id=mid,
        role="system",
        timestamp=timestamp,
        parts=[UnknownPart(raw=raw)],
        flags=["unknown"],
        offset=offset,
    )


def json_or_text(text: Any) -> Any:
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


def mapped_tool(raw: str, names: Mapping[str, str]) -> str:
    """A tool name through an agent's table of ``raw → normalised`` names; MCP tools
    (``mcp__server__tool``) and names not in the table are kept as they are."""
    return raw if raw.startswith("mcp__") else names.get(raw, raw)


def snapshot_header(session: Session, title: str | None, diagnostics: Diagnostics) -> Session:
    """A copy of a parser's session header for :meth:`LineParser.headers`, with
    ``title`` and a copy of ``diagnostics`` (the parser keeps counting in its own)."""
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


def decode_object(value: Any) -> dict[str, Any] | None:
    """A JSON object given as bytes or text (a file, a SQLite ``data`` column), or
    ``None`` when ``value`` is not the JSON of an object."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, bytes | str) or not value:
        return None
    try:
        decoded = msgspec.json.decode(value)
    except msgspec.DecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def function_call(call: dict[str, Any], tool_name: Callable[[str], str]) -> ToolCallPart:
    """An OpenAI-style ``{id, function{name, arguments}}`` tool call (Kimi CLI, Hermes):
    ``arguments`` is a JSON string, decoded when it holds an object, kept as written
    otherwise; ``tool_name`` normalises the agent's tool name."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    raw = str(function.get("name") or call.get("name") or "unknown")
    arguments = function.get("arguments")
    decoded = decode_object(arguments) if isinstance(arguments, str) else None
    return ToolCallPart(
        call_id=str(call.get("id") or call.get("call_id")),
        tool=tool_name(raw),
        raw_name=raw,
        input=decoded if decoded is not None else arguments,
    )
