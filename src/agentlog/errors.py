"""Errors a user can act on.  The CLI prints their message on one line and
exits with their ``exit_code``; anything else is a bug (exit 70)."""

from __future__ import annotations


class AgentlogError(Exception):
    """Base class: a clear one-line message for the user."""

    exit_code = 1


class UsageError(AgentlogError):
    """A bad argument or option value."""

    exit_code = 2


class NotFound(AgentlogError):
    """A session, file or agent that does not exist."""

    exit_code = 1


class IndexProblem(AgentlogError):
    """The index cannot be used as it is: not agentlog's, damaged, newer than
    this agentlog, or on storage that refuses what is asked of it."""

    exit_code = 1


REBUILD_HINT = "it is a cache: delete it to rebuild"
"""What every message about a damaged index ends with: the index holds nothing
the logs do not (except the sessions of logs gone since: ``agentlog prune``)."""
