"""agentlog export and secrets: every format's whole output, redaction on every path."""

from __future__ import annotations

import io
import json
from html import unescape
from pathlib import Path

import jsonschema
import msgspec
import pytest
from click.testing import CliRunner

import agentlog
from agentlog.cli import main
from agentlog.export import ExportOptions, Transcript
from agentlog.export.html import policy, stylesheet
from agentlog.export.slim import fit, write_slim
from agentlog.index import db, queries
from agentlog.model import Message, ReasoningPart, Session, TextPart, ToolCallPart, ToolResult, json_schema
from agentlog.query import SessionFilter
from agentlog.service import export as export_service
from agentlog.service.export import export_sessions, select
from agentlog.service.search import search
from agentlog.service.secrets import sessions_with_secrets
from agentlog.service.status import refine_sessions
from agentlog.service.tail import SessionTail
from agentlog.service.usage import UsageQuery, index_usage
from agentlog.web.app import create_app
from export_helpers import AWS_KEY, GITHUB_TOKEN, SECRET_ID, secret_home
from web_helpers import build_index, demo_index

GOLDEN = Path(__file__).parent / "golden" / "export"
CODEX = "codex:019ab0d2-4c1e-7f00-9d2a-5e551011c0de"
WEATHER = "claude_code:de70c1a0-7e57-4b1d-9a6e-5e551011f00d"
AGENT_VARS = {"CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = demo_index(tmp_path_factory.mktemp("export") / "demo.sqlite")
    conn = db.connect(path, readonly=True)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def secret(tmp_path_factory):
    base = tmp_path_factory.mktemp("secret")
    home = secret_home(base / "home")
    path = build_index(base / "index.sqlite", home)
    conn = db.connect(path, readonly=True)
    yield conn, path, home
    conn.close()


def export_bytes(conn, fmt: str, refs, options=None, where=None) -> bytes:
    options = options or ExportOptions()
    out = io.BytesIO()
    export_sessions(conn, fmt, select(conn, refs, where, options), options, None, out)
    return out.getvalue()


def run(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(main, list(args), env={**AGENT_VARS, **(env or {})})
    return result.exit_code, result.stdout, result.stderr


# --- JSON, JSONL -----------------------------------------------------------------


def test_json_export_is_the_model_and_validates(demo):
    for s in queries.list_sessions(demo, SessionFilter(include_children=True)):
        data = json.loads(export_bytes(demo, "json", [s.key]))
        jsonschema.validate(data, json_schema())
        visible, _ = queries.message_page(demo, s.key, 0, 10_000)
        (header,) = refine_sessions(demo, queries.list_sessions_by_keys(demo, [s.key]))  # as show --json
        expected = msgspec.structs.replace(header, messages=visible)
        assert data == json.loads(msgspec.json.encode(expected))


def test_json_of_several_sessions_is_an_array_with_children(demo):
    data = json.loads(export_bytes(demo, "json", [WEATHER, CODEX], ExportOptions(subagents=True)))
    assert [d["key"] for d in data] == [WEATHER, "claude_code:agent-b7e1d2c3", CODEX]
    for d in data:
        jsonschema.validate(d, json_schema())


def test_jsonl_is_a_session_line_then_one_line_per_message(demo):
    lines = export_bytes(demo, "jsonl", [CODEX]).decode().splitlines()
    visible, total = queries.message_page(demo, CODEX, 0, 10_000)
    assert len(lines) == 1 + total == 6
    head = json.loads(lines[0])
    assert head["type"] == "session" and head["key"] == CODEX and head["messages"] == []
    for line, message in zip(lines[1:], visible, strict=True):
        row = json.loads(line)
        assert row.pop("type") == "message" and row.pop("session_key") == CODEX
        assert msgspec.convert(row, Message) == message


# --- Markdown, HTML golden files ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "refs", "fmt", "options"),
    [
        ("codex.md", [CODEX], "md", ExportOptions()),
        ("weather-subagents.md", [WEATHER], "md", ExportOptions(subagents=True)),
        ("orchestrator.md", ["claude_code:5c0375b4"], "md", ExportOptions()),
        ("weather-focused.md", [WEATHER], "md", ExportOptions(focused=True)),
        ("codex.html", [CODEX], "html", ExportOptions()),
        ("orchestrator.html", ["claude_code:5c0375b4"], "html", ExportOptions(subagents=True)),
        ("weather.slim", [WEATHER], "slim", ExportOptions(subagents=True)),
    ],
)
def test_export_golden(demo, update_golden, name, refs, fmt, options):
    text = export_bytes(demo, fmt, refs, options).decode()
    if fmt == "html":  # the inlined stylesheet and its hash: test_html_is_self_contained
        css = stylesheet()
        assert text.count(css) == 1 and text.count(policy(css).replace("'", "&#39;")) == 1
        text = text.replace(css, "/* style.css + highlight_css() */").replace(
            policy(css).replace("'", "&#39;"), "CSP"
        )
    path = GOLDEN / name
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}: run pytest --update-golden and review it"
    assert text == path.read_text()


def test_html_is_self_contained(demo):
    html = export_bytes(demo, "html", [WEATHER], ExportOptions(subagents=True)).decode()
    head = unescape(html[: html.index("<style>")])
    assert (
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"
        in head
    )
    assert "<script" not in html and "<link" not in html and "http://" not in head
    assert 'src="http' not in html and "url(" not in html.split("</style>")[1]
    assert html.count('<section class="session-head"') == 2  # the session and its subagent
    assert 'href="#s1"' in html  # the subagent links to its section


def test_markdown_shows_edits_as_diffs_and_todos_as_a_task_list(demo):
    md = export_bytes(demo, "md", ["claude_code:5c0375b4"]).decode()
    assert "- [ ] Discover available commands in the project" in md
    assert "```diff\n--- a/" in md


# --- slim --------------------------------------------------------------------------


