"""GitHub Copilot Chat in VS Code: the editor's chat sessions (JSON v3 and mutation logs).

Spec (``shared/formats.md`` §9; microsoft/vscode
``src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts@047238f9fe1b``;
rajbos/github-copilot-token-usage ``docs/logFilesSchema/session-file-schema.json@e84aff8686ec``):

Locations
    ``<user dir>/workspaceStorage/<id>/chatSessions/<sessionId>.json|.jsonl`` (folder
    from ``workspaceStorage/<id>/workspace.json``, read as a sidecar) and
    ``<user dir>/globalStorage/emptyWindowChatSessions/`` (chats without a folder).
    User dirs: ``Code``, ``Code - Insiders`` and ``VSCodium`` under ``~/.config``
    (or ``$XDG_CONFIG_HOME``), ``~/Library/Application Support``, ``%APPDATA%``, and
    ``~/.vscode-server[-insiders]/data/User``; ``VSCODE_USER_DIR`` overrides.  When a
    chat has both files (VS Code moved from ``.json`` to ``.jsonl``), the ``.jsonl``
    is the source and the ``.json`` its sidecar, read only when the log yields no
    state: one chat, one session.

``.json`` = ``ISerializableChatData`` v3
    ``{version: 3, sessionId, creationDate (ms), lastMessageDate (ms), customTitle?,
    requesterUsername, responderUsername, requests: [request…]}``.

``.jsonl`` = object mutation log, replayed as VS Code's ``ObjectMutationLog.read``
    one entry per line ``{kind, k?, v?, i?}``: 0 Initial (state = ``v``), 1 Set (the
    value at path ``k`` = ``v``; an empty path replaces the state), 2 Push (truncate
    the array at ``k`` to length ``i`` when ``i`` is given, then append ``v[]``),
    3 Delete (remove the property at ``k``).  The writer rewrites the file as a new
    Initial entry after 512 entries, so the file is parsed whole.  An entry before
    any Initial is skipped (``no_initial_entry``), as is one whose path does not
    exist (``malformed:path``); a corrupt line costs only itself (``invalid_json``).
    Sample: ``{"kind":2,"k":["requests",0,"response"],"v":[{"kind":"markdownContent",
    "content":{"value":"Hello"}}]}``.

Requests (one user + one assistant message each)
    ``{requestId, message{text}, timestamp (ms), modelId ("copilot/<model>"),
    responseId, response[item…], result{timings{firstProgress, totalElapsed},
    promptTokens?, outputTokens?, metadata?}, isCanceled?}``.  User message id =
    ``requestId``; assistant message id = ``responseId`` (else
    ``<requestId>#response``), its time ``timestamp + firstProgress``; model =
    ``modelId`` without the ``copilot/`` vendor prefix.  Response items:
    ``markdownContent`` (``content.value``) and bare ``{value}`` markdown → text;
    ``thinking`` (``value``) → reasoning; ``toolInvocationSerialized``
    ``{toolId, toolCallId, invocationMessage, pastTenseMessage, isComplete,
    resultDetails{input, output, isError}, toolSpecificData}`` → a tool call with
    its result (pending while not complete; interrupted when the request was
    cancelled); ``textEditGroup`` ``{uri, edits, done}`` → an ``edit`` call;
    UI-only items (``inlineReference``, ``codeblockUri``, ``progressMessage``,
    ``undoStop``, ``prepareToolInvocation``, ``confirmation``,
    ``progressTaskSerialized``, ``mcpServersStarting``, ``warning``,
    ``references``) are skipped as ``ignored:<kind>``; any other kind is kept raw
    (an ``unknown`` part).  A cancelled request flags its answer ``interrupted``.

Tokens
    VS Code stores no reliable per-request usage.  When a request's ``result``
    (or ``result.metadata``) carries ``promptTokens``/``outputTokens`` (as in the
    extension's sample data) they are used: prompt → ``input_tokens`` (no cache
    split recorded), output → ``output_tokens``.  No cost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentlog import probe
from agentlog.adapters._common import file_url_path, vscode_user_dirs, workspace_folder
from agentlog.adapters._json import JsonError, json_value, parse_json, read_document
from agentlog.adapters._tools import normalise_tool
from agentlog.adapters._values import as_int, as_str, later_time, parse_time
from agentlog.adapters.base import (
    MALFORMED,
    Document,
    DocumentAdapter,
    DocumentParser,
    DocumentResult,
    SourceRef,
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

SLUG = "copilot_vscode"
_FOLDERS = ("chatSessions", "emptyWindowChatSessions")
_UI_ONLY = frozenset(
    {
        "inlineReference",
        "codeblockUri",
        "progressMessage",
        "undoStop",
        "prepareToolInvocation",
        "confirmation",
        "progressTaskSerialized",
        "mcpServersStarting",
        "warning",
        "references",
    }
)
_TOOL_NAMES = {
    "run_in_terminal": "bash",
    "run_terminal_command": "bash",
    "read_file": "read",
    "create_file": "write",
    "replace_string_in_file": "edit",
    "multi_replace_string_in_file": "edit",
    "insert_edit_into_file": "edit",
    "apply_patch": "edit",
    "grep_search": "grep",
    "file_search": "glob",
    "list_dir": "list",
    "fetch_webpage": "web_fetch",
    "manage_todo_list": "todo",
    "run_subagent": "task",
}


def tool_name(tool_id: str) -> str:
    """A Copilot tool id (``copilot_readFile``, ``run_in_terminal``, ``mcp_<server>_<tool>``)
    normalised (``read``, ``bash`` …)."""
    return normalise_tool(tool_id.removeprefix("copilot_"), _TOOL_NAMES)


class MutationLog:
    """Replays an object mutation log into its final state (VS Code semantics)."""

    def __init__(self, diagnostics: Diagnostics) -> None:
        self.state: Any = None
        self.started = False
        self.diagnostics = diagnostics

    def apply(self, line: bytes) -> None:
        """Apply one log line; a bad line is counted and skipped."""
        try:
            entry = parse_json(line)
        except JsonError as exc:
            self.diagnostics.skip(exc.reason)
            return
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind == 0:
            self.state, self.started = entry.get("v"), True
        elif kind not in (1, 2, 3):
            self.diagnostics.skip("not_an_object" if not isinstance(entry, dict) else f"unknown_kind:{kind}")
            return
        elif not self.started:
            self.diagnostics.skip("no_initial_entry")
            return
        else:
            path = entry.get("k")
            try:
                self._mutate(kind, path if isinstance(path, list) else [], entry)
            except MALFORMED:
                self.diagnostics.skip("malformed:path")
                return
        self.diagnostics.use()

    def _mutate(self, kind: int, path: list[Any], entry: dict[str, Any]) -> None:
        if kind == 1 and not path:
            self.state = entry.get("v")
            return
        target = self.state
        for step in path[:-1]:
            target = target[step]
        last = path[-1]
        if kind == 1:
            if isinstance(target, list) and last == len(target):
                target.append(entry.get("v"))
            else:
                target[last] = entry.get("v")
        elif kind == 3:
            if isinstance(target, dict):
                target.pop(last, None)
            else:
                target[last] = None
        else:
            current = target.get(last) if isinstance(target, dict) else target[last]
            array = current if isinstance(current, list) else []
            cut = entry.get("i")
            if isinstance(cut, int):
                del array[cut:]
            values = entry.get("v")
            if isinstance(values, list):
                array.extend(values)
            target[last] = array


def _model(model_id: Any) -> str | None:
    text = as_str(model_id)
    return text.removeprefix("copilot/") if text else None


def _usage(result: Any) -> Usage | None:
    if not isinstance(result, dict):
        return None
    for holder in (result, result.get("metadata")):
        if isinstance(holder, dict) and ("promptTokens" in holder or "outputTokens" in holder):
            prompt, output = as_int(holder.get("promptTokens")), as_int(holder.get("outputTokens"))
            if prompt or output:
                return Usage(input_tokens=prompt, output_tokens=output)
    return None


def _tool_call(item: dict[str, Any], cancelled: bool, fallback_id: str) -> ToolCallPart:
    raw = as_str(item.get("toolId")) or "unknown"
    details = item.get("resultDetails")
    details = details if isinstance(details, dict) else {}
    complete = bool(item.get("isComplete"))
    result = ToolResult(
        output=details.get("output", _message_text(item.get("pastTenseMessage"))),
        is_error=bool(details.get("isError")),
        status="completed" if complete else ("interrupted" if cancelled else "pending"),
        structured=item.get("toolSpecificData"),
    )
    if details.get("isError"):
        result.status = "error"
    return ToolCallPart(
        call_id=as_str(item.get("toolCallId")) or fallback_id,
        tool=tool_name(raw),
        raw_name=raw,
        input=details.get("input", _message_text(item.get("invocationMessage"))),
        result=result if complete or cancelled or details else None,
    )


def _message_text(value: Any) -> str | None:
    """A VS Code ``IMarkdownString`` (``{value}``) or plain string as text."""
    if isinstance(value, dict):
        return as_str(value.get("value"))
    return as_str(value)


class _Chat(DocumentParser):
    """One chat (v3 shape) turned into a header and messages; each request is one
    record (counted as such for a ``.json`` snapshot, whose lines are not records)."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        cwd = next(
            (workspace_folder(d) for p, d in doc.sidecars.items() if p.endswith("workspace.json")), None
        )
        sid = Path(ref.path).stem
        self.header = Session(
            key="", agent=SLUG, id=sid, cwd=cwd, sources=[ref.path], diagnostics=self.diagnostics
        )
        self.empty = False

    def parse(self) -> None:
        doc = self.doc
        if self.ref.path.endswith(".jsonl"):
            log = MutationLog(self.diagnostics)
            for line in doc.data.splitlines():
                if line.strip():
                    log.apply(line)
            if log.started:
                return self.build(log.state, count_requests=False)
            snapshot = next(
                (
                    d
                    for p, d in doc.sidecars.items()
                    if p.endswith(".json") and not p.endswith("workspace.json")
                ),
                None,
            )
            if snapshot is not None:
                self.diagnostics.errors.append(
                    f"{self.ref.path}: no initial entry; read the .json snapshot instead"
                )
                return self.build(json_value(snapshot), count_requests=True)
            self.empty = not self.diagnostics.records_total
            return self.build(None, count_requests=False)
        if not doc.data.strip():
            self.empty = True
            return None
        return self.build(read_document(doc.data, self.diagnostics), count_requests=True)

    def headers(self) -> list[Session]:
        header = self.header
        header.key = session_key(SLUG, header.id)
        if header.title is None:
            header.title = next(
                (m.text for _, m in self.fragments if isinstance(m, Message) and m.role == "user" and m.text),
                None,
            )
        return [] if self.empty else [header]

    def build(self, state: Any, count_requests: bool) -> None:
        header = self.header
        if not isinstance(state, dict):
            return
        header.id = as_str(state.get("sessionId")) or header.id
        header.title = as_str(state.get("customTitle"))
        header.started_at = parse_time(state.get("creationDate"))
        header.ended_at = parse_time(state.get("lastMessageDate"))
        requests = state.get("requests")
        for n, request in enumerate(requests if isinstance(requests, list) else []):
            with self.guard():
                if not isinstance(request, dict):
                    self.diagnostics.skip("not_an_object")
                    continue
                for message in self.request(request, f"{header.id}@{n}"):
                    self.emit(header.id, message)
                if count_requests:
                    self.diagnostics.use()
        if not isinstance(requests, list):
            self.diagnostics.skip("malformed:no_requests")

    def request(self, request: dict[str, Any], fallback: str) -> list[Message]:
        rid = as_str(request.get("requestId")) or fallback
        when = parse_time(request.get("timestamp"))
        message = request.get("message")
        text = as_str(message.get("text")) if isinstance(message, dict) else as_str(message)
        user = Message(id=rid, role="user", timestamp=when, parts=[TextPart(text=text)] if text else [])
        cancelled = bool(request.get("isCanceled"))
        result = request.get("result")
        timings = result.get("timings") if isinstance(result, dict) else None
        answered = when
        if (
            when is not None
            and isinstance(timings, dict)
            and isinstance(timings.get("firstProgress"), int | float)
        ):
            answered = later_time(when, milliseconds=timings["firstProgress"])
        answer = Message(
            id=as_str(request.get("responseId")) or f"{rid}#response",
            role="assistant",
            timestamp=answered,
            model=_model(request.get("modelId")),
            parts=self.response(request.get("response"), cancelled, rid),
            usage=_usage(result),
        )
        if cancelled:
            answer.flags.append("interrupted")
        return [user, answer] if answer.parts or answer.usage or cancelled else [user]

    def response(self, items: Any, cancelled: bool, rid: str) -> list[Part]:
        parts: list[Part] = []
        for n, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict):
                self.diagnostics.skip("not_an_object")
                continue
            kind = item.get("kind")
            if kind in _UI_ONLY:
                self.diagnostics.skip(f"ignored:{kind}")
                continue
            if kind not in ("markdownContent", "thinking", "toolInvocationSerialized", "textEditGroup", None):
                self.diagnostics.unknown(str(kind))
                parts.append(UnknownPart(raw=item))
                continue
            self.diagnostics.use()
            if kind == "markdownContent" or (kind is None and isinstance(item.get("value"), str)):
                text = _message_text(item.get("content")) or as_str(item.get("value")) or ""
                if parts and isinstance(parts[-1], TextPart):
                    parts[-1] = TextPart(text=parts[-1].text + text)
                elif text:
                    parts.append(TextPart(text=text))
            elif kind == "thinking":
                value = item.get("value")
                thought = (
                    "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else value
                )
                if isinstance(thought, str) and thought:
                    parts.append(ReasoningPart(text=thought))
            elif kind == "toolInvocationSerialized":
                parts.append(_tool_call(item, cancelled, f"{rid}#tool{n}"))
            else:  # textEditGroup
                uri = item.get("uri")
                path = file_url_path(uri.get("path") if isinstance(uri, dict) else uri)
                parts.append(
                    ToolCallPart(
                        call_id=f"{rid}#edit{n}",
                        tool="edit",
                        raw_name="textEditGroup",
                        input={"file_path": path, "edits": item.get("edits")},
                        result=ToolResult(status="completed") if item.get("done") else None,
                    )
                )
        return parts


