"""CUDA graph traces recorded on a GPU (tests/record_cudagraph_fixtures.py) load on the CPU with their
partitions, skips, the CUDA graph tree's events and the times: what each program's outcome is known to be,
the lines read from tests/workloads.py itself."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

import explorer
from compiler.api import compact_view
from compiler.model.cudagraphs import CudaGraphState, EventKind, SkipKind
from compiler.runs.cudagraph_attribution import replays_unseen
from tests.paths import FIXTURES, TESTS

WORKLOADS = "tests/workloads.py"


def _line(text: str) -> tuple[str, int]:
    """(file, line) of the line of tests/workloads.py holding ``text``, as the recorded traces name it."""
    lines = (TESTS / "workloads.py").read_text().splitlines()
    (number,) = [i + 1 for i, line in enumerate(lines) if line.strip() == text]
    return WORKLOADS, number


def _load(name: str) -> explorer.Compilation:
    return explorer.load(FIXTURES / f"{name}.json")


def _shown(c) -> str:
    console = Console(record=True, width=200)
    console.print(compact_view(c))
    return console.export_text()


@pytest.fixture(scope="module")
def mlp():
    return _load("gpu_cudagraphs_mlp")


def test_the_mlp_is_captured_whole_warmed_recorded_and_replayed(mlp):
    (graph,) = mlp.graphs
    state = graph.cudagraphs
    assert mlp.device.startswith("cuda") and mlp.toggles == {"cudagraphs": True}
    assert state.state == CudaGraphState.CAPTURED and state.skip is None
    (partition,) = state.partitions
    assert partition.captured and sorted(partition.kernels) == sorted(k.id for k in graph.kernels)
    assert sorted(partition.launches) == sorted(k.id for k in graph.kernels for _ in k.call_lines)
    kinds = [e.kind for e in state.events]
    assert kinds[0] == EventKind.WARMUP and state.events[0].run == "capture"
    assert EventKind.RECORD in kinds and kinds.index(EventKind.RECORD) < kinds.index(EventKind.REPLAY)
    assert state.pool_bytes > 0


def test_the_mlp_keeps_its_call_times_and_a_profile_of_its_runs_again_without_replay(mlp):
    (time,) = mlp.cudagraph_times
    assert time.with_ms > 0 and time.without_ms > 0 and time.saved_ms == time.without_ms - time.with_ms
    # recorded on an H200 (torch 2.11, CUDA 13.0), where the profiler reports each replay's launch but no kernel
    # inside it: c.profile() found that (replays_unseen) and recorded the runs again without replay, so every
    # kernel of the graph has its time, and the profile says how it was measured
    (profile,) = mlp.profiles
    (graph,) = mlp.graphs
    assert not replays_unseen(mlp, profile.kernels, profile.kernel_ms)
    assert sorted(ref.kernel for ref in profile.kernels.values()) == sorted(k.id for k in graph.kernels)
    assert all(profile.kernel_ms[key] > 0 for key in profile.kernels)
    assert any("without the replay" in note for note in profile.notes)
    text = _shown(mlp)
    assert "CUDA graphs: captured, 1 of 1 partitions" in text
    assert f"a call takes {time.with_ms:.4f} ms with CUDA graphs, {time.without_ms:.4f} ms without" in text


def test_the_mutated_input_is_skipped_at_its_first_run_with_the_line_that_wrote_it():
    c = _load("gpu_cudagraphs_mutation")
    (graph,) = c.graphs
    state = graph.cudagraphs
    skip = state.skip
    assert state.state == CudaGraphState.SKIPPED
    assert (skip.kind, skip.when) == (SkipKind.MUTATED_INPUT, "run")
    assert skip.line == _line("state.add_(1)")
    assert [state.user_inputs[name] for name in skip.inputs] == [1]  # the second input, ``state``
    writer = graph.post_grad.node(skip.node)
    assert writer.inputs[0] == skip.inputs[0]  # it writes into that input
    assert skip.kernels and set(skip.kernels) <= {k.id for k in graph.kernels}
    assert "mutated inputs" in skip.message and "Found from" not in skip.message
    assert [e.kind for e in state.events if e.kind == EventKind.SKIP] == [EventKind.SKIP]
    assert EventKind.REPLAY not in {e.kind for e in state.events}  # it never runs from a CUDA graph
    assert f"skipped: mutated input ({skip.node}" in _shown(c)


def test_the_cpu_scalar_leaves_its_partition_out_with_inductors_reason_on_its_line():
    c = _load("gpu_cudagraphs_partitions")
    (graph,) = c.graphs
    state = graph.cudagraphs
    assert state.state == CudaGraphState.PARTIAL and state.skip is None
    languages = {k.id: k.language for k in graph.kernels}
    left_out = [p for p in state.partitions if not p.captured]
    captured = [p for p in state.partitions if p.captured]
    assert left_out and captured
    assert {languages[k] for p in left_out for k in p.kernels} == {"cpp"}
    assert {languages[k] for p in captured for k in p.kernels} == {"triton"}
    # Inductor's words: the CPU op, and the copy to the GPU a pass adds for the CPU scalar (torch 2.11)
    assert "cpu ops" in {r.reason for p in left_out for r in p.reasons}
    assert {r.reason for p in left_out for r in p.reasons} <= {"cpu ops", "DeviceCopy ops"}
    assert _line("t = s * 3") in {r.line for p in left_out for r in p.reasons}
    replayed = {e.partition for e in state.events if e.kind == EventKind.REPLAY}
    assert replayed == {p.function_index for p in captured}  # the captured partition, and only it
    assert "partition" in _shown(c) and "cpu ops" in _shown(c)


def test_the_views_get_each_graphs_cuda_graph_record_as_saved():
    from widgets import TraceParts

    trace = json.loads((FIXTURES / "gpu_cudagraphs_partitions.json").read_text())
    parts = TraceParts(trace)
    assert "cudagraphs" in parts.summary()["graphs"][0]["parts"]
    assert parts.get("g0/cudagraphs") == trace["graphs"][0]["cudagraphs"]