def _transcript(messages: list[Message]) -> Transcript:
    header = Session(key="claude_code:s1", agent="claude_code", id="s1", title="fix it")
    return Transcript(header, lambda: iter(messages))


def test_slim_is_one_line_per_call_and_fits_a_budget():
    call = ToolCallPart(
        call_id="c1",
        tool="bash",
        raw_name="Bash",
        input={"command": "pytest -q"},
        result=ToolResult(output="\n3 passed in 0.1s\nmore"),
    )
    messages = [
        Message(id="1", role="user", parts=[TextPart(text="make the tests pass")]),
        Message(id="2", role="assistant", parts=[TextPart(text="Running them."), call]),
        *(
            Message(id=f"r{i}", role="assistant", parts=[TextPart(text=f"step {i} " + "x" * 30)])
            for i in range(10)
        ),
    ]
    out = io.StringIO()
    write_slim([_transcript(messages)], out, None)
    lines = out.getvalue().splitlines()
    assert lines[:4] == [
        "# fix it (claude_code, no time, claude_code:s1)",
        "USER: make the tests pass",
        "ASSISTANT: Running them.",
        "  [bash] pytest -q → ok: 3 passed in 0.1s",
    ]
    assert len(lines) == 14
    fitted = fit(lines, 60)
    assert fitted == [
        lines[0],
        lines[1],
        "[… 10 lines left out to fit 60 tokens]",
        "ASSISTANT: step 8 " + "x" * 30,
        "ASSISTANT: step 9 " + "x" * 30,
    ]
    assert sum(-(-len(line) // 4) + 1 for line in fitted) <= 60


# --- Parquet -------------------------------------------------------------------------


def test_parquet_reads_back_with_the_index_counts_and_usage_totals(demo, tmp_path):
    ds = pytest.importorskip("pyarrow.dataset")
    options = ExportOptions(subagents=True)
    transcripts = select(demo, [], SessionFilter(), options)
    report = export_sessions(demo, "parquet", transcripts, options, tmp_path / "pq", io.BytesIO())
    every = queries.list_sessions(demo, SessionFilter(include_children=True))
    keys = sorted(s.key for s in every)
    (messages,) = demo.execute("SELECT COUNT(*) FROM messages WHERE hidden = 0 AND replayed = 0").fetchone()
    calls = index_usage(demo, UsageQuery()).calls
    total = sum(pc.call.usage.total_tokens for pc in calls)
    assert report.rows == {
        "sessions": 9,
        "messages": messages,
        "parts": report.rows["parts"],
        "usage": len(calls),
    }

    def table(name):
        return ds.dataset(tmp_path / "pq" / name, format="parquet", partitioning="hive").to_table()

    sessions = table("sessions")
    assert sorted(sessions.column("key").to_pylist()) == keys
    assert sorted(set(sessions.column("agent").to_pylist())) == ["claude_code", "codex"]
    assert sum(sessions.column("total_tokens").to_pylist()) == sum(s.usage.total_tokens for s in every)
    assert table("messages").num_rows == messages
    usage = table("usage")
    assert usage.num_rows == len(calls) and sum(usage.column("total_tokens").to_pylist()) == total
    assert {p.name for p in (tmp_path / "pq" / "usage").iterdir()} == {"agent=claude_code", "agent=codex"}


def test_parquet_reads_back_in_duckdb(demo, tmp_path):
    pytest.importorskip("pyarrow")
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (the test extra installs it)")
    options = ExportOptions(subagents=True)
    export_sessions(
        demo, "parquet", select(demo, [], SessionFilter(), options), options, tmp_path / "pq", io.BytesIO()
    )
    every = queries.list_sessions(demo, SessionFilter(include_children=True))
    (messages,) = demo.execute("SELECT COUNT(*) FROM messages WHERE hidden = 0 AND replayed = 0").fetchone()
    calls = index_usage(demo, UsageQuery()).calls
    total = sum(pc.call.usage.total_tokens for pc in calls)
    base = tmp_path / "pq"
    con = duckdb.connect()
    got = con.execute(
        f"SELECT count(*), sum(total_tokens) FROM read_parquet('{base}/usage/**/*.parquet', hive_partitioning=true)"
    ).fetchall()
    assert got == [(len(calls), total)]
    agents = con.execute(
        f"SELECT agent, count(*) FROM read_parquet('{base}/sessions/**/*.parquet', hive_partitioning=true) "
        "GROUP BY agent ORDER BY agent"
    ).fetchall()
    assert agents == [(a, sum(1 for s in every if s.agent == a)) for a in ("claude_code", "codex")]
    assert con.execute(f"SELECT count(*) FROM read_parquet('{base}/messages/**/*.parquet')").fetchall() == [
        (messages,)
    ]


def _parquet_rows(demo, folder: Path, name: str) -> list[dict]:
    ds = pytest.importorskip("pyarrow.dataset")
    rows = ds.dataset(folder / name, format="parquet", partitioning="hive").to_table().to_pylist()
    return sorted(rows, key=lambda r: (r["session_key"], r.get("message_idx", -1), r["idx"]))


@pytest.mark.parametrize("huge", [1, 40])
def test_parquet_huge_texts_read_back_as_the_model_and_as_small_ones(demo, tmp_path, monkeypatch, huge):
    """Texts of :data:`~agentlog.export.parquet.HUGE` characters and more go to
    Arrow on their own (every text with 1, some with 40, beside runs of small
    ones, in batches of 3 rows): the tables read back are those written without,
    and the messages' texts and the parts' are the model's."""
    pytest.importorskip("pyarrow")
    from agentlog.export import parquet

    options = ExportOptions(subagents=True, redact=False)

    def export(folder: Path) -> None:
        export_sessions(
            demo, "parquet", select(demo, [], SessionFilter(), options), options, folder, io.BytesIO()
        )

    export(tmp_path / "plain")
    monkeypatch.setattr(parquet, "HUGE", huge)
    monkeypatch.setattr(parquet, "BATCH", 3)
    export(tmp_path / "huge")
    for name in ("messages", "parts"):
        assert _parquet_rows(demo, tmp_path / "huge", name) == _parquet_rows(demo, tmp_path / "plain", name)
    every = queries.list_sessions(demo, SessionFilter(include_children=True))
    model = {s.key: list(export_service.stream_messages(demo, s.key)) for s in every}
    messages = _parquet_rows(demo, tmp_path / "huge", "messages")
    assert [(r["session_key"], r["idx"], r["role"], r["text"]) for r in messages] == sorted(
        (key, i, m.role, m.text) for key, found in model.items() for i, m in enumerate(found)
    )
    parts = _parquet_rows(demo, tmp_path / "huge", "parts")
    texts = [(r["session_key"], r["message_idx"], r["idx"], r["text"]) for r in parts if r["type"] == "text"]
    assert texts == sorted(
        (key, i, j, p.text)
        for key, found in model.items()
        for i, m in enumerate(found)
        for j, p in enumerate(m.parts)
        if isinstance(p, TextPart)
    )
    assert any(len(t) >= 40 for *_, t in texts) and any(len(t) < 40 for *_, t in texts)


def test_parquet_refuses_a_folder_of_other_files(demo, tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "mine.txt").write_text("keep me")
    code, _, err = run("--demo", "export", "--all", "-f", "parquet", "-o", str(tmp_path), "--no-sync")
    assert code == 2 and "not empty and not an agentlog Parquet export" in err
    assert (tmp_path / "mine.txt").read_text() == "keep me"


# --- the static site -----------------------------------------------------------------


def test_a_site_is_never_written_over_a_folder_of_the_users_files(tmp_path):
    """A folder holding files but no site manifest is refused (exit 2), its files
    kept, as the Parquet export does; an empty or new folder, and an earlier site,
    are written."""
    (tmp_path / "index.html").write_text("precious")
    code, _, err = run("--demo", "export", "--all", "-f", "html", "-o", str(tmp_path), "--no-sync")
    assert code == 2 and "not empty and not an agentlog HTML site" in err
    assert (tmp_path / "index.html").read_text() == "precious" and len(list(tmp_path.iterdir())) == 1
    site = tmp_path / "site"
    for _ in range(2):  # new, then an earlier site
        assert run("--demo", "export", "--all", "-f", "html", "-o", str(site), "--no-sync")[0] == 0
    assert "<html" in (site / "index.html").read_text()


def test_site_rewrites_only_changed_sessions(tmp_path):
    home = secret_home(tmp_path / "home")
    index = tmp_path / "index.sqlite"
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(index)}
    site = tmp_path / "site"
    assert run("export", "--all", "-f", "html", "-o", str(site), env=env)[0] == 0
    page = site / "sessions" / "claude_code" / f"{SECRET_ID}.html"
    first = page.stat().st_mtime_ns
    code, _, err = run("export", "--all", "-f", "html", "-o", str(site), env=env)
    assert code == 0 and "(0 pages written, 1 unchanged)" in err
    assert page.stat().st_mtime_ns == first
    index_html = (site / "index.html").read_text()
    assert f'href="sessions/claude_code/{SECRET_ID}.html"' in index_html
    log = next((home / ".claude" / "projects").rglob("*.jsonl"))
    extra = json.loads(log.read_text().splitlines()[0]) | {
        "uuid": "u3",
        "timestamp": "2026-11-22T11:00:00.000Z",
    }
    extra["message"] = {"role": "user", "content": "one more thing"}
    log.write_text(log.read_text() + json.dumps(extra) + "\n")
    code, _, err = run("export", "--all", "-f", "html", "-o", str(site), env=env)
    assert code == 0 and "(1 pages written, 0 unchanged)" in err
    assert "one more thing" in page.read_text()


def test_a_site_re_export_removes_the_pages_it_wrote_of_sessions_no_longer_exported(tmp_path):
    """Tester14 finding 11: a session pruned (its log gone) or filtered out had its
    page kept for ever (the manifest dropped it, so no run cleaned it).  The pages
    the earlier manifest names and this export does not write are removed, an
    agent's folder left empty too; the user's own files in the site stay, and so
    does a symlink where a page was (not a file the export put there)."""
    import shutil

    fixtures = Path(__file__).parent / "fixtures" / "claude_code"
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("v1.0.98-session.jsonl", "representative-messages.jsonl", "edge-cases.jsonl"):
        shutil.copy(fixtures / name, logs / name)
    env = {"HOME": str(tmp_path / "home"), "AGENTLOG_INDEX": str(tmp_path / "index.sqlite")}
    site = tmp_path / "site"
    code, _, err = run("--root", str(logs), "export", "--all", "-f", "html", "-o", str(site), env=env)
    assert code == 0 and "3 sessions exported" in err and "(3 pages written, 0 unchanged)" in err, err
    pages = site / "sessions" / "claude_code"
    first = {p.name for p in pages.iterdir()}
    assert first == {"1af7fc5e-8455-4414-9ccd-011d40f70b2a.html", "test_session.html", "edge_cases.html"}
    (pages / "mine.html").write_text("mine")
    (site / "notes.txt").write_text("mine too")
    elsewhere = tmp_path / "kept.html"
    elsewhere.write_text("a page kept elsewhere")
    (pages / "edge_cases.html").unlink()
    (pages / "edge_cases.html").symlink_to(elsewhere)
    (logs / "representative-messages.jsonl").unlink()
    (logs / "edge-cases.jsonl").unlink()
    assert run("prune", env=env)[0] == 0
    code, _, err = run("export", "--all", "-f", "html", "-o", str(site), env=env)
    assert (code, err) == (0, f"1 session exported to {site} (0 pages written, 1 unchanged, 1 removed)\n")
    assert sorted(p.name for p in pages.iterdir()) == [
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.html",
        "edge_cases.html",
        "mine.html",
    ]
    assert (pages / "edge_cases.html").is_symlink() and elsewhere.read_text() == "a page kept elsewhere"
    assert (site / "notes.txt").read_text() == "mine too"
    assert json.loads((site / ".agentlog-site.json").read_text())["pages"].keys() == {
        "claude_code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    }
    (pages / "mine.html").unlink()
    (pages / "edge_cases.html").unlink()
    code, _, err = run("export", "--all", "--agent", "codex", "-f", "html", "-o", str(site), env=env)
    assert (code, err) == (
        0,
        f"no sessions match\n0 sessions exported to {site} (0 pages written, 0 unchanged, 1 removed)\n",
    )
    assert sorted(p.name for p in site.iterdir()) == [".agentlog-site.json", "index.html", "notes.txt"]


# --- secrets ---------------------------------------------------------------------------


def test_a_session_with_an_aws_key_and_a_github_token_exports_redacted(secret):
    conn, _, _ = secret
    key = f"claude_code:{SECRET_ID}"
    for fmt in ("json", "jsonl", "md", "html", "slim"):
        text = export_bytes(conn, fmt, [key]).decode()
        assert AWS_KEY not in text and GITHUB_TOKEN not in text, fmt
        assert "[REDACTED:aws_access_key]" in text and "[REDACTED:github_token]" in text, fmt
    md = export_bytes(conn, "md", [key]).decode()
    assert (
        "deploy with key [REDACTED:aws_access_key] and push with token [REDACTED:github_token] please" in md
    )
    assert (
        "command: AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key] GH_TOKEN=[REDACTED:github_token] ./deploy.sh"
        in md
    )
    assert "using [REDACTED:github_token]\nok" in md
    raw = export_bytes(conn, "md", [key], ExportOptions(redact=False)).decode()
    assert AWS_KEY in raw and GITHUB_TOKEN in raw


def test_a_session_with_an_aws_key_and_a_github_token_searches_redacted(secret):
    conn, _, _ = secret
    page = search(conn, "deploy")
    assert page.hits
    for hit in page.hits:
        assert AWS_KEY not in hit.snippet and GITHUB_TOKEN not in hit.snippet
        assert AWS_KEY not in (hit.session_title or "") and GITHUB_TOKEN not in (hit.session_title or "")
    snippets = " ".join(h.snippet for h in page.hits)
    assert "[REDACTED:aws_access_key]" in snippets and "[REDACTED:github_token]" in snippets
    found = search(conn, AWS_KEY)
    assert found.total >= 1 and all(AWS_KEY not in h.snippet for h in found.hits)
    raw = search(conn, "deploy", redact_secrets=False)
    assert any(AWS_KEY in h.snippet for h in raw.hits)


def test_cli_show_prints_no_secret_unless_asked(secret):
    _, index, home = secret
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(index)}
    for args in ((), ("--json",), ("--full",)):
        code, out, _ = run("show", SECRET_ID[:8], "--no-sync", *args, env=env)
        assert code == 0 and "REDACTED:github_token" in out and AWS_KEY not in out and GITHUB_TOKEN not in out
    code, out, _ = run("show", SECRET_ID[:8], "--no-sync", "--json", "--no-redact", env=env)
    assert code == 0 and AWS_KEY in out and GITHUB_TOKEN in out


def test_cli_search_prints_no_secret(secret):
    _, index, home = secret
    code, out, _ = run("search", "deploy", "--no-sync", env={"HOME": str(home), "AGENTLOG_INDEX": str(index)})
    assert code == 0 and "REDACTED:aws_access_key" in out
    assert AWS_KEY not in out and GITHUB_TOKEN not in out


def test_secrets_lists_kinds_and_counts_never_the_secret(secret):
    conn, index, home = secret
    (found,) = sessions_with_secrets(conn, SessionFilter())
    assert found.key == f"claude_code:{SECRET_ID}"
    # prompt, reply, title: 1 each of both; command: both; output: the token
    assert found.kinds == {"aws_access_key": 4, "github_token": 5}
    assert found.total == 9
    code, out, _ = run(
        "secrets", "--json", "--no-sync", env={"HOME": str(home), "AGENTLOG_INDEX": str(index)}
    )
    assert code == 0 and AWS_KEY not in out and GITHUB_TOKEN not in out
    (row,) = json.loads(out)
    assert row["kinds"] == {"aws_access_key": 4, "github_token": 5} and row["total"] == 9
    code, out, _ = run("secrets", "--no-sync", env={"HOME": str(home), "AGENTLOG_INDEX": str(index)})
    assert code == 0 and "aws_access_key 4, github_token 5" in out and AWS_KEY not in out


def test_cli_export_usage_errors(demo):
    assert "not both" in run("--demo", "export", CODEX, "--all")[2]
    assert "name the sessions" in run("--demo", "export")[2]
    assert "--max-tokens is for --format slim" in run("--demo", "export", CODEX, "--max-tokens", "100")[2]
    assert "go with --all" in run("--demo", "export", CODEX, "--agent", "codex")[2]
    code, _, err = run("--demo", "export", "--all", "-f", "parquet", "--no-sync")
    assert code == 2 and "-o PATH" in err


# --- every fixture home --------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_homes(tmp_path_factory):
    from homes import LAYOUTS

    base = tmp_path_factory.mktemp("all-homes")
    home = base / "home"
    for layout in LAYOUTS.values():
        layout(home)
    path = build_index(base / "index.sqlite", home)
    conn = db.connect(path, readonly=True)
    yield conn, base
    conn.close()


def test_every_format_exports_every_fixture_session(fixture_homes):
    conn, base = fixture_homes
    options = ExportOptions(subagents=True)
    transcripts = select(conn, [], SessionFilter(), options)
    sessions = sum(1 for t in transcripts for _ in t.tree())
    assert sessions == len(queries.list_sessions(conn, SessionFilter(include_children=True)))
    assert len({t.session.agent for t in transcripts}) >= 25
    data = json.loads(export_bytes(conn, "json", [], options, SessionFilter()))
    assert len(data) == sessions
    for d in data:
        jsonschema.validate(d, json_schema())
    lines = export_bytes(conn, "jsonl", [], options, SessionFilter()).decode().splitlines()
    assert sum(json.loads(line)["type"] == "session" for line in lines) == sessions
    keys = [m.session.key for t in transcripts for m in t.tree()]
    md = export_bytes(conn, "md", [], options, SessionFilter()).decode()
    assert [line.split("`")[1] for line in md.splitlines() if line.startswith("- **session**: `")] == keys
    html = export_bytes(conn, "html", [], options, SessionFilter()).decode()
    assert html.count('<section class="session-head"') == sessions
    slim = export_bytes(conn, "slim", [], options, SessionFilter()).decode()
    assert all(f", {t.session.key})\n" in slim for t in transcripts)
    assert sum(line.startswith("## subagent: ") for line in slim.splitlines()) == sessions - len(transcripts)
    report = export_sessions(conn, "html", transcripts, options, base / "site", io.BytesIO(), site=True)
    assert report.pages_written == len(transcripts) and report.pages_unchanged == 0
    assert len(list((base / "site" / "sessions").rglob("*.html"))) == len(transcripts)


def test_parquet_without_pyarrow_says_what_to_install(demo, tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)
    code, _, err = run("--demo", "export", "--all", "-f", "parquet", "-o", str(tmp_path / "pq"), "--no-sync")
    assert code == 2
    assert err.strip().endswith("--format parquet needs pyarrow: pip install 'agentlog[parquet]'")
    assert not (tmp_path / "pq").exists()


@pytest.mark.parametrize(("fmt", "expected"), [("json", "[]\n"), ("jsonl", ""), ("md", ""), ("slim", "")])
def test_export_of_no_session(demo, fmt, expected):
    code, out, err = run(
        "--demo", "export", "--all", "--agent", "codex", "--since", "2099-01-01", "-f", fmt, "--no-sync"
    )
    assert (code, out, err.strip()) == (0, expected, "no sessions match")


def test_html_of_no_session_is_an_empty_page(demo, tmp_path):
    code, _, err = run(
        "--demo", "export", "--all", "--since", "2099-01-01", "-f", "html", "-o", str(tmp_path / "s")
    )
    assert code == 0 and "no sessions match" in err
    assert '<table class="sessions">' in (tmp_path / "s" / "index.html").read_text()
    assert not (tmp_path / "s" / "sessions").exists()


def test_a_checklist_call_is_summarised_by_its_counts_not_its_json():
    from agentlog.present import tool_summary

    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]
    assert tool_summary({"todos": todos}) == "2 items: 1 completed, 1 in progress"
    assert tool_summary({"plan": [{"step": "x", "status": "pending"}]}) == "1 item: 1 pending"
    assert tool_summary({"todos": [{"content": "c"}]}) == "1 item: 1 ?"
    assert tool_summary({"todos": []}) == '{"todos": []}'
    assert tool_summary({"command": "ls", "todos": "not a list"}) == "ls"


