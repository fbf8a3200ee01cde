"""Small measuring helpers shared by the adapter golden tests (messages by role,
tool calls paired, usage by bucket, diagnostics accounted) and the home-layout
check (``load_sessions`` finds the files, ``agentlog show`` renders them)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from agentlog.adapters import all_adapters
from agentlog.cli import main
from agentlog.load import load_sessions
from agentlog.model import Session, ToolCallPart


def roles(session: Session) -> dict[str, int]:
    """Messages by role; hidden ones (meta, abandoned, …) counted as ``role*``."""
    return dict(Counter(m.role + ("*" if m.hidden else "") for m in session.messages))


def buckets(session: Session) -> tuple[int, int, int, int, int]:
    """(input, cache read, cache write 5m, output, reasoning) of the session."""
    u = session.usage
    return u.input_tokens, u.cache_read_tokens, u.cache_write_5m_tokens, u.output_tokens, u.reasoning_tokens


def calls(session: Session) -> tuple[int, int]:
    """(tool calls with a result, tool calls); orphan results (``tool`` messages) excluded."""
    real = [c for m in session.messages if m.role != "tool" for c in m.parts if isinstance(c, ToolCallPart)]
    return sum(1 for c in real if c.result is not None), len(real)


def accounted(session: Session) -> bool:
    d = session.diagnostics
    return d.records_total == d.records_used + sum(d.skipped.values())


def clean_env(home: Path) -> dict[str, str | None]:
    """HOME set, every registered agent's own variables unset."""
    env: dict[str, str | None] = {var: None for a in all_adapters() for var in a.env_vars}
    env["HOME"] = str(home)
    return env


def found_and_shown(agent: str, home: Path) -> list[Session]:
    """The agent's sessions under ``home`` (no flags, no variables), each checked to
    render with ``agentlog show KEY`` (exit 0, its key in the output)."""
    sessions = load_sessions(agents=[agent], env={"HOME": str(home)}, home=home)
    runner = CliRunner()
    for session in sessions:
        result = runner.invoke(main, ["show", session.key], env=clean_env(home))
        assert result.exit_code == 0, (session.key, result.output)
        assert session.id[:8] in result.stdout
    return sessions


def only(sessions: list[Session]) -> Session:
    """The one session parsed from a file (whatever its kind)."""
    assert len(sessions) == 1, [s.key for s in sessions]
    return sessions[0]
