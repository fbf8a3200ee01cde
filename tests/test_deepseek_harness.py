"""Golden tests for the DeepSeek Harness adapter (exact values).

Expectations come from a throwaway script over the raw JSONL (events by ``type``,
``assistant/message.usage`` summed: input 2877+168, cache read 0+2816, output
90+25, reasoning 18+22).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import zstandard

from agent_checks import accounted, buckets, calls, found_and_shown, roles
from agentlog.adapters.deepseek_harness import DeepSeekHarnessAdapter
from agentlog.index import queries
from agentlog.index.db import connect
from agentlog.index.sync import sync
from agentlog.readers import LineReader, read_head
from conftest import fixture, parse_one

HARNESS = "deepseek_harness"


def test_harness_turn():
    s = parse_one(HARNESS, fixture("deepseek_harness/bash-tool-turn.session.jsonl"))
    assert s.key == "deepseek_harness:e128dda9-ed11-4868-8266-0ef90d03c3d6"
    assert (s.cwd, s.title) == ("/home/u/proj", "Use the bash tool to")
    # The typed prompt and the plugin's runtime-context snapshot (meta).
    assert roles(s) == {"user": 1, "user*": 1, "assistant": 2}
    assert calls(s) == (1, 1)
    call = s.tool_calls()[0]
    assert (call.tool, call.input["command"]) == ("bash", "echo TERMINAL_OK")
    assert call.result is not None and call.result.output == [{"type": "text", "text": "TERMINAL_OK\n"}]
    assert buckets(s) == (3045, 2816, 0, 115, 40)
    assert s.models == ["deepseek-v4-flash"]
    assert (s.status, s.status_evidence) == ("waiting_for_user", "turn/end reason=completed")
    assert s.diagnostics.skipped == {
        "ignored:agent/inbox/spliced": 2,
        "ignored:turn/start": 1,
        "ignored:step/start": 2,
        "ignored:assistant/chunk": 14,
        "ignored:reasoning-chunks": 2,
        "ignored:tool-call-chunks": 1,
        "ignored:tool/call": 1,
        "ignored:step/end": 2,
    }
    assert s.diagnostics.records_total == 35 and accounted(s)


def test_found_under_home_and_shown(tmp_path):
    dsh = tmp_path / ".dsh" / "sessions" / "proj" / "e128dda9-ed11-4868-8266-0ef90d03c3d6"
    dsh.mkdir(parents=True)
    shutil.copy(fixture("deepseek_harness/bash-tool-turn.session.jsonl"), dsh / "session.jsonl")
    assert len(found_and_shown(HARNESS, tmp_path)) == 1


def _zstd_frames(source: Path) -> bytes:
    """The fixture as the harness stores it: a frame with the header line, then a
    frame per batch of events (here: two)."""
    lines = source.read_bytes().splitlines(keepends=True)
    compress = zstandard.ZstdCompressor().compress
    return b"".join(compress(b"".join(batch)) for batch in (lines[:1], lines[1:20], lines[20:]))


def test_zstd_session_reads_like_the_plain_file(tmp_path):
    plain = fixture("deepseek_harness/bash-tool-turn.session.jsonl")
    folder = tmp_path / ".dsh" / "sessions" / "proj" / "e128dda9-ed11-4868-8266-0ef90d03c3d6"
    folder.mkdir(parents=True)
    (folder / "session.jsonl.zstd").write_bytes(_zstd_frames(plain))
    shutil.copy(plain, folder / "session.jsonl")  # the compressed log wins
    [s] = found_and_shown(HARNESS, tmp_path)
    assert s.sources == [str(folder / "session.jsonl.zstd")]
    # The same exact values as the plain file (test_harness_turn).
    assert roles(s) == {"user": 1, "user*": 1, "assistant": 2}
    assert calls(s) == (1, 1)
    assert buckets(s) == (3045, 2816, 0, 115, 40)
    assert s.diagnostics.records_total == 35 and accounted(s)
    head = read_head(folder / "session.jsonl.zstd")
    assert DeepSeekHarnessAdapter().sniff("session.jsonl.zstd", head) == 0.95


def test_highest_session_version_is_read(tmp_path):
    folder = tmp_path / "proj" / "abc"
    folder.mkdir(parents=True)
    for name in ("session.jsonl", "session.v3.jsonl.zstd", "session.v4.jsonl", "notes.jsonl"):
        (folder / name).write_bytes(b"")
    refs = list(DeepSeekHarnessAdapter().discover(tmp_path))
    assert [Path(r.path).name for r in refs] == ["session.v4.jsonl"]


def test_zstd_cut_mid_frame_keeps_the_complete_lines_and_corrupt_data_is_an_error(tmp_path):
    plain = fixture("deepseek_harness/bash-tool-turn.session.jsonl")
    whole = _zstd_frames(plain)
    cut = tmp_path / "session.jsonl.zstd"
    cut.write_bytes(whole[:-40])  # a writer still appending the last frame
    reader = LineReader(cut)
    lines = list(reader)
    assert [line for _, line in lines] == plain.read_bytes().splitlines()[: len(lines)]
    assert 20 <= len(lines) < 36 and reader.consumed == sum(len(line) + 1 for _, line in lines)
    cut.write_bytes(zstandard.FRAME_HEADER + b" garbage")
    with pytest.raises(ValueError, match="Zstandard"):
        list(LineReader(cut))


def test_index_follows_a_growing_zstd_log(tmp_path):
    plain = fixture("deepseek_harness/bash-tool-turn.session.jsonl")
    lines = plain.read_bytes().splitlines(keepends=True)
    compress = zstandard.ZstdCompressor().compress
    folder = tmp_path / ".dsh" / "sessions" / "proj" / "e128dda9"
    folder.mkdir(parents=True)
    log = folder / "session.jsonl.zstd"
    log.write_bytes(compress(b"".join(lines[:1])) + compress(b"".join(lines[1:20])))
    env = {"HOME": str(tmp_path)}
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, [DeepSeekHarnessAdapter()], env, tmp_path)
    with log.open("ab") as fh:  # the harness appends one frame per batch
        fh.write(compress(b"".join(lines[20:])))
    report = sync(conn, [DeepSeekHarnessAdapter()], env, tmp_path)
    assert report.failed == []
    stored = queries.get_session(conn, "deepseek_harness:e128dda9-ed11-4868-8266-0ef90d03c3d6")
    assert stored is not None
    assert roles(stored) == {"user": 1, "user*": 1, "assistant": 2}
    assert buckets(stored) == (3045, 2816, 0, 115, 40)
    assert stored.diagnostics.records_total == 35 and accounted(stored)