def test_listings_the_board_and_tail_print_no_secret(secret):
    """Titles and live evidence are log text: redacted in every listing, as in show and search."""
    conn, index, home = secret
    env = {"HOME": str(home), "AGENTLOG_INDEX": str(index), "COLUMNS": "300"}
    for args in (
        ("sessions", "--no-sync"),
        ("sessions", "--json", "--no-sync"),
        ("status", "--since", "2000-01-01", "--no-sync"),
        ("status", "--json", "--since", "2000-01-01", "--no-sync"),
        (),  # the overview
    ):
        code, out, err = run(*args, env=env)
        assert code == 0, err
        assert AWS_KEY not in out and GITHUB_TOKEN not in out, args
        assert "[REDACTED:aws_access_key]" in out, args
    tail = SessionTail(conn, SECRET_ID[:8])
    events = msgspec.json.encode(tail.poll(conn)).decode()
    assert "[REDACTED:github_token]" in events and AWS_KEY not in events and GITHUB_TOKEN not in events
    raw = msgspec.json.encode(SessionTail(conn, SECRET_ID[:8], redact_secrets=False).poll(conn)).decode()
    assert AWS_KEY in raw and GITHUB_TOKEN in raw
    board = create_app(index).test_client().get("/board?since=2000-01-01").get_data(as_text=True)
    assert "[REDACTED:aws_access_key]" in board and AWS_KEY not in board and GITHUB_TOKEN not in board
    shown = (
        create_app(index, redact=False).test_client().get("/board?since=2000-01-01").get_data(as_text=True)
    )
    assert AWS_KEY in shown


