"""GPU: CUDA graphs seen (``mode="reduce-overhead"``), on programs whose outcome is known (run with
``pytest -m gpu``).

- a deep MLP at a small batch: one partition, every kernel in it, replayed; a call timed with and without
  its CUDA graphs; a profile gives every replayed kernel its own time under its own id;
- a function writing into an input: the CUDA graph tree gives up on it at its first run, and the skip
  names the node and the line that wrote;
- a GPU computation beside a CPU op on a 0-dim tensor: graph partitions leave the CPU op out, with
  Inductor's reason on its line; moving the tensor to the GPU brings the whole graph in;
- a loop whose input shape changes at step 5: the watch sees the new graph warmed up at step 5;
- a trace saved with all of it loads back the same.

Oracles torch keeps itself: the partitions Inductor logs on its ``cudagraphs`` log (counts, node counts,
each left-out node's reason), its ``cudagraph_skips`` counter, eager outputs, the user's source text.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
from pathlib import Path

import pytest
import torch

import explorer
from compiler._torch import cudagraph_tree
from compiler.model.cudagraphs import CudaGraphState, EventKind, SkipKind
from tests import workloads

pytestmark = pytest.mark.gpu

PARTITION_LOG = "torch._inductor.scheduler.__cudagraphs"
_CREATED = re.compile(r"Created (\d+) graph partitions: (\d+) cudagraphable")
_PARTITION = re.compile(r"Partition (\d+): (\d+) nodes, (non-cudagraphable|cudagraphable)")
_NODE = re.compile(r"^\s+(\S+): reason=([^,]+),")


@contextlib.contextmanager
def torch_partition_log():
    """What Inductor's scheduler logs of its partitions (``TORCH_LOGS=cudagraphs``), for the block."""
    logger, messages = logging.getLogger(PARTITION_LOG), []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler, level = Keep(logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def logged_partitions(messages: list[str]) -> tuple[list[tuple[int, bool]], dict[str, str]]:
    """[(nodes, cudagraphable)] of each partition Inductor logged for the graph it partitioned last, and
    node -> reason of the left-out ones."""
    starts = [i for i, m in enumerate(messages) if _CREATED.search(m)]
    assert starts, messages
    block = messages[starts[-1]:]
    parts = [(int(m.group(2)), m.group(3) == "cudagraphable") for m in map(_PARTITION.search, block) if m]
    reasons = {m.group(1): m.group(2).strip() for m in map(_NODE.match, block) if m}
    assert len(parts) == int(_CREATED.search(block[0]).group(1))
    return parts, reasons


def line_of(fn, text: str) -> tuple[Path, int]:
    """(file, line) of the line of ``fn`` holding ``text``, read from its source."""
    lines, first = inspect.getsourcelines(fn)
    return Path(inspect.getsourcefile(fn)).resolve(), first + next(i for i, line in enumerate(lines) if text in line)


def resolved(line: tuple[str, int] | None) -> tuple[Path, int] | None:
    return (Path(line[0]).resolve(), line[1]) if line else None


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = workloads.DeepMLP().cuda().eval()
    x = torch.randn(8, 256, device="cuda")
    skips = torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]
    with torch.no_grad(), torch_partition_log() as log:
        c = explorer.compile(model, x, mode="reduce-overhead", cache=False)
    return c, log, torch._dynamo.utils.counters["inductor"]["cudagraph_skips"] - skips


