"""The incremental index: equal to a fresh parse, incremental, crash-safe, read-only."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import msgspec
import pytest

from agentlog.adapters import all_adapters
from agentlog.errors import UsageError
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.index.search import search
from agentlog.index.sync import sync
from agentlog.load import load_sessions
from agentlog.model import ToolCallPart
from conftest import FIXTURES
from test_equivalence import claude_line

ADAPTERS = all_adapters()


def make_home(tmp_path: Path) -> Path:
    """Fixtures laid out as the agents lay them out."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude_code", home / ".claude/projects/-tmp-project")
    shutil.copytree(FIXTURES / "codex", home / ".codex/sessions/2025/11/25")
    return home


def index_sessions(conn: sqlite3.Connection) -> list[bytes]:
    return sorted(
        msgspec.json.encode(queries.get_session(conn, s.key))
        for s in queries.list_sessions(conn, include_empty=True)
    )


def memory_sessions(home: Path) -> list[bytes]:
    out = []
    for s in load_sessions(env={"HOME": str(home)}, home=home):
        s.sources = s.sources[:1]
        out.append(msgspec.json.encode(s))
    return sorted(out)


@pytest.fixture
def indexed(tmp_path):
    home = make_home(tmp_path)
    conn = connect(tmp_path / "index.sqlite")
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    return home, conn, report


def test_index_gives_the_same_sessions_as_parsing(indexed):
    home, conn, report = indexed
    assert report.failed == [] and report.reparsed == report.sources
    assert index_sessions(conn) == memory_sessions(home)


def test_unchanged_sources_cost_a_stat(indexed):
    home, conn, _ = indexed
    again = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (again.unchanged, again.appended, again.reparsed, again.bytes_parsed) == (again.sources, 0, 0, 0)


def _append_target(home: Path) -> Path:
    return home / ".claude/projects/-tmp-project/v1.0.17-real-session-with-tools.jsonl"


def _assistant_line(text: str, mid: str) -> bytes:
    record = {
        "type": "assistant",
        "sessionId": "x",
        "uuid": f"u-{mid}",
        "timestamp": "2025-06-08T12:00:00Z",
        "message": {
            "id": mid,
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 7, "output_tokens": 11},
        },
    }
    return msgspec.json.encode(record) + b"\n"


def test_append_reads_only_new_bytes_and_half_lines_wait(indexed):
    home, conn, _ = indexed
    path = _append_target(home)
    size = path.stat().st_size
    line = _assistant_line("appended zebra answer", "msg_appended_1")
    with open(path, "ab") as fh:
        fh.write(line[:20])  # half a line: nothing yet
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.appended, report.bytes_parsed) == (1, 0)
    assert search(conn, "zebra").hits == []
    with open(path, "ab") as fh:
        fh.write(line[20:])
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.appended, report.reparsed, report.bytes_parsed) == (1, 0, len(line))
    hits = search(conn, "zebra").hits
    assert [(h.session_key, h.message_id) for h in hits] == [
        ("claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b", "msg_appended_1")
    ]
    session = queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b")
    assert session.usage.input_tokens == 91 + 7 and session.usage.output_tokens == 2266 + 11
    assert path.stat().st_size == size + len(line)
    assert index_sessions(conn) == memory_sessions(home)


def test_append_merging_into_an_existing_response_and_tool_result(indexed, tmp_path):
    """Appended lines that continue an indexed response and answer its tool call."""
    home, _, _ = indexed
    path = home / ".claude/projects/-tmp-project/v1.0.98-session.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5]))
    fresh = connect(tmp_path / "fresh.sqlite")
    sync(fresh, ADAPTERS, {"HOME": str(home)}, home)
    for line in lines[5:]:
        with open(path, "ab") as fh:
            fh.write(line)
        assert sync(fresh, ADAPTERS, {"HOME": str(home)}, home).reparsed == 0
    assert index_sessions(fresh) == memory_sessions(home)


