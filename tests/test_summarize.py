"""Summaries through ``llm`` (``agentlog summarize``, ``standup``): what is sent
(redacted, shown by --dry-run), the summaries kept by content and model, and
where they are shown.  The model is a deterministic one registered here through
llm's plugin hook: nothing leaves the machine."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("llm")

import llm
from click.testing import CliRunner
from llm.plugins import pm

from agentlog.cli import main
from agentlog.index import db
from agentlog.index.schema import MIGRATIONS
from agentlog.service.summaries import prompt_of
from agentlog.summarize import SESSION_SYSTEM, TRANSCRIPT_CHARS, Prompt, _bounded
from agentlog.web.app import create_app
from secret_home import SESSION, TOKEN, secret_home

MODEL = "agentlog-test"


class Recorder(llm.Model):
    """Replies ``Done: <n> characters read.`` and records what it was sent."""

    model_id = MODEL
    sent: ClassVar[list[tuple[str | None, str]]] = []

    def execute(self, prompt, stream, response, conversation):
        Recorder.sent.append((prompt.system, prompt.prompt))
        yield f"Done: {len(prompt.prompt)} characters read."


class Plugin:
    @llm.hookimpl
    def register_models(self, register):
        register(Recorder())


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))  # never the user's llm settings
    Recorder.sent = []
    pm.register(Plugin(), name=MODEL)
    yield secret_home(tmp_path / "home")
    pm.unregister(name=MODEL)


def run(home: Path, *args: str) -> tuple[int, str, str]:
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def _prompt(home: Path) -> Prompt:
    code, _, err = run(home, "index")
    assert code == 0, err
    conn = db.connect(db.default_path({"AGENTLOG_INDEX": str(Path(os.environ["AGENTLOG_INDEX"]))}))
    try:
        return prompt_of(conn, "5ec7e700")
    finally:
        conn.close()


def test_the_prompt_is_the_redacted_transcript(home):
    prompt = _prompt(home)
    assert prompt.subject == SESSION and prompt.system == SESSION_SYSTEM
    assert prompt.text == (
        "Session: push with token [REDACTED:github_token] please\n"
        "Agent: claude_code\n"
        "Folder: /work/app\n"
        "Time: 2026-11-30T10:00:00+00:00 to 2026-11-30T10:00:01+00:00\n"
        "\n"
        "Transcript:\n"
        "USER: push with token [REDACTED:github_token] please\n"
        "\n"
        "ASSISTANT: Pushing now.\n"
        "[bash] git push https://[REDACTED:github_token]@github.com/o/r"
    )


def test_dry_run_shows_the_prompt_and_sends_nothing(home):
    code, out, _ = run(home, "summarize", "5ec7e700", "--dry-run", "--model", MODEL)
    assert code == 0 and Recorder.sent == []
    assert out == f"=== {SESSION} ===\n{_prompt(home).shown()}\n"
    assert TOKEN not in out
    code, out, _ = run(home, "summarize", "5ec7e700", "--dry-run", "--json")
    (shown,) = json.loads(out)
    assert shown["sha256"] == _prompt(home).sha256 and shown["text"] == _prompt(home).text


def test_a_summary_is_sent_once_kept_and_shown(home):
    prompt = _prompt(home)
    code, out, err = run(home, "summarize", "5ec7e700", "--model", MODEL)
    assert code == 0, err
    reply = f"Done: {len(prompt.text)} characters read."
    assert out == f"=== {SESSION} · {MODEL} ===\n{reply}\n\n"
    assert err == f"{SESSION}: sending {len(prompt.text):,} characters to {MODEL}\n"
    assert Recorder.sent == [(SESSION_SYSTEM, prompt.text)]
    code, out, err = run(home, "summarize", "5ec7e700", "--model", MODEL, "--json")
    (kept,) = json.loads(out)
    assert (kept["cached"], kept["model"], kept["text"], err) == (True, MODEL, reply, "")
    assert len(Recorder.sent) == 1  # the same content is not sent twice to the same model
    code, _, _ = run(home, "summarize", "5ec7e700", "--model", MODEL, "--refresh")
    assert code == 0 and len(Recorder.sent) == 2
    code, out, _ = run(home, "show", "5ec7e700")
    assert code == 0 and f"summary ({MODEL}, " in out and reply in out and "earlier state" not in out
    html = create_app(Path(os.environ["AGENTLOG_INDEX"])).test_client().get(f"/session?key={SESSION}")
    assert reply in html.get_data(as_text=True)


def test_a_changed_session_is_summarised_again(home):
    run(home, "summarize", "5ec7e700", "--model", MODEL)
    log = next((home / ".claude" / "projects").glob("*/*.jsonl"))
    with log.open("a") as f:
        f.write(
            json.dumps(
                {
                    "sessionId": "5ec7e700-0000-4000-8000-000000000001",
                    "cwd": "/work/app",
                    "type": "user",
                    "uuid": "u2",
                    "parentUuid": "a1",
                    "timestamp": "2026-11-30T10:05:00.000Z",
                    "message": {"role": "user", "content": "and tag the release"},
                }
            )
            + "\n"
        )
    code, out, _ = run(home, "show", "5ec7e700")
    assert code == 0 and "of an earlier state of this session" in out
    code, _, err = run(home, "summarize", "--since", "2026-11-30", "--model", MODEL)
    assert code == 0 and "sending" in err
    assert len(Recorder.sent) == 2 and Recorder.sent[1][1].endswith("USER: and tag the release")


def test_standup_digests_kept_summaries_and_excerpts(home):
    code, out, _ = run(home, "standup", "--since", "2026-11-30", "--dry-run", "--model", MODEL, "--json")
    (before,) = json.loads(out)
    assert before["subject"] == "standup" and Recorder.sent == []
    assert "Asked: push with token [REDACTED:github_token] please\nLast reply: Pushing now." in before["text"]
    run(home, "summarize", "5ec7e700", "--model", MODEL)
    code, out, err = run(home, "standup", "--since", "2026-11-30", "--model", MODEL)
    assert code == 0, err
    (_, digest) = Recorder.sent[1]
    summary = Recorder.sent[0][1]
    assert digest.startswith("Sessions active since 2026-11-30: 1\n\n")
    assert f"Summary:\nDone: {len(summary)} characters read." in digest and "Asked:" not in digest
    assert out == f"=== standup · {MODEL} ===\nDone: {len(digest)} characters read.\n\n"
    code, _, err = run(home, "standup", "--since", "2020-01-01", "--until", "2020-01-02", "--model", MODEL)
    assert code == 0 and err == "no session in that span\n"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("summarize",), "give a SESSION or --since SPAN (one of them)"),
        (("summarize", "x", "--since", "1d"), "give a SESSION or --since SPAN (one of them)"),
        (("summarize", "5ec7e700", "--agent", "codex"), "--agent, --project and --until go with --since"),
        (
            ("summarize", "5ec7e700", "--model", "no-such-model"),
            "Unknown model: no-such-model (see `llm models`)",
        ),
    ],
)
def test_bad_requests_say_what_is_wrong(home, args, error):
    code, _, err = run(home, *args)
    assert code in (1, 2) and error in err and Recorder.sent == []


def test_without_llm_the_command_says_what_to_install(home, monkeypatch):
    for name in [m for m in sys.modules if m == "llm" or m.startswith("llm.")]:
        monkeypatch.setitem(sys.modules, name, None)
    code, _, err = run(home, "summarize", "5ec7e700")
    assert code == 1
    assert (
        err
        == "agentlog: summaries need llm: pip install 'agentlog[llm]' (then configure a model: `llm models`)\n"
    )
    code, out, _ = run(home, "summarize", "5ec7e700", "--dry-run")  # the prompt needs no model
    assert code == 0 and out.startswith(f"=== {SESSION} ===\n")


def test_a_long_transcript_keeps_its_start_and_end():
    text = "a" * 30_000 + "b" * 30_000
    cut = _bounded(text, TRANSCRIPT_CHARS)
    head, tail = TRANSCRIPT_CHARS // 4, TRANSCRIPT_CHARS - TRANSCRIPT_CHARS // 4
    assert cut == "a" * head + "\n[… 20,000 characters left out …]\n" + "a" * (tail - 30_000) + "b" * 30_000


def test_summaries_table_is_the_last_migration(tmp_path):
    conn = db.connect(tmp_path / "index.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(summaries)")]
    assert columns == ["subject", "prompt_sha256", "model", "text", "created_at"]
    assert isinstance(conn, sqlite3.Connection)


def test_the_mcp_overview_shows_the_kept_summary(home):
    import anyio
    from mcp.client import Client

    from agentlog.mcp.server import Index, build_server

    run(home, "summarize", "5ec7e700", "--model", MODEL)
    index = Index(lambda: db.connect(Path(os.environ["AGENTLOG_INDEX"])), None)

    async def go():
        async with Client(build_server(index)) as client:
            return (
                await client.call_tool("get_session_overview", {"session_id": "5ec7e700"})
            ).structured_content

    try:
        overview = anyio.run(go)
    finally:
        index.close()
    assert overview["summary"]["model"] == MODEL
    assert overview["summary"]["text"] == f"Done: {len(_prompt(home).text)} characters read."


def _tree(*folders: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folders``: (size, mtime_ns) by path."""
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns) for folder in folders for p in [folder, *folder.rglob("*")]
    }


