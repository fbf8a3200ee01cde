"""Summaries of sessions through ``llm`` (Simon Willison's library: the model
the user configured, local or hosted; extra ``llm``).

What is sent is built here, once, and shown as is by ``--dry-run``: a session's
header and transcript (its visible messages as plain text,
:func:`agentlog.plaintext.message_text`), or for a digest each session's
summary (or an excerpt); the whole text is redacted
(:func:`agentlog.redact.redact`) before anything else looks at it.  A
:class:`Prompt`'s SHA-256 and the model's id key the summary kept in the index
(:mod:`agentlog.index.summaries`), so unchanged content is never sent twice to
the same model.  Nothing here runs unless ``agentlog summarize`` or
``agentlog standup`` is asked for.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING
from unittest.mock import patch

import msgspec

from agentlog.errors import AgentlogError, UsageError
from agentlog.model import Session
from agentlog.plaintext import message_text
from agentlog.redact import redact

if TYPE_CHECKING:
    import llm

LLM_EXTRA = "summaries need llm: pip install 'agentlog[llm]' (then configure a model: `llm models`)"
TRANSCRIPT_CHARS = 40_000
"""The most characters of a transcript one prompt holds: beyond it the first
quarter and the last three quarters are kept, the middle left out (said so)."""
EXCERPT_CHARS = 600
"""The most characters of a session's opening prompt or last reply in a digest."""
STANDUP_SUBJECT = "standup"

SESSION_SYSTEM = (
    "You summarise one coding-agent session for the developer who ran it. Reply in plain text, at most "
    "12 short lines, in three parts headed 'Done:', 'Decided:' and 'Open:' (what was changed, which "
    "choices were made and why, what is unfinished or failing). Name files, commands and errors "
    "exactly; do not invent anything the transcript does not show."
)
STANDUP_SYSTEM = (
    "You write a stand-up digest of what a developer did with their coding agents. Reply in plain "
    "text: one short section per project, bullet points of what was done and what is left open, "
    "then one line with the total number of sessions. Use only what the notes below say."
)


class Prompt(msgspec.Struct, frozen=True):
    """What is sent to the model: ``system`` instructions and the ``text``
    (already redacted), for ``subject`` (a session key, or ``standup``)."""

    subject: str
    system: str
    text: str

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the system and text: the content key of its summary."""
        return hashlib.sha256(f"{self.system}\n\n{self.text}".encode()).hexdigest()

    def shown(self) -> str:
        """The prompt as ``--dry-run`` prints it."""
        return f"--- system ---\n{self.system}\n--- prompt ({len(self.text):,} characters) ---\n{self.text}\n"


def _header(session: Session) -> list[str]:
    lines = [f"Session: {session.title or session.id}", f"Agent: {session.agent}"]
    for label, value in (("Folder", session.cwd), ("Branch", session.git_branch)):
        if value:
            lines.append(f"{label}: {value}")
    if session.started_at:
        ended = f" to {session.ended_at.isoformat()}" if session.ended_at else ""
        lines.append(f"Time: {session.started_at.isoformat()}{ended}")
    return lines


def _bounded(text: str, limit: int) -> str:
    """``text``, or its first quarter and last three quarters of ``limit``
    characters with what was left out said between them."""
    if len(text) <= limit:
        return text
    head, tail = limit // 4, limit - limit // 4
    return f"{text[:head]}\n[… {len(text) - head - tail:,} characters left out …]\n{text[-tail:]}"


def session_prompt(session: Session) -> Prompt:
    """The prompt that asks for a summary of ``session`` (loaded in full): its
    header and its visible messages as ``ROLE: text``, at most
    :data:`TRANSCRIPT_CHARS` of them, redacted."""
    turns = [
        f"{m.role.upper()}: {text}" for m in session.messages if not m.hidden and (text := message_text(m))
    ]
    body = "\n".join(_header(session)) + "\n\nTranscript:\n" + _bounded("\n\n".join(turns), TRANSCRIPT_CHARS)
    return Prompt(session.key, SESSION_SYSTEM, redact(body))


def _excerpt(session: Session) -> str:
    """A session's opening prompt and last reply, each at most :data:`EXCERPT_CHARS`."""
    visible = [m for m in session.messages if not m.hidden]
    first = next((message_text(m) for m in visible if m.role == "user"), "")
    last = next((message_text(m) for m in reversed(visible) if m.role == "assistant"), "")
    return f"Asked: {first[:EXCERPT_CHARS]}\nLast reply: {last[:EXCERPT_CHARS]}"


def standup_prompt(sessions: Iterable[Session], summaries: dict[str, str], span: str) -> Prompt:
    """The prompt that asks for a digest of ``sessions`` (loaded in full) active
    ``span`` (said in the prompt, e.g. ``since 1d``): for each, its header and its
    summary from ``summaries`` (by key) or else an excerpt (:func:`_excerpt`);
    redacted."""
    notes = [
        "\n".join(_header(s))
        + "\n"
        + (f"Summary:\n{summaries[s.key]}" if s.key in summaries else _excerpt(s))
        for s in sessions
    ]
    body = f"Sessions active {span}: {len(notes)}\n\n" + "\n\n".join(notes)
    return Prompt(STANDUP_SUBJECT, STANDUP_SYSTEM, redact(body))


def resolve_model(name: str | None, dry_run: bool = False) -> llm.Model:
    """The ``llm`` model ``name`` names (an id or alias; ``None``: the user's
    default, ``llm models default``).  With ``dry_run``, llm's settings folder
    is read as it is and never made (:func:`settings_unmade`): a dry run writes
    nothing.  Raises :class:`AgentlogError` when llm is not installed,
    :class:`UsageError` for an unknown model."""
    try:
        import llm
    except ImportError:
        raise AgentlogError(LLM_EXTRA) from None
    try:
        if dry_run:
            with settings_unmade(llm):
                return llm.get_model(name)
        return llm.get_model(name)
    except llm.UnknownModelError as exc:
        raise UsageError(f"{exc.args[0] if exc.args else exc} (see `llm models`)") from None


@contextmanager
def settings_unmade(llm: ModuleType) -> Iterator[None]:
    """While it lasts, ``llm.user_dir()`` names llm's settings folder without
    making it.  llm 0.x's ``user_dir`` (``llm/__init__.py``) is ``$LLM_USER_PATH``,
    else ``click.get_app_dir("io.datasette.llm")``, made with its parents on every
    call; llm and its bundled OpenAI plugin read their settings (default model,
    aliases, extra models) through that one module attribute, each file only
    when it exists.  A missing folder reads as llm's defaults, as it would once made."""
    import click

    def user_dir() -> Path:
        return Path(os.environ.get("LLM_USER_PATH") or click.get_app_dir("io.datasette.llm"))

    with patch.object(llm, "user_dir", user_dir):
        yield


def complete(model: llm.Model, prompt: Prompt) -> str:
    """The model's reply to ``prompt``, stripped.  Raises :class:`AgentlogError`
    when the model fails (no key, no network: its own message)."""
    try:
        return model.prompt(prompt.text, system=prompt.system).text().strip()
    except Exception as exc:  # a plugin's error of any kind is that model's failure, said in one line
        raise AgentlogError(f"model {model.model_id} failed: {type(exc).__name__}: {exc}") from exc
