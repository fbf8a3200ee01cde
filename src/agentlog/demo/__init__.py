"""The bundled sample home folder used by ``agentlog --demo``.

``home/`` holds agent logs laid out as the agents lay them out: permissively
licensed public fixtures (attributed in ``NOTICE``) plus sessions written for
agentlog.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path

#: Variables that would point discovery away from the demo home.
CLEARED = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")


def demo_home() -> Path:
    """The sample home folder (package data)."""
    return Path(str(files("agentlog.demo") / "home"))


def demo_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with ``HOME`` at the sample home and the agent overrides removed."""
    out = {k: v for k, v in env.items() if k not in CLEARED}
    out["HOME"] = str(demo_home())
    return out
