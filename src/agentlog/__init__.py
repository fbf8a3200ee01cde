"""agentlog: every coding agent's session logs in one model.

The Python API for notebooks and scripts::

    import agentlog
    for s in agentlog.sessions(agent="codex", since="7d"):
        print(s.key, s.title, s.usage.total_tokens)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentlog.model import Message, Session, Usage

__all__ = ["Message", "Session", "Usage", "sessions"]


def __getattr__(name: str) -> Any:
    # The model is loaded on first use, so `agentlog.cli` starts without it
    # until it needs it (see agentlog._console).
    if name in ("Message", "Session", "Usage"):
        from agentlog import model

        return getattr(model, name)
    raise AttributeError(f"module 'agentlog' has no attribute {name!r}")


def sessions(
    agent: str | None = None,
    project: str | None = None,
    since: str | None = None,
    roots: Iterable[str | Path] = (),
    subagents: bool = True,
    demo: bool = False,
) -> list[Session]:
    """Every session agentlog finds, newest first.

    ``agent`` is an adapter slug (``claude_code``, ``codex`` …); ``project`` a text
    the session's folder must contain; ``since`` a date (``YYYY-MM-DD``) or a span
    (``7d``, ``12h``); ``roots`` extra folders to search; ``demo`` reads the bundled
    sample corpus instead of your home.  Raises :class:`agentlog.errors.UsageError`
    for a bad ``since`` or an unknown ``agent``.
    """
    from agentlog.adapters import get_adapter
    from agentlog.demo import demo_env
    from agentlog.errors import UsageError
    from agentlog.load import load_sessions
    from agentlog.query import filter_sessions, parse_since

    if agent:
        try:
            get_adapter(agent)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    env = demo_env(os.environ) if demo else dict(os.environ)
    home = Path(env.get("HOME") or Path.home())
    found = load_sessions([agent] if agent else None, env, home, [Path(r) for r in roots])
    since_at = parse_since(since) if since is not None else None
    return filter_sessions(found, agent, project, since_at, include_children=subagents)
