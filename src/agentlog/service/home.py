"""Where the logs are: the environment, home folder and extra roots a query reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Home:
    """The environment (agents' own variables such as ``CODEX_HOME``), the home
    folder and the extra folders (``--root``) discovery searches."""

    env: dict[str, str]
    home: Path
    roots: list[Path] = field(default_factory=list)

    @classmethod
    def of(cls, environ: Mapping[str, str], roots: Iterable[str | Path] = (), demo: bool = False) -> Home:
        """The home ``environ`` names (``HOME``, else the user's), or with ``demo``
        the bundled sample home (:func:`agentlog.demo.demo_env`)."""
        if demo:
            from agentlog.demo import demo_env

            env = demo_env(environ)
        else:
            env = dict(environ)
        return cls(env, Path(env.get("HOME") or Path.home()), [Path(r) for r in roots])
