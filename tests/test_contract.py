"""One contract over every registered adapter: bad input gives diagnostics,
never an exception; parsing in two halves equals parsing in one go; parsing
never writes to the source tree."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import DocumentAdapter, JsonlAdapter, SourceRef, all_adapters
from agentlog.load import build_sessions, load_sessions, parse_source
from conftest import FIXTURES

ADAPTERS = all_adapters()
BAD_INPUTS = {
    "empty": b"",
    "garbage": b"\x00\x01\x02 not json at all\n}{\n[1,2,3]\n42\n",
    "non_utf8": b'{"type":"user","message":{"role":"user","content":"caf\xe9"}}\n\xff\xfe\xfa\n',
    "truncated_last_line": b'{"type":"summary","summary":"ok","leafUuid":"x"}\n{"type":"user","mess',
    "wrong_shapes": b'{"type":"user","message":"x"}\n{"type":"assistant","message":{"content":7}}\n'
    b'{"type":"response_item","payload":"x"}\n{"type":"event_msg","payload":{"type":"token_count","info":7}}\n'
    b'{"type":"session_meta","payload":null}\n{"timestamp":1,"type":"turn_context","payload":[]}\n',
}


def test_registry_has_the_built_ins():
    assert {a.slug for a in ADAPTERS} >= {"claude_code", "codex"}
    for adapter in ADAPTERS:
        assert adapter.display_name and adapter.parser_version >= 1


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.slug)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gives_diagnostics_not_exceptions(adapter, case, tmp_path):
    path = tmp_path / "rollout-2025-01-01T00-00-00-bad.jsonl"
    path.write_bytes(BAD_INPUTS[case])
    ref = SourceRef(agent=adapter.slug, path=str(path))
    if isinstance(adapter, DocumentAdapter) and adapter.format_of(ref) == "sqlite" and case != "empty":
        # Not a database at all: the reader says so, and the loader reports the
        # file as unreadable (costing only itself).
        with pytest.raises(sqlite3.DatabaseError):
            parse_source(adapter, ref)
        return
    parsed = parse_source(adapter, ref)
    sessions = build_sessions([(adapter, parsed)])
    for session in sessions:
        d = session.diagnostics
        assert d.records_total == d.records_used + sum(d.skipped.values())
    if case == "garbage":
        # Nothing is made up from garbage, and nothing is silently dropped.
        assert not [m for s in sessions for m in s.messages if not m.hidden]
        assert not sessions or sum(s.diagnostics.records_total for s in sessions) >= 1
    if case == "truncated_last_line" and isinstance(adapter, JsonlAdapter):
        # The half-written line is left for the next read, not consumed.
        assert parsed.consumed == BAD_INPUTS[case].index(b"\n") + 1
        assert sessions[0].diagnostics.incomplete_tail_bytes == len(BAD_INPUTS[case]) - parsed.consumed


def _fixture_files(agent_dir: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / agent_dir).rglob("*.jsonl"))


SPLIT_CASES = [
    (a, p)
    for a in ADAPTERS
    if isinstance(a, JsonlAdapter)
    for p in _fixture_files(a.slug)
    if p.stat().st_size > 2000
]


@pytest.mark.parametrize(
    ("adapter", "path"), SPLIT_CASES, ids=lambda x: getattr(x, "name", getattr(x, "slug", ""))
)
def test_two_halves_equal_one_go(adapter, path, tmp_path):
    """Parse a prefix, snapshot, resume on the rest: the same sessions as one pass."""
    data = path.read_bytes()
    growing = tmp_path / path.name
    growing.write_bytes(data)
    ref = SourceRef(agent=adapter.slug, path=str(growing))
    whole = build_sessions([(adapter, parse_source(adapter, ref))])
    for cut in (len(data) // 3, len(data) // 2, len(data) - 1):
        growing.write_bytes(data[:cut])
        first = parse_source(adapter, ref)
        growing.write_bytes(data)
        second = parse_source(adapter, ref, start=first.consumed, state=first.state)
        halves = build_sessions([(adapter, first), (adapter, second)])
        assert msgspec.json.encode(halves) == msgspec.json.encode(whole), f"cut at {cut}"


@pytest.mark.parametrize(
    ("adapter", "path"), SPLIT_CASES, ids=lambda x: getattr(x, "name", getattr(x, "slug", ""))
)
def test_empty_objects_are_counted_and_change_nothing_else(adapter, path, tmp_path):
    """A ``{}`` line between every two lines of a real log gives what a blank line
    of the same length there gives (ignored: the same offsets), and each ``{}`` is
    counted as skipped (``empty_object``), never kept raw."""
    from agentlog.adapters.base import EMPTY_OBJECT

    lines = path.read_bytes().splitlines()
    copy = tmp_path / path.parent.name / path.name  # the same folder name: ids may be made of it
    copy.parent.mkdir()
    ref = SourceRef(agent=adapter.slug, path=str(copy))

    def parsed(between: bytes) -> list:
        copy.write_bytes(b"".join(line + b"\n" + between + b"\n" for line in lines))
        return build_sessions([(adapter, parse_source(adapter, ref))])

    plain, mixed = parsed(b"  "), parsed(b"{}")
    counted = 0
    for s in mixed:  # the sessions with the `{}` taken out of their diagnostics
        n = s.diagnostics.skipped.pop(EMPTY_OBJECT, 0)
        s.diagnostics.records_total -= n
        counted += n
    assert msgspec.json.encode(mixed) == msgspec.json.encode(plain)
    assert counted == len(lines)


def _tree_digest(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def test_loading_never_writes_to_agent_folders(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude" / "projects" / "-tmp-project")
    shutil.copytree(FIXTURES / "codex", home / ".codex" / "sessions")
    before = _tree_digest(home)
    dir_mtimes = {d: os.stat(d).st_mtime_ns for d, _, _ in os.walk(home)}
    sessions = load_sessions(env={"HOME": str(home)}, home=home)
    assert {s.agent for s in sessions} == {"claude_code", "codex"}
    assert _tree_digest(home) == before
    assert {d: os.stat(d).st_mtime_ns for d, _, _ in os.walk(home)} == dir_mtimes


@pytest.mark.parametrize(
    ("adapter", "path"), SPLIT_CASES[:1] + SPLIT_CASES[-1:], ids=lambda x: getattr(x, "name", "")
)
def test_parsers_are_pure_bytes_in_model_out(adapter, path):
    """A parser needs no file: feeding it the lines gives what the reader layer gives."""
    ref = SourceRef(agent=adapter.slug, path=str(path))
    parser = adapter.new_parser(ref, {})
    fragments = []
    offset = 0
    for line in path.read_bytes().splitlines(keepends=True):
        parser.feed(line.rstrip(b"\r\n"), offset)
        fragments.extend(parser.drain())
        offset += len(line)
    from_file = parse_source(adapter, ref)
    assert msgspec.json.encode(fragments) == msgspec.json.encode(from_file.fragments)
    headers = parser.headers()
    for header in headers:  # the reader layer adds the adapter's resume command
        header.resume_command = adapter.resume_command(header)
    assert msgspec.json.encode(headers) == msgspec.json.encode(from_file.headers)