def test_rewritten_shorter_file_is_rebuilt_not_duplicated(indexed):
    home, conn, _ = indexed
    path = _append_target(home)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:10]))
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.reparsed, report.appended) == (1, 0)
    assert index_sessions(conn) == memory_sessions(home)


def test_same_size_rewrite_is_detected_by_the_tail(indexed):
    home, conn, _ = indexed
    path = _append_target(home)
    data = bytearray(path.read_bytes())
    data[-30:-25] = b"XXXXX" if data[-30:-25] != b"XXXXX" else b"YYYYY"
    path.write_bytes(bytes(data) + _assistant_line("more", "msg_more"))
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert report.reparsed == 1 and report.appended == 0


def test_vanished_source_keeps_its_sessions_archived_until_prune(indexed):
    from agentlog.index.archive import prune

    home, conn, _ = indexed
    before = queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b")
    _append_target(home).unlink()
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.archived, report.removed) == (1, 0)
    kept = queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b")
    assert kept.archived and not before.archived
    kept.archived = False
    assert msgspec.json.encode(kept) == msgspec.json.encode(before)
    assert [p.path for p in prune(conn)] == [str(_append_target(home))]
    with pytest.raises(Exception, match="no session matches"):
        queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b")


def test_unreadable_source_is_recorded_and_costs_only_itself(indexed, monkeypatch):
    home, conn, _ = indexed
    path = _append_target(home)
    path.write_bytes(path.read_bytes() + b"\n")  # changed, so it is read again
    import agentlog.index.sync as sync_module

    real = sync_module.SourceParse

    class Denied(real):
        def batches(self, lines=50_000):
            if self.ref.path == str(path):
                raise PermissionError(13, "Permission denied", self.ref.path)
            return super().batches(lines)

    monkeypatch.setattr(sync_module, "SourceParse", Denied)
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert report.failed == [(str(path), "PermissionError: Permission denied")]
    errors, _ = queries.source_problems(conn)
    assert errors == [(str(path), "PermissionError: Permission denied")]
    assert search(conn, "decorator").hits  # other sessions stay searchable
    # what it held is kept, archived, while it cannot be read
    assert queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b").archived
    monkeypatch.setattr(sync_module, "SourceParse", real)
    again = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (again.reparsed, again.restored, again.failed) == (1, 1, [])
    assert not queries.get_session(conn, "claude_code:ba79134d-b6e9-4867-af0c-6941038c9e4b").archived
    assert sync(conn, ADAPTERS, {"HOME": str(home)}, home).unchanged == report.sources
    assert index_sessions(conn) == memory_sessions(home)


def test_duplicate_copies_are_stored_once(indexed):
    home, conn, _ = indexed
    archived = home / ".codex/archived_sessions"
    archived.mkdir()
    shutil.copy(home / ".codex/sessions/2025/11/25/rollout-synthetic-tools.jsonl", archived)
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert report.duplicates == 1
    keys = [s.key for s in queries.list_sessions(conn)]
    assert len(keys) == len(set(keys))


def test_search_phrases_prefixes_filters_and_bad_queries(indexed):
    _, conn, _ = indexed
    prompt = search(conn, '"Can you run that example to show the output"').hits
    assert [(h.session_key, h.role) for h in prompt] == [("claude_code:test_session", "user")]
    tool_output = search(conn, '"Hello, Alice"', tool="BASH").hits
    assert [(h.session_key, h.role, h.part_type) for h in tool_output] == [
        ("claude_code:test_session", "assistant", "tool_call")
    ]
    assert "\x02Hello\x03" in tool_output[0].snippet
    assert search(conn, "decorat*", role="User").total == search(conn, "decorat*", role="user").total > 0
    assert search(conn, "decorat*", agent="codex").hits == []
    unbalanced = search(conn, '"Hello, Alice')  # the quote is punctuation: the words still match
    assert [h.message_id for h in unbalanced.hits] == [h.message_id for h in search(conn, "Hello Alice").hits]
    assert unbalanced.note is None and unbalanced.match == '"""Hello," "Alice"'
    raw = search(conn, '"unbalanced', raw=True)  # FTS5 cannot parse it: one phrase instead, said so
    assert raw.match == '"unbalanced"' and raw.note is not None and "cannot parse" in raw.note
    with pytest.raises(UsageError, match="empty search query"):
        search(conn, "  ")


