"""Every agent's fixtures laid out in a home as the agent lays them out.

One layout per registered agent (``LAYOUTS[slug](home)``), used by the golden files,
the index ≡ in-memory tests and the contract fuzz, so each of them covers every
fixture of ``tests/fixtures`` through discovery (``agentlog.load``) rather than
through one adapter call.  A layout returns where each fixture went:
``{file in the home: fixture path relative to tests/fixtures}``; databases kept as SQL
text are built (``…/x.sql`` → the database file).  The paths follow each agent's
home-layout test (``test_<agent>.py::test_found_under_home…``).

``SHARED_LAYOUTS`` does the same for the ``../shared/fixtures`` files whose agent
finds them under its default folders (``shared_layout`` returns ``{}`` when that
folder is absent).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from agentlog.adapters import get_adapter
from agentlog.adapters.trae import MEMENTO_KEY
from conftest import FIXTURES, SHARED, build_sqlite
from vscdb import make_vscdb

Placed = dict[Path, str]
"""``{file in the home: its fixture, relative to tests/fixtures (or the shared folder)}``."""


def _copy(rel: str, dest: Path, placed: Placed, base: Path = FIXTURES) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(base / rel, dest)
    placed[dest] = rel
    return dest


def _tree(
    rel: str, dest: Path, placed: Placed, base: Path = FIXTURES, name: Callable[[str], str] = str
) -> None:
    """Copy the fixture folder ``rel`` to ``dest``, each file renamed by ``name``."""
    for path in sorted((base / rel).rglob("*")):
        if path.is_file():
            target = dest / path.relative_to(base / rel)
            _copy(str(path.relative_to(base)), target.with_name(name(target.name)), placed, base)


def _sql(rel: str, dest: Path, placed: Placed) -> Path:
    build_sqlite(FIXTURES / rel, dest)
    placed[dest] = rel
    return dest


def _default_root(slug: str, home: Path) -> Path:
    return get_adapter(slug).default_roots({}, home)[0]


def _whole_folder(slug: str, folder: str | None = None) -> Callable[[Path], Placed]:
    """The agent's fixture folder copied into its first default root."""

    def lay_out(home: Path) -> Placed:
        placed: Placed = {}
        _tree(folder or slug, _default_root(slug, home), placed)
        return placed

    return lay_out


def _aider(home: Path) -> Placed:
    placed: Placed = {}
    _copy(
        "aider/written-new-format.aider.chat.history.md",
        home / "projects/utils/.aider.chat.history.md",
        placed,
    )
    _copy("aider/aider-repo-chat-history-excerpt.md", home / "src/aider/.aider.chat.history.md", placed)
    return placed


def _antigravity(home: Path) -> Placed:
    placed: Placed = {}
    brain = home / ".gemini/antigravity/brain"
    for sid, name in (("0123abcd", "cli-small.jsonl"), ("4567cdef", "cli-schema-drift.jsonl")):
        _copy(f"antigravity/{name}", brain / sid / ".system_generated/logs/transcript.jsonl", placed)
    return placed


def _cline(home: Path) -> Placed:
    placed: Placed = {}
    _tree("cline/vscode-task-written", _default_root("cline", home), placed)
    sid = "1784094124598_rruoq"
    sessions = home / ".cline/data/sessions"
    _copy("cline/sdk-session.messages.json", sessions / sid / f"{sid}.messages.json", placed)
    _copy("cline/sdk-session.json", sessions / sid / f"{sid}.json", placed)
    other = "1784094124599_compact"
    _copy("cline/sdk-basic.compaction.json", sessions / other / f"{other}.messages.json", placed)
    return placed


def _copilot_cli(home: Path) -> Placed:
    placed = _whole_folder("copilot_cli", "copilot_cli/session-state")(home)
    base = home / ".copilot"
    _copy("copilot_cli/legacy-flat-small.jsonl", base / "session-state/legacy-flat-small.jsonl", placed)
    _tree("copilot_cli/otel", base / "otel", placed)
    return placed


def _copilot_vscode(home: Path) -> Placed:
    placed: Placed = {}
    sid = "7d3c1a52-9f0e-4b6e-a1d2-3c4b5a697887"
    chats = home / ".config/Code/User/workspaceStorage/a1b2c3/chatSessions"
    chats.mkdir(parents=True)
    (chats.parent / "workspace.json").write_text('{"folder": "file:///home/dev/webapp"}')
    _copy(f"copilot_vscode/{sid}.jsonl", chats / f"{sid}.jsonl", placed)
    _copy(f"copilot_vscode/{sid}.json", chats / f"{sid}.json", placed)
    empty = home / ".config/Code/User/globalStorage/emptyWindowChatSessions"
    _copy("copilot_vscode/session-04-twenty-days-ago.json", empty / "session-04-twenty-days-ago.json", placed)
    server = home / ".vscode-server/data/User/workspaceStorage/ffee/chatSessions"
    _copy("copilot_vscode/session-01-today.json", server / "session-01-today.json", placed)
    return placed


