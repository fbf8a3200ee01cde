"""Factory Droid session logs (JSONL, append-only) with a settings sidecar.

Spec (``shared/formats.md`` §13; ryoppippi/ccusage ``adapter/droid/parser.rs``; the
session-store fixtures of jazzyalex/agent-sessions ``@651e854f4dbf``; field names
confirmed in junhoyeo/tokscale's Droid reader):

Location
    ``${DROID_SESSIONS_DIR:-~/.factory/sessions}/**/<sessionId>.jsonl`` (the variable is
    the override ccusage honours) with ``<sessionId>.settings.json`` beside it.

Records (one JSON object per line, ``type`` discriminates)
    ``session_start{id, title, sessionTitle?, cwd, owner, version}`` → header (title,
    ``cwd``; ``version`` is the agent version when it is a string).
    ``message{id, parentId, timestamp, message{role, content[]}}`` — Anthropic-style
    content (``text``, ``thinking``, ``tool_use``, ``tool_result`` blocks); user lines made
    only of ``tool_result`` blocks become results merged into their calls.  Message ids
    (``m1``, ``m2`` …) are per session, so they are stored as ``<sessionId>:<id>``.
    Any other type is kept raw as an ``unknown`` message.  (``droid exec
    --output-format stream-json`` prints a different event stream to stdout; Droid does
    not store it, and it is not read.)

Tokens (session totals only)
    The JSONL carries no usage.  ``settings.json`` holds the session's cumulative
    ``tokenUsage{inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
    thinkingTokens}`` and ``model``: the session carries them on **one hidden usage
    message** (``system``, id ``<sessionId>@session-totals``, flagged ``meta`` +
    ``synthetic``, no parts), re-emitted on every read so the totals grow with the
    file; ``model`` becomes the session's model.  Buckets are taken as exclusive
    (Anthropic style: input without cache); ``thinkingTokens`` is kept as
    ``reasoning_tokens``, assumed part of ``outputTokens`` (readers' totals leave it
    out) — unverified against Droid's source.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any

from agentlog import probe
from agentlog.adapters._content import content_parts, tool_output, unknown_message
from agentlog.adapters._headers import OneSessionState, one_header
from agentlog.adapters._json import json_value
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_int, as_str, parse_time
from agentlog.adapters.base import JsonlAdapter, LineParser, SourceRef, resume_line
from agentlog.model import Message, Session, Usage
from agentlog.readers import walk_files
from agentlog.rules import session_key

SLUG = "factory_droid"
SETTINGS_SUFFIX = ".settings.json"

TOOL_NAMES = {
    "Execute": "bash",
    "Read": "read",
    "Create": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "ApplyPatch": "edit",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "list",
    "WebSearch": "web_search",
    "FetchUrl": "web_fetch",
    "TodoWrite": "todo",
    "Task": "task",
}
"""Droid tool names → agentlog's normalised names (others: snake_case)."""


def tool_name(raw: str, tool_input: Any = None) -> str:
    """Normalised name of Droid tool ``raw``."""
    return normalise_tool(raw, TOOL_NAMES)


class DroidParser(LineParser[OneSessionState]):
    """Parses one ``<sessionId>.jsonl`` (and reads its settings sidecar)."""

    state_type = OneSessionState

    def __init__(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> None:
        super().__init__(ref, sidecars)
        self._totals_sent = False

    def initial_state(self) -> OneSessionState:
        sid = PurePath(self.ref.path).stem
        return OneSessionState(
            header=Session(key=session_key(SLUG, sid), agent=SLUG, id=sid, sources=[self.ref.path])
        )

    @property
    def sid(self) -> str:
        return self.state.header.id

    def handle(self, record: dict[str, Any], offset: int) -> None:
        if not self._totals_sent:
            self._totals_sent = True
            self._session_totals()
        kind = record.get("type")
        if kind == "session_start":
            header = self.state.header
            header.title = as_str(record.get("sessionTitle")) or as_str(record.get("title"))
            header.cwd = as_str(record.get("cwd"))
            header.agent_version = as_str(record.get("version"))
            self.diagnostics.use()
        elif kind == "message":
            self._message(record, offset)
        else:
            self.diagnostics.unknown(str(kind) if isinstance(kind, str) else "<none>")
            when = parse_time(record.get("timestamp"))
            self.emit(self.sid, unknown_message(f"{self.sid}@{offset}", record, when, offset))

    def _message(self, record: dict[str, Any], offset: int) -> None:
        body = record["message"]
        role = body["role"]
        if role not in ("user", "assistant"):
            raise ValueError(role)
        when = parse_time(record.get("timestamp"))
        parts, results = content_parts(body.get("content"), tool_name)
        for block in results:
            self.emit(self.sid, tool_output(block, when, offset))
        self.diagnostics.use()
        if not parts:
            return
        mid = as_str(record.get("id"))
        self.emit(
            self.sid,
            Message(
                id=f"{self.sid}:{mid}" if mid else f"{self.sid}@{offset}",
                role=role,
                timestamp=when,
                parts=parts,
                offset=offset,
            ),
        )

    def _session_totals(self) -> None:
        for path, data in self.sidecars.items():
            settings = json_value(data)
            if not isinstance(settings, dict):
                self.diagnostics.errors.append(f"{PurePath(path).name}: invalid JSON")
                return
            model = as_str(settings.get("model"))
            if model and model not in self.state.header.models:
                self.state.header.models.append(model)
            tokens = settings.get("tokenUsage")
            if not isinstance(tokens, dict):
                return
            usage = Usage(
                input_tokens=as_int(tokens.get("inputTokens")),
                cache_read_tokens=as_int(tokens.get("cacheReadTokens")),
                cache_write_5m_tokens=as_int(tokens.get("cacheCreationTokens")),
                output_tokens=as_int(tokens.get("outputTokens")),
                reasoning_tokens=as_int(tokens.get("thinkingTokens")),
            )
            self.emit(
                self.sid,
                Message(
                    id=f"{self.sid}@session-totals",
                    role="system",
                    model=model,
                    usage=usage,
                    flags=["meta", "synthetic"],
                ),
            )

    def headers(self) -> list[Session]:
        return one_header(self.state)


class FactoryDroidAdapter(JsonlAdapter):
    """Factory Droid (Factory's terminal agent): ``~/.factory/sessions/**/<id>.jsonl``."""

    slug = SLUG
    display_name = "Factory Droid"
    parser_version = 3
    env_vars = ("DROID_SESSIONS_DIR",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("DROID_SESSIONS_DIR") or home / ".factory" / "sessions")]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".jsonl"):
            settings = path.with_name(path.stem + SETTINGS_SUFFIX)
            sidecars = probe.regular_files([settings])
            yield SourceRef(agent=SLUG, path=str(path), sidecars=sidecars)

    def sniff(self, name: str, head: bytes) -> float:
        if b'"type":"session_start"' in head and (b'"owner"' in head or b'"sessionTitle"' in head):
            return 0.9
        if b'"type":"session_start"' in head:
            return 0.6
        return 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> DroidParser:
        return DroidParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        """``droid --resume <sessionId>`` (Droid CLI reference)."""
        return resume_line("droid --resume", session.id)
