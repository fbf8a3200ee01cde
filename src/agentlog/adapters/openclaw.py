"""OpenClaw session transcripts (JSONL, append-only) — the Pi session format.

Spec (``shared/formats.md`` §6 for the record shapes; OpenClaw ``src/config/paths.ts``
for the state folder, as described by public notes on OpenClaw's storage; fixtures
``shared/fixtures/openclaw/*.jsonl`` from jazzyalex/agent-sessions):

Locations
    ``$OPENCLAW_STATE_DIR`` (default ``~/.openclaw``)
    ``/agents/<agentId>/sessions/<sessionId>.jsonl``; ``sessions.json`` next to them
    is a listing cache (not read).  Deleted transcripts are renamed
    ``<id>.jsonl.deleted.<time>`` and are not sources.

Records
    The Pi v3 session format (see :mod:`agentlog.adapters.pi` for every rule):
    header ``session{id, version:3, timestamp, cwd}``, ``message`` entries with roles
    ``user``/``assistant``/``toolResult``/``system``, ``model_change``, ``custom``.
    OpenClaw differences seen in the fixtures: ``parentId`` of the first entries is
    the session id and a tool result's ``parentId`` is the tool-call id (neither is
    an entry, so the transcript continues from the current leaf); assistant
    messages may carry no ``usage``.  ``system`` role messages are kept as
    ``meta`` system messages; unknown entry types (``compact`` in the drift
    fixture) are kept raw.  OpenClaw has no resume command on the command line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from agentlog.adapters.base import SourceRef
from agentlog.adapters.pi import PiAdapter, PiParser, sniff_pi_family
from agentlog.model import Session
from agentlog.readers import walk_files

SLUG = "openclaw"


class OpenClawParser(PiParser):
    """A :class:`~agentlog.adapters.pi.PiParser` whose sessions are OpenClaw's."""

    slug = SLUG


class OpenClawAdapter(PiAdapter):
    """OpenClaw: ``~/.openclaw/agents/<id>/sessions/*.jsonl``."""

    slug = SLUG
    display_name = "OpenClaw"
    parser_version = 4
    env_vars = ("OPENCLAW_STATE_DIR",)

    def default_roots(self, env: Mapping[str, str], home: Path) -> list[Path]:
        return [Path(env.get("OPENCLAW_STATE_DIR") or home / ".openclaw") / "agents"]

    def discover(self, root: Path) -> Iterator[SourceRef]:
        for path in walk_files(root, ".jsonl"):
            yield SourceRef(agent=SLUG, path=str(path))

    def sniff(self, name: str, head: bytes) -> float:
        # Same format as Pi: only OpenClaw's habit of parenting entries on the
        # session id tells them apart.
        score = sniff_pi_family(head, (b'"role":"toolResult"',))
        return score + 0.1 if score and b'"parentId":"openclaw' in head else score * 0.8

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> OpenClawParser:
        return OpenClawParser(ref, sidecars)

    def resume_command(self, session: Session) -> str | None:
        return None
