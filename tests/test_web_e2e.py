"""End-to-end tests of the web viewer in a real headless Chromium (Debian package
``chromium`` driven by Python ``playwright``; no browser download).

Skipped, with the reason, when /usr/bin/chromium or playwright is missing.  With
``AGENTLOG_SCREENSHOTS=<folder>`` the page screenshots are saved there (the
README's come from ``AGENTLOG_SCREENSHOTS=docs/screenshots``).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlog.web.app import create_app
from web_helpers import HOSTILE_ID, build_index, demo_index, hostile_home

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
playwright = pytest.importorskip("playwright.sync_api", reason="python package playwright is not installed")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} missing (apt-get install chromium)"),
]


def serve(index: Path) -> Iterator[str]:
    """The viewer over ``index`` on a free loopback port, in a thread."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, create_app(index), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory):
    yield from serve(demo_index(tmp_path_factory.mktemp("e2e") / "demo.sqlite"))


@pytest.fixture(scope="module")
def hostile_url(tmp_path_factory):
    base = tmp_path_factory.mktemp("e2e-hostile")
    yield from serve(build_index(base / "index.sqlite", hostile_home(base / "home")))


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1360, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def shoot(tmp_path):
    """Save a full-page screenshot as ``<name>.png`` (in AGENTLOG_SCREENSHOTS too, when set)."""
    target = os.environ.get("AGENTLOG_SCREENSHOTS")

    def take(page, name: str) -> None:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(target) / path.name)

    return take


def test_browse_demo(page, demo_url, shoot):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto(demo_url + "/")
    assert page.locator("table.sessions tbody tr").count() == 6
    shoot(page, "sessions")

    page.select_option("select[name=agent]", "claude_code")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**agent=claude_code**")
    assert page.locator("td.title a").count() == 5

    page.click("text=weather: fix daily_mean rounding")
    page.wait_for_url("**/session?key=claude_code:de70c1a0**")
    card = page.locator("details.tool").nth(1)
    body = card.locator(".tool-body")
    assert not body.is_visible()
    card.locator("summary").click()
    assert body.is_visible()
    page.locator("details.tool.error summary").click()
    shoot(page, "session")

    page.locator("p.subagent-link.inline a").first.click()
    page.wait_for_url("**key=claude_code:agent-b7e1d2c3**")
    assert "Review rounding change" in page.inner_text("main")
    shoot(page, "subagent")

    page.fill("header .quick input[name=q]", "daily_mean")
    page.press("header .quick input[name=q]", "Enter")
    page.wait_for_url("**/search?q=daily_mean**")
    assert page.locator("ol.hits mark").count() > 0
    shoot(page, "search")
    page.locator("a.hit-title").first.click()
    page.wait_for_url("**/session?key=**#m*")
    anchor = page.url.rsplit("#", 1)[1]
    assert page.locator(f"li#{anchor}").is_visible()
    marked = page.locator(f"li#{anchor} mark").all_text_contents()  # the searched words, marked by app.js
    assert marked and {m.lower() for m in marked} <= {"daily", "mean"}

    page.goto(demo_url + "/usage?tz=UTC")
    chart = page.locator("svg.chart").first
    assert chart.is_visible()
    assert chart.locator("rect").count() > 6
    assert chart.bounding_box()["height"] > 150
    shoot(page, "usage")
    assert errors == []


def test_hostile_content_executes_nothing(page, hostile_url, shoot):
    dialogs: list[str] = []
    errors: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    session = f"/session?key=claude_code:{HOSTILE_ID}"
    raw = f"/raw?key=claude_code:{HOSTILE_ID}&id=msg_evil_1"
    for path in ("/", session, raw, "/search?q=alert", "/?group=project"):
        page.goto(hostile_url + path)
        for summary in page.locator("details summary").all():
            summary.click()
        page.wait_for_timeout(200)
    page.goto(hostile_url + f"/session?key=claude_code:{HOSTILE_ID}")
    assert page.locator("img, iframe, object, embed").count() == 0
    assert page.locator("script").count() == 1
    assert "<script>alert('prompt')</script>" in page.inner_text("li#m0")
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    assert not [link for link in links if link.lower().startswith("javascript:")]
    assert dialogs == []
    assert errors == []


