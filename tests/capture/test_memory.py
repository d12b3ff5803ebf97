"""g.memory on CPU: the wrapper's buffers over its steps, checked against the wrapper text, and the
memory toggles (buffer reuse, in-place updates, reordering for peak memory) moving the peak."""

from __future__ import annotations

import io
import json
import re

import pytest
import torch
from rich.console import Console

import explorer
from compiler import from_json
from tests import workloads
from tests.paths import FIXTURES

_REUSE_LINE = re.compile(r"^\s*(\w+) = (?:reinterpret_tensor\()?(\w+)\b.*# reuse$")


def _block(**config):
    torch.manual_seed(0)
    model, x = workloads.TransformerBlock().eval(), torch.randn(2, 16, 64)
    with torch.no_grad():
        return explorer.compile(model, x, config=config or None)


@pytest.fixture(scope="module")
def block(transformer_compilation):
    return transformer_compilation[0]


@pytest.fixture(scope="module")
def block_no_reuse():
    return _block(allow_buffer_reuse=False)


def _text_reuses(graph):
    return {(m[1], m[2]) for line in graph.wrapper.source.splitlines() if (m := _REUSE_LINE.match(line))}


def _live_storage_bytes(memory, step):
    """Bytes of every storage some name holds during ``step`` (recomputed from the buffer records)."""
    spans = {}
    for b in memory.buffers:
        end = b.free_step if b.free_step is not None else len(memory.steps)
        first, last = spans.get(b.storage, (b.alloc_step, end))
        spans[b.storage] = (min(first, b.alloc_step), max(last, end))
    sizes = {b.name: b.bytes for b in memory.buffers}
    return sum(sizes.get(s, 0) for s, (first, last) in spans.items() if first <= step <= last)


def test_transformer_block_peak_covers_every_live_set(block):
    m = block.graphs[0].memory
    assert m is not None and m.steps and not m.mismatches, m.mismatches
    assert m.peak_bytes == max(s.peak_bytes for s in m.steps)
    assert m.peak_bytes >= max(b.bytes for b in m.buffers) > 0
    assert all(_live_storage_bytes(m, s.index) <= m.peak_bytes for s in m.steps)
    assert sum(m.buffer(name).bytes for name in m.at_peak if m.buffer(name).storage == name) <= m.peak_bytes
    assert m.steps[m.peak_step].peak_bytes == m.peak_bytes
    assert m.peak_bytes >= m.output_bytes > 0
    # Inductor's own estimate (memory.py) of the same scheduled nodes, kept beside the plan
    assert m.estimate["peak_bytes"] > 0
    assert {name for name, _ in m.estimate["nodes"]} <= {g.name for g in block.graphs[0].fused}


def test_every_buffer_is_freed_or_returned(block):
    g = block.graphs[0]
    m = g.memory
    returned = re.search(r"return \((.*)\)", g.wrapper.source.split("def call", 1)[1])[1]
    outputs = {name.strip() for name in returned.split(",") if name.strip()}
    for b in m.buffers:
        if b.output:
            assert b.name in outputs and b.free_step is None
        else:
            assert b.free_step is not None and b.freed_by in ("del", "reuse", "return"), b
            assert b.alloc_step <= b.free_step
    assert m.steps[-1].live_bytes == m.output_bytes  # after the last step only the outputs remain


def test_steps_link_to_the_explorer_kernels_they_call(block):
    g = block.graphs[0]
    ids = {k.id for k in g.kernels}
    calls = [s for s in g.memory.steps if s.call != "return"]
    assert calls and all(s.kernel in ids for s in calls)
    assert [s.kernel for s in calls if "cpp_" in s.kernel] == [k.id for k in g.kernels if k.language == "cpp"]
    for s in calls:
        assert g.wrapper.kernel_lines[s.wrapper_line] == s.kernel


def test_reuse_and_inplace_marks_match_the_wrapper_text(block):
    g = block.graphs[0]
    marks = set(g.memory.reuse_marks)
    assert marks and marks == _text_reuses(g)
    kinds = {b.kind for b in g.memory.buffers}
    assert {"reuse", "inplace"} <= kinds
    lines = g.wrapper.source.splitlines()
    for b in g.memory.buffers:
        if b.kind in ("reuse", "inplace"):
            line = lines[b.wrapper_line - 1]
            assert line.strip().startswith(f"{b.name} = ") and "# reuse" in line
        if b.kind == "inplace":  # the kernel of its step writes it through an in_out pointer
            step = g.memory.steps[b.alloc_step]
            assert "in_out_ptr" in g.kernel(step.kernel).source


