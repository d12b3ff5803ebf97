"""Session cache round trips, the toggle view's behaviour, and explorer.diff on CPU compilations.

On CPU, loop_ordering_after_fusion does not change what fuses (the C++ backend already fuses the
transposed case), so the toggle used here is emulate_precision_casts on a bf16 workload: it changes
the generated C++ kernel (explicit bf16 casts) and, where the casts feed the math, the numerics. The loop-ordering case,
which changes the fused groups on a GPU, is the `gpu` test at the end.
"""

from __future__ import annotations

import json

import pytest
import torch
from rich.console import Console

import explorer
from compiler import CompileError, from_json
from explorer import Session, diff
from explorer.session import cache_key
from tests import workloads

EMULATE = "emulate_precision_casts"


@pytest.fixture(scope="module")
def toggled():
    """A session with bf16_roundtrip compiled by default, toggled on (recompile) and back (cache)."""
    torch.manual_seed(0)
    session = Session()
    session.compile(workloads.bf16_roundtrip, torch.randn(64, 128))
    view = session.view(0)
    on = view.set_toggle(EMULATE, True)
    on_state = (view.last_from_cache, dict(view.widget.status), dict(view.widget.diff), view.widget.summary["meta"])
    back = view.set_toggle(EMULATE, False)
    return session, view, on, on_state, back


def test_switching_back_is_served_from_the_session(toggled):
    session, view, on, on_state, back = toggled
    from_cache, status, _, meta = on_state
    assert not from_cache and "recompiled" in status["message"] and meta["toggles"] == {EMULATE: True}
    assert back is session[0] and len(session) == 2          # nothing new was compiled
    assert view.last_from_cache
    assert view.widget.status["state"] == "idle" and "from the session cache" in view.widget.status["message"]
    assert view.widget.summary["meta"]["toggles"] == {}
    values = {t["name"]: t["value"] for t in view.widget.toggles}
    assert values[EMULATE] is False and values["loop_ordering_after_fusion"] is True
    assert [h["index"] for h in view.widget.history] == [0, 1] and view.widget.current == 0
    assert view.widget.diff["toggles"] == [{"name": EMULATE, "a": True, "b": None}]
    # and forward again: also cached now
    again = view.set_toggle(EMULATE, True)
    assert again is on and view.last_from_cache and len(session) == 2


def test_a_switch_served_from_the_session_copies_no_config(toggled, monkeypatch):
    """Inductor's key names are read once per process; a cached switch never copies the whole config."""
    from compiler._torch import inductor_config

    session, view, *_ = toggled
    copies = []
    monkeypatch.setattr(inductor_config, "_all_keys", lambda: copies.append(1) or {})
    for value in (True, False, True, False):
        view.set_toggle(EMULATE, value)
        assert view.last_from_cache
    assert copies == [] and len(session) == 2
    assert inductor_config.key_names.cache_info().currsize == 1


def test_cache_key_normalizes_defaults(toggled):
    session = toggled[0]
    x = session[0].compilation.live.example_inputs[0]
    assert session.compile(workloads.bf16_roundtrip, x, config={"deterministic": False}) is session[0].compilation
    assert session.compile(workloads.bf16_roundtrip, x, config={EMULATE: True}) is session[1].compilation
    assert len(session) == 2
    other_shape = cache_key(session[0].code, [{"shape": [2, 2]}], {}, False)
    assert session.lookup(other_shape) is None
    assert Session(cache=False).lookup(session[0].key) is None


def test_a_failing_recompile_keeps_the_last_good_view(toggled):
    session, view, *_ = toggled
    shown, count = view.widget.revision, len(session)
    view.set_toggle("deterministic", "yes")          # refused before compiling
    assert view.widget.status["state"] == "error" and "takes a bool" in view.widget.status["message"]
    assert view.widget.revision == shown and len(session) == count

    def broken(config):
        raise CompileError("codegen", "SomethingError: no kernel for you", None)

    entry = view.entry
    real, entry.recompile = entry.recompile, broken
    try:
        view.set_toggle("deterministic", True)
    finally:
        entry.recompile = real
    assert view.widget.status["state"] == "error"
    assert "failed during codegen" in view.widget.status["message"]
    assert view.widget.revision == shown and view.entry is entry and len(session) == count


