"""Issue #12 rule 14: damaged text inside a JSON string is decoded with U+FFFD and
kept (flagged ``text_replaced``, counted ``decoded_with_replacement``), on every
path; a leading byte-order mark is ignored."""

from __future__ import annotations

import json
import shutil

import pytest

from agentlog.adapters import SourceRef
from agentlog.adapters._json import JsonError, parse_json, parse_object, replaced_apart, take_replaced
from agentlog.load import load_sessions
from agentlog.usage import calls_from_sessions
from agentlog.usage.scan import scan_calls
from conftest import fixture, parse_one
from test_cli import run

R = "\ufffd"


@pytest.mark.parametrize(
    ("data", "value", "replaced"),
    [
        (b'{"a":"x\\ud83d y"}', {"a": f"x{R} y"}, 1),  # a high surrogate cut from its pair
        (b'{"a":"\\uDC00"}', {"a": R}, 1),  # a lone low surrogate, upper-case hex
        (b'{"a":"\\ud83d\\ud83d\\ude00"}', {"a": f"{R}\U0001f600"}, 1),  # lone, then a pair
        (b'{"a":"caf\xe9"}', {"a": f"caf{R}"}, 1),  # Latin-1 where UTF-8 belongs
        (b'{"a":"\xed\xa0\xbd"}', {"a": R * 3}, 1),  # a surrogate encoded as UTF-8 bytes
        ('{"a":"\ud83d"}', {"a": R}, 1),  # a str holding a lone surrogate (a SQLite cell)
        (b'\xef\xbb\xbf{"a":1}', {"a": 1}, 0),  # a byte-order mark: ignored, not counted
        ("\ufeff[1]", [1], 0),
        (b'{"a":"\\ud83d\\ude00"}', {"a": "\U0001f600"}, 0),  # a valid pair: untouched
        (b'{"a":"\\\\ud83d"}', {"a": "\\ud83d"}, 0),  # an escaped backslash: no escape follows
    ],
)
def test_decoder_replaces_damaged_text_and_counts_it(data, value, replaced):
    take_replaced()
    assert parse_json(data) == value
    assert take_replaced() == replaced
    assert take_replaced() == 0


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a": \xe9}', "invalid_json"),  # not inside a string: no text to repair
        (b'\xef\xbb\xbf{"a": ', "invalid_json"),
        (b'{"a":"\\ud83d"', "invalid_json"),  # repaired, but still cut short
    ],
)
def test_what_no_replacement_makes_json_keeps_its_reason(data, reason):
    take_replaced()
    with pytest.raises(JsonError) as caught:
        parse_object(data)
    assert caught.value.reason == reason
    assert take_replaced() == 0


def test_counting_apart_leaves_the_running_count_as_it_was():
    take_replaced()
    parse_json(b'"\\ud800"')
    with replaced_apart() as inner:
        parse_json(b'"\\ud800"')
        parse_json(b'"\\udfff"')
    assert inner == [2]
    assert take_replaced() == 1


def test_claude_code_lines_with_damaged_text_are_kept_flagged_and_counted():
    session = parse_one("claude_code", fixture("claude_code/written-damaged-text.jsonl"))
    assert session.id == "written-damaged-text"
    assert session.cwd == "/w/damaged"  # the first line, behind its byte-order mark
    assert session.title == f"fix the emoji {R} bug"
    assert [(m.role, m.text, m.flags) for m in session.messages] == [
        ("user", f"fix the emoji {R} bug", ["text_replaced"]),
        ("assistant", f"caf{R} fixed", ["text_replaced"]),
        ("user", "a pair \U0001f600 stays and an escaped \\ud83d stays", []),
    ]
    d = session.diagnostics
    assert (d.records_total, d.records_used, d.skipped) == (3, 3, {})
    assert d.invalid_values == {"decoded_with_replacement": 2}
    assert session.message_count == 3
    assert (session.usage.input_tokens, session.usage.output_tokens) == (12, 34)
    assert (session.usage.cache_read_tokens, session.usage.cache_write_5m_tokens) == (1000, 200)


def test_the_usage_scanner_keeps_the_damaged_lines_too(tmp_path):
    project = tmp_path / ".claude/projects/-w-damaged"
    project.mkdir(parents=True)
    path = project / "written-damaged-text.jsonl"
    shutil.copy(fixture("claude_code/written-damaged-text.jsonl"), path)
    full = list(calls_from_sessions(load_sessions(["claude_code"], {}, tmp_path)))
    fast = scan_calls([SourceRef(agent="claude_code", path=str(path))])
    assert [(c.session_key, c.usage.total_tokens) for c in fast] == [
        ("claude_code:written-damaged-text", 1246)
    ]
    assert [(c.session_key, c.usage) for c in fast] == [(c.session_key, c.usage) for c in full]


def test_a_json_document_with_damaged_text_is_read_whole():
    session = parse_one("gemini_cli", fixture("gemini_cli/session-written-damaged-text.json"))
    assert [(m.role, m.text, m.flags) for m in session.messages] == [
        ("user", f"cut emoji {R} here", ["text_replaced"]),
        ("assistant", f"na{R}ve reply", ["text_replaced"]),
        ("user", "clean", []),
    ]
    assert session.diagnostics.invalid_values == {"decoded_with_replacement": 1}  # one document
    assert session.diagnostics.skipped == {}
    assert session.usage.total_tokens == 120


def test_doctor_counts_the_texts_decoded_with_replacement(tmp_path):
    project = tmp_path / ".claude/projects/-w-damaged"
    project.mkdir(parents=True)
    shutil.copy(fixture("claude_code/written-damaged-text.jsonl"), project / "written-damaged-text.jsonl")
    code, out, _ = run("doctor", "--agent", "claude_code", "--json", env={"HOME": str(tmp_path)})
    assert code == 0
    (claude,) = [a for a in json.loads(out)["agents"] if a["agent"] == "claude_code"]
    assert claude["invalid_values"] == {"decoded_with_replacement": 2}
    assert (claude["records_total"], claude["records_used"]) == (3, 3)
    code, out, _ = run("doctor", "--agent", "claude_code", env={"HOME": str(tmp_path)})
    assert code == 0 and "decoded_with_replacement" in out
