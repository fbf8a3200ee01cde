"""TRAE CLI 2.0 ("TraeX", binary ``traex``): Codex rollout JSONL under ``~/.trae/cli/``.

Spec (``shared/formats.md`` §14.3; kenn-io/agentsview ``internal/parser/traex.go``,
``types.go`` ``TRAEX_SESSIONS_DIR`` @538600744d1b): a closed-source fork of codex-rs
writing Codex rollouts field for field — ``~/.trae/cli/sessions/YYYY/MM/DD/
rollout-*.jsonl`` and ``~/.trae/cli/archived_sessions/``, no ``session_index.jsonl``;
``session_meta.model_provider: "trae"``, ``originator: "codex-tui"``.  Parsing,
usage and subagent rules are exactly those of :mod:`agentlog.adapters.codex`; only
the agent (``trae_cli``: keys, parent links) and the locations differ.
``TRAEX_HOME`` (the ``~/.trae/cli`` folder) and ``TRAEX_SESSIONS_DIR`` (its
``sessions`` folder) move the data.  ``~/.trae/cli/history.jsonl`` (prompt history
``{session_id, ts, text}``) is not a session source.  No resume command is
documented publicly.

Detection: a rollout whose first ``session_meta`` has ``model_provider: "trae"``
scores what Codex's sniff gives it, and :func:`agentlog.load.most_specific`
gives a tie to the adapter that specialises the other (this class subclasses
:class:`~agentlog.adapters.codex.CodexAdapter`), in ``agentlog detect`` and for
files under ``--root`` alike; with any other provider it is Codex's (0 here).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentlog.adapters._json import json_value
from agentlog.adapters.base import SourceRef
from agentlog.adapters.codex import CodexAdapter, CodexParser
from agentlog.model import Session

SLUG = "trae_cli"


class TraeCliParser(CodexParser):
    """The Codex rollout parser, for sessions of agent ``trae_cli``."""

    slug = SLUG


class TraeCliAdapter(CodexAdapter):
    """TRAE CLI (``traex``): ``~/.trae/cli/sessions/**/rollout-*.jsonl``."""

    slug = SLUG
    display_name = "TRAE CLI"
    parser_version = 5
    env_vars = ("TRAEX_HOME", "TRAEX_SESSIONS_DIR")

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        base = Path(env["TRAEX_HOME"]) if env.get("TRAEX_HOME") else home / ".trae" / "cli"
        sessions = Path(env["TRAEX_SESSIONS_DIR"]) if env.get("TRAEX_SESSIONS_DIR") else base / "sessions"
        return [sessions, base / "archived_sessions"]

    def sniff(self, name: str, head: bytes) -> float:
        score = super().sniff(name, head)
        first = head.split(b"\n", 1)[0]
        record = json_value(first)
        payload = record.get("payload") if isinstance(record, dict) else None
        is_trae = isinstance(payload, dict) and payload.get("model_provider") == "trae"
        return score if is_trae else 0.0

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> TraeCliParser:
        return TraeCliParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return None  # no public source documents how traex resumes a session