def test_diff_pairs_the_bf16_kernel_and_shows_the_casts(toggled):
    session = toggled[0]
    d = diff(session[0].compilation, session[1].compilation)
    assert d.toggles == {EMULATE: (None, True)}
    assert d.counts() == {"added": 0, "removed": 0, "changed": 1, "same": 0}
    (k,) = d.kernels
    assert k.a == k.b and k.a_language == k.b_language == "cpp" and "mul" in k.nodes
    added = [line for line in k.source_diff.splitlines() if line.startswith("+") and "convert<" in line]
    assert added and not any(line.startswith("-") and "convert<" in line for line in k.source_diff.splitlines())
    assert all(c.a == c.b for g in d.graphs for c in g.counts) and not d.graphs[0].fused_only_b
    assert d.outputs.compared
    if workloads.rounding_feeds_the_math(session[1].compilation.kernels[0].source):
        assert d.outputs.bitwise_equal is False and 0 < d.outputs.max_abs < 1 and 0 < d.outputs.max_rel < 0.05
    else:  # torch 2.11/2.12 compute the rounding casts but never read them: the same outputs
        assert d.outputs.bitwise_equal is True and d.outputs.max_abs == 0
    assert set(d.timings) >= {"total", "codegen"}
    # every rendering
    assert repr(d).startswith("Diff(bf16_roundtrip[defaults] -> bf16_roundtrip[emulate_precision_casts=True]")
    console = Console(width=140, record=True, color_system=None)
    console.print(d)
    text = console.export_text()
    assert "changed" in text and "convert<" in text
    assert "<table>" in d._repr_html_() and "&lt;" in d._repr_html_()  # kernel source is escaped
    data = json.loads(json.dumps(d.to_json()))
    assert data["graphs"][0]["kernels"][0]["status"] == "changed"
    widget = d.widget()
    assert widget.diff["summary"] == d.summary and widget.summary["meta"]["toggles"] == {EMULATE: True}


def test_diff_of_a_compilation_with_itself_and_of_loaded_ones(toggled):
    a = toggled[0][0].compilation
    same = diff(a, a)
    assert same.counts()["same"] == len(a.kernels) and not same.toggles
    assert same.outputs.bitwise_equal is True and same.outputs.max_abs == 0
    loaded = diff(from_json(a.to_json()), a)
    assert not loaded.outputs.compared and "loaded from a file" in loaded.outputs.note
    with pytest.raises(TypeError, match="two Compilations"):
        diff(a, a.to_json())


def test_extern_mm_pairs_with_the_kernel_that_replaces_it(matmul_compilation):
    """What native matmul does on a GPU: extern mm + epilogue become one kernel with tl.dot."""
    a = matmul_compilation[0]
    trace = a.to_json()
    graph = trace["graphs"][0]
    nodes = sorted({n for k in graph["kernels"] for n in k["fx_nodes"]})
    graph["kernels"] = [{"id": "triton_tem_fused_add_gelu_mm_0", "name": "triton_tem_fused_add_gelu_mm_0",
                         "language": "triton", "source": "acc += tl.dot(a, b)\n", "fx_nodes": nodes}]
    trace["meta"]["toggles"] = {"native_matmul": True}
    b = from_json(trace)
    d = diff(a, b)
    by_status = {k.status: k for k in d.kernels}
    assert set(by_status) == {"changed", "removed"}
    mm = next(k for k in d.kernels if k.a_language == "extern")
    assert mm.status == "changed" and mm.b == "triton_tem_fused_add_gelu_mm_0"
    assert mm.nodes == nodes  # on CPU the mm and its bias add are one extern addmm (FX node "add")
    assert "+acc += tl.dot(a, b)" in mm.source_diff
    epilogue = by_status["removed"]
    assert epilogue.a_language == "cpp" and epilogue.now_in == ["triton_tem_fused_add_gelu_mm_0"]
    assert d.toggles == {"native_matmul": (None, True)}


def test_explorer_exports():
    assert explorer.diff is diff and explorer.Session is Session
    assert callable(explorer.load_ipython_extension)


@pytest.mark.gpu
def test_loop_ordering_changes_the_fused_groups_on_gpu():
    session = Session()
    x, y = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    session.compile(workloads.transposed_add, x, y)
    off, cached = session.with_config(0, {"loop_ordering_after_fusion": False})
    assert not cached
    d = diff(session[0].compilation, off.compilation)
    assert d.toggles == {"loop_ordering_after_fusion": (None, False)}
    assert d.graphs[0].fused_only_a or d.graphs[0].fused_only_b
    assert d.counts()["added"] + d.counts()["removed"] + d.counts()["changed"] > 0
    assert d.outputs.compared and d.outputs.bitwise_equal


@pytest.mark.gpu
def test_native_matmul_pairs_the_extern_mm_with_its_tl_dot_kernel_on_gpu():
    session = Session()
    args = [torch.randn(64, 128, device="cuda"), torch.randn(128, 96, device="cuda"), torch.randn(96, device="cuda")]
    session.compile(workloads.matmul_epilogue, *args)
    native, _ = session.with_config(0, {"native_matmul": True})
    d = diff(session[0].compilation, native.compilation)
    mm = next(k for k in d.kernels if k.a_language == "extern")
    assert mm.status == "changed" and mm.b_language == "triton"
    assert any(line.startswith("+") and "tl.dot" in line for line in mm.source_diff.splitlines())
    # the epilogue kernel went into the same tl.dot kernel (H200, torch 2.11: one fused kernel)
    assert all(k.now_in == [mm.b] for k in d.kernels if k.status == "removed")
    assert d.outputs.compared and d.outputs.max_rel < 1e-3
