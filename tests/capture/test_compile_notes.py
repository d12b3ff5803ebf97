"""A capture is quiet and exact: what torch warns while compiling, and what a capture hook had to swallow
to let the compile go on, are kept on the compilation (``c.notes``) instead of printed; an error the
user's own code raises names the user's line.

One compile serves every test here: a graph break at ``.item()`` (Dynamo warns about it on stderr) with
one capture hook failing, then a recompile that raises in the user's code after the break.
"""

from __future__ import annotations

import inspect
import io
import logging
import sys
import warnings

import pytest
import torch
from rich.console import Console

import compiler
import explorer
from compiler import CompileError
from compiler.api import compact_view
from compiler._torch import kernel_lines


def scaled_by_its_sum(x: torch.Tensor) -> torch.Tensor:
    """A graph break at .item(), then a check in the user's code on the value it read."""
    total = x.sum().item()
    if total > 1e6:
        raise ValueError("the sum is too large to scale by")
    return x * total


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _failing_line_text(line):
    raise RuntimeError("a hook bug")


def _torch_handlers():
    """The handlers torch's Dynamo logger writes to (torch's own stderr handler among them)."""
    return logging.getLogger("torch._dynamo").handlers


def _logging_and_warnings_state():
    return [(h, list(h.filters)) for h in _torch_handlers()], list(warnings.filters), warnings.showwarning


@pytest.fixture(scope="module")
def noisy_capture():
    """The workload compiled with kernel_lines' hook failing; what torch's log handler printed during the
    compile, and the logging and warnings state before and after it."""
    x = torch.ones(8)
    heard = io.StringIO()
    state = _logging_and_warnings_state
    with pytest.MonkeyPatch.context() as patch:  # where torch would print the graph break's warning:
        patch.setattr(sys, "stderr", heard)  # torch 2.14's handler follows sys.stderr
        for handler in _torch_handlers():
            if type(handler) is logging.StreamHandler:  # older ones hold a stream (pytest adds handlers of its own)
                patch.setattr(handler, "stream", heard)
        patch.setattr(kernel_lines, "_line_text", _failing_line_text)
        before = state()
        c = explorer.compile(scaled_by_its_sum, x)
        after = state()
    return c, x, heard.getvalue(), before, after


def test_dynamos_warning_is_kept_on_the_compilation_not_printed(noisy_capture):
    c, x, heard, before, after = noisy_capture
    assert heard == ""  # before: Dynamo's 14-line "Graph break from `Tensor.item()`" warning
    [warning] = [n for n in c.notes if n.source == "torch._dynamo.variables.tensor"]  # (torch may warn of more)
    assert warning.kind == "warning"
    assert warning.message.startswith("Graph break from `Tensor.item()`, consider setting:")
    assert f"line {_line_of(scaled_by_its_sum, 'total = x.sum().item()')}, in scaled_by_its_sum" in warning.message
    assert after == before  # torch's handlers (their filters) and the user's warning filters as they were
    torch.testing.assert_close(c.outputs, x * 8)
    assert f"{len(c.notes)} notes" in repr(c)  # the warning and the hook's failure at least


def test_a_failing_hook_is_noted_and_the_compile_goes_on(noisy_capture):
    c, x, *_ = noisy_capture
    [failed] = [n for n in c.notes if n.kind == "hook failed"]  # once, though it failed for every node
    assert (failed.source, failed.message) == ("kernel_lines", "RuntimeError: a hook bug")
    assert str(failed) == "hook failed from kernel_lines: RuntimeError: a hook bug"
    assert len(c.graphs) == 2 and all(g.kernels for g in c.graphs)  # every stage else captured
    assert not any(line for k in c.kernels for line in k.line_nodes)  # what the failing hook records is missing
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(compact_view(c))
    shown = console.export_text()
    assert "hook failed from kernel_lines: RuntimeError: a hook bug (the compile went on without it)" in shown
    assert f"torch said {len(c.notes) - 1} thing" in shown and "c.notes" in shown
    assert compiler.from_json(c.to_json()).notes == c.notes  # saved with the trace


def test_a_value_error_from_the_users_code_names_the_users_line(noisy_capture):
    c, *_ = noisy_capture
    notes = list(c.notes)
    with pytest.raises(CompileError) as info:
        c.recompile(torch.full((8,), 1e6))  # the sum passes the check after the graph break
    first, where = str(info.value).splitlines()[:2]
    assert first == "compilation failed during run: ValueError: the sum is too large to scale by"
    line = _line_of(scaled_by_its_sum, "raise ValueError")
    assert where == f'  at {__file__}:{line} in scaled_by_its_sum: raise ValueError("the sum is too large to scale by")'
    assert c.notes == notes  # a failed recompile leaves the compilation as it was
