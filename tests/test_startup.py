"""Start-up (#17 part 6): each command's module is imported only when that
command runs (:data:`agentlog.cli.COMMANDS`), a warm report loads neither the
other commands nor search, the store or the full-text tokenizer, and none of
that changes what is printed: the help, and a report's bytes, equal those of a
process that imported every command first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_index import make_home

SRC = Path(__file__).resolve().parents[1] / "src" / "agentlog" / "cli"

LAZY = "import sys\nfrom agentlog._console import main\nsys.argv[0] = 'agentlog'\n"
"""A process started as the ``agentlog`` script is."""
EAGER = (
    "import importlib, sys\nfrom agentlog.cli import COMMANDS\n"
    "for module in sorted(set(COMMANDS.values())):\n"
    "    importlib.import_module(f'agentlog.cli.{module}')\n" + LAZY
)
"""The same, with every command's module imported before the command line runs."""
MODULES = (
    "\nimport atexit, json\n"
    "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules"
    " if m.startswith(('agentlog', 'multiprocessing', 'ahocorasick_rs', 'genai_prices')))), file=sys.stderr))\n"
)
"""Prints, at exit, the modules of agentlog (and of the libraries a warm report
must not load) the process imported."""


def _run(prelude: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", prelude + "main()\n", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env(tmp_path: Path) -> dict[str, str]:
    home = make_home(tmp_path)
    env = {
        **os.environ,
        "HOME": str(home),
        "AGENTLOG_INDEX": str(tmp_path / "index.sqlite"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COLUMNS": "100",
        "TZ": "UTC",
    }
    env.pop("AGENTLOG_BACKGROUND_INDEX", None)
    return env


def test_every_command_is_registered_by_the_module_commands_names():
    probe = (
        "import importlib, json, pkgutil, agentlog.cli as cli\n"
        "for m in pkgutil.iter_modules(cli.__path__):\n"
        "    importlib.import_module(f'agentlog.cli.{m.name}')\n"
        "print(json.dumps({n: c.callback.__module__ for n, c in cli.main.commands.items()}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    from agentlog.cli import COMMANDS

    assert json.loads(out) == {name: f"agentlog.cli.{module}" for name, module in COMMANDS.items()}
    assert {p.stem for p in SRC.glob("*.py")} >= set(COMMANDS.values())


def test_help_lists_every_command_as_when_all_were_imported(tmp_path):
    env = _env(tmp_path)
    for args in (["--help"], ["usage", "--help"], ["index", "--help"], ["prices", "--help"], ["bogus"]):
        lazy, eager = _run(LAZY, env, *args), _run(EAGER, env, *args)
        assert (lazy.returncode, lazy.stdout, lazy.stderr) == (eager.returncode, eager.stdout, eager.stderr)
    listed = _run(LAZY, env, "--help").stdout.split("Commands:\n")[1]
    from agentlog.cli import COMMANDS

    assert [line.split()[0] for line in listed.splitlines()] == sorted(COMMANDS)


def test_a_warm_report_loads_only_its_own_path_and_prints_the_same_bytes(tmp_path):
    env = _env(tmp_path)
    assert _run(LAZY, env, "index").returncode == 0
    for args in (
        ["usage", "daily", "--json", "-z", "UTC"],
        ["usage", "daily", "-z", "UTC"],
        ["usage", "session", "-b"],
        ["index", "--json"],
        ["sessions", "--json"],
    ):
        lazy, eager = _run(LAZY + MODULES, env, *args), _run(EAGER, env, *args)
        assert lazy.returncode == eager.returncode == 0, lazy.stderr
        if args[0] == "index":  # the sync's duration, and how many paths its no-change check stat-ed, differ
            same = {"seconds": 0, "checked": 0}
            assert {**json.loads(lazy.stdout), **same} == {**json.loads(eager.stdout), **same}
        else:
            assert lazy.stdout == eager.stdout
        assert lazy.stderr.splitlines()[:-1] == eager.stderr.splitlines()
    warm = _run(LAZY + MODULES, env, "usage", "daily", "--json")
    loaded = set(json.loads(warm.stderr.splitlines()[-1]))
    never = {
        "agentlog.cli.commands",
        "agentlog.cli.export",
        "agentlog.cli.indexing",
        "agentlog.cli.live",
        "agentlog.cli.mcp",
        "agentlog.cli.serve",
        "agentlog.cli.summarize",
        "agentlog.index.fts",
        "agentlog.index.search",
        "agentlog.index.store",
        "agentlog.redact",
        "agentlog.service.search",
        "agentlog.service.sessions",
        "agentlog.web",
        "agentlog.worker",  # no log changed: no parse worker, no multiprocessing
        "multiprocessing",
        "ahocorasick_rs",  # daily rows show no folder: nothing to redact
        "genai_prices",  # every price is in the index's cache
    }
    assert "agentlog.cli.usage" in loaded and not never & loaded, sorted(never & loaded)
    session = _run(LAZY + MODULES, env, "usage", "session", "--json")
    loaded = set(json.loads(session.stderr.splitlines()[-1]))
    assert "agentlog.redact" in loaded  # session rows name their folder, which is log text
    index = _run(LAZY + MODULES, env, "index", "--json")
    loaded = set(json.loads(index.stderr.splitlines()[-1]))
    assert "agentlog.cli.upkeep" in loaded and not never & loaded, sorted(never & loaded)


def test_lines_printed_without_rich_are_what_rich_prints():
    """Every line :func:`printed_as_written` accepts is printed by the CLI console
    (rich) byte for byte as written; it refuses the lines with what rich may
    change (a tab, a backslash, an ``:emoji:`` code), which then go through rich."""
    import io

    from agentlog.cli.consoles import PipeConsole
    from agentlog.cli.render import printed_as_written
    from agentlog.present import clean

    pieces = [
        "/home/me/.cache/agentlog/index.sqlite",
        "/tmp/[bold]i\x1b[31m.sqlite",
        "[/]",
        "[link=x]y[/link]",
        "ünï 中文 😀 e\u0301",
        "tail  ",
        "  lead",
        "multi\nline",
        "a\rb\x00c\x7f\u202e",
        "x" * 500,
        "C:/Users/me",
        "12:30 ok: fine",
        "a\tb",
        "x:fire:y",
        ":smile:",
        "C:\\Users\\me",
        "a\\",
        "\\[x]",
    ]
    accepted = []
    for piece in pieces:
        line = f"index: {clean(piece, markup=False)}"
        out = io.StringIO()
        PipeConsole(file=out, width=80).print(f"index: {clean(piece)}", highlight=False, soft_wrap=True)
        if printed_as_written(line):
            assert out.getvalue() == line + "\n", piece
            accepted.append(piece)
    assert accepted == pieces[:12]


def test_index_into_a_closed_pipe_ends_quietly_with_success(tmp_path):
    env = _env(tmp_path)
    assert _run(LAZY, env, "index").returncode == 0
    read, write = os.pipe()
    os.close(read)
    try:
        ended = subprocess.run(
            [sys.executable, "-c", LAZY + "main()\n", "index"], env=env, stdout=write, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    assert (ended.returncode, ended.stderr) == (0, b"")


def test_no_module_a_warm_report_loads_compiles_a_pattern_at_import(tmp_path):
    """Every module the warm ``usage daily`` loads, imported in a fresh process
    with ``re`` watched: none of agentlog's compiles a regular expression then
    (:func:`agentlog.lazy.pattern` compiles on first use)."""
    env = _env(tmp_path)
    assert _run(LAZY, env, "index").returncode == 0
    warm = _run(LAZY + MODULES, env, "usage", "daily", "--json")
    loaded = [m for m in json.loads(warm.stderr.splitlines()[-1]) if m.startswith("agentlog")]
    probe = (
        "import importlib, json, re, sys, traceback\n"
        "compiled, original = [], re._compile\n"
        "def watched(pattern, flags):\n"
        "    if (type(pattern), pattern, flags) not in re._cache:\n"
        "        caller = traceback.extract_stack()[-3].filename  # the frame that called re.compile\n"
        "        if '/agentlog/' in caller:\n"
        "            compiled.append(caller)\n"
        "    return original(pattern, flags)\n"
        "re._compile = watched\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(set(compiled))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(loaded)], env=env, capture_output=True, text=True, check=True
    )
    assert len(loaded) > 40 and json.loads(out.stdout) == []


def test_the_guard_by_identity_names_what_the_guard_by_real_path_names(tmp_path):
    """:meth:`Home._holder` (one ``stat`` a folder) names, for every path, the
    folder that comparing every folder's real path names: inside a log folder,
    through a symlink to one, beside one, in a missing folder, at ``..``."""
    from agentlog.service.home import Home

    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".config" / "Code" / "User").mkdir(parents=True)
    (home / "link").symlink_to(home / ".claude" / "projects")
    (home / "elsewhere").mkdir()
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "alias").symlink_to(home / ".config")
    where = Home({"HOME": str(home)}, home, [extra])
    targets = [
        home / ".claude" / "i.sqlite",
        home / ".claude",
        home / "link" / "x.md",
        home / ".claude" / "projects" / ".." / "out.md",
        home / ".codex" / "new" / "i.sqlite",
        home / ".config" / "Code" / "User" / "i.sqlite",
        extra / "alias" / "Code" / "User" / "x",
        extra / "x.sqlite",
        home / "elsewhere" / "i.sqlite",
        home / "i.sqlite",
        tmp_path / "mine.sqlite",
    ]
    named = []
    for target in targets:
        real = os.path.realpath(target)
        named.append(where._holder(real, where._folders()))
        assert named[-1] == where._holder_by_path(real, where._folders()), target
    assert [n is not None for n in named] == [True] * 8 + [False] * 3