def _crush(home: Path) -> Placed:
    return {_sql("crush/crush.sql", home / "code/app/.crush/crush.db", {}): "crush/crush.sql"}


def _cursor(home: Path) -> Placed:
    rows = json.loads((FIXTURES / "cursor/global-state-rows.json").read_text())["rows"]
    db = make_vscdb(home / ".config/Cursor/User/globalStorage/state.vscdb", rows)
    return {db: "cursor/global-state-rows.json"}


def _cursor_cli(home: Path) -> Placed:
    placed: Placed = {}
    agent = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"  # the agentId in cli-store.db
    transcripts = home / ".cursor/projects/home-dev-api/agent-transcripts"
    _copy("cursor_cli/cli-agent-transcript.jsonl", transcripts / agent / f"{agent}.jsonl", placed)
    _copy("cursor_cli/cli-subagent-transcript.jsonl", transcripts / agent / "subagents/sub-1.jsonl", placed)
    _copy("cursor_cli/cli-transcript-turn-ended.jsonl", transcripts / "older.jsonl", placed)
    _copy("cursor_cli/cli-store.db", home / ".cursor/chats/0123abcd" / agent / "store.db", placed)
    return placed


def _goose(home: Path) -> Placed:
    placed: Placed = {}
    folder = _default_root("goose", home)
    _sql("goose/sessions.sql", folder / "sessions.db", placed)
    _tree("goose/legacy", folder, placed)
    return placed


def _hermes(home: Path) -> Placed:
    placed: Placed = {}
    root = home / ".hermes"
    _sql("hermes/state-db.sql", root / "state.db", placed)
    for name in ("s_root.jsonl", "s_diverted.jsonl", "request_dump_s_root_20260103_000000_000000.json"):
        _copy(f"hermes/{name}", root / "sessions" / name, placed)
    for name in ("large", "schema_drift", "small"):
        _copy(
            f"hermes/legacy-session-{name}.json",
            root / f"sessions/session_20260429_hermes_{name}.json",
            placed,
        )
    return placed


def _kimi_code(home: Path) -> Placed:
    placed: Placed = {}
    sessions = home / ".kimi-code/sessions/wd_project_ac3bb318f98e"
    small, tools = (
        "session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5",
        "session_1bcbe023-4f7e-4971-9dc9-43b8756045b0",
    )
    _copy("kimi_code/small.jsonl", sessions / small / "agents/main/wire.jsonl", placed)
    _copy("kimi_code/state.json", sessions / small / "state.json", placed)
    _copy("kimi_code/assistant_tools.jsonl", sessions / tools / "agents/main/wire.jsonl", placed)
    _copy("kimi_code/assistant_tools.state.json", sessions / tools / "state.json", placed)
    _copy("kimi_code/subagent_agent-0.jsonl", sessions / tools / "agents/agent-0/wire.jsonl", placed)
    return placed


def _mistral_vibe(home: Path) -> Placed:
    placed = _whole_folder("mistral_vibe")(home)
    pre2 = "session_20251118_093012_5f0c2a9e.json"
    _copy(f"mistral_vibe_pre2/{pre2}", _default_root("mistral_vibe", home) / pre2, placed)
    return placed


def _opencode(home: Path) -> Placed:
    placed: Placed = {}
    data = home / ".local/share/opencode"
    _sql("opencode/opencode-db.sql", data / "opencode.db", placed)
    _tree("opencode/storage-v2-json", data / "storage", placed)
    _tree("opencode/storage-legacy-json", data / "legacy", placed)  # a JSON tree with no database
    _copy("opencode/tokscale-message.json", data / "tokscale/message/ses_test001/msg_test001.json", placed)
    return placed


def _qwen(home: Path) -> Placed:
    placed: Placed = {}
    _tree("qwen", home / ".qwen/projects/-tmp-as-qwen-fixture-project/chats", placed)
    legacy = "session-2025-09-02T10-15-7c1e4a2b.json"
    _copy(f"qwen_legacy/{legacy}", home / ".qwen/tmp" / ("3f79" * 16) / "chats" / legacy, placed)
    return placed