def test_the_python_api_lists_titles_redacted_unless_asked(secret):
    _, index, _ = secret
    with agentlog.open(index, sync=False) as archive:
        (listed,) = archive.sessions()
        assert listed.title and "[REDACTED:aws_access_key]" in listed.title and AWS_KEY not in listed.title
        assert AWS_KEY in (archive.sessions(redact_secrets=False)[0].title or "")
        (row,) = archive.status(since="2000-01-01")
        assert row.title == listed.title
        assert AWS_KEY in (archive.status(since="2000-01-01", redact_secrets=False)[0].title or "")


def test_an_output_path_that_cannot_be_written_is_one_line_not_an_internal_error(tmp_path):
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("x")
    cases = [
        (
            ["--format", "md", "-o", str(tmp_path / "a-folder")],
            "a-folder: cannot write the export: Is a directory",
        ),
        (["--format", "json", "-o", str(tmp_path / "a-file" / "x.json")], "a-file: cannot write the export"),
        (
            ["--format", "md", "-o", "/dev/full"],
            "/dev/full: cannot write the export: No space left on device",
        ),
    ]
    for args, message in cases:
        code, _, err = run("--demo", "export", "de70c1a0", *args)
        assert (code, err.count("\n")) == (1, 1) and message in err, err
    code, _, err = run("--demo", "export", "--all", "--format", "html", "-o", str(tmp_path / "a-file"))
    assert code == 1 and "cannot write the export: Not a directory" in err


