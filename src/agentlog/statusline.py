"""``agentlog statusline``: one line for Claude Code's ``statusLine`` command
(the command is registered by :mod:`agentlog.cli.statusline`; this module is its
fast path, importable without the command-line framework).

Set it up in ``~/.claude/settings.json``::

    {"statusLine": {"type": "command", "command": "agentlog statusline"}}

Claude Code pipes a JSON object (``session_id``, ``transcript_path``, ``model``,
``workspace`` …) on stdin after each message; one line comes back — by default
``$0.42 session · $3.10 today · block $1.20 2h13m left $0.80/h · ctx 45% (90k)``.
``--format`` takes a Python format string over the fields of
:class:`agentlog.service.statusline.StatuslineFacts` made readable:
``{session}``, ``{today}``, ``{block}``, ``{left}``, ``{burn}``, ``{context}``,
``{context_tokens}``, ``{model}``.  It never fails the host: any error prints
:data:`FALLBACK` and exits 0.

The figures are ``agentlog usage``'s: every log is synced first, as every read
command syncs (so today's cost and the block count the session's subagents and
every other agent).  Warm calls are served from a small cache beside the index
(``statusline.json``), keyed by the transcript's size and modification time and
the minute: a call with nothing new in its own transcript reads no index at all,
so other sessions' calls show within the minute.  ``agentlog statusline`` without global
options takes a fast path (:func:`fast_main`) that skips the command-line
framework's start-up.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentlog.service.home import Home

DEFAULT_FORMAT = "{session} session · {today} today · {block} · ctx {context}"
FIELDS = ("session", "today", "block", "left", "burn", "context", "context_tokens", "model")
"""The names ``--format`` may use, each as ``{name}`` with an optional format spec."""
FALLBACK = "agentlog: –"
"""What the status line says when its figures cannot be read."""


def _usd(value: float | None) -> str:
    return "$–" if value is None else f"${value:,.2f}"


def _tokens(n: int | None) -> str:
    if n is None:
        return "–"
    return f"{n / 1000:.0f}k" if n >= 1000 else str(n)


def render(facts: dict[str, Any], fmt: str, model: str, now: datetime) -> str:
    """The line for ``facts`` (a :class:`~agentlog.service.statusline.StatuslineFacts`
    as JSON) in format ``fmt`` at ``now``.  Raises ``ValueError`` for a bad format
    (:func:`check_format`)."""
    check_format(fmt)
    end = datetime.fromisoformat(facts["block_end"]) if facts.get("block_end") else None
    left = ""
    if end is not None and end > now:
        minutes = round((end - now).total_seconds() / 60)  # as Block.as_dict's remaining_minutes (tested equal)
        left = f"{minutes // 60}h{minutes % 60:02d}m left"
    partial = facts.get("partial") or []

    def cost(name: str) -> str:  # a sum over only some of its calls is marked, as `agentlog usage` marks it
        return _usd(facts.get(f"{name}_cost_usd")) + ("*" if name in partial else "")

    burn = f"{_usd(facts['burn_usd_per_hour'])}/h" if facts.get("burn_usd_per_hour") is not None else ""
    block = " ".join(x for x in (f"block {cost('block')}", left, burn) if x) if end else "no block"
    percent = facts.get("context_percent")
    context = f"{percent:.0f}% ({_tokens(facts.get('context_tokens'))})" if percent is not None else "–"
    line = fmt.format_map(dict(
        session=cost("session"),
        today=cost("today"),
        block=block,
        left=left,
        burn=burn,
        context=context,
        context_tokens=_tokens(facts.get("context_tokens")),
        model=model,
    ))
    return line


def check_format(fmt: str) -> None:
    """Raises ``ValueError`` saying what is wrong with ``--format`` ``fmt``: a
    field not in :data:`FIELDS` (positional, ``{}``, attribute or index access
    such as ``{session.__class__}`` included), or a brace left open."""
    import string

    for _, name, spec, _ in string.Formatter().parse(fmt):
        if name is not None and name not in FIELDS:
            raise ValueError(f"unknown field {{{name}}} in --format; known: {', '.join(FIELDS)}")
        if spec and "{" in spec:  # a field inside a spec ("{session:{model.__class__}}") is looked up too
            check_format(spec)


def cache_path(env: Mapping[str, str], index: Path | None = None) -> Path:
    """``statusline.json`` in the folder of ``index``, else of the default index
    (:func:`agentlog.index.db.default_path`); on Linux without importing
    platformdirs (its rule there: ``$XDG_CACHE_HOME``, else ``~/.cache``), which
    costs more than the rest of a warm call."""
    if index is not None:
        return index.parent / "statusline.json"
    if env.get("AGENTLOG_INDEX"):
        return Path(env["AGENTLOG_INDEX"]).parent / "statusline.json"
    system: str = sys.platform  # a plain str: checked on every platform, not narrowed by mypy
    if system.startswith("linux"):
        base = env.get("XDG_CACHE_HOME", "").strip() or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
        return Path(base) / "agentlog" / "statusline.json"
    from agentlog.index.db import default_path

    return default_path(env).parent / "statusline.json"


def _key(payload: dict[str, Any], now: datetime, index: Path | None, sync: bool, roots: str) -> str:
    path = payload.get("transcript_path") or ""
    try:
        st = os.stat(path)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except (OSError, ValueError, TypeError):
        stamp = "-"
    return f"{index or ''}|{'' if sync else 'no-sync'}|{roots}|{payload.get('session_id')}|{path}|{stamp}|{now:%Y-%m-%dT%H:%M}"


def _compute(payload: dict[str, Any], index: Path | None, home: Home, sync: bool) -> dict[str, Any]:
    import msgspec

    from agentlog.index import db
    from agentlog.service.statusline import statusline_facts

    conn = db.connect(index or db.default_path(home.env))
    try:
        model = payload.get("model")
        facts = statusline_facts(
            conn,
            home,
            str(payload.get("session_id") or ""),
            transcript if isinstance(transcript := payload.get("transcript_path"), str) and transcript else None,
            model.get("id") if isinstance(model, dict) else None,
            sync=sync,
        )
    finally:
        conn.close()
    value: dict[str, Any] = json.loads(msgspec.json.encode(facts))
    return value


def _keep(cache: Path, key: str, facts: dict[str, Any]) -> None:
    """Write ``facts`` under ``key`` to the cache file (atomically; a cache that
    cannot be written is only not kept)."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({key: facts}))
        os.replace(tmp, cache)
    except OSError:
        pass


