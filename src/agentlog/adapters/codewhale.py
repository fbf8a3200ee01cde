"""CodeWhale (formerly DeepSeek-TUI) saved sessions: one JSON document per session.

Spec (``shared/formats.md`` §14.4; Hmbown/DeepSeek-TUI ``crates/tui/src/session_manager.rs``
``SavedSession`` and ``crates/tui/src/models.rs`` ``Message``/``ContentBlock``
@1ca495f5a348 (v0.8.40) and @0c4e35f12ddf; codeburn ``docs/providers/codewhale.md``):

Locations
    ``$CODEWHALE_HOME/sessions`` (default ``~/.codewhale/sessions``) and the legacy
    ``~/.deepseek/sessions`` (``$DEEPSEEK_TUI_SESSIONS_DIR`` as agentsview names it):
    ``<id>.json``.  The same id in both: ``.codewhale`` is listed first and wins.
    ``checkpoints/latest.json`` (crash-recovery copy of the running session) and
    ``checkpoints/offline_queue.json`` (queued drafts) are not sources.  Files are
    rewritten whole (temp + rename), so each is parsed whole.

Document
    ``{schema_version, metadata{id, title, created_at, updated_at (RFC 3339 UTC),
    message_count, total_tokens, model, workspace (cwd), mode?, cost{session_cost_usd,
    subagent_cost_usd, …CNY, displayed_cost_high_water_*}}, messages[{role, content}],
    system_prompt?}``; legacy files have the cost fields flat in ``metadata``.
    ``content`` is a string or Anthropic-style blocks (``serde(tag = "type")``):
    ``text``, ``thinking`` (reasoning), ``tool_use{id, name, input}``,
    ``server_tool_use``, ``tool_result{tool_use_id, content, is_error}`` (merged into
    its call), others kept raw.  Roles ``system``/``developer`` carry compaction
    summaries and sub-agent framing: ``meta`` system messages.  OpenAI-style
    ``tool_calls[{id, function{name, arguments}}]`` (the generic reader's shape)
    are read too.  Message ids: ``<session id>@<index>``.

Times
    No per-message time: messages carry none (``timestamp`` is ``None``); the
    session's ``started_at``/``ended_at`` are ``created_at``/``updated_at``.

Tokens and cost (session-level, recorded)
    Only ``metadata.total_tokens`` (cumulative, no input/output split) and the
    recorded cost: ``session_cost_usd + subagent_cost_usd`` (the high-water fields
    are display-only).  The session carries them on one ``synthetic`` + ``meta``
    system message whose text says so; the unsplit total is put in
    ``input_tokens`` (the bucket split is unknown), cost ``recorded``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

from agentlog.adapters._json import json_or_text, read_document
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_dict, as_int, as_str, parse_time
from agentlog.adapters.base import (
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    SourceRef,
    ToolOutput,
)
from agentlog.model import (
    Diagnostics,
    Message,
    Part,
    ReasoningPart,
    Session,
    TextPart,
    ToolCallPart,
    ToolResult,
    UnknownPart,
    Usage,
)
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "codewhale"

TOOL_NAMES = {
    "read_file": "read",
    "write_file": "write",
    "edit_file": "edit",
    "apply_patch": "edit",
    "list_dir": "list",
    "grep_files": "grep",
    "agent": "task",
    "web_search": "web_search",
    "web_fetch": "web_fetch",
    "todo_write": "todo",
}
USAGE_NOTE = "Session-level cumulative tokens and cost (CodeWhale records no per-call usage or split)."


def tool_name(raw: str) -> str:
    """Normalised name of a CodeWhale tool (``exec_shell*`` → ``bash``, ``agents/*`` → ``task``)."""
    if raw.startswith("exec_shell"):
        return "bash"
    return "task" if raw.startswith("agents/") else normalise_tool(raw, TOOL_NAMES)


def recorded_cost(metadata: dict[str, Any]) -> float | None:
    """``session_cost_usd + subagent_cost_usd`` from ``metadata.cost`` or (legacy) flat fields."""
    cost = metadata["cost"] if isinstance(metadata.get("cost"), dict) else metadata
    values = [cost.get(k) for k in ("session_cost_usd", "subagent_cost_usd")]
    numbers = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) if numbers else None


class CodeWhaleAdapter(DocumentAdapter):
    """CodeWhale / DeepSeek-TUI: ``~/.codewhale/sessions/*.json``, ``~/.deepseek/sessions/*.json``."""

    slug = SLUG
    display_name = "CodeWhale / DeepSeek-TUI"
    parser_version = 3
    env_vars = ("CODEWHALE_HOME", "DEEPSEEK_TUI_SESSIONS_DIR")
    source_format = "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        codewhale = Path(env.get("CODEWHALE_HOME") or home / ".codewhale") / "sessions"
        deepseek = Path(env.get("DEEPSEEK_TUI_SESSIONS_DIR") or home / ".deepseek" / "sessions")
        return [codewhale, deepseek]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".json"):
            if "checkpoints" not in path.relative_to(root).parts:
                yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        if b'"metadata"' not in head or b'"messages"' not in head:
            return 0.0
        keys = (b'"schema_version"', b'"total_tokens"', b'"workspace"', b"session_cost_usd")
        return 0.9 if sum(key in head for key in keys) >= 2 else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _SessionParse(ref, doc).result()


class _SessionParse(DocumentParser):
    """One session file; each entry of ``messages`` is one record."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        sid = PurePath(ref.path).stem
        self.header = Session(
            key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[ref.path], diagnostics=self.diagnostics
        )
        self.empty = False

    def parse(self) -> None:
        data = read_document(self.doc.data, self.diagnostics, as_object=True)
        if data is None:
            self.empty = not self.diagnostics.records_total
            return
        metadata = as_dict(data.get("metadata"))
        header = self.header
        sid = header.id = as_str(metadata.get("id")) or header.id
        header.key = session_key(SLUG, sid)
        header.title = as_str(metadata.get("title"))
        header.cwd = as_str(metadata.get("workspace"))
        header.started_at = parse_time(metadata.get("created_at"))
        header.ended_at = parse_time(metadata.get("updated_at"))
        model = as_str(metadata.get("model"))
        if model:
            header.models.append(model)
        messages = data.get("messages")
        if messages is not None and not isinstance(messages, list):
            self.diagnostics.skip("not_a_message_list")
        for index, message in enumerate(messages if isinstance(messages, list) else []):
            with self.guard():
                for item in _message(message, f"{sid}@{index}", model, self.diagnostics):
                    self.emit(sid, item)
        total, cost = as_int(metadata.get("total_tokens")), recorded_cost(metadata)
        if total or cost is not None:
            usage = Usage(
                input_tokens=total, cost_usd=cost, cost_source="recorded" if cost is not None else None
            )
            note = Message(
                id=f"{sid}@usage",
                role="system",
                timestamp=header.ended_at,
                parts=[TextPart(text=USAGE_NOTE)],
                usage=usage,
                flags=["synthetic", "meta"],
            )
            self.emit(sid, note)

    def headers(self) -> list[Session]:
        header = self.header
        if header.title is None:
            header.title = next(
                (
                    m.text.strip()
                    for _, m in self.fragments
                    if isinstance(m, Message) and m.role == "user" and m.text.strip()
                ),
                None,
            )
        return [] if self.empty else [header]


def _message(
    message: Any, mid: str, model: str | None, diagnostics: Diagnostics
) -> list[Message | ToolOutput]:
    if not isinstance(message, dict):
        diagnostics.skip("not_an_object")
        return []
    role = message.get("role")
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    parts: list[Part] = []
    outputs: list[Message | ToolOutput] = []
    for index, block in enumerate(blocks if isinstance(blocks, list) else []):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if block.get("text"):
                parts.append(TextPart(text=str(block["text"])))
        elif kind == "thinking":
            parts.append(ReasoningPart(text=str(block.get("thinking") or "")))
        elif kind in ("tool_use", "server_tool_use"):
            raw = str(block.get("name") or "")
            call_id = as_str(block.get("id")) or f"{mid}#{index}"
            parts.append(
                ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=block.get("input"))
            )
        elif kind == "tool_result":
            failed = block.get("is_error") is True
            result = ToolResult(
                output=block.get("content"), is_error=failed, status="error" if failed else "completed"
            )
            outputs.append(ToolOutput(call_id=str(block.get("tool_use_id") or ""), result=result))
        else:
            parts.append(UnknownPart(raw=block))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            raw = str(function.get("name") or "")
            call_id = as_str(call.get("id")) or f"{mid}#call{index}"
            args = json_or_text(function.get("arguments"))
            parts.append(ToolCallPart(call_id=call_id, tool=tool_name(raw), raw_name=raw, input=args))
    if role in ("system", "developer"):
        diagnostics.use()
        return [*outputs, Message(id=mid, role="system", parts=parts, flags=["meta"])] if parts else outputs
    if role not in ("user", "assistant"):
        diagnostics.unknown(f"role/{role}")
        return [Message(id=mid, role="system", parts=[UnknownPart(raw=message)], flags=["unknown"])]
    diagnostics.use()
    if parts:
        outputs.append(Message(id=mid, role=role, model=model if role == "assistant" else None, parts=parts))
    return outputs