def test_a_clean_mlp_is_captured_whole_and_replays(mlp):
    c, log, skips = mlp
    (graph,) = c.graphs
    state = graph.cudagraphs
    assert c.toggles == {"cudagraphs": True}
    assert skips == 0 and state.skip is None, state.skip
    assert state.state == CudaGraphState.CAPTURED, repr(state)
    assert sorted(state.captured_kernels()) == sorted(k.id for k in graph.kernels)
    parts, reasons = logged_partitions(log)  # as Inductor partitioned it
    assert [(len(p.nodes), p.captured) for p in state.partitions] == parts and not reasons
    assert [e.kind for e in state.events] == [EventKind.WARMUP]  # the capture's one call warmed it up

    before = state.counts()
    c.run()
    c.run()  # the first run records, the second replays
    assert state.counts().get("record", 0) == before.get("record", 0) + 1
    assert state.counts().get("replay", 0) == before.get("replay", 0) + 1
    assert state.pool_bytes and state.pool_bytes > 0
    with cudagraph_tree.without_cuda_graphs():  # what measure() times as "without": no replay at all
        events = len(state.events)
        c.run()
        assert len(state.events) == events


def test_a_call_is_timed_with_and_without_cuda_graphs(mlp):
    c, _, _ = mlp
    t = c.cudagraphs.measure()
    assert t is c.cudagraph_times[-1] and t.with_ms > 0 and t.without_ms > 0
    print(f"\nDeepMLP, batch 8, H200: {t.with_ms:.4f} ms a call with CUDA graphs, {t.without_ms:.4f} ms without, "
          f"{t.saved_ms:.4f} ms of launches saved")
    assert any(e.kind == EventKind.REPLAY and e.run == "measure" for e in c.graphs[0].cudagraphs.events)


def test_a_profile_gives_each_replayed_kernel_its_time_under_its_id(mlp):
    c, _, _ = mlp
    profile = c.profile(runs=5)
    (graph,) = c.graphs
    assert {key for key, ms in profile.kernel_ms.items() if ms > 0} == set(profile.kernels), profile.unattributed
    launches = {k.id: len(k.call_lines) for k in graph.kernels}  # what each call of the program launches
    assert {key: profile.kernel_calls[key] for key in profile.kernels} == {
        key: launches[ref.kernel] for key, ref in profile.kernels.items()}
    assert {profile.kernels[key].kernel for key in profile.kernels} == {k.id for k in graph.kernels}
    assert c.cudagraphs.captured_share == pytest.approx(1.0)
    print(f"\nprofile under CUDA graphs: {profile.total_ms:.4f} ms, unattributed {profile.unattributed_ms:.4f} ms "
          f"({dict(list(profile.unattributed.items())[:3])})")


def test_a_saved_trace_loads_with_partitions_events_and_times(mlp, tmp_path):
    c, _, _ = mlp
    if not c.cudagraph_times:
        c.cudagraphs.measure()
    loaded = explorer.load(c.save(tmp_path / "mlp.json"))
    assert loaded.to_json()["graphs"][0]["cudagraphs"] == c.to_json()["graphs"][0]["cudagraphs"]
    assert loaded.cudagraph_times == c.cudagraph_times
    assert loaded.cudagraphs.captured_share == c.cudagraphs.captured_share
    assert loaded.graphs[0].cudagraphs.state == CudaGraphState.CAPTURED


def test_a_mutated_input_is_skipped_with_the_line_that_wrote_it():
    torch.manual_seed(0)
    x, state = torch.randn(64, 64, device="cuda"), torch.zeros(64, 64, device="cuda")
    before = state.clone()
    skips = torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]
    c = explorer.compile(workloads.mutates_state, x, state, mode="reduce-overhead", cache=False)
    assert torch._dynamo.utils.counters["inductor"]["cudagraph_skips"] > skips  # torch's own count
    (graph,) = c.graphs
    cg = graph.cudagraphs
    skip = cg.skip
    assert skip is not None and skip.kind == SkipKind.MUTATED_INPUT, (skip, cg.events)
    assert cg.state == CudaGraphState.SKIPPED
    assert resolved(skip.line) == line_of(workloads.mutates_state, "state.add_(1)")
    assert [cg.user_inputs[name] for name in skip.inputs] == [1]  # the second input, ``state``
    assert skip.node in {n.name for n in graph.post_grad.nodes}
    assert skip.kernels and set(skip.kernels) <= {k.id for k in graph.kernels}
    assert any(e.kind == EventKind.SKIP and "mutated inputs" in e.reason for e in cg.events)
    # it still runs right, without a CUDA graph: the capture's call wrote into ``state`` once
    assert torch.equal(state, before + 1)
    expected = workloads.mutates_state(x.clone(), before.clone())
    torch.testing.assert_close(c.outputs, expected)
    text = _shown(c)  # the terminal view names the skip and its line
    assert "skipped: mutated input" in text and f"workloads.py:{skip.line[1]}" in text

    w = c.cudagraphs.what_if(measure=False)  # marked static, the tree records a graph that writes into it
    assert w.fix == "static" and w.input == 1
    assert w.after.graphs[0].cudagraphs.skip is None
    w.after.run()
    w.after.run()
    assert w.after.graphs[0].cudagraphs.counts().get("record", 0) == 1, w.after.graphs[0].cudagraphs.events


