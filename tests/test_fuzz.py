"""The contract fuzz over every adapter and every fixture (see :mod:`fuzz`).

Each case mutates one file of one agent's laid-out home (``tests/homes.py``) and
checks :mod:`fuzz.checks`: no exception escapes loading or syncing, no hang, the
other records survive, index ≡ in-memory, and for Claude Code fast scanner ≡ index.

About 2,050 cases run by default; ``AGENTLOG_FUZZ=long pytest
tests/test_fuzz.py`` runs every candidate (~54,000) with ``AGENTLOG_FUZZ_SEEDS`` seeds
(default 1).
A case that fails today is listed in ``tests/fuzz/known_failures.txt`` (its id and
what goes wrong, as appended to FINDINGS.md) and expected to fail, strictly: once a
fix makes it pass, delete its line.  Reproduce one case with
``pytest 'tests/test_fuzz.py::test_contract_holds[<case id>]'``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlog.adapters import all_adapters
from fuzz.cases import all_cases, home, home_names
from fuzz.run import run_case
from homes import LAYOUTS

KNOWN_FILE = Path(__file__).parent / "fuzz" / "known_failures.txt"


def known_failures() -> dict[str, str]:
    """``{case id: what fails}`` from :data:`KNOWN_FILE` (``id  # reason`` lines)."""
    out = {}
    for line in KNOWN_FILE.read_text().splitlines():
        case, _, reason = line.partition("  # ")
        if case.strip() and not case.startswith("#"):
            out[case.strip()] = reason
    return out


KNOWN_FAILURES = known_failures()
CASES = all_cases()


def _param(case):
    marks = []
    if case.id in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[case.id]))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_contract_holds(case, tmp_path):
    assert run_case(case, tmp_path) == []


def test_every_agent_and_fixture_is_fuzzed():
    assert {c.agent for c in CASES} == {a.slug for a in all_adapters()} == set(LAYOUTS)
    read = {fixture for name in home_names() for fixture in home(name).placed.values()}
    assert {c.fixture for c in CASES} == read


def test_known_failures_name_cases_of_this_run():
    # A stale entry (a case no longer generated) would hide nothing and rot: remove it.
    # Cases of the shared fixtures are generated only where ../shared/fixtures exists.
    homes = {c.home for c in CASES}
    expected = {k for k in KNOWN_FAILURES if k.split(":", 1)[0] in homes or "+shared" not in k}
    assert expected <= {c.id for c in CASES}