def test_text_exports_show_terminal_escapes_as_symbols(demo):
    """A Markdown or slim export read with ``cat`` runs no escape sequence from a log."""
    hostile = "title \x1b]0;PWNED\x07 then \x1b[2J clear"
    message = Message(id="m1", role="user", parts=[TextPart(text=hostile)])
    for fmt in ("md", "slim"):
        out = io.BytesIO()
        export_sessions(demo, fmt, [_transcript([message])], ExportOptions(), None, out)
        text = out.getvalue().decode()
        assert "\x1b" not in text and "\x07" not in text, fmt
        assert "title ␛]0;PWNED␇ then ␛[2J clear" in text, fmt


def test_markdown_export_keeps_log_html_inert_and_code_readable():
    """Raw HTML in a reply, reasoning or title is written as text (``&lt;``), never
    as HTML a permissive viewer would run; code keeps its ``<`` to the letter, a
    fence inside code gets a longer fence, and a reply's open fence is closed."""
    from markdown_it import MarkdownIt

    from agentlog.export.markdown import write_markdown

    reply = (
        "Done <script>alert(1)</script> with `<div>` kept.\n\n"
        "````md\n```\n<script>in code</script>\n```\n````\n\n"
        "<img src=x onerror=alert(2)>\n\nUnclosed:\n```js\nlet a = '<b>'"
    )
    messages = [
        Message(id="1", role="user", parts=[TextPart(text="show me\n```\n<b>in a fence</b>\n```")]),
        Message(id="2", role="assistant", parts=[ReasoningPart(text="think <img src=x onerror=alert(1)>"), TextPart(text=reply)]),
        Message(id="3", role="user", parts=[TextPart(text="thanks")]),
    ]
    header = Session(key="claude_code:s1", agent="claude_code", id="s1", title="fix <i>it</i>")
    out = io.StringIO()
    write_markdown([Transcript(header, lambda: iter(messages))], out)
    text = out.getvalue()
    assert text.startswith("# fix &lt;i>it&lt;/i>\n")
    assert text[text.index("### 1. You") :] == (
        "### 1. You\n\n````\nshow me\n```\n<b>in a fence</b>\n```\n````\n\n"
        "### 2. Assistant\n\n<details><summary>reasoning</summary>\n\n"
        "think &lt;img src=x onerror=alert(1)>\n</details>\n\n"
        "Done &lt;script>alert(1)&lt;/script> with `<div>` kept.\n\n"
        "````md\n```\n<script>in code</script>\n```\n````\n\n"
        "&lt;img src=x onerror=alert(2)>\n\nUnclosed:\n```js\nlet a = '<b>'\n```\n\n"
        "### 3. You\n\n```\nthanks\n```\n\n"
    )
    html = MarkdownIt("commonmark").render(text)
    assert "<script" not in html and "<img" not in html and "<i>" not in html
    assert "<code>&lt;div&gt;</code>" in html and "<h3>3. You</h3>" in html


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain *text*", "plain *text*"),
        ("<!-- hidden --> <a href='javascript:x'>a</a>", "&lt;!-- hidden --> &lt;a href='javascript:x'>a&lt;/a>"),
        ("<javascript:alert(1)>", "&lt;javascript:alert(1)>"),
        ("escaped \\<b> and \\`<i>`", "escaped \\<b> and \\`&lt;i>`"),
        # a code span across lines of one paragraph: the tag after it is outside code
        ("a `b\nc` <img src=x onerror=alert(1)> `d`", "a `b\nc` &lt;img src=x onerror=alert(1)> `d`"),
        # an unclosed backtick run is literal: the tag is outside code
        ("`` <img src=x> `", "`` &lt;img src=x> `"),
        ("~~~\n<b>\n", "~~~\n<b>\n~~~"),
        ("    <script>indented code</script>", "    <script>indented code</script>"),
        # escaping would turn a link definition into a paragraph: fenced whole instead
        ("[x]: <a` b>\n`<img src=x onerror=alert(1)>`", "```\n[x]: <a` b>\n`<img src=x onerror=alert(1)>`\n```"),
        # table cells split before code spans (GFM): fenced whole rather than guessed
        (
            "| h | g |\n|---|---|\n| `a | <img src=x onerror=alert(1)> ` |",
            "```\n| h | g |\n|---|---|\n| `a | <img src=x onerror=alert(1)> ` |\n```",
        ),
    ],
)
def test_inert_markdown(text, expected):
    from markdown_it import MarkdownIt

    from agentlog.export.inert import inert_markdown

    assert inert_markdown(text) == expected
    tokens = MarkdownIt("commonmark").enable("table").parse(expected)
    assert not [t for t in tokens for c in [t, *(t.children or [])] if c.type.startswith("html")]