def test_a_line_appended_to_a_log_appears_on_the_open_page(page, tmp_path):
    """The live session view (Server-Sent Events from the follower): a message
    appended to the Claude log shows on the open transcript without a reload, and
    the board page shows the new status."""
    from werkzeug.serving import make_server

    from agentlog.service.follow import Follower
    from agentlog.service.home import Home
    from live_scripts import SCRIPTS

    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    script = SCRIPTS["claude_code"](home, cwd)
    script.steps[0].write()  # the prompt
    index = build_index(tmp_path / "index.sqlite", home)
    follower = Follower(index, Home({"HOME": str(home)}, home, []), synced=True, debounce=50)
    follower.start()
    server = make_server("127.0.0.1", 0, create_app(index, None, follower), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{url}/session?key={script.key}")
        page.wait_for_selector("html[data-live=listening]")
        assert page.locator("ol.transcript > li.msg").count() == 1
        assert page.inner_text("#live-status") == "working"
        page.wait_for_timeout(2500)  # the follower's watch is in place
        script.steps[1].write()  # the assistant's Bash call
        page.wait_for_selector("ol.transcript > li.msg:nth-child(2) .tool-name")
        assert page.inner_text("ol.transcript > li.msg:nth-child(2) .tool-name") == "bash"
        page.wait_for_selector("#live-status:text-is('running_tool')")  # (the CSP forbids evaluated scripts)
        script.steps[2].write()  # its result: the pending card gets its output in place
        page.wait_for_selector("ol.transcript > li.msg:nth-child(2) details.tool.pending", state="detached")
        assert page.locator("ol.transcript > li.msg").count() == 2

        page.goto(f"{url}/board")
        page.wait_for_selector("html[data-live=listening]")
        assert page.inner_text("#board .status-row .badge") == "working"
        script.steps[3].write()  # a Task call
        page.wait_for_selector("#board .status-row .badge:text-is('waiting_for_subagents')")
    finally:
        follower.stop()
        server.shutdown()
        server.server_close()
    assert errors == []
@pytest.fixture(scope="module")
def unspaced_url(tmp_path_factory):
    from search_home import write_home

    base = tmp_path_factory.mktemp("e2e-unspaced")
    yield from serve(build_index(base / "index.sqlite", write_home(base / "home")))


def test_a_transcript_opened_from_a_search_marks_cjk_and_emoji_inside_words(page, unspaced_url):
    """app.js marks a run of an unspaced script or an emoji wherever it occurs (the
    index finds them as substrings), other words only as whole words."""
    marks = {}
    for query in ("アップデート", "🚀", "pages"):
        page.goto(unspaced_url + "/search?q=" + query)
        page.locator("a.hit-title").first.click()
        page.wait_for_url("**/session?key=claude_code:gamma**#m*")
        anchor = page.url.rsplit("#", 1)[1]
        marks[query] = page.locator(f"li#{anchor} mark").all_text_contents()
    assert marks == {"アップデート": ["アップデート"], "🚀": ["🚀"], "pages": ["pages"]}


@pytest.fixture(scope="module")
def accented_url(tmp_path_factory):
    from search_home import write_prompts

    base = tmp_path_factory.mktemp("e2e-accented")
    prompts = [("m_cafe", "meet at the Café Zoë, then the cafe"), ("m_other", "nothing to see")]
    yield from serve(build_index(base / "index.sqlite", write_prompts(base / "home", prompts)))


def test_a_transcript_opened_from_a_search_marks_words_written_with_diacritics(page, accented_url):
    """The index ignores diacritics (``remove_diacritics``): ``zoe`` finds ``Zoë``,
    and app.js marks it in the opened message as the snippet does; a text where the
    word occurs as typed is marked there only."""
    marks = {}
    for query in ("zoe", "cafe"):
        page.goto(accented_url + "/search?q=" + query)
        snippet = page.locator("ol.hits mark").all_text_contents()
        page.locator("a.hit-title").first.click()
        page.wait_for_url("**/session?key=claude_code:delta**#m*")
        anchor = page.url.rsplit("#", 1)[1]
        marks[query] = (snippet, page.locator(f"li#{anchor} mark").all_text_contents())
    assert marks == {"zoe": (["Zoë"], ["Zoë"]), "cafe": (["cafe"], ["cafe"])}