def test_reasoning_is_searched_only_on_request(indexed):
    _, conn, _ = indexed
    assert search(conn, '"Reasoning goes here"').hits == []
    assert search(conn, '"Reasoning goes here"', reasoning=True).total == 1


def test_two_processes_wait_for_each_other(indexed, tmp_path):
    home, _, _ = indexed
    path = tmp_path / "index.sqlite"
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    _append_target(home).write_bytes(_append_target(home).read_bytes() + _assistant_line("late", "msg_late"))
    timer = threading.Timer(0.5, lambda: blocker.execute("COMMIT"))
    timer.start()
    other = connect(path)
    report = sync(other, ADAPTERS, {"HOME": str(home)}, home)
    timer.join()
    assert report.appended == 1 and report.failed == []


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            p = Path(dirpath) / name
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            out[str(p)] = (digest, p.stat().st_mtime_ns)
    return out


def test_full_sync_leaves_the_logs_untouched(indexed):
    home, conn, _ = indexed
    before = _tree(home)
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home, full=True)
    assert report.reparsed == report.sources
    assert _tree(home) == before


SYNC_SCRIPT = """
import sys
from pathlib import Path
from agentlog.adapters import all_adapters
from agentlog.index.db import connect
from agentlog.index.sync import sync
home = Path(sys.argv[2])
sync(connect(Path(sys.argv[1])), all_adapters(), {"HOME": str(home)}, home)
"""


