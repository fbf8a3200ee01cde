"""Google Antigravity agent transcripts (JSONL step logs).

Spec (``shared/formats.md`` §4 location notes; fixtures ``shared/fixtures/antigravity/``
from jazzyalex/agent-sessions ``Resources/Fixtures/stage0/agents/antigravity/`` and
Dicklesworthstone/coding_agent_session_search ``tests/fixtures/antigravity/``):

Locations
    ``~/.gemini/antigravity`` (no environment override is known):
    ``brain/<conversation id>/.system_generated/logs/transcript.jsonl`` is a
    session, its id the ``brain/<id>`` folder name.  Brain markdown artifacts are
    not sessions.

Conversation databases (``conversations/<id>.db``, read whole)
    SQLite ``trajectory_meta(trajectory_id, cascade_id, trajectory_type INTEGER,
    source INTEGER)`` and ``steps(idx, step_type INTEGER, status INTEGER,
    step_payload BLOB)`` (schema of the cass fixture
    ``tests/fixtures/antigravity/conversations/<id>.db``, the only public sample;
    its ``steps`` table is empty).  The payloads are protobuf messages of the
    IDE's language server whose schema is not public (third-party reverse
    engineering reads conversations through the running IDE's gRPC API instead),
    and the integer enums are undocumented, so nothing is guessed: each database is
    a message-less session ``<id>:conversation-db`` whose diagnostics count the
    database as ``undocumented_format`` and each step row as
    ``undocumented_format:step`` (so ``agentlog doctor`` shows what was not read);
    its description names the brain session of the same id.  Only the row count
    and sizes of ``steps`` are queried, never the blobs.

Records (one step per line, ordered by ``step_index``)
    ``{step_index, source: USER_EXPLICIT|MODEL|SYSTEM, type, status, created_at,
    content?, thinking?, tool_calls?[{name, id?, args|arguments}], truncated_fields?}``.

    * ``USER_INPUT``: the prompt — the text inside ``<USER_REQUEST>`` (the rest of
      the step, ``<ADDITIONAL_METADATA>``/``<USER_SETTINGS_CHANGE>``, is injected
      context kept as a ``meta`` message of its own).
    * ``PLANNER_RESPONSE``: an assistant message — ``thinking`` (reasoning),
      ``content`` (text), ``tool_calls`` (tool calls; ids ``<session>@<step>#<n>``
      when absent).
    * Other ``MODEL`` steps (``VIEW_FILE``, ``RUN_COMMAND``, ``LIST_DIRECTORY``,
      ``CODE_ACTION``, ``SEARCH_WEB``, ``GREP_SEARCH``, ``BROWSER_*``, ``GENERIC`` …)
      are tool executions: their ``content`` is the result of the oldest open call
      (calls are answered in order); a step that carries its own ``tool_calls`` is
      that call; with no open call the step becomes a call of its own named after
      the step type.  ``status`` ``ERROR``/``FAILED`` → error, ``CANCELED`` →
      interrupted.
    * ``SYSTEM_MESSAGE``/``EPHEMERAL_MESSAGE`` → ``meta`` system messages;
      ``CHECKPOINT`` → a compaction; ``CONVERSATION_HISTORY`` (a marker with no
      content) is ignored.  Anything else is kept raw.

    Message ids: ``<session id>@<step_index>``, or the byte offset when
    ``step_index`` is missing or repeats.  No token usage is recorded; the model is
    named only in a ``<USER_SETTINGS_CHANGE>`` wrapper of a prompt (``The user
    changed setting `Model Selection` from None to Gemini 3.1 Pro (High).``, both
    fixtures): :func:`selected_model` gives the replies after it their model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal

import msgspec

from agentlog.adapters._json import json_or_text
from agentlog.adapters._tools import normalise_tool, snake
from agentlog.adapters._values import as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentResult,
    JsonlAdapter,
    LineParser,
    SourceRef,
    ToolOutput,
)
from agentlog.model import (
    CompactionPart,
    Diagnostics,
    Message,
    MessageFlag,
    Part,
    ReasoningPart,
    Role,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "antigravity"

TOOL_NAMES = {
    "list_dir": "list",
    "view_file": "read",
    "view_file_outline": "read",
    "write_to_file": "write",
    "write_file": "write",
    "replace_file_content": "edit",
    "multi_replace_file_content": "edit",
    "run_command": "bash",
    "grep_search": "grep",
    "find_by_name": "glob",
    "search_web": "web_search",
    "read_url_content": "web_fetch",
}
_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.S)
_STATUS = {"ERROR": "error", "FAILED": "error", "CANCELED": "interrupted", "CANCELLED": "interrupted"}


def tool_name(raw: str) -> str:
    """Normalised name of an Antigravity tool (or step type such as ``RUN_COMMAND``)."""
    return normalise_tool(snake(raw).lower(), TOOL_NAMES)


_MODEL_SELECTION = re.compile(r"setting `Model Selection` from .*? to (.+?)(?:\.(?:\s|$)|$)", re.M)
_EFFORT = re.compile(r"\s*\([^)]*\)\s*$")


def selected_model(content: str) -> str | None:
    """The model a ``<USER_SETTINGS_CHANGE>`` block selects, as a model id: ``The
    user changed setting `Model Selection` from None to Gemini 3.1 Pro (High).`` →
    ``gemini-3.1-pro`` (the display name lower-cased, its effort in brackets left
    out, spaces as ``-``: Gemini API ids are written so, ``gemini-2.5-pro``);
    ``None`` when it selects none."""
    found = _MODEL_SELECTION.search(content)
    if found is None:
        return None
    name = _EFFORT.sub("", found.group(1)).strip()
    return "-".join(name.lower().split()) or None


class AntigravityState(msgspec.Struct, kw_only=True):
    """Parser state between reads: open calls (answered in order), step ids seen."""

    diagnostics: Diagnostics = msgspec.field(default_factory=Diagnostics)
    open_calls: list[str] = msgspec.field(default_factory=list)
    steps: list[int] = msgspec.field(default_factory=list)
    first_prompt: str | None = None
    model: str | None = None
    """The model the last ``<USER_SETTINGS_CHANGE>`` selected (:func:`selected_model`)."""


class AntigravityParser(LineParser[AntigravityState]):
    """Parses one Antigravity ``transcript.jsonl``."""

    state_type = AntigravityState

    def initial_state(self) -> AntigravityState:
        return AntigravityState()

    @property
    def sid(self) -> str:
        parts = PurePath(self.ref.path).parts
        if "brain" in parts[:-1]:
            return parts[parts.index("brain") + 1]
        return PurePath(self.ref.path).stem

    def handle(self, record: dict[str, Any], offset: int) -> None:
        kind, source = record.get("type"), record.get("source")
        step = record.get("step_index")
        if isinstance(step, int) and step not in self.state.steps:
            self.state.steps.append(step)
            mid = f"{self.sid}@{step}"
        else:
            mid = f"{self.sid}@{offset}"
        when = parse_time(record.get("created_at"))
        content = as_str(record.get("content")) or ""
        if kind == "USER_INPUT":
            self._user(content, mid, when, offset)
        elif kind == "PLANNER_RESPONSE":
            parts: list[Part] = []
            if as_str(record.get("thinking")):
                parts.append(ReasoningPart(text=record["thinking"]))
            if content:
                parts.append(TextPart(text=content))
            parts += self._calls(record, mid)
            self.state.open_calls += [p.call_id for p in parts if isinstance(p, ToolCallPart)]
            self._emit(mid, "assistant", parts, when, offset, model=self.state.model)
        elif kind in ("SYSTEM_MESSAGE", "EPHEMERAL_MESSAGE"):
            self._emit(mid, "system", [TextPart(text=content)], when, offset, ["meta"])
        elif kind == "CHECKPOINT":
            self._emit(mid, "system", [CompactionPart(summary=content)], when, offset, ["compaction_summary"])
        elif kind == "CONVERSATION_HISTORY":
            self.diagnostics.skip("ignored:CONVERSATION_HISTORY")
        elif source == "MODEL" and isinstance(kind, str):
            self._tool_step(record, kind, content, mid, when, offset)
        else:
            self.diagnostics.unknown(str(kind))
            self._emit(mid, "system", [], when, offset, ["unknown"], raw=record)

    def _emit(
        self,
        mid: str,
        role: Role,
        parts: list[Part],
        when: Any,
        offset: int,
        flags: list[MessageFlag] | None = None,
        raw: dict[str, Any] | None = None,
        model: str | None = None,
    ) -> None:
        if raw is None:
            self.diagnostics.use()
        else:
            parts = [UnknownPart(raw=raw)]
        self.emit(
            self.sid,
            Message(
                id=mid, role=role, timestamp=when, model=model, parts=parts, flags=flags or [], offset=offset
            ),
        )

    def _user(self, content: str, mid: str, when: Any, offset: int) -> None:
        request = _REQUEST.search(content)
        self.state.model = selected_model(content) or self.state.model
        typed = request.group(1) if request else content
        self.state.first_prompt = self.state.first_prompt or typed.strip() or None
        self._emit(mid, "user", [TextPart(text=typed)], when, offset)
        rest = (content[: request.start()] + content[request.end() :]).strip() if request else ""
        if rest:
            self.emit(
                self.sid,
                Message(
                    id=f"{mid}#context",
                    role="user",
                    timestamp=when,
                    parts=[TextPart(text=rest)],
                    flags=["meta"],
                    offset=offset,
                ),
            )

    def _calls(self, record: dict[str, Any], mid: str) -> list[Part]:
        parts: list[Part] = []
        for n, call in enumerate(record.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            raw = str(call.get("name") or "")
            args = call.get("args", call.get("arguments"))
            if isinstance(args, dict):
                args = {k: json_or_text(v) for k, v in args.items()}
            call_id = as_str(call.get("id")) or f"{mid}#{n}"
            parts.append(ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=args))
        return parts

    def _tool_step(
        self, record: dict[str, Any], kind: str, content: str, mid: str, when: Any, offset: int
    ) -> None:
        status = _STATUS.get(str(record.get("status")), "completed")
        result = ToolResult(output=content, is_error=status == "error", status=status, ended_at=when)  # type: ignore[arg-type]
        own = self._calls(record, mid)
        if own:
            self._emit(mid, "assistant", own, when, offset)
            call_id = own[0].call_id  # type: ignore[union-attr]
        elif self.state.open_calls:
            self.diagnostics.use()
            call_id = self.state.open_calls.pop(0)
        else:
            call_id = mid
            self._emit(
                mid,
                "assistant",
                [ToolCallPart(call_id=mid, tool=tool_name(kind), raw_name=kind)],
                when,
                offset,
            )
        self.emit(self.sid, ToolOutput(call_id=call_id, result=result, timestamp=when, offset=offset))

    def headers(self) -> list[Session]:
        if self.diagnostics.records_total == 0:
            return []
        header = Session(
            key=session_key(SLUG, self.sid),
            agent=SLUG,
            id=self.sid,
            title=self.state.first_prompt,
            sources=[self.ref.path],
        )
        header.diagnostics = msgspec.msgpack.decode(
            msgspec.msgpack.encode(self.diagnostics), type=Diagnostics
        )
        return [header]


class AntigravityAdapter(JsonlAdapter, DocumentAdapter):
    """Google Antigravity: ``~/.gemini/antigravity/brain/<id>/…/transcript.jsonl``
    (line by line) and ``conversations/<id>.db`` (whole; undocumented, see above)."""

    slug = SLUG
    display_name = "Antigravity"
    parser_version = 5
    source_format = "sqlite"
    sqlite_tables = ("trajectory_meta",)
    sqlite_queries: ClassVar[Mapping[str, tuple[str, tuple[Any, ...]]]] = {
        "steps": ("SELECT idx, step_type, status, length(step_payload) AS size FROM steps", ()),
    }

    def format_of(self, ref: SourceRef) -> Literal["json", "sqlite", "jsonl"]:
        return "sqlite" if ref.path.endswith(".db") else "jsonl"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [home / ".gemini" / "antigravity"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, "transcript.jsonl"):
            if path.name == "transcript.jsonl":
                yield SourceRef(agent=SLUG, path=str(path))
        for path in walk_files(root, ".db"):
            if path.parent.name == "conversations":
                yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        if head.startswith(b"SQLite format 3\x00"):
            return 0.9 if b"trajectory_meta" in head and b"step_payload" in head else 0.0
        if b'"step_index"' in head and (b'"USER_INPUT"' in head or b'"PLANNER_RESPONSE"' in head):
            return 0.95
        return 0.5 if b'"step_index"' in head and b'"source"' in head else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> AntigravityParser:
        return AntigravityParser(ref, sidecars)

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        cid = PurePath(ref.path).stem
        header = Session(
            key=session_key(SLUG, f"{cid}:conversation-db"),
            agent=SLUG,
            id=f"{cid}:conversation-db",
            description=f"Antigravity conversation database of {SLUG}:{cid} (undocumented format, not read)",
            sources=[ref.path],
        )
        header.diagnostics.skip("undocumented_format")
        steps = len(doc.tables.get("steps", []))
        if steps:
            header.diagnostics.skip("undocumented_format:step", steps)
        return DocumentResult(headers=[header], fragments=[])