def _shown(c) -> str:
    from rich.console import Console

    from compiler.api import compact_view

    console = Console(record=True, width=200)
    console.print(compact_view(c))
    return console.export_text()


def test_a_cpu_scalar_splits_the_graph_and_its_partition_names_the_line():
    x, s = torch.randn(256, device="cuda"), torch.tensor(2.0)
    with torch_partition_log() as log:
        c = explorer.compile(workloads.cpu_scalar, x, s, mode="reduce-overhead", cache=False)
    (graph,) = c.graphs
    cg = graph.cudagraphs
    parts, reasons = logged_partitions(log)
    assert [(len(p.nodes), p.captured) for p in cg.partitions] == parts
    assert {r.node: r.reason for p in cg.partitions for r in p.reasons} == reasons
    assert cg.state == CudaGraphState.PARTIAL, repr(cg)
    left_out = [p for p in cg.partitions if not p.captured]
    assert "cpu ops" in {r.reason for p in left_out for r in p.reasons}
    assert all(r.line is not None for p in left_out for r in p.reasons)  # a pass's node: its reader's line
    assert line_of(workloads.cpu_scalar, "t = s * 3") in {resolved(r.line) for p in left_out for r in p.reasons}
    kinds = {k.id: k.language for k in graph.kernels}
    assert {kinds[k] for p in left_out for k in p.kernels} == {"cpp"}
    assert {kinds[k] for p in cg.partitions if p.captured for k in p.kernels} == {"triton"}

    w = c.cudagraphs.what_if(measure=False)  # the CPU scalar moved to the GPU: nothing left out
    assert w.fix == "device" and w.input == 1
    assert w.after.graphs[0].cudagraphs.state == CudaGraphState.CAPTURED, repr(w.after.graphs[0].cudagraphs)


def step_fn(x):
    return torch.relu(x) * 2 + 1


def test_a_shape_that_changes_at_step_5_is_recorded_anew_at_step_5():
    torch._dynamo.reset()
    compiled = torch.compile(step_fn, mode="reduce-overhead")
    batches = [torch.randn(64 if step < 5 else 96, 32, device="cuda") for step in range(9)]
    with explorer.watch(live=False) as w:
        for x in w.steps_of(batches):
            compiled(x)
    (recompile,) = w.recompiles
    assert recompile.step == 5
    events = w.cudagraph_events
    new = [e for e in events if e.compile_id == recompile.compile_id]
    assert new and min(e.step for e in new) == 5, events
    assert [e.kind for e in new if e.step == 5] == [EventKind.WARMUP], events
    assert any(e.kind == EventKind.RECORD and e.step == 6 for e in new), events
    assert sum(e.count for e in new if e.kind == EventKind.REPLAY) == 2  # steps 7 and 8
    first = [e for e in events if e.compile_id != recompile.compile_id]
    assert [(e.step, e.kind) for e in first if e.kind != EventKind.REPLAY] == [(0, EventKind.WARMUP), (1, EventKind.RECORD)]
    (frame,) = w.frames
    assert frame.replays_cuda_graphs and frame.cudagraph_replays == 3 + 2