def test_sigkill_mid_sync_is_completed_by_the_next_sync(tmp_path):
    home = make_home(tmp_path)
    big = home / ".claude/projects/-tmp-project/big.jsonl"
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from corpus import write_claude

    write_claude(big, 20)
    index = tmp_path / "killed.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", SYNC_SCRIPT, str(index), str(home)])
    # Kill it once it has committed some sources but (very likely) not all.
    for _ in range(400):
        if index.exists() and os.path.getsize(index) > 200_000:
            break
        if proc.poll() is not None:
            break
        threading.Event().wait(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    conn = connect(index)
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert index_sessions(conn) == memory_sessions(home)


def test_parsing_in_a_worker_process_gives_the_same_fragments(tmp_path):
    """Large sources are parsed in a second process; the stream must be identical."""
    from agentlog.adapters import SourceRef, get_adapter
    from agentlog.load import SourceParse

    path = FIXTURES / "claude_code/v1.0.108-inline-sidechain-task.jsonl"
    adapter = get_adapter("claude_code")
    ref = SourceRef(agent="claude_code", path=str(path))
    local = SourceParse(adapter, ref)
    remote = SourceParse(adapter, ref, worker_min=0)
    local_batches = [msgspec.json.encode(b) for b in local.batches(lines=10)]
    remote_batches = [msgspec.json.encode(b) for b in remote.batches(lines=10)]
    assert len(local_batches) == 6 and remote_batches == local_batches
    assert msgspec.json.encode(remote.headers) == msgspec.json.encode(local.headers)
    assert (remote.consumed, remote.state) == (local.consumed, local.state)


def test_worker_errors_come_back_as_the_same_kind(tmp_path):
    from agentlog.adapters import SourceRef, get_adapter
    from agentlog.load import SourceParse

    parse = SourceParse(get_adapter("codex"), SourceRef(agent="codex", path=str(tmp_path)), worker_min=0)
    with pytest.raises(OSError):
        list(parse.batches())


def test_a_worker_ends_when_its_parent_is_killed(tmp_path):
    """SIGKILL the process that reads from a parse worker: the worker must end too."""
    import time

    big = tmp_path / "big.jsonl"
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from corpus import write_claude

    write_claude(big, 8)
    script = f"""
import os, sys, time
from agentlog.adapters import SourceRef, get_adapter
from agentlog.load import SourceParse
parse = SourceParse(get_adapter("claude_code"), SourceRef(agent="claude_code", path={str(big)!r}), worker_min=0)
batches = parse.batches(lines=50)
next(batches)
print(os.getpid(), flush=True)
time.sleep(60)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    parent = int(proc.stdout.readline())
    children = [int(p) for p in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
    assert children, "no worker process"
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(
        Path(f"/proc/{c}").exists() and "Z" not in Path(f"/proc/{c}/stat").read_text().split()[2]
        for c in children
    ):
        time.sleep(0.1)
    alive = [
        c
        for c in children
        if Path(f"/proc/{c}").exists() and "Z" not in Path(f"/proc/{c}/stat").read_text().split()[2]
    ]
    assert alive == []


def test_a_permission_change_is_noticed(indexed, monkeypatch):
    """chmod leaves the mtime alone; the ctime tells the file must be looked at again."""
    home, conn, _ = indexed
    path = _append_target(home)
    path.chmod(0o400)
    import agentlog.index.sync as sync_module

    real = sync_module.SourceParse

    class Denied(real):
        def batches(self, lines=50_000):
            raise PermissionError(13, "Permission denied", self.ref.path)

    monkeypatch.setattr(sync_module, "SourceParse", Denied)
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert report.failed == [(str(path), "PermissionError: Permission denied")]
    assert report.unchanged == report.sources - 1


def _resumed_pair(project: Path) -> Path:
    """``old.jsonl`` with call m1, and ``new.jsonl`` (a resumed session) replaying m1
    then adding m2; returns ``old.jsonl``."""
    project.mkdir(parents=True)

    def line(session: str, mid: str) -> str:
        return msgspec.json.encode(
            {
                "type": "assistant",
                "sessionId": session,
                "uuid": f"{session}-{mid}",
                "timestamp": "2026-10-01T10:00:00Z",
                "message": {
                    "id": mid,
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "usage": {"input_tokens": 10},
                },
            }
        ).decode()

    (project / "new.jsonl").write_text(line("new", "m1") + "\n" + line("new", "m2") + "\n")
    old = project / "old.jsonl"
    old.write_text(line("old", "m1") + "\n")
    return old


@pytest.mark.parametrize("how", ["deleted", "rewritten without it"])
def test_a_replayed_copy_counts_once_its_original_is_gone(tmp_path, how):
    from agentlog.index.archive import prune
    from agentlog.index.usage import usage_records

    home = tmp_path / "home"
    old = _resumed_pair(home / ".claude/projects/-p")
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert sum(r.calls for r in usage_records(conn)) == 2
    if how == "deleted":
        old.unlink()
    else:
        old.write_text("")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    if how == "deleted":  # kept, archived, with the call it made first, until pruned
        assert {(r.session_key, r.calls) for r in usage_records(conn)} == {
            ("claude_code:new", 1),
            ("claude_code:old", 1),
        }
        assert queries.get_session(conn, "claude_code:old").archived
        prune(conn)
    assert {(r.session_key, r.calls) for r in usage_records(conn)} == {("claude_code:new", 2)}
    assert queries.get_session(conn, "claude_code:new").message_count == 2
    assert index_sessions(conn) == memory_sessions(home)


def test_a_same_size_rewrite_in_place_is_read_again(indexed):
    home, conn, _ = indexed
    path = _append_target(home)
    data = path.read_bytes()
    assert b'"input_tokens":4' in data
    path.write_bytes(data.replace(b'"input_tokens":4', b'"input_tokens":9', 1))  # same size, same inode
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.reparsed, report.appended) == (1, 0)
    assert index_sessions(conn) == memory_sessions(home)


def test_a_new_index_has_16_kb_pages_a_16_mb_fts_buffer_and_mapped_reads(tmp_path):
    conn = connect(tmp_path / "new.sqlite")
    assert conn.execute("PRAGMA page_size").fetchone() == (16_384,)
    assert conn.execute("SELECT v FROM parts_fts_config WHERE k = 'hashsize'").fetchone() == (16 << 20,)
    reader = connect(tmp_path / "new.sqlite", readonly=True)
    for c in (conn, reader):
        assert c.execute("PRAGMA mmap_size").fetchone() == (1 << 30,)


def test_an_index_made_before_keeps_its_pages_and_gets_the_fts_buffer(tmp_path):
    """An index created with 4 KB pages and the schema before the FTS buffer
    setting: opening it migrates it, its pages stay as they are, and it still syncs."""
    from agentlog.index.db import _statements
    from agentlog.index.schema import MIGRATIONS

    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA page_size = 4096")
    old.execute("PRAGMA journal_mode = WAL")
    before = next(n for n, m in enumerate(MIGRATIONS) if "hashsize" in m)
    for migration in MIGRATIONS[:before]:
        for statement in _statements(migration):
            old.execute(statement)
    old.execute(f"PRAGMA user_version = {before}")
    old.close()
    conn = connect(path)
    assert conn.execute("PRAGMA page_size").fetchone() == (4096,)
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert conn.execute("SELECT v FROM parts_fts_config WHERE k = 'hashsize'").fetchone() == (16 << 20,)
    home = make_home(tmp_path)
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert index_sessions(conn) == memory_sessions(home)
    conn.execute("INSERT INTO parts_fts (parts_fts) VALUES ('integrity-check')")


def test_the_full_text_index_stays_consistent_through_appends_and_rewrites(indexed):
    """FTS5's own check of ``parts_fts`` against ``parts`` (raises if they differ)
    after a sync, an append that rewrites a stored message, and a whole re-read."""
    home, conn, _ = indexed
    check = "INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)"
    conn.execute(check)
    with open(_append_target(home), "ab") as fh:
        fh.write(_assistant_line("appended zebra answer", "msg_appended_1"))
        fh.write(_assistant_line("a second block of the same answer", "msg_appended_1"))
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    with open(_append_target(home), "ab") as fh:
        fh.write(_assistant_line("a third block", "msg_appended_1"))
    assert sync(conn, ADAPTERS, {"HOME": str(home)}, home).appended == 1
    conn.execute(check)
    sync(conn, ADAPTERS, {"HOME": str(home)}, home, full=True)
    conn.execute(check)
    assert [h.message_id for h in search(conn, "zebra").hits] == ["msg_appended_1"]


def test_first_batches_grow_from_2000_lines_doubling(tmp_path):
    """A consumer in another process gets a small batch at once, then batches that
    double until ``lines``: it never waits for a whole large batch at the start.
    Each batch but the last carries its last message into the next
    (:func:`agentlog.load.open_tail`)."""
    from agentlog.adapters import SourceRef, get_adapter
    from agentlog.load import jsonl_batches

    path = tmp_path / "s.jsonl"
    record = {"type": "user", "sessionId": "s", "timestamp": "2025-06-08T12:00:00Z"}
    path.write_bytes(
        b"".join(
            msgspec.json.encode({**record, "uuid": f"u{i}", "message": {"role": "user", "content": f"n{i}"}})
            + b"\n"
            for i in range(15_000)
        )
    )
    ref = SourceRef(agent="claude_code", path=str(path))
    sizes = [len(f) for f, _, _ in jsonl_batches(get_adapter("claude_code"), ref, {}, 0, None, 5_000)]
    assert sizes == [1_999, 4_000, 5_000, 4_001]


def test_a_large_source_indexes_its_text_in_this_thread_and_equals_a_fresh_parse(tmp_path, monkeypatch):
    """A large source's parts are added to ``parts_fts`` batch by batch as they are
    written, in the sync's own thread (a thread of its own cost ~1 s more CPU on
    300 MB, GIL contention, for no less wall): every part is indexed once and FTS5
    agrees."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from corpus import write_claude

    home = tmp_path / "home"
    write_claude(home / ".claude/projects/-bench/big.jsonl", 6)
    conn = connect(tmp_path / "index.sqlite")
    started: list[threading.Thread] = []
    start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self), start(self))[1])
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert started == []
    parts = conn.execute("SELECT COUNT(*) FROM parts").fetchone()[0]
    assert parts > 3_000  # the first batch (2,000 lines) alone has more than 1,000
    assert conn.execute("SELECT COUNT(*) FROM parts_fts_docsize").fetchone() == (parts,)
    conn.execute("INSERT INTO parts_fts (parts_fts, rank) VALUES ('integrity-check', 1)")
    assert index_sessions(conn) == memory_sessions(home)