def _trae(home: Path) -> Placed:
    user = home / ".config/Trae/User"
    memento = (FIXTURES / "trae/icube-ai-agent-storage.json").read_text()
    db = make_vscdb(
        user / "workspaceStorage/9f8e/state.vscdb",
        [{"table": "ItemTable", "key": MEMENTO_KEY, "value": memento}],
    )
    (user / "workspaceStorage/9f8e/workspace.json").write_text('{"folder": "file:///home/dev/flask-app"}')
    return {db: "trae/icube-ai-agent-storage.json"}


def _trae_cli(home: Path) -> Placed:
    placed: Placed = {}
    rollouts = home / ".trae/cli/sessions/2026/08/01"
    _copy(
        "trae_cli/traex-cli-rollout-subagent.jsonl",
        rollouts / "rollout-2026-08-01T18-07-03-019fbcca.jsonl",
        placed,
    )
    parent = "rollout-2026-08-01T18-06-58-019fbc4a-48b9-7472-a0da-6d92901383db.jsonl"
    _copy(f"trae_cli/{parent}", rollouts / parent, placed)
    own = "rollout-2026-09-02T10-00-00-01a0e1b2-7c00-7000-8000-00000000aa01.jsonl"
    _copy(f"trae_cli/{own}", home / ".trae/cli/sessions/2026/09/02" / own, placed)
    return placed


def _zcode(home: Path) -> Placed:
    return {_sql("zcode/db.sql", home / ".zcode/cli/db/db.sqlite", {}): "zcode/db.sql"}


LAYOUTS: dict[str, Callable[[Path], Placed]] = {
    "aider": _aider,
    "amp": _whole_folder("amp"),
    "antigravity": _antigravity,
    "claude_code": lambda home: _tree_at("claude_code", home / ".claude/projects/-tmp-project"),
    "cline": _cline,
    "codewhale": lambda home: {
        **_tree_at("codewhale/sessions", home / ".codewhale/sessions"),
        **_tree_at("codewhale/deepseek-sessions", home / ".deepseek/sessions"),
    },
    "codex": lambda home: _tree_at("codex", home / ".codex/sessions/2025/11/25"),
    "copilot_cli": _copilot_cli,
    "copilot_vscode": _copilot_vscode,
    "crush": _crush,
    "cursor": _cursor,
    "cursor_cli": _cursor_cli,
    "deepseek_harness": _whole_folder("deepseek_harness"),
    "factory_droid": _whole_folder("factory_droid"),
    "gemini_cli": lambda home: _tree_at("gemini_cli", home / ".gemini/tmp/0b7dfb12"),
    "goose": _goose,
    "grok": _whole_folder("grok"),
    "hermes": _hermes,
    "kilo_code": lambda home: _tree_at(
        "roo_code/tasks", home / ".config/Code/User/globalStorage/kilocode.kilo-code/tasks"
    ),
    "kimi": _whole_folder("kimi", "kimi/share"),
    "kimi_code": _kimi_code,
    "mistral_vibe": _mistral_vibe,
    "openclaw": _whole_folder("openclaw"),
    "opencode": _opencode,
    "pi": _whole_folder("pi"),
    "qwen": _qwen,
    "roo_code": _whole_folder("roo_code", "roo_code/tasks"),
    "trae": _trae,
    "trae_cli": _trae_cli,
    "zcode": _zcode,
}


def _tree_at(rel: str, dest: Path) -> Placed:
    placed: Placed = {}
    _tree(rel, dest, placed)
    return placed


SHARED_FOLDERS: dict[str, tuple[str, str]] = {
    "claude_code": ("claude-code", ".claude/projects/-shared-project"),
    "codex": ("codex", ".codex/sessions/2025/12/01"),
    "qwen": ("qwen", ".qwen/projects/-shared-project/chats"),
    "factory_droid": ("factory-droid", ".factory/sessions/-shared"),
    "pi": ("pi", ".pi/agent/sessions/--shared--"),
    "mistral_vibe": ("mistral-vibe", ".vibe/logs/session"),
}
"""Shared fixture folders an agent finds when copied to one of its folders:
``{slug: (folder under ../shared/fixtures, where in the home)}``."""


_SHARED_NAMES: dict[str, Callable[[str], str]] = {
    "codex": lambda name: name if name.startswith("rollout-") else f"rollout-{name}",
}
"""Names the agent writes, for shared files saved under another name."""


def shared_layout(slug: str, home: Path) -> Placed:
    """The shared fixtures of ``slug`` laid out under ``home`` (``{}`` when absent)."""
    folder, dest = SHARED_FOLDERS[slug]
    if not (SHARED / folder).is_dir():
        return {}
    placed: Placed = {}
    _tree(folder, home / dest, placed, SHARED, _SHARED_NAMES.get(slug, str))
    return {path: f"shared/{rel}" for path, rel in placed.items()}