def line(
    stdin: str,
    fmt: str,
    env: dict[str, str],
    index: Path | None = None,
    home: Home | None = None,
    sync: bool = True,
    demo: bool = False,
) -> str:
    """The status line for Claude Code's JSON ``stdin`` from the index ``index``
    (default: the user's) over the logs of ``home`` (default: ``env``'s, no
    ``--root``), synced first unless not ``sync`` (``--no-sync``); with ``demo``
    the transcript Claude Code names is not read (the demo reads only its own logs);
    :data:`FALLBACK` (plus what went wrong: a bad ``--format`` or input named,
    else the error's kind) on any error."""
    try:
        if not stdin.strip():
            raise ValueError("no statusLine JSON on standard input")
        payload = json.loads(stdin)
        if not isinstance(payload, dict):
            raise ValueError("the statusLine input is not a JSON object")
        now = datetime.now(UTC)
        model = payload.get("model")
        name = str(model.get("display_name") or model.get("id") or "") if isinstance(model, dict) else ""
        if not name.isprintable():  # a control character would drive the host's terminal
            from agentlog.present import clean

            name = clean(name, one_line=True, markup=False)
        cache = cache_path(env, index)
        key = _key(payload, now, index, sync, ",".join(map(str, home.roots)) if home is not None else "")
        try:
            cached = json.loads(cache.read_text())
        except (OSError, ValueError):
            cached = {}
        facts = cached.get(key) if isinstance(cached, dict) else None
        if not isinstance(facts, dict):
            if home is None:
                from agentlog.service.home import Home

                home = Home.of(env, (), False)
            facts = _compute({**payload, "transcript_path": None} if demo else payload, index, home, sync)
            if facts.get("synced") is not False:  # read past a busy index: not kept, the next call syncs
                _keep(cache, key, facts)
        return render(facts, fmt, name, now)
    except Exception as exc:  # the status line never fails its host
        said = type(exc) is ValueError  # raised here with a message for the user
        return f"{FALLBACK} ({exc if said else type(exc).__name__})"


def fast_main(argv: list[str]) -> bool:
    """Serve ``agentlog statusline [--format F]`` without the command-line
    framework; ``False`` (nothing done) for any other arguments."""
    args = argv[1:]
    if not args or args[0] != "statusline":
        return False
    fmt = DEFAULT_FORMAT
    rest = args[1:]
    if len(rest) == 2 and rest[0] == "--format":
        fmt = rest[1]
    elif rest:
        return False
    text = line(sys.stdin.read(), fmt, dict(os.environ))
    sys.stdout.write(text + "\n")
    return True
