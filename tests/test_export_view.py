"""The shared renderer in the viewer and the HTML export: redaction by default,
edits as diffs, todos as checklists, inline images, paging; the hostile
transcript's export opened in headless Chromium runs nothing and loads nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agentlog.export import ExportOptions
from agentlog.index import db
from agentlog.model import FilePart, ToolCallPart
from agentlog.service.export import export_sessions, select
from agentlog.web import content
from agentlog.web.app import create_app
from export_helpers import AWS_KEY, GITHUB_TOKEN, HOSTILE_ID, PNG, SECRET_ID, hostile_export_home, secret_home
from web_helpers import build_index

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def secret_index(tmp_path_factory):
    base = tmp_path_factory.mktemp("view-secret")
    return build_index(base / "index.sqlite", secret_home(base / "home"))


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    base = tmp_path_factory.mktemp("view-hostile")
    return build_index(base / "index.sqlite", hostile_export_home(base / "home"))


def test_viewer_hides_secrets_unless_asked(secret_index):
    key = f"claude_code:{SECRET_ID}"
    for path in (f"/session?key={key}", "/search?q=deploy", "/", f"/raw?key={key}&id=msg_a1"):
        page = create_app(secret_index).test_client().get(path).get_data(as_text=True)
        assert AWS_KEY not in page and GITHUB_TOKEN not in page, path
        assert "[REDACTED:aws_access_key]" in page, path
    shown = (
        create_app(secret_index, redact=False).test_client().get(f"/session?key={key}").get_data(as_text=True)
    )
    assert AWS_KEY in shown and GITHUB_TOKEN in shown and "secrets shown" in shown


def test_renderer_edit_diff_and_write_diff():
    edit = ToolCallPart(
        call_id="1",
        tool="edit",
        raw_name="Edit",
        input={"file_path": "src/a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 1\ny = 3\n"},
    )
    assert content.file_edits(edit) == [
        content.FileEdit(
            "src/a.py", "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
        )
    ]
    multi = ToolCallPart(
        call_id="2",
        tool="edit",
        raw_name="MultiEdit",
        input={"file_path": "/abs/b.py", "edits": [{"old_string": "a", "new_string": "b"}]},
    )
    assert content.file_edits(multi) == [
        content.FileEdit("/abs/b.py", "--- a/abs/b.py\n+++ b/abs/b.py\n@@ -1 +1 @@\n-a\n+b\n")
    ]
    write = ToolCallPart(
        call_id="3", tool="write", raw_name="Write", input={"file_path": "n.txt", "content": "hi\n"}
    )
    assert content.file_edits(write) == [
        content.FileEdit("n.txt", "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n")
    ]
    patch = ToolCallPart(
        call_id="4",
        tool="edit",
        raw_name="apply_patch",
        input="*** Begin Patch\n*** Delete File: old.py\n*** Update File: m.py\n@@\n-a\n+b\n*** End Patch",
    )
    assert content.file_edits(patch) == [
        content.FileEdit("old.py", "--- a/old.py\n+++ /dev/null\n"),
        content.FileEdit("m.py", "--- a/m.py\n+++ b/m.py\n@@\n-a\n+b\n"),
    ]
    assert (
        content.file_edits(ToolCallPart(call_id="5", tool="bash", raw_name="Bash", input={"command": "ls"}))
        == []
    )


def test_renderer_todos_images_and_inputs():
    todo = ToolCallPart(
        call_id="1",
        tool="todo",
        raw_name="TodoWrite",
        input={"todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]},
    )
    assert content.todos(todo) == [content.Todo("a", "completed"), content.Todo("b", "in_progress")]
    plan = ToolCallPart(
        call_id="2", tool="todo", raw_name="update_plan", input={"plan": [{"step": "c", "status": "pending"}]}
    )
    assert content.todos(plan) == [content.Todo("c", "pending")]
    blocks = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": PNG}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/x.png"}},
    ]
    assert content.images(blocks) == [f"data:image/png;base64,{PNG}"]
    assert (
        content.file_image(FilePart(media_type="image/png", ref=f"data:image/png;base64,{PNG}")) is not None
    )
    assert content.file_image(FilePart(media_type="image/png", ref="https://example.com/x.png")) is None
    assert content.input_text({"command": "a\nb", "timeout": 5}) == "command:\n  a\n  b\ntimeout: 5"


def test_markdown_code_is_highlighted_and_images_dropped():
    html = str(content.markdown("```python\nx = 1\n```\n\n![t](https://example.com/t.png)"))
    assert '<code class="language-python"><span class="n">x</span>' in html
    assert "<img" not in html


def test_viewer_pager_has_first_last_and_jump(tmp_path):
    from web_helpers import demo_index

    client = create_app(demo_index(tmp_path / "demo.sqlite")).test_client()
    import agentlog.web.pages as pages

    old = pages.MESSAGES_PER_PAGE
    pages.MESSAGES_PER_PAGE = 2
    try:
        page = client.get("/session?key=claude_code:de70c1a0&page=2").get_data(as_text=True)
    finally:
        pages.MESSAGES_PER_PAGE = old
    assert 'title="first page">« first</a>' in page and 'title="last page">last »</a>' in page
    assert '<input type="number" name="page" min="1" max="6" value="2"' in page
    assert '<input type="hidden" name="key" value="claude_code:de70c1a0">' in page
    assert 'class="expand-all" data-open="1">expand all</button>' in page


def _hostile_html(index: Path, tmp_path: Path) -> Path:
    conn = db.connect(index, readonly=True)
    try:
        options = ExportOptions()
        out = io.BytesIO()
        export_sessions(
            conn, "html", select(conn, [f"claude_code:{HOSTILE_ID}"], None, options), options, None, out
        )
    finally:
        conn.close()
    path = tmp_path / "hostile.html"
    path.write_bytes(out.getvalue())
    return path


def test_hostile_export_has_no_script_and_no_remote_reference(hostile_index, tmp_path):
    html = _hostile_html(hostile_index, tmp_path).read_text()
    assert "<script" not in html and "<iframe" not in html and "<svg" not in html and "<link" not in html
    assert "&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt;" in html
    assert html.count("<img ") == 1 and f'<img class="output-image" src="data:image/png;base64,{PNG}"' in html
    assert 'src="https://' not in html and 'href="javascript' not in html


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)")
def test_hostile_export_in_chromium_runs_nothing_and_loads_nothing(hostile_index, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright is not installed")
    path = _hostile_html(hostile_index, tmp_path)
    requests: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox"], headless=True
        )
        try:
            page = browser.new_context(viewport={"width": 390, "height": 800}).new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            for summary in page.locator("details summary").all():
                summary.click()
            page.wait_for_timeout(300)
            assert page.locator("script").count() == 0
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            assert (
                page.locator("img.output-image").evaluate("i => i.naturalWidth") == 1
            )  # the data: PNG shows
            assert "<script>alert('prompt')</script>" in page.inner_text("ol.transcript")
        finally:
            browser.close()
    assert requests == [path.as_uri()]
    assert dialogs == [] and errors == []


def test_plain_text_fast_path_equals_the_markdown_renderer():
    import random

    import nh3

    rng = random.Random(7)
    pieces = ["word", "two words", " ", "  ", "    ", "\t", "\n", "\n\n", "\n \n", "\n   ", "é", "1.5", "a-b"]
    pieces += [
        "x)",
        "\u00a0",
        "(",
        ",",
        "-",
        "--",
        "\n-",
        "+",
        "1)",
        "2.",
        "o'k",
        '"q"',
        "%",
        "/",
        "?",
        "@",
        "{",
    ]
    checked = 0
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        if content._MARKUP.search(text):
            continue
        checked += 1
        assert str(content.markdown(text)) == nh3.clean(content._MARKDOWN.render(text)), repr(text)
    assert checked > 500
