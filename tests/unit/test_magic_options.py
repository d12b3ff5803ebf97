"""%%compile's option line, checked without compiling: every refusal here happens before the cell is
built, so a magic with no shell and an empty namespace is enough (tests/capture/test_magic.py compiles)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from explorer.magic import ExplorerMagics, toggle_flags


@pytest.fixture(scope="module")
def magics():
    return ExplorerMagics(shell=None)


def _usage_error(magics, line: str) -> str:
    """The message %%compile answers ``line`` with, for a cell that would fail on an undefined name if the
    options were accepted (so an accepted line shows up as some other error, never as a compile)."""
    with pytest.raises(UsageError) as raised:
        magics.compile_cell(line, "y = undefined_in_the_notebook + 1\n")
    return str(raised.value)


@pytest.mark.parametrize("line, unknown, suggestion", [
    ("--natve-matmul", "--natve-matmul", "--native-matmul"),
    ("--exprt", "--exprt", "--export"),
    ("--swep native_matmul", "--swep", "--sweep"),
    ("--dynamc", "--dynamc", "--dynamic"),
])
def test_an_unknown_option_is_named_once_with_its_nearest_spelling(magics, line, unknown, suggestion):
    message = _usage_error(magics, line)
    assert message.count(unknown) == 1, message
    assert f"{unknown} (did you mean '{suggestion}'" in message
    assert "\n" not in message


def test_suggestions_come_from_every_option_the_parser_accepts(magics):
    parser = ExplorerMagics.compile_cell.parser
    accepted = {flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")}
    assert {"--export", "--sweep", "--trace", "--config", *toggle_flags()} <= accepted
    for flag in accepted:
        misspelled = flag[:-1] + ("x" if flag[-1] != "x" else "y")
        if misspelled in accepted or any(other.startswith(misspelled) for other in accepted):
            continue  # argparse takes a prefix of one option as that option
        assert f"did you mean '{flag}'" in _usage_error(magics, misspelled), flag


@pytest.mark.parametrize("line, named", [
    ("--export --sweep native_matmul", ["--export", "--sweep"]),
    ("--sweep native_matmul --export", ["--export", "--sweep"]),
    ("--export --trace", ["--export", "--trace"]),
    ("--trace --sweep native_matmul", ["--sweep", "--trace"]),
    ("--sweep native_matmul --dynamic", ["--sweep", "--dynamic"]),
])
def test_modes_that_cannot_run_together_are_refused_before_either_runs(magics, line, named):
    message = _usage_error(magics, line)
    assert all(flag in message for flag in named), message
    assert "combine" in message