@pytest.mark.parametrize("command", [("standup", "--since", "2026-11-30"), ("summarize", "5ec7e700")])
def test_a_dry_run_writes_nothing_not_even_llm_settings(home, monkeypatch, command):
    monkeypatch.delenv("LLM_USER_PATH")  # llm's own place: ~/.config/io.datasette.llm in this home
    index = Path(os.environ["AGENTLOG_INDEX"])
    code, _, err = run(home, "index")
    assert code == 0, err
    before = _tree(home, index.parent)
    code, out, err = run(home, "--no-sync", *command, "--dry-run", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)[0]["subject"] == ("standup" if command[0] == "standup" else SESSION)
    assert _tree(home, index.parent) == before
    assert not (home / ".config" / "io.datasette.llm").exists()


def test_a_dry_run_reads_the_llm_default_model_it_does_not_make(home, tmp_path, monkeypatch):
    settings = tmp_path / "llm-settings"
    settings.mkdir()
    (settings / "default_model.txt").write_text(MODEL)
    run(home, "summarize", "5ec7e700", "--model", MODEL)
    monkeypatch.setenv("LLM_USER_PATH", str(settings))
    before = _tree(settings)
    code, out, err = run(home, "standup", "--since", "2026-11-30", "--dry-run", "--json")
    assert (code, err) == (0, "")
    (digest,) = json.loads(out)
    summary = f"Done: {len(_prompt(home).text)} characters read."
    assert f"Summary:\n{summary}" in digest["text"] and "Asked:" not in digest["text"]  # the default's summary
    assert _tree(settings) == before