def test_session_models_survive_appends_and_full_rereads(tmp_path):
    """An appended part without a model keeps the session's models; a full
    re-read gives what a fresh index gives (also with a call copied in another
    file: edge-cases and todowrite-examples share msg_004)."""
    home = tmp_path / "home"
    project = home / ".claude/projects/-fx"
    project.mkdir(parents=True)
    for name in ("edge-cases.jsonl", "todowrite-examples.jsonl"):
        data = (FIXTURES / "claude_code" / name).read_bytes()
        (project / name).write_bytes(data if data.endswith(b"\n") else data + b"\n")  # appended to below
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    fresh = {s.key: s.models for s in queries.list_sessions(conn, include_empty=True)}
    assert fresh["claude_code:edge_cases"] == ["claude-3-sonnet-20240229", "claude-sonnet-4"]
    sync(conn, ADAPTERS, {"HOME": str(home)}, home, full=True)
    assert {s.key: s.models for s in queries.list_sessions(conn, include_empty=True)} == fresh
    user = {"type": "user", "sessionId": "edge_cases", "uuid": "u-next", "timestamp": "2025-06-14T12:00:00Z",
            "message": {"role": "user", "content": "next"}}  # fmt: skip
    with open(project / "edge-cases.jsonl", "ab") as fh:
        fh.write(msgspec.json.encode(user) + b"\n")
    assert sync(conn, ADAPTERS, {"HOME": str(home)}, home).appended == 1
    assert queries.get_session(conn, "claude_code:edge_cases").models == fresh["claude_code:edge_cases"]
    assert index_sessions(conn) == memory_sessions(home)