def test_buffer_reuse_off_removes_reuse_marks_and_never_lowers_the_peak(block, block_no_reuse):
    on, off = block.graphs[0].memory, block_no_reuse.graphs[0].memory
    assert any(b.kind == "reuse" for b in on.buffers)
    assert not any(b.kind == "reuse" for b in off.buffers)
    assert {b.kind for b in off.buffers if b.reuses and b.kind != "alias"} <= {"inplace"}
    assert set(off.reuse_marks) == _text_reuses(block_no_reuse.graphs[0])  # only in-place updates remain
    assert off.peak_bytes >= on.peak_bytes
    d = explorer.diff(block, block_no_reuse)
    assert d.graphs[0].memory.peak_a == on.peak_bytes and d.graphs[0].memory.peak_b == off.peak_bytes
    assert "peak memory" in d.summary and d.to_json()["graphs"][0]["memory"]["peak_b"] == off.peak_bytes


def test_inplace_off_removes_inplace_updates():
    off = _block(inplace_buffers=False).graphs[0].memory
    assert not any(b.kind == "inplace" for b in off.buffers) and not off.mismatches


def test_reordering_for_peak_memory_lowers_the_peak():
    """Locality reordering already puts each reduction next to its matmul here; with it off, the
    memory-aware reordering alone does it and the two wide matmul results are no longer live together."""
    torch.manual_seed(0)
    args = (torch.randn(64, 32), torch.randn(32, 2048), torch.randn(32, 2048))
    peaks, calls = {}, {}
    for reorder in (True, False):
        c = explorer.compile(workloads.two_branches, *args,
                             config={"reorder_for_locality": False, "reorder_for_peak_memory": reorder})
        m = c.graphs[0].memory
        peaks[reorder] = m.peak_bytes
        calls[reorder] = ["mm" if "mm" in s.call else "kernel" for s in m.steps]
        wide = 64 * 2048 * 4
        assert (m.peak_bytes < 2 * wide) if reorder else (m.peak_bytes >= 2 * wide)
    assert peaks[True] < peaks[False]
    assert calls[True] == ["mm", "kernel", "mm", "kernel"] and calls[False][:2] == ["mm", "mm"]


def test_memory_round_trips_and_renders(block):
    data = json.loads(json.dumps(block.to_json()))
    assert "memory" in data["graphs"][0]
    loaded = from_json(data)
    m = loaded.graphs[0].memory
    assert loaded.to_json() == data and m.graph is loaded.graphs[0]
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(m)
    text = console.file.getvalue()
    assert "peak" in text and m.steps[m.peak_step].kernel in text
    assert "<table>" in m._repr_html_() and "memory" in loaded.graphs[0]._repr_html_()
    assert repr(m).startswith("MemoryTimeline(")


def test_old_traces_load_without_the_new_keys():
    old = explorer.load(FIXTURES / "trace_v1.json")
    assert all(g.memory is None and g.wrapper.fx is None for g in old.graphs)
    assert all(k.ir is None for k in old.kernels)
    assert "memory" not in old.to_json()["graphs"][0]


def test_measuring_needs_a_gpu_and_a_live_compilation(block):
    m = block.graphs[0].memory
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            m.measure()
    loaded = from_json(json.loads(json.dumps(block.to_json())))
    loaded.graphs[0].memory.graph = None
    with pytest.raises(RuntimeError, match="live compilation"):
        loaded.graphs[0].memory.measure()


def test_widget_summary_counts_the_steps_for_live_and_saved_traces(block):
    """The Memory stage button shows the step count, from the lazy live trace and from its JSON alike."""
    import widgets

    parts = widgets.TraceParts(block.trace_view())
    live = parts.summary()["graphs"][0]
    saved = widgets.TraceParts(json.loads(json.dumps(block.to_json()))).summary()["graphs"][0]
    assert live["counts"]["memory"] == saved["counts"]["memory"] == len(block.graphs[0].memory.steps) > 0
    assert live["counts"] == saved["counts"]
    assert "memory" in live["parts"] and "memory" in saved["parts"]
    served = json.loads(parts.encoded(f"{live['id']}/memory"))  # the part the Memory stage loads
    assert served["peak_step"] == block.graphs[0].memory.peak_step and len(served["buffers"]) == len(block.graphs[0].memory.buffers)