class CopilotVscodeAdapter(DocumentAdapter):
    """GitHub Copilot Chat in VS Code (and Insiders, VSCodium, VS Code Server)."""

    slug = SLUG
    display_name = "GitHub Copilot (VS Code)"
    parser_version = 3
    env_vars = ("VSCODE_USER_DIR", "XDG_CONFIG_HOME", "APPDATA")
    source_format = "json"

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        if env.get("VSCODE_USER_DIR"):
            return [Path(env["VSCODE_USER_DIR"])]
        dirs = vscode_user_dirs(env, home, ["Code", "Code - Insiders", "VSCodium"])
        return [
            *dirs,
            home / ".vscode-server" / "data" / "User",
            home / ".vscode-server-insiders" / "data" / "User",
        ]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        if probe.is_dir(root / "workspaceStorage") or probe.is_dir(root / "globalStorage"):
            # a user dir: only its chat folders (History/ and extension data can be huge)
            folders = [p / "chatSessions" for p in probe.subfolders(root / "workspaceStorage")]
            folders.append(root / "globalStorage" / "emptyWindowChatSessions")
        else:
            folders = [root]
        files = [
            p
            for folder in folders
            for p in walk_files(folder, "")
            if p.suffix in (".json", ".jsonl") and p.parent.name in _FOLDERS
        ]
        logs = {p.with_suffix("") for p in files if p.suffix == ".jsonl"}
        for path in sorted(files):
            if path.suffix == ".json" and path.with_suffix("") in logs:
                continue  # the sidecar of its .jsonl
            sidecars = []
            snapshot = path.with_suffix(".json")
            if path.suffix == ".jsonl" and probe.is_file(snapshot):
                sidecars.append(str(snapshot))
            meta = path.parent.parent / "workspace.json"
            if path.parent.name == "chatSessions" and probe.is_file(meta):
                sidecars.append(str(meta))
            yield SourceRef(agent=SLUG, path=str(path), sidecars=tuple(sidecars))

    def sniff(self, name: str, head: bytes) -> float:
        text = head[:4096]
        if name.endswith(".jsonl") and text.startswith(b'{"kind":0,"v":') and b'"requests"' in text:
            return 0.9
        if (
            name.endswith(".json")
            and b'"requests"' in text
            and (b'"requestId"' in text or b'"version"' in text)
        ):
            return 0.7
        return 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _Chat(ref, doc).result()
