"""What the worker tests run in a worker process: importable there (a fresh
worker imports what it is given by name, with this process's ``sys.path``),
so without pytest, whose import would defeat :func:`loaded`."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping

import msgspec

from agentlog.adapters import SourceRef
from agentlog.adapters.claude_code import ClaudeCodeAdapter, ClaudeParser
from agentlog.model import Session


def loaded(names: list[str]) -> Iterator[bytes]:
    """One message: those of the modules ``names`` that the worker has imported."""
    yield msgspec.msgpack.encode([name for name in names if name in sys.modules])


class BoomParser(ClaudeParser):
    """Claude Code's parser with a bug: asked for its sessions, it raises."""

    def headers(self) -> list[Session]:
        raise LookupError("boom")


class BoomAdapter(ClaudeCodeAdapter):
    """Claude Code with :class:`BoomParser`."""

    def new_parser(self, ref: SourceRef, sidecars: Mapping[str, bytes]) -> ClaudeParser:
        return BoomParser(ref, sidecars)


def interrupted() -> Iterator[bytes]:
    """Ctrl-C (``SIGINT``) to the worker itself, then one message: ``true``."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGINT)
    yield msgspec.msgpack.encode(True)
