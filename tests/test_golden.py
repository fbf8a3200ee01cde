"""Golden files: the whole model output of every fixture, compared exactly.

Every agent's fixtures are laid out in a home (``tests/homes.py``) and loaded with
``agentlog.load.load_sessions``; the sessions whose first source is a fixture are
written, as the JSON export (``msgspec``), to ``tests/golden/<agent>/<fixture>.json``
(the fixture's path without its agent folder), with what depends on where the home
is made stable (:func:`stable`).  A field no test asserts cannot change unseen: any change of the model
output shows here as a diff.  After an intended change, regenerate every file with

    pytest tests/test_golden.py --update-golden

and review the diff.  The index gives the same sessions (``test_equivalence.py``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from agentlog.load import load_sessions
from homes import LAYOUTS

GOLDEN = Path(__file__).parent / "golden"


def golden_name(agent: str, fixture: str) -> str:
    parts = Path(fixture).parts
    return str(Path(*parts[1:]) if parts[0] == agent else Path(fixture)) + ".json"


def model_output(agent: str, home: Path) -> dict[str, str]:
    """``{golden file name: its text}`` of every fixture of ``agent`` laid out in ``home``."""
    placed = LAYOUTS[agent](home)
    sessions = load_sessions([agent], {"HOME": str(home)}, home)
    out: dict[str, list[object]] = {}
    for path, fixture in placed.items():
        mine = sorted((s for s in sessions if s.sources and s.sources[0] == str(path)), key=lambda s: s.key)
        if mine:
            out[golden_name(agent, fixture)] = msgspec.to_builtins(mine)
    return {
        name: stable(json.dumps(v, indent=1, ensure_ascii=False) + "\n", home, placed)
        for name, v in out.items()
    }


def stable(text: str, home: Path, placed: dict[Path, str]) -> str:
    """``text`` with the home's absolute path written ``$HOME``, and the ids derived
    from a file's absolute path (Aider: the first 8 hex digits of its SHA-1, see
    ``adapters/aider.py``) written ``<sha1 of path>``."""
    for path in placed:
        text = text.replace(hashlib.sha1(str(path).encode()).hexdigest()[:8], "<sha1 of path>")
    return text.replace(str(home), "$HOME")


@pytest.mark.parametrize("agent", sorted(LAYOUTS))
def test_model_output_matches_the_golden_files(agent, tmp_path, update_golden):
    home = tmp_path / "home"
    texts = model_output(agent, home)
    folder = GOLDEN / agent
    if update_golden:
        for old in folder.rglob("*.json") if folder.is_dir() else ():
            old.unlink()
        for name, text in texts.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        return
    stored = (
        {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*.json")} if folder.is_dir() else {}
    )
    assert sorted(stored) == sorted(texts), "golden files missing or stale: run pytest --update-golden"
    for name, text in texts.items():
        assert text == stored[name], f"{agent}/{name} differs from its golden file (pytest --update-golden)"
    assert texts, f"{agent}: no fixture gives a session"
