"""Agents that delete their own logs: what ``doctor`` warns about.

Claude Code deletes session transcripts at startup once they have been inactive
(file mtime) for ``cleanupPeriodDays`` days, set in ``settings.json`` of its
config folder (``~/.claude``, or each folder of ``$CLAUDE_CONFIG_DIR``); unset,
the default is 30 days ("Sessions inactive for longer than this period are deleted
at startup (default: 30 days)": https://code.claude.com/docs/en/settings, formerly
https://docs.anthropic.com/en/docs/claude-code/settings; mtime:
anthropics/claude-code#62250).  ``0`` made Claude Code before 2.1.89 write no
transcript at all and delete the existing ones; 2.1.89 rejects it as invalid
(anthropics/claude-code#23710, #41800).  agentlog's index keeps what it read
(:mod:`agentlog.index.archive`), but only what it read before the deletion.
"""

from __future__ import annotations

import errno
import json
import stat
from collections.abc import Mapping
from pathlib import Path

import msgspec

from agentlog.adapters import registered
from agentlog.readers import describe_error, read_small

CLAUDE_DEFAULT_CLEANUP_DAYS = 30
"""Claude Code's ``cleanupPeriodDays`` when unset (days)."""
SHORT_CLEANUP_DAYS = 90
"""A ``cleanupPeriodDays`` below this many days is warned about: a session not run
again for a quarter is gone (users who keep transcripts set years: 3650, 99999)."""


class RetentionWarning(msgspec.Struct, kw_only=True):
    """An agent setting that deletes logs: the ``agent``, the settings file
    (``path``), the value found (``cleanup_period_days``, ``None`` when unset) and
    what it means (``message``, one line)."""

    agent: str
    path: str
    cleanup_period_days: int | None
    message: str


def claude_config_dirs(env: Mapping[str, str], home: Path) -> list[Path]:
    """Claude Code's config folders that exist: the parents of its session roots
    (:meth:`agentlog.adapters.claude_code` ``default_roots``, which honour
    ``$CLAUDE_CONFIG_DIR``)."""
    out: list[Path] = []
    claude = next(a for a in registered() if a.slug == "claude_code")  # its roots, not its module
    for root in claude.default_roots(env, home):
        folder = root.parent
        try:
            if folder.is_dir() and folder not in out:
                out.append(folder)
        except OSError:  # a folder that cannot be probed is discovery's diagnostic
            continue
    return out


def claude_cleanup_warnings(env: Mapping[str, str], home: Path) -> list[RetentionWarning]:
    """One warning per Claude Code config folder whose ``cleanupPeriodDays`` is
    unset, not a whole number of days, 0, or shorter than :data:`SHORT_CLEANUP_DAYS`;
    none where it keeps transcripts longer.  Reads ``settings.json`` only."""
    out = []
    for folder in claude_config_dirs(env, home):
        path = folder / "settings.json"
        days, message = _cleanup_setting(path)
        if message:
            out.append(
                RetentionWarning(
                    agent="claude_code", path=str(path), cleanup_period_days=days, message=message
                )
            )
    return out


def _cleanup_setting(path: Path) -> tuple[int | None, str | None]:
    """``(cleanupPeriodDays, warning or None)`` of one ``settings.json``."""
    keep = f'set "cleanupPeriodDays" in {path} to keep them longer (e.g. 3650)'
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block
            raise OSError(errno.EINVAL, "not a regular file")
        settings = json.loads(read_small(path, limit=4 * 1024 * 1024))
    except FileNotFoundError:
        settings = {}
    except (OSError, ValueError) as exc:
        return (
            None,
            f"cannot read {path} ({describe_error(exc)}): Claude Code's transcript cleanup is not known",
        )
    value = settings.get("cleanupPeriodDays") if isinstance(settings, dict) else None
    if value is None:
        return None, (
            f"Claude Code deletes transcripts inactive for {CLAUDE_DEFAULT_CLEANUP_DAYS} days "
            f"(cleanupPeriodDays unset: its default); agentlog keeps only those it indexed before; {keep}"
        )
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"cleanupPeriodDays is {json.dumps(value)}, not a whole number of days; {keep}"
    if value <= 0:
        return value, (
            f"cleanupPeriodDays is {value}: Claude Code before 2.1.89 then writes no transcript and deletes "
            f"the existing ones (2.1.89 and later reject it); {keep}"
        )
    if value < SHORT_CLEANUP_DAYS:
        return value, f"Claude Code deletes transcripts inactive for {value} days (cleanupPeriodDays); {keep}"
    return value, None
