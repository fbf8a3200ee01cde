"""Which agent processes run, and in which folder: optional evidence for
:func:`agentlog.live.status.refine`, read from Linux's ``/proc`` only.

Nothing is signalled, traced or attached: each ``/proc/<pid>/cmdline`` is read
and ``/proc/<pid>/cwd`` resolved (only the user's own processes resolve; others
are skipped).  Where ``/proc`` does not exist (macOS, Windows) the table is
``None`` and every session's liveness is unknown.  A process counts for an agent
when a word of its first three arguments (the program, or the script a ``node``
or ``python`` runs) is one of :data:`PROGRAMS`.  Agents that run inside an editor
(Cline, Roo, Kilo, Copilot, Cursor) have no process of their own to find: their
liveness stays unknown.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS: dict[str, str] = {
    "claude": "claude_code",
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini": "gemini_cli",
    "gemini-cli": "gemini_cli",
    "opencode": "opencode",
    "vibe": "mistral_vibe",
    "kimi": "kimi",
    "qwen": "qwen",
    "goose": "goose",
    "crush": "crush",
    "amp": "amp",
    "pi": "pi",
    "grok": "grok",
    "droid": "factory_droid",
    "aider": "aider",
    "hermes": "hermes",
}
"""Program words (a path's parts, an npm package folder) → the agent they run."""
_WORD = re.compile(r"[/\\@]")


@dataclass
class ProcessTable:
    """The folders (``cwd``, resolved) agent processes run in, by agent slug."""

    folders: dict[str, set[str]] = field(default_factory=dict)

    def alive(self, agent: str, cwd: str | None) -> bool | None:
        """Whether a process of ``agent`` runs in ``cwd`` (or a folder below it);
        ``None`` when ``agent`` has no process of its own to find or ``cwd`` is
        unknown."""
        if agent not in set(PROGRAMS.values()) or not cwd:
            return None
        base = cwd.rstrip("/") or "/"
        return any(f == base or f.startswith(base + "/") for f in self.folders.get(agent, ()))


def agent_of(argv: list[str]) -> str | None:
    """The agent slug a command line runs: a program name of :data:`PROGRAMS`, or a
    package folder of five letters or more on the path of the script it runs (``["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"]``
    → ``claude_code``), else ``None``."""
    for arg in argv[:3]:
        words = [w for w in _WORD.split(arg) if w]
        name = words[-1] if words else ""
        stem = name.removesuffix(".js").removesuffix(".mjs").removesuffix(".exe")
        if stem in PROGRAMS:
            return PROGRAMS[stem]
        for word in words[:-1]:  # a package folder: long names only ("pi" is a folder name too)
            if len(word) >= 5 and word in PROGRAMS:
                return PROGRAMS[word]
    return None


def scan(proc: Path = Path("/proc")) -> ProcessTable | None:
    """The agent processes under ``proc`` (``None`` when it cannot be listed).
    Never raises: a process that ends while it is read is skipped."""
    try:
        entries = [e for e in os.scandir(proc) if e.name.isdigit()]
    except OSError:
        return None
    table = ProcessTable()
    for entry in entries:
        try:
            argv = (Path(entry.path) / "cmdline").read_bytes().split(b"\0")
            agent = agent_of([a.decode("utf-8", "replace") for a in argv if a])
            if agent is None:
                continue
            cwd = os.readlink(Path(entry.path) / "cwd")
        except OSError:
            continue
        table.folders.setdefault(agent, set()).add(cwd)
    return table