def test_the_two_arrow_session_tables_share_one_definition_of_their_header_columns():
    """The API's sessions table and the Parquet ``sessions`` table: the same header
    columns with the same types (agentlog.session_columns), each adding its own."""
    pa = pytest.importorskip("pyarrow")
    from agentlog.export.parquet import _schemas
    from agentlog.tables import SESSION_COLUMNS

    stamp, text = pa.timestamp("us", tz="UTC"), pa.string()
    header = [
        ("id", text),
        ("title", text),
        ("cwd", text),
        ("git_branch", text),
        ("started_at", stamp),
        ("ended_at", stamp),
        ("models", pa.list_(text)),
        ("parent_key", text),
        ("kind", text),
        ("subagent_type", text),
        ("status", text),
        ("message_count", pa.int64()),
    ]
    tokens = ["input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens"]
    tokens += ["reasoning_tokens", "total_tokens"]
    api = [("key", text), ("agent", text), *header, *((t, pa.int64()) for t in [*tokens, "web_search_requests"])]
    api += [("cost_usd", pa.float64()), ("cost_source", text), ("archived", pa.bool_())]
    assert [(f.name, f.type) for f in SESSION_COLUMNS] == api
    export = [("key", text), *header, *((t, pa.int64()) for t in tokens), ("agent", text), ("month", text)]
    assert [(f.name, f.type) for f in _schemas()["sessions"]] == export
    demo = Session(key="codex:s1", agent="codex", id="s1", kind="subagent", subagent_type="explorer")
    from agentlog.export.parquet import session_row
    from agentlog.tables import sessions_table

    (row,) = sessions_table([demo]).to_pylist()
    assert row["subagent_type"] == session_row(demo)["subagent_type"] == "explorer"


