"""Aider chat histories (``.aider.chat.history.md``, Markdown appended run by run).

Spec (``shared/formats.md`` §12; Aider-AI/aider ``aider/io.py``, ``aider/coders/base_coder.py``,
``aider/utils.py`` ``@5dc9490bb35f``):

Location
    ``.aider.chat.history.md`` in the root of each repository Aider ran in (the
    ``--chat-history-file`` option can move it; that is not followed).  There is no
    central folder: agentlog looks in the folder, its children and grandchildren
    (depth ≤ 2, hidden folders skipped) of each default root — ``~``, ``~/src``,
    ``~/code``, ``~/projects``, ``~/Projects``, ``~/dev``, ``~/work``, ``~/repos``, ``~/git``,
    ``~/Developer`` — and of every ``--root`` given by the user; and in every folder
    (or its parents) another agent's session recorded as its ``cwd``
    (:attr:`AiderAdapter.project_files`).  The file is read whole
    (the reader layer's document path) and parsed as text, never as JSON.

Runs (one file = many sessions)
    Each run appends ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (the machine's local
    time, read here in the local time zone of the reading machine and stored as UTC).
    A run is a session: id ``<first 8 hex of sha1(file path)>-<YYYYMMDDTHHMMSS>`` (a
    second run in the same second gets ``-2`` …), ``cwd`` = the file's folder,
    ``started_at`` = the header time.  Text before the first header is skipped
    (``no_run_header``, once), and so are runs with nothing after their header
    (``empty_run``: Aider started and quit).  Messages carry no time of their own.

Blocks
    ``#### `` lines are user input (consecutive lines = one multi-line message; a
    leading ``/`` is an Aider command); ``> `` lines are Aider's own output (tool output,
    status, errors) → a ``system`` message flagged ``synthetic``; a line with no prefix
    right after a ``> `` line continues it (Aider prefixes only the first line of a
    multi-line output); any other text, after a blank line, is the model's reply
    (``assistant``); inside a reply's code fence every line but ``####`` input is the
    reply's (so ``>>>>>>> REPLACE`` markers stay in it; an interrupted reply may leave
    its fence open).  Reply text that itself starts lines with ``#### ``/``> `` outside
    a fence cannot be told apart (format limit).  Startup lines give the version (``> Aider v0.47.2``)
    and the model (``> Model: X with …``, ``> Models: X with …, weak model Y``,
    ``> Main model: X with …``).

Tokens (approximate)
    ``> Tokens: 12k sent, 1.2k cache write, 3.4k cache hit, 604 received. Cost: $0.02
    message, $0.05 session.`` (older: ``5,244 sent`` … ``$0.02 request``) follows the reply
    it belongs to.  Numbers are rounded by ``format_tokens`` (< 1000 exact, < 10k one
    decimal ``k``, else whole ``k``; ``M`` accepted).  ``sent`` is the prompt, cache
    included (plus the cache writes for Anthropic-style usage, which is added again):
    uncached input = ``sent − cache write − cache hit`` (floored at 0); ``received`` =
    output.  The per-message cost is Aider's own (``recorded``).  The reply carrying the
    usage is flagged ``approximate``; a token line with no reply before it gets a hidden
    ``synthetic`` carrier message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar, Literal

from agentlog import lazy
from agentlog.adapters._common import project_files, project_roots
from agentlog.adapters._values import known_time
from agentlog.adapters.base import Document, DocumentAdapter, DocumentParser, DocumentResult, SourceRef
from agentlog.model import Message, Session, TextPart, Usage
from agentlog.rules import session_key

SLUG = "aider"
HISTORY_FILE = ".aider.chat.history.md"

_RUN = lazy.pattern(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_VERSION = lazy.pattern(r"^Aider v(\S+)")
_MODEL = lazy.pattern(r"^(?:Main model|Models?): (\S+) with ")
_NUMBER = r"([\d.,]+[kM]?)"
_TOKENS = lazy.pattern(
    rf"^Tokens: {_NUMBER} sent(?:, {_NUMBER} cache write)?(?:, {_NUMBER} cache hit)?, {_NUMBER} received\."
    r"(?: Cost: \$([\d.]+) (?:message|request))?"
)


def tokens(text: str) -> int:
    """A count as Aider prints it (``604``, ``5,244``, ``1.2k``, ``12k``, ``1.5M``) → tokens."""
    text = text.replace(",", "")
    scale = {"k": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return round(float(text.rstrip("kM")) * scale)


def usage_of(line: str) -> Usage | None:
    """The usage of a ``Tokens: …`` line (rounded counts; see the module docstring)."""
    match = _TOKENS.match(line)
    if match is None:
        return None
    sent, write, hit, received, cost = match.groups()
    cache_write, cache_hit = tokens(write or "0"), tokens(hit or "0")
    return Usage(
        input_tokens=max(tokens(sent) - cache_write - cache_hit, 0),
        cache_read_tokens=cache_hit,
        cache_write_5m_tokens=cache_write,
        output_tokens=tokens(received),
        cost_usd=float(cost) if cost else None,
        cost_source="recorded" if cost else None,
    )


class _Run:
    """One run being parsed: its header and messages."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.messages: list[Message] = []
        self.model: str | None = None
        self.open: Literal["user", "tool", "assistant"] | None = None
        self.lines: list[str] = []
        self.fenced = False

    def start(self, kind: Literal["user", "tool", "assistant"], offset: int) -> None:
        self.close()
        self.open = kind
        self.fenced = False
        role = {"user": "user", "tool": "system", "assistant": "assistant"}[kind]
        message = Message(id=f"{self.session.id}@{len(self.messages)}", role=role, offset=offset)  # type: ignore[arg-type]
        if kind == "tool":
            message.flags.append("synthetic")
        self.messages.append(message)
        self.lines = []

    def close(self) -> None:
        if self.open is None:
            return
        message = self.messages[-1]
        message.parts.append(TextPart(text="\n".join(self.lines).strip("\n")))
        self.session.diagnostics.use()
        if self.open == "tool":
            self._tool_lines(message)
        elif self.open == "assistant":
            message.model = self.model
        elif self.session.title is None and not self.lines[0].startswith("/"):
            self.session.title = message.text.strip()
        self.open = None

    def _tool_lines(self, block: Message) -> None:
        for line in self.lines:
            version, model, usage = _VERSION.match(line), _MODEL.match(line), usage_of(line)
            if version:
                self.session.agent_version = version.group(1)
            elif model:
                self.model = model.group(1)
            elif usage is not None:
                self._attach(usage, block)

    def _attach(self, usage: Usage, block: Message) -> None:
        replies = [m for m in self.messages if m.role == "assistant"]
        if replies and replies[-1].usage is None:
            replies[-1].usage = usage
            replies[-1].flags.append("approximate")
            return
        carrier = Message(
            id=f"{block.id}#usage",
            role="system",
            parts=[TextPart(text="usage of a request with no recorded reply")],
            usage=usage,
            flags=["meta", "synthetic", "approximate"],
            offset=block.offset,
        )
        self.messages.insert(self.messages.index(block), carrier)