def test_a_full_disk_is_one_line_and_the_next_sync_completes(tmp_path, monkeypatch):
    from agentlog.index.store import Store
    from test_cli import run

    home = make_home(tmp_path)
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    put = Store.put_fragments

    def full_disk(self, *args, **kwargs):
        self.conn.execute("ROLLBACK")  # what SQLite does itself when the disk is full
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "put_fragments", full_disk)
    code, _, err = run("index", env=env)
    assert code == 1
    assert err.strip().splitlines() == [
        f"agentlog: cannot update the index {tmp_path / 'index.sqlite'}: database or disk is full "
        "(--no-sync reads it as it is)"
    ]
    monkeypatch.setattr(Store, "put_fragments", put)
    assert run("index", env=env)[0] == 0
    assert index_sessions(connect(tmp_path / "index.sqlite")) == memory_sessions(home)


def test_search_order_is_the_same_for_a_fresh_and_an_appended_index(tmp_path):
    """Equal bm25 ranks are ordered by time, session, message and part, not by the
    order rows were written in: here a tool result appended later rewrites the
    first message (new rowids) in one index and not in the other."""

    def line(n: int, content: list, role: str = "assistant") -> bytes:
        message = {"id": f"msg_{n}", "role": role, "model": "claude-sonnet-4-5", "content": content}
        record = {"type": role, "sessionId": "t", "uuid": f"u{n}", "timestamp": f"2026-11-02T10:00:{n:02d}Z"}
        return msgspec.json.encode({**record, "message": message}) + b"\n"

    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    first = line(1, [{"type": "text", "text": "zebra crossing"}, call])
    others = b"".join(line(n, [{"type": "text", "text": "zebra crossing"}]) for n in range(2, 6))
    result = line(6, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b"}], role="user")
    home = tmp_path / "home"
    path = home / ".claude/projects/-t/t.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(first + others)
    grown = connect(tmp_path / "grown.sqlite")
    sync(grown, ADAPTERS, {"HOME": str(home)}, home)
    with open(path, "ab") as fh:
        fh.write(result)
    assert sync(grown, ADAPTERS, {"HOME": str(home)}, home).appended == 1
    fresh = connect(tmp_path / "fresh.sqlite")
    sync(fresh, ADAPTERS, {"HOME": str(home)}, home)
    got = [h.message_id for h in search(grown, "zebra").hits]
    assert got == [h.message_id for h in search(fresh, "zebra").hits]
    assert got == ["msg_5", "msg_4", "msg_3", "msg_2", "msg_1"]  # equal ranks: newest first


@pytest.mark.parametrize(
    ("error", "kept"),
    [(ValueError("not JSON"), False), (PermissionError(13, "Permission denied"), True)],
)
def test_a_replayed_copy_counts_once_its_original_cannot_be_read(tmp_path, monkeypatch, error, kept):
    import agentlog.index.sync as sync_module
    from agentlog.index.usage import usage_records

    home = tmp_path / "home"
    old = _resumed_pair(home / ".claude/projects/-p")
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    real = sync_module.SourceParse

    class Denied(real):
        def batches(self, lines=50_000):
            if self.ref.path == str(old):
                return fail()
            return super().batches(lines)

    def fail():
        raise error
        yield  # a generator: it fails when read, as a parse does

    old.write_text(old.read_text() + "\n")  # changed, so it is read again
    monkeypatch.setattr(sync_module, "SourceParse", Denied)
    assert sync(conn, ADAPTERS, {"HOME": str(home)}, home).failed == [
        (str(old), f"{type(error).__name__}: {error.strerror or error}" if kept else "ValueError: not JSON")
    ]
    if kept:  # unreadable: what it held is kept (archived) and keeps the call it made first
        assert {(r.session_key, r.calls) for r in usage_records(conn)} == {
            ("claude_code:new", 1),
            ("claude_code:old", 1),
        }
        return
    assert {(r.session_key, r.calls) for r in usage_records(conn)} == {("claude_code:new", 2)}
    assert queries.get_session(conn, "claude_code:new").message_count == 2


def test_the_demo_index_is_rebuilt_when_another_build_left_it_never_the_users(tmp_path, monkeypatch):
    """The demo's index is only a cache: one this agentlog cannot open or migrate
    (a newer schema, other tables) is made anew; the user's own never is, and a
    file at the demo's path that is not agentlog's is never deleted."""
    import json

    from click.testing import CliRunner

    import agentlog
    from agentlog.cli import main
    from agentlog.index.schema import MIGRATIONS

    env = {"HOME": str(tmp_path), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    demo_path, own = tmp_path / "demo.sqlite", tmp_path / "index.sqlite"

    def run(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(main, list(args), env=env)
        return result.exit_code, result.stdout, result.stderr

    def keys(*args: str) -> list[str]:
        code, out, err = run(*args)
        assert code == 0, err
        return [row["key"] for row in json.loads(out)]

    def tamper(path, *statements: str) -> None:
        conn = sqlite3.connect(path)
        for statement in statements:
            conn.execute(statement)
        conn.commit()
        conn.close()

    expected = keys("--demo", "sessions", "--json")
    assert len(expected) == 6
    tamper(demo_path, f"PRAGMA user_version = {len(MIGRATIONS) + 1}")  # a newer build's
    assert keys("--demo", "--no-sync", "sessions", "--json") == expected
    tamper(demo_path, "CREATE TABLE other_build (x)")  # same version, other tables
    assert keys("--demo", "sessions", "--json") == expected
    conn = sqlite3.connect(demo_path)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'other_build'").fetchall() == []
    conn.close()
    tamper(demo_path, f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with agentlog.open(demo=True, sync=False) as archive:  # the Python API: the same rule
        assert [s.key for s in archive.sessions()] == expected

    assert keys("sessions", "--json") == []  # the user's own index (an empty home)
    tamper(own, f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    code, _, err = run("sessions", "--json")
    assert code == 1 and f"has schema {len(MIGRATIONS) + 1}, newer than this agentlog's" in err
    conn = sqlite3.connect(own)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1  # untouched
    conn.close()

    demo_path.unlink()
    tamper(demo_path, "CREATE TABLE notes (x)", "INSERT INTO notes VALUES ('mine')")  # not agentlog's
    code, _, err = run("--demo", "sessions", "--json")
    assert code == 1 and "is not an agentlog index" in err
    conn = sqlite3.connect(demo_path)
    assert conn.execute("SELECT x FROM notes").fetchall() == [("mine",)]
    conn.close()


def test_a_source_stored_one_line_a_batch_equals_one_parse_of_it(tmp_path, monkeypatch):
    """Each line its own batch of a whole (fresh) source: what an earlier batch
    stored is found again by the later ones — a message's later content block
    (same id), the result of a call stored before, an orphan result its call claims,
    a second copy of a message whose id another role took — as one parse finds it."""
    import agentlog.index.sync as sync_module

    home = tmp_path / "home"
    folder = home / ".claude/projects/-tmp"
    folder.mkdir(parents=True)
    bash = {"type": "tool_use", "id": "T1", "name": "Bash", "input": {"command": "ls"}}
    read = {"type": "tool_use", "id": "T9", "name": "Read", "input": {"file_path": "/x"}}
    lines = [
        ("u1", "user", "hello"),
        ("a1", "assistant", [{"type": "text", "text": "let me look"}], "msg_A"),
        ("a2", "assistant", [bash], "msg_A"),
        ("r1", "user", [{"type": "tool_result", "tool_use_id": "T1", "content": "file.txt"}]),
        ("r2", "user", [{"type": "tool_result", "tool_use_id": "T9", "content": "early"}]),
        ("b1", "assistant", [read], "msg_B"),
        ("msg_B", "user", "same id as the assistant's"),
        ("msg_B", "user", "and a second copy of it"),
    ]
    text = "".join(
        claude_line("cut", uuid, f"2026-11-01T10:00:{n:02d}Z", role, *rest)
        for n, (uuid, role, *rest) in enumerate(lines)
    )
    (folder / "cut.jsonl").write_text(text)
    real = sync_module.SourceParse

    class OneLine(real):
        def batches(self, lines=50_000):
            return super().batches(1)

    monkeypatch.setattr(sync_module, "SourceParse", OneLine)
    conn = connect(tmp_path / "index.sqlite")
    report = sync(conn, ADAPTERS, {"HOME": str(home)}, home)
    assert (report.reparsed, report.failed) == (1, [])
    assert index_sessions(conn) == memory_sessions(home)
    session = queries.get_session(conn, "claude_code:cut")
    assert [(m.id, m.role, [type(p).__name__ for p in m.parts]) for m in session.messages] == [
        ("u1", "user", ["TextPart"]),
        ("msg_A", "assistant", ["TextPart", "ToolCallPart"]),
        ("msg_B", "assistant", ["ToolCallPart"]),
        ("msg_B#user", "user", ["TextPart", "TextPart"]),
    ]
    found = [p for m in session.messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert [(c.call_id, c.result.output if c.result else None) for c in found] == [
        ("T1", "file.txt"),
        ("T9", "early"),
    ]
