"""The terminal's live summary of a watch (``explorer.watch(live=...)``): what it draws, how often, that
it gives the terminal back, and that nothing is printed without it. A rich Console writing to a StringIO
(forced to act as a terminal) stands in for the screen; Dynamo's ``eager`` backend compiles."""

from __future__ import annotations

import io

import pytest
import torch
from rich.console import Console

import explorer
from compiler.model.watch import WatchReport
from compiler.pipeline import watch_live


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def scale(x):
    return x * 2 + 1


def broken(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


def _screen():
    return Console(file=io.StringIO(), force_terminal=True, width=160, color_system=None)


def test_the_live_summary_shows_steps_recompiles_with_reasons_breaks_and_frames():
    f, g = torch.compile(scale, backend="eager"), torch.compile(broken, backend="eager")
    screen = _screen()
    with explorer.watch(live=screen) as w:
        for n in w.steps_of([4, 4, 6]):
            f(torch.randn(n))
            g(torch.randn(3))
    out = screen.file.getvalue()
    last = out[out.rindex("watching:"):]  # the final drawing, at the watch's end
    assert "3 steps" in last and "1 recompiles" in last
    assert "size mismatch at index 0" in last and "(first compile)" in last
    assert "graph_break" in last and "broken" in last and "scale" in last
    assert w.listeners == ()  # the display was taken off with the watch
    assert not screen.is_alt_screen and screen._live_stack == []  # the terminal is given back


def test_the_live_summary_draws_each_report_it_is_handed_and_closes_at_the_end():
    screen = _screen()
    display = watch_live.LiveSummary(screen)
    for seconds in (0.5, 1.0):
        display(WatchReport(active=True, seconds=seconds))
    drawn = screen.file.getvalue()
    assert drawn.index("0 steps, 0.500 s") < drawn.index("0 steps, 1.000 s") and screen._live_stack
    display(WatchReport(active=False, seconds=1.5))  # the end: drawn, and the region closed
    assert "0 steps, 1.500 s" in screen.file.getvalue()[len(drawn):]
    assert screen._live_stack == []


def test_nothing_is_printed_without_the_live_summary(capsys):
    f = torch.compile(scale, backend="eager")
    for live in (False, None):  # None: stdout is not a terminal under pytest's capture
        with explorer.watch(live=live) as w:
            for n in w.steps_of([4, 6]):
                f(torch.randn(n))
        assert len(w.recompiles) == 1 and w.listeners == ()
        torch._dynamo.reset()
    assert capsys.readouterr().out == ""
    assert watch_live.display(False) is None and watch_live.display(None) is None
    assert isinstance(watch_live.display(True), watch_live.LiveSummary)


def test_a_watched_function_refuses_a_live_summary():
    with pytest.raises(ValueError, match="live summary"):
        explorer.watch(scale, live=True)