def _local_to_utc(stamp: str) -> datetime | None:
    """A run header's local time in UTC; ``None`` for a date that does not exist
    (``2024-13-45 99:00:00``): the run keeps its messages, only its start is unknown."""
    try:
        return known_time(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").astimezone(UTC))
    except (ValueError, OverflowError, OSError):
        return None


class _HistoryParse(DocumentParser):
    """Splits one history file into runs (a Markdown transcript: its records are
    the messages, cut by the line that starts the next one)."""

    def __init__(self, ref: SourceRef, doc: Document) -> None:
        super().__init__(ref, doc)
        self.text = doc.data.decode("utf-8", errors="replace")
        import hashlib  # OpenSSL: only when a history is parsed

        self.digest = hashlib.sha1(ref.path.encode()).hexdigest()[:8]
        self.runs: list[_Run] = []
        self.preamble = self.diagnostics

    def parse(self) -> None:
        offset = 0
        for raw in self.text.splitlines(keepends=True):
            self._line(raw.rstrip("\r\n"), offset)
            offset += len(raw.encode("utf-8", errors="replace"))
        if self.runs:
            self.runs[-1].close()
        for run in self.runs:
            self.fragments.extend((run.session.id, m) for m in run.messages)

    def headers(self) -> list[Session]:
        empty = [run for run in self.runs if not run.messages]
        if empty:
            self.preamble.skip("empty_run", len(empty))
        headers = [run.session for run in self.runs if run.messages] or [
            Session(key=session_key(SLUG, self.digest), agent=SLUG, id=self.digest, sources=[self.ref.path])
        ]
        headers[0].diagnostics.merge(self.preamble)
        return headers

    def _new_run(self, stamp: str) -> None:
        base = f"{self.digest}-{stamp.replace('-', '').replace(':', '').replace(' ', 'T')}"
        taken = {run.session.id for run in self.runs}
        sid, n = base, 1
        while sid in taken:
            n += 1
            sid = f"{base}-{n}"
        self.runs.append(
            _Run(
                Session(
                    key=session_key(SLUG, sid),
                    agent=SLUG,
                    id=sid,
                    cwd=str(Path(self.ref.path).parent),
                    started_at=_local_to_utc(stamp),
                    sources=[self.ref.path],
                )
            )
        )

    def _line(self, line: str, offset: int) -> None:
        header = _RUN.match(line)
        if header:
            if self.runs:
                self.runs[-1].close()
            self._new_run(header.group(1))
            return
        if not self.runs:
            if line.strip() and not self.preamble.skipped:
                self.preamble.skip("no_run_header")  # the whole text before the first run
            return
        run = self.runs[-1]
        body = line.rstrip()
        fence = run.open == "assistant" and not line.startswith("####")  # an interrupted reply
        if fence and (run.fenced or body.startswith("```")):  # may leave its fence open
            run.lines.append(body)  # a code fence in a reply: its lines are the reply's
            if body.startswith("```"):
                run.fenced = not run.fenced
        elif line.startswith("####"):
            if run.open != "user":
                run.start("user", offset)
            run.lines.append(body[5:])
        elif line.startswith("> ") or body == ">":
            if run.open != "tool":
                run.start("tool", offset)
            run.lines.append(body[2:])
        elif not body:
            if run.open == "assistant":
                run.lines.append("")
            else:
                run.close()
        elif run.open in ("tool", "assistant"):
            run.lines.append(body)
        else:
            run.start("assistant", offset)
            run.lines.append(body)


class AiderAdapter(DocumentAdapter):
    """Aider: ``.aider.chat.history.md`` in the repositories it ran in."""

    slug = SLUG
    display_name = "Aider"
    parser_version = 3
    project_files = (HISTORY_FILE,)
    project_owned = (".aider*",)
    """Every ``.aider*`` name in a project: its histories and the repo map's tags
    cache are Aider's (Aider-AI/aider ``aider/main.py`` ``check_gitignore`` adds
    ``.aider*`` to a repository's ``.gitignore``; ``aider/watch.py`` ignores it)."""
    source_format: ClassVar[Literal["json", "sqlite"]] = "json"
    """Read whole as bytes by the reader layer; parsed as Markdown text."""

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return project_roots(home)

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in project_files(root, HISTORY_FILE):
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        if name == HISTORY_FILE:
            return 1.0
        return 0.9 if b"\n# aider chat started at " in b"\n" + head else 0.0

    def parse_document(self, ref: SourceRef, doc: Document) -> DocumentResult:
        return _HistoryParse(ref, doc).result()