def test_an_export_never_writes_in_an_agents_folder_or_over_a_log(tmp_path):
    """Read-only, always: ``-o`` at a log, inside an agent's folder (also through a
    symlink or ``..``), at an Aider history in a project or under a ``--root``
    is refused before a byte is written (exit 2, one line); elsewhere it writes."""
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-tmp-x"
    folder.mkdir(parents=True)
    log = folder / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    log.write_bytes(
        (Path(__file__).parent / "fixtures" / "claude_code" / "v1.0.98-session.jsonl").read_bytes()
    )
    (home / "src" / "app").mkdir(parents=True)
    extra = tmp_path / "extra"
    extra.mkdir()
    (home / "link").symlink_to(folder)
    before = {p: p.read_bytes() for p in (home / ".claude").rglob("*") if p.is_file()}
    env = {"HOME": str(home)}
    refused = [
        (["--format", "json", "-o", str(log)], "is inside an agent's folder"),
        (
            ["--format", "md", "-o", str(home / ".claude" / "projects" / ".." / "out.md")],
            "is inside an agent's folder",
        ),
        (["--format", "md", "-o", str(home / "link" / "x.md")], "is inside an agent's folder"),
        (["--format", "md", "-o", str(home / ".codex" / "x.md")], "is inside an agent's folder"),
        (
            ["--format", "md", "-o", str(home / "src" / "app" / ".aider.chat.history.md")],
            "is an agent's log file",
        ),
        (["--format", "md", "-o", str(extra / "x.md")], "is inside an agent's folder"),
    ]
    for args, message in refused:
        code, out, err = run("--root", str(extra), "export", "1af7fc5e", *args, env=env)
        assert (
            (code, out, err.count("\n")) == (2, "", 1) and message in err and "never writes there" in err
        ), args
    code, _, err = run(
        "export", "--all", "--format", "html", "-o", str(home / ".claude" / "projects"), env=env
    )
    assert code == 2 and "is inside an agent's folder" in err
    assert {p: p.read_bytes() for p in (home / ".claude").rglob("*") if p.is_file()} == before
    assert not (home / ".codex").exists() and not list(extra.iterdir())
    assert not (home / "src" / "app" / ".aider.chat.history.md").exists()
    code, _, err = run("export", "1af7fc5e", "--format", "md", "-o", str(home / "exports" / "x.md"), env=env)
    assert code == 0 and (home / "exports" / "x.md").read_text().startswith("#")


def test_an_index_is_never_put_in_an_agents_folder(tmp_path):
    """``--index`` (or ``AGENTLOG_INDEX``) inside an agent's folder or a ``--root``
    is refused before anything is created there."""
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    extra = tmp_path / "extra"
    extra.mkdir()
    for args in (
        ["--index", str(home / ".claude" / "projects" / "i.sqlite")],
        ["--index", str(home / ".codex" / "i.sqlite")],
        ["--root", str(extra), "--index", str(extra / "i.sqlite")],
    ):
        code, out, err = run(*args, "sessions", env={"HOME": str(home)})
        assert (code, out, err.count("\n")) == (2, "", 1) and "agentlog never writes there" in err, args
    code, _, err = run("sessions", env={"HOME": str(home), "AGENTLOG_INDEX": str(home / ".claude" / "i.sqlite")})
    assert code == 2 and "--index" in err
    assert sorted(p.name for p in home.rglob("*")) == [".claude", "projects"] and not list(extra.iterdir())
    code, _, err = run("--index", str(tmp_path / "mine.sqlite"), "sessions", env={"HOME": str(home)})
    assert code == 0 and (tmp_path / "mine.sqlite").exists(), err


PROMPTS = [
    "a <b>bold</b> & \"quoted\" 'single'\x1b]0;title\x07 \u202e\r\nnext\t`code`\n\n",
    "```\nfenced <i>\n```\n" + "x&y" * 7,
]


@pytest.mark.parametrize("piece", [1, 2, 3, 7])
def test_a_huge_prompt_is_written_in_slices_as_it_was_whole(monkeypatch, piece):
    """Prompts of ``HUGE`` characters and more are written a ``PIECE`` at a time
    (HTML: a stand-in the page's escape leaves alone, then the prompt escaped
    slice by slice; Markdown: the fenced text in slices): every page and
    document is the one written whole, escapes and control symbols included,
    whatever falls on a slice's edge."""
    from agentlog.export import html, markdown

    messages = [
        Message(id="1", role="user", parts=[TextPart(text=PROMPTS[0]), TextPart(text="small")]),
        Message(id="2", role="assistant", parts=[TextPart(text=PROMPTS[1])]),
        Message(id="3", role="user", parts=[TextPart(text=PROMPTS[1])]),
    ]
    header = Session(key="claude_code:s1", agent="claude_code", id="s1", title="fix <i>it</i>")

    def written(fmt: str) -> bytes:
        t = Transcript(header, lambda: iter(messages))
        return export_bytes_of(fmt, [t])

    whole = {fmt: written(fmt) for fmt in ("html", "md")}
    monkeypatch.setattr(html, "HUGE", 6)  # both prompts, not "small"
    monkeypatch.setattr(html, "PIECE", piece)
    monkeypatch.setattr(markdown, "PIECE", piece)
    slices: list[str] = []
    inert = html.content.inert
    monkeypatch.setattr(html.content, "inert", lambda text: slices.append(text) or inert(text))
    assert {fmt: written(fmt) for fmt in ("html", "md")} == whole
    assert slices == [p[i : i + piece] for p in (PROMPTS[0], PROMPTS[1]) for i in range(0, len(p), piece)]
    page = whole["html"].decode()
    assert "a &lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34; &#39;single&#39;␛]0;title␇ �\r\nnext" in page
    assert "agentlog-prompt-" not in page
    assert "```\na <b>bold</b> & \"quoted\" 'single'␛]0;title␇ �␍\nnext\t`code`\n```\n" in whole["md"].decode()
    text = PROMPTS[1]
    assert list(markdown._code_pieces(text + "\n\n")) == [
        "````\n",
        *(text[i : i + piece] for i in range(0, len(text), piece)),
        "\n````\n",
    ]


