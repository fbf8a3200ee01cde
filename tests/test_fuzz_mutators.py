"""The fuzz's own parts, on small inputs with exact results: each mutation does what
its name says and its oracle is the input without the damaged record; the survivors
check counts what it claims to."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from agentlog.model import Message, Session, TextPart, Usage
from fuzz import checks
from fuzz import mutators as mut

LINES = [b'{"type":"user","text":"a"}\n', b'{"type":"assistant","n":5}\n', b'{"type":"user","text":"c"}\n']


def rng() -> random.Random:
    return random.Random(7)


def test_line_mutations_and_their_oracles():
    l0, l1, l2 = LINES
    assert mut.mutate_line(LINES, 1, "truncate_line", rng()) == (l0, None)
    assert mut.mutate_line(LINES, 1, "duplicate", rng()) == (l0 + l1 + l1 + l2, l0 + l2)
    assert mut.mutate_line(LINES, 0, "swap", rng()) == (l1 + l0 + l2, l2)
    cut, oracle = mut.mutate_line(LINES, 2, "truncate_mid", rng())
    assert (
        oracle == l0 + l1
        and cut.startswith(oracle)
        and l2.startswith(cut[len(oracle) :])
        and cut != l0 + l1 + l2
    )
    nul, oracle = mut.mutate_line(LINES, 1, "nul", rng())
    assert nul.replace(b"\x00", b"", 1) == l0 + l1 + l2 and oracle == l0 + l2
    unknown, _ = mut.mutate_line(LINES, 1, "unknown_type", rng())
    assert json.loads(mut.split_lines(unknown)[1]) == {"type": mut.UNKNOWN_TYPE, "n": 5}
    huge, _ = mut.mutate_line(LINES, 1, "huge_number", rng())
    assert json.loads(mut.split_lines(huge)[1])["n"] in [json.loads(h) for h in mut.HUGE]
    deep, _ = mut.mutate_line(LINES, 1, "deep_nesting", rng())
    assert mut.split_lines(deep)[1].count(b"[") + mut.split_lines(deep)[1].count(b'{"a":') == mut.DEEP
    surrogate, _ = mut.mutate_line(LINES, 0, "lone_surrogate", rng())
    assert b"\\ud800" in mut.split_lines(surrogate)[0]


def test_a_lone_surrogate_is_inserted_anywhere_in_the_string_and_stays_json():
    # at the ends too (isolation-note-1: a cut at 0 or at the end once dropped a quote)
    for seed in range(40):
        text = mut.mutate_value({"a": "xy"}, "lone_surrogate", random.Random(seed))
        assert json.loads(text)["a"].replace("\ud800", "") == "xy" and "\\ud800" in text


def test_a_markdown_line_has_no_oracle_and_no_value_mutation():
    lines = [b"# aider chat started\n", b"#### hi\n"]
    assert mut.mutate_line(lines, 1, "nul", rng())[1] is None
    with pytest.raises(mut.NotApplicable):
        mut.mutate_line(lines, 1, "type_swap", rng())


def test_document_element_mutation_and_its_oracle():
    doc = json.dumps(
        {"id": "s", "messages": [{"role": "user", "text": "a"}, {"role": "assistant", "text": "b"}]}
    )
    mutated, oracle = mut.mutate_document(doc.encode(), "unknown_type", 1, rng())
    assert json.loads(mutated)["messages"][1] == {"role": mut.UNKNOWN_TYPE, "text": "b"}
    assert json.loads(oracle) == {"id": "s", "messages": [{"role": "user", "text": "a"}]}
    assert mut.mutate_document(doc.encode(), "truncate_bytes", 0, rng())[1] is None


def test_cell_mutation_and_its_oracle(tmp_path):
    db, oracle = tmp_path / "a.db", tmp_path / "b.db"
    for path in (db, oracle):
        conn = sqlite3.connect(path)
        conn.executescript(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO t VALUES (1,'x'),(2,'y');"
        )
        conn.commit()
        conn.close()
    assert mut.mutate_sqlite(db, oracle, ("cell", "t", "body", "2", "real"), rng())
    assert sqlite3.connect(db).execute("SELECT id, typeof(body), body FROM t").fetchall() == [
        (1, "text", "x"),
        (2, "real", 1.5),
    ]
    assert sqlite3.connect(oracle).execute("SELECT * FROM t").fetchall() == [(1, "x")]
    assert not mut.mutate_sqlite(db, None, ("drop_column", "t", "body"), rng())
    assert mut.tables(db) == {"t": [("id", "INT")]}  # CREATE TABLE … AS keeps the affinity only


def _session(*messages: Message) -> Session:
    return Session(key="a:s", agent="a", id="s", messages=list(messages))


def _msg(role, text, usage=None, flags=()):
    return Message(id=text, role=role, parts=[TextPart(text=text)], usage=usage, flags=list(flags))


def test_survivors_are_counted_whole_and_copies_do_not_stand_in():
    oracle = [_session(_msg("user", "hi"), _msg("assistant", "yes"), _msg("assistant", "yes"))]
    merged = [_session(_msg("user", "hi"), _msg("assistant", "yes"), _msg("assistant", "yes, and more"))]
    assert checks.survivors_kept(merged, oracle) == []
    one_copy = [_session(_msg("user", "hi"), _msg("assistant", "yes"))]
    assert checks.survivors_kept(one_copy, oracle) == [("assistant", "yes")]
    carrier = _msg("system", "usage of a request", Usage(input_tokens=1), ["meta", "synthetic"])
    assert checks.survivors_kept(one_copy, [_session(carrier, _msg("tool", "out"))]) == []


def test_the_fuzz_homes_folder_never_outlives_its_run(tmp_path):
    """Each run's homes folder is removed when it ends; one a killed run left is
    removed by the next run (its process is gone), a live run's is kept."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    tests = Path(__file__).parent
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(tests)}
    make = "from fuzz import cases; print(cases.base(), flush=True)"

    def left() -> list[str]:
        return sorted(p.name for p in tmp_path.glob("agentlog-fuzz-*"))

    subprocess.run([sys.executable, "-c", make], env=env, check=True, capture_output=True)
    assert left() == []  # an ordinary end removes it
    killed = subprocess.Popen(
        [sys.executable, "-c", make + "; import time; time.sleep(60)"], env=env, stdout=subprocess.PIPE, text=True
    )
    assert killed.stdout is not None
    folder = Path(killed.stdout.readline().strip())
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert left() == [folder.name] and folder.name.startswith(f"agentlog-fuzz-{killed.pid}-")
    live = subprocess.Popen(
        [sys.executable, "-c", make + "; import time; time.sleep(60)"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert live.stdout is not None
        running = Path(live.stdout.readline().strip())
        assert left() == [running.name]  # the killed run's folder went; the live one's is kept
        old = tmp_path / "agentlog-fuzz-abc123"  # the old naming, untouched for a day
        old.mkdir()
        os.utime(old, (time.time() - 86_400, time.time() - 86_400))
        recent = tmp_path / "agentlog-fuzz-def456"
        recent.mkdir()
        subprocess.run([sys.executable, "-c", make], env=env, check=True, capture_output=True)
        assert left() == sorted([running.name, recent.name])
    finally:
        live.kill()
        live.wait()
