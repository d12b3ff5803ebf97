"""A compilation shown in a notebook (``c`` as a cell's value, ``explorer.show(c)``) offers "unfuse": the
widget it gets asks that compilation's ``what_if``; a loaded trace, with nothing to recompile, does not."""

from __future__ import annotations

import pytest

import explorer
from compiler.model import slots

pytest.importorskip("anywidget")


def test_a_compilations_widget_recompiles_through_its_what_if(reduction_compilation, monkeypatch):
    c, _ = reduction_compilation
    asked = []
    monkeypatch.setattr(type(c), "what_if", lambda self, **edit: asked.append(edit) or "answer",
                        raising=True)
    widget = slots.widget(c.trace_view)
    assert widget.what_if_ready
    assert widget._what_if("op0", "g0", False) == "answer"
    assert asked == [{"unfuse": "op0", "graph": "g0", "measure": False}]


def test_a_saved_trace_offers_no_unfuse(reduction_compilation, tmp_path):
    c, _ = reduction_compilation
    loaded = explorer.load(c.save(tmp_path / "c.json"))
    assert not slots.widget(loaded.trace_view).what_if_ready
