"""A TraceSet cut into parts for the views: the summary needs no compilation built, and a
compilation is built (read from its rank's log) only when its rank and compile id are picked."""

from __future__ import annotations

import json
import sys

import pytest

import explorer
from widgets import TraceSetError, TraceSetParts, TraceSetWidget
from tests.paths import FIXTURES

NCCL = FIXTURES / "torch_trace_nccl"


def built(ts):
    return {(rank.rank, cid) for rank in ts for cid in rank._compilations}


def test_summary_lists_every_compile_and_builds_none():
    ts = explorer.load_trace(NCCL)
    parts = TraceSetParts(ts)
    summary = parts.summary()
    assert [r["rank"] for r in summary["ranks"]] == list(ts.ranks)
    assert [[c["compile_id"] for c in r["compiles"]] for r in summary["ranks"]] == [ts[r].compile_ids for r in ts.ranks]
    assert [d["kind"] for d in summary["divergence"]] == [d.kind for d in ts.divergence]
    json.dumps(summary, allow_nan=False)
    assert built(ts) == set()

    key = parts.key("1", "0/1")
    head = parts.get(key)
    assert built(ts) == {("1", "0/1")}
    assert [g["id"] for g in head["graphs"]] == [g.id for g in ts["1"]["0/1"].graphs]
    fx = parts.get(f"{key}/{head['graphs'][0]['id']}/fx")
    assert {n["name"] for n in fx["nodes"]} == {n.name for n in ts["1"]["0/1"].graphs[0].fx.nodes}
    with pytest.raises(KeyError, match="no compile '0/1' on rank '0'"):
        parts.key("0", "0/1")


def test_a_saved_traceset_gives_the_same_summary(tmp_path):
    ts = explorer.load_trace(NCCL)
    saved = json.loads(ts.save(tmp_path / "ranks.json").read_text())
    assert TraceSetParts(saved).summary() == TraceSetParts(explorer.load_trace(NCCL)).summary()
    with pytest.raises(TraceSetError, match="A TraceSet"):
        TraceSetParts([1, 2])


def test_widget_shows_the_picked_compilation_only(monkeypatch):
    ts = explorer.load_trace(NCCL)
    monkeypatch.setattr(explorer.progress, "in_notebook", lambda: True)  # the call in a notebook
    w = explorer.show(ts)
    assert isinstance(w, TraceSetWidget)
    assert w.pick == {"rank": "0", "compile_id": ts["0"].compile_ids[0]}
    assert built(ts) == {("0", ts["0"].compile_ids[0])}
    revision = w.revision
    w.show_compile(1, "1/0")
    assert w.pick == {"rank": "1", "compile_id": "1/0"} and w.revision == revision + 1
    assert w.summary["meta"]["function"] == ts["1"]["1/0"].function
    assert built(ts) == {("0", ts["0"].compile_ids[0]), ("1", "1/0")}
    with pytest.raises(KeyError, match="compiles: rank 0 0/0"):
        w.show_compile(0, "1/0")
    assert w.pick["rank"] == "1"


def test_a_compilation_that_cannot_be_read_is_reported_and_the_view_kept(monkeypatch):
    ts = explorer.load_trace(NCCL)
    w = TraceSetWidget(ts)
    shown = w.summary

    def broken(rank_trace, compile_id):
        raise ValueError("truncated payload")

    monkeypatch.setattr(type(ts["1"]), "__getitem__", broken)  # every compile not yet built fails to build
    w.pick = {"rank": "1", "compile_id": "0/1"}
    assert w.status["state"] == "error" and "rank 1 compile 0/1" in w.status["message"] and "truncated payload" in w.status["message"]
    assert w.summary == shown


def test_traceset_to_html_writes_the_traceset_view(tmp_path):
    path = explorer.load_trace(NCCL).to_html(tmp_path / "ranks.html")
    text = path.read_text()
    assert "data-inductor-traceset" in text and "2 ranks" in text


def test_notebooks_show_the_widgets_and_fall_back_to_html_without_them(monkeypatch):
    widget_mime = "application/vnd.jupyter.widget-view+json"
    ts = explorer.load_trace(NCCL)
    data = ts._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert widget_mime in data and data["text/plain"].startswith("TraceSetWidget(2 ranks")
    c = explorer.load(FIXTURES / "widget_sample.json")
    data = c._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert widget_mime in data and "<" in data["text/html"]
    made = []
    monkeypatch.setattr(c, "trace_view", lambda: made.append(1))
    monkeypatch.setitem(sys.modules, "widgets", None)  # no widget package: static HTML, no view built for it
    assert set(c._repr_mimebundle_()) == {"text/plain", "text/html"} and made == []
    assert set(ts._repr_mimebundle_()) == {"text/plain", "text/html"}
