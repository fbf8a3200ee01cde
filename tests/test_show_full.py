"""``show --full`` prints log text a piece at a time (``present.clean_pieces``,
``render.expand_tabs``): byte for byte what printing it whole through rich
printed, control characters shown as symbols and markup left as written
whatever falls on a piece's edge."""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console
from rich.text import Text

from agentlog import present
from agentlog.cli import render
from agentlog.present import clean
from test_cli import run

TEXTS = [
    "a\tb\tc\n\tx\tyy\t\n12345678\tz",
    "漢字\tx\t😀\ty\n\t漢\t",
    "word " * 40 + "\tx\ty",
    "[bold]not bold[/bold] \\[x] \\\\[b]c[/b] :smile: \x1b[2J\r\x07\u202e rtl \x9b end",
    "  \n\t lead and trail \t\n ",
    "line\n\nblank\n\n\nlast",
    "   \n\t ",
    "",
]


def whole(console: Console, lines: list[str], text: str, full: bool, style: str = "") -> None:
    """How ``--full`` printed a text before it was printed in pieces: whole, through
    rich (after the message's lines before it)."""
    render._flush(console, lines)
    console.print(Text(clean(text.strip(), markup=False), style=style), soft_wrap=True)


def printed(how, text: str, style: str = "", colour: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, highlight=False, color_system="truecolor" if colour else None)
    lines: list[str] = []
    how(console, lines, text, True, style)
    render._flush(console, lines)
    return out.getvalue()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, None])
@pytest.mark.parametrize("text", TEXTS)
def test_pieces_print_what_rich_printed_whole(monkeypatch, text, size):
    if size is not None:
        monkeypatch.setattr(present, "PIECE", size)
    expected = printed(whole, text)
    assert printed(render._print_text, text) == expected
    assert printed(render._print_text, text, "dim italic") == expected
    ansi = re.compile("\x1b\\[[0-9;]*m")
    coloured = printed(render._print_text, text, "dim italic", colour=True)
    assert ansi.sub("", coloured) == expected  # every ESC left is rich's style, none the log's


def test_the_symbols_and_markup_are_those_of_the_whole_text(monkeypatch):
    monkeypatch.setattr(present, "PIECE", 2)
    assert printed(render._print_text, TEXTS[3]) == (
        "[bold]not bold[/bold] \\[x] \\\\[b]c[/b] :smile: ␛[2J␍␇� rtl � end\n"
    )
    assert list(present.clean_pieces(" a\x1bb\n\tc\x07 ", 2)) == ["a␛", "b\n", "\tc", "␇"]
    assert list(render.expand_tabs(["ab", "\tc\n", "x\t"])) == ["ab", "      c\n", "x       "]


def test_show_full_of_every_demo_session_is_what_it_was(monkeypatch):
    keys = [row["key"] for row in json.loads(run("--demo", "sessions", "--subagents", "--json")[1])]
    assert len(keys) >= 5
    for key in keys:
        args = ("--demo", "--no-sync", "show", key, "--full", "--all", "--reasoning")
        monkeypatch.setattr(present, "PIECE", 3)
        new = run(*args)
        monkeypatch.setattr(render, "_print_text", whole)
        old = run(*args)
        monkeypatch.undo()
        assert new == old and new[0] == 0, new


@pytest.mark.parametrize("colour", [False, True])
def test_a_message_printed_at_once_is_what_its_lines_printed_one_by_one(monkeypatch, colour):
    """``show`` prints each message's lines in one ``print`` (:func:`render._flush`):
    for every demo session, in colour too, that is byte for byte what a print per
    line printed.  Off a terminal without colour the transcript is written plain
    (:func:`render.writes_plain`): what a print per line printed on a console too
    wide to wrap, each line whole whatever ``COLUMNS`` says."""
    keys = [row["key"] for row in json.loads(run("--demo", "sessions", "--subagents", "--json")[1])]
    env = {"FORCE_COLOR": "1", "COLUMNS": "90"} if colour else {"COLUMNS": "1000000"}
    wrapped = 0
    for key in keys:
        for flags in ((), ("--all", "--reasoning")):
            args = ("--demo", "--no-sync", "show", key, *flags)
            joined = run(*args, env=env)
            if not colour:
                assert run(*args, env={"COLUMNS": "40"}) == joined
                wrapped += max(map(len, joined[1].splitlines())) > 90

            def one_by_one(console: Console, lines: list[str]) -> None:
                for line in lines:
                    console.print(line)
                lines.clear()

            monkeypatch.setattr(render, "_flush", one_by_one)
            separate = run(*args, env=env)
            monkeypatch.undo()
            assert joined == separate and joined[0] == 0 and ("\x1b[" in joined[1]) == colour
    assert wrapped == (0 if colour else 2 * len(keys))  # plain: lines longer than a terminal, kept whole