def export_bytes_of(fmt: str, transcripts: list[Transcript]) -> bytes:
    """``transcripts`` (made in memory) written as ``fmt`` the way the export writes them."""
    from agentlog.service.export import _write_stream

    out = io.BytesIO()
    _write_stream(fmt, transcripts, ExportOptions(redact=False), out)
    return out.getvalue()


def test_a_dash_for_output_is_standard_output(tmp_path, monkeypatch):
    """``-o -`` writes to standard output, as without ``-o`` (tester finding: it
    wrote a file named ``-`` in the working folder)."""
    from test_cli import run

    monkeypatch.chdir(tmp_path)
    plain = run("--demo", "export", "de70", "-f", "md")
    dashed = run("--demo", "export", "de70", "-f", "md", "-o", "-")
    assert dashed[0] == plain[0] == 0, (plain[2], dashed[2])
    assert dashed[1] == plain[1] and "# weather: fix" in plain[1]
    assert list(tmp_path.iterdir()) == []


def test_data_exports_hold_every_message_with_its_flags_transcripts_the_shown_ones(demo, tmp_path):
    """json, jsonl and parquet hold the hidden messages too (meta, compaction
    summaries, replayed copies…), each with its flags, as ``show --json``; md, html
    and slim hide them as ``show`` does, unless ``--hidden`` (tester finding 5 of
    session 10: Parquet's ``messages`` left out 169 messages, silently)."""
    ds = pytest.importorskip("pyarrow.dataset")
    (path,) = [row[2] for row in demo.execute("PRAGMA database_list") if row[1] == "main"]
    env = {"AGENTLOG_INDEX": path, "HOME": str(tmp_path / "nohome"), **AGENT_VARS}
    (every,) = demo.execute("SELECT COUNT(*) FROM messages").fetchone()
    (shown,) = demo.execute("SELECT COUNT(*) FROM messages WHERE hidden = 0 AND replayed = 0").fetchone()
    assert every > shown  # the demo has hidden messages

    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, ["--no-sync", "export", "--all", *args], env=env)
        assert result.exit_code == 0, result.output
        return result.stdout

    cli("--format", "parquet", "-o", str(tmp_path / "pq"))
    messages = ds.dataset(tmp_path / "pq" / "messages", format="parquet", partitioning="hive").to_table()
    assert messages.num_rows == every
    flagged = [flags for flags in messages.column("flags").to_pylist() if flags]
    assert len(flagged) >= every - shown
    records = [json.loads(line) for line in cli("--format", "jsonl", "--subagents").splitlines()]
    assert sum(1 for r in records if r.get("type") != "session") == every
    key = demo.execute("SELECT key FROM sessions WHERE key IN (SELECT session_key FROM messages WHERE hidden = 1) LIMIT 1").fetchone()[0]
    hidden_ids = {i for (i,) in demo.execute("SELECT id FROM messages WHERE session_key = ? AND hidden = 1", (key,))}
    document = json.loads(CliRunner().invoke(main, ["--no-sync", "export", key, "--format", "json"], env=env).stdout)
    exported = {m["id"] for s in (document if isinstance(document, list) else [document]) for m in s["messages"]}
    assert hidden_ids and hidden_ids <= exported
    markdown = CliRunner().invoke(main, ["--no-sync", "export", key, "--format", "md"], env=env).stdout
    with_hidden = CliRunner().invoke(main, ["--no-sync", "export", key, "--format", "md", "--hidden"], env=env).stdout
    assert len(with_hidden) > len(markdown)


def test_a_subagent_no_tool_call_started_is_named_in_the_header(tmp_path):
    """Claude's ``subagents/agent-*.jsonl`` whose spawning call is not in the parent's
    log: ``show`` lists it, and so do the Markdown and HTML exports (in the session's
    header, a link to its section with ``--subagents``); tester finding 6 of session 10."""
    import shutil

    from conftest import FIXTURES

    project = tmp_path / "home/.claude/projects/-tmp"
    shutil.copytree(FIXTURES / "claude_code/v2.1-subagents-layout", project)
    conn = db.connect(build_index(tmp_path / "index.sqlite", tmp_path / "home"), readonly=True)
    parent = "claude_code:0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
    child = "claude_code:agent-a0ad4f44468bdf20d"
    (kid,) = queries.children(conn, parent)
    assert (kid.key, kid.parent_tool_call_id) == (child, None)
    named = f"- **subagents**: `{child}` (general-purpose) Search the repo for TODO comments\n"
    assert named in export_bytes(conn, "md", [parent]).decode()
    assert named in export_bytes(conn, "md", [parent], ExportOptions(subagents=True)).decode()
    page = export_bytes(conn, "html", [parent]).decode()
    assert f'<li><span class="mono">{child}</span> (general-purpose) Search the repo for TODO comments</li>' in page
    linked = export_bytes(conn, "html", [parent], ExportOptions(subagents=True)).decode()
    assert f'<li><a href="#s1">{child}</a> (general-purpose)' in linked and 'id="s1"' in linked
    assert "subagents" not in export_bytes(conn, "md", [child]).decode().split("###")[0]
