"""Every room's README.md lists its modules, one table row each, and names no module that is gone."""

from __future__ import annotations

import re

import pytest

from tests.paths import ROOT

ROOMS = ["compiler/model", "compiler/_torch", "compiler/pipeline", "compiler/pipeline/recording", "compiler/io",
         "compiler/render", "compiler/runs", "compiler/sweeps", "explorer"]


def listed(readme: str) -> set[str]:
    """The module names in the first column of the README's table rows."""
    return {name for row in re.findall(r"^\| (.+?) \|", readme, flags=re.M) for name in re.findall(r"`([\w.]+\.py)`", row)}


@pytest.mark.parametrize("room", ROOMS)
def test_the_rooms_readme_lists_exactly_its_modules(room):
    folder = ROOT / room
    modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
    rows = listed((folder / "README.md").read_text()) - {"__init__.py"}
    assert not modules - rows, f"{room}/README.md has no row for {sorted(modules - rows)}: add one line each"
    assert not rows - modules, f"{room}/README.md lists {sorted(rows - modules)}, which {room}/ no longer has"


def test_a_missing_row_is_seen():
    assert listed("| module | what it does |\n| --- | --- |\n| `a.py` | one |\n| `b.py`, `c.py` | two |\n") == {
        "a.py", "b.py", "c.py"}
