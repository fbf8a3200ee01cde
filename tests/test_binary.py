"""Binary payloads in tool results (issue 12 rule 15): base64 images and files are
file parts with media type and size, in memory and in the index, and never reach
the search index or a transcript's text."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from agentlog.adapters._binary import payload_size, without_binary
from agentlog.index.db import connect
from agentlog.index.search import search
from agentlog.index.sync import sync
from agentlog.load import load_sessions
from test_index import index_sessions, memory_sessions

FIXTURE = Path(__file__).parent / "fixtures/claude_code/v2.1-image-tool-results.jsonl"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2).decode()  # 520 bytes
WEBP = base64.b64encode(b"RIFF\x00\x00\x00\x00WEBPVP8 " + bytes(range(200))).decode()


def test_payloads_become_file_parts_in_every_provider_shape():
    anthropic = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert without_binary([{"type": "text", "text": "a"}, anthropic]) == [
        {"type": "text", "text": "a"},
        {"type": "file", "media_type": "image/png", "size": 520},
    ]
    claude_read = {"type": "image", "file": {"base64": PNG, "type": "image/png", "originalSize": 520}}
    assert without_binary(claude_read) == {
        "type": "image",
        "file": {
            "base64": {"type": "file", "media_type": "image/png", "size": 520},
            "type": "image/png",
            "originalSize": 520,
        },
    }
    openai = [{"type": "input_image", "image_url": f"data:image/jpeg;base64,{PNG}"}]
    assert without_binary(openai) == [{"type": "file", "media_type": "image/jpeg", "size": 520}]
    gemini = [{"inlineData": {"mimeType": "application/pdf", "data": PNG}}]
    assert without_binary(gemini) == [{"type": "file", "media_type": "application/pdf", "size": 520}]
    named = [{"type": "document", "name": "spec.pdf", "source": {"type": "base64", "data": WEBP}}]
    assert without_binary(named) == [
        {"type": "file", "media_type": "image/webp", "name": "spec.pdf", "size": 216}
    ]
    assert without_binary(f"see data:image/png;base64,{PNG} here") == "see [image/png, 520 bytes] here"
    wrapped = "\n".join(PNG[i : i + 76] for i in range(0, len(PNG), 76))  # MIME line breaks
    assert without_binary({"blob": wrapped}) == {
        "blob": {"type": "file", "media_type": "image/png", "size": 520}
    }
    crlf = "\r\n".join(PNG[i : min(i + 64, len(PNG) - 1)] for i in range(0, len(PNG) - 1, 64)) + "\r\n=\r\n"
    assert PNG.endswith("==") and without_binary([crlf]) == [  # its last "=" on a line of its own
        {"type": "file", "media_type": "image/png", "size": 520}
    ]


@pytest.mark.parametrize(
    "value",
    [
        *("-" * 400, "x" * 400, "a" * 64, "ab12" * 100, f"{PNG[:300]} {PNG[300:]}", PNG + "\n="),
        *({"sha": "0f" * 32}, ["plain text " * 40], 12, None),
    ],
)
def test_text_is_never_taken_for_a_payload(value):
    assert without_binary(value) is value


def test_payload_size_counts_decoded_bytes():
    assert [payload_size(base64.b64encode(bytes(n)).decode()) for n in (0, 1, 2, 3, 520)] == [0, 1, 2, 3, 520]


@pytest.fixture
def home(tmp_path):
    project = tmp_path / "home/.claude/projects/-home-user-app"
    project.mkdir(parents=True)
    shutil.copy(FIXTURE, project / FIXTURE.name)
    return tmp_path / "home"


def test_no_payload_reaches_the_index_or_the_transcript(home, tmp_path):
    payloads = [
        v
        for line in FIXTURE.read_text().splitlines()
        for v in _strings(json.loads(line))
        if len(v) > 200 and " " not in v
    ]
    assert len(payloads) == 5  # the pasted image, the PNG twice, the JPEG twice
    conn = connect(tmp_path / "index.sqlite")
    sync(conn, all_adapters(), {"HOME": str(home)}, home)
    stored = b"".join(bytes(d or b"") + t.encode() for t, d in conn.execute("SELECT text, data FROM parts"))
    indexed = "".join(t for (t,) in conn.execute("SELECT text FROM parts_search"))
    for payload in payloads:
        assert payload[40:104].encode() not in stored and payload[40:104] not in indexed
    assert search(conn, payloads[1][:12]).total == 0
    assert [h.message_id for h in search(conn, "screenshot taken").hits] == ["msg_img_02"]
    (session,) = load_sessions(env={"HOME": str(home)}, home=home)
    files = [
        (p.media_type, p.size) for m in session.messages for p in m.parts if type(p).__name__ == "FilePart"
    ]
    outputs = [p.result.output for m in session.messages for p in m.parts if getattr(p, "result", None)]
    assert (files, outputs) == (
        [("image/png", 438)],
        [
            [{"type": "file", "media_type": "image/png", "size": 852}],
            [
                {"type": "text", "text": "Screenshot of http://localhost:3000/login taken"},
                {"type": "file", "media_type": "image/jpeg", "size": 406},
            ],
        ],
    )
    assert index_sessions(conn) == memory_sessions(home)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_only_a_payload_s_containers_are_copied_and_the_rest_kept_in_order():
    """A list or dict is copied only once an item changes: the items before it and
    after it are the same objects, in the same order; nothing changed, the value
    itself."""
    text, number, small = "plain text " * 40, 7, "ab"
    kept = {"a": text, "b": [number, small], "c": None}
    assert without_binary(kept) is kept
    value = {"a": text, "b": [number, small, PNG, {"x": text}], "c": None, "d": {"data": PNG}}
    free = without_binary(value)
    png = {"type": "file", "media_type": "image/png", "size": 520}
    assert free == {"a": text, "b": [number, small, png, {"x": text}], "c": None, "d": {"data": png}}
    assert list(free) == ["a", "b", "c", "d"] and free["a"] is text and free["b"][3] is value["b"][3]
    assert value["b"][2] is PNG and value["d"] == {"data": PNG}  # the input is left as it was


def test_a_structured_result_repeating_its_output_gets_what_the_output_gets():
    """binary_free scans a structured string equal to the output only when the
    output held a payload: a clean output's copies stay as they are (the same
    objects), a payload's copies become file parts too, and a payload only in the
    structured result is still found."""
    from agentlog.adapters._binary import binary_free
    from agentlog.model import ToolResult

    text = "plain text " * 40
    png = {"type": "file", "media_type": "image/png", "size": 520}
    clean = binary_free(ToolResult(output=text, structured={"stdout": "".join(text), "n": 1}))
    assert clean.output is text and clean.structured == {"stdout": text, "n": 1}
    both = binary_free(ToolResult(output=PNG, structured={"stdout": "".join(PNG), "data": [PNG]}))
    assert (both.output, both.structured) == (png, {"stdout": png, "data": [png]})
    inner = binary_free(ToolResult(output=text, structured={"stdout": text, "image": PNG}))
    assert (inner.output, inner.structured) == (text, {"stdout": text, "image": png})
