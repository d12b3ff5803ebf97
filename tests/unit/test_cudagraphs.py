"""CUDA graphs without a GPU: torch's own skip messages read into kinds, the CUDA graph tree's events told to
the graph whose function each is (the tree's manager and log are torch's real ones, their CUDA work
stubbed), a run-time skip linked to the node and line that wrote the input, a replay's device kernels
matched to the recorded function's launches, and ``%%compile --mode``."""

from __future__ import annotations

import io
import logging

import pytest
import torch
from IPython.core.error import UsageError

from compiler._torch import cudagraph_tree
from compiler.model.cudagraph_events import EventRecorder, add_event, link_skip, mutating_node
from compiler.model.cudagraphs import (CudaGraphPartition, CudaGraphSkip, CudaGraphState, EventKind, GraphCudaGraphs,
                                       SkipKind, skip_kind, skip_message)

trees = pytest.importorskip("torch._inductor.cudagraph_trees")
utils = pytest.importorskip("torch._inductor.cudagraph_utils")


# ------------------------------------------------------------------------------- torch's words


def _placeholder(name: str, trace: str | None = None) -> object:
    return utils.PlaceholderInfo(name=name, stack_trace=trace, users=[], mutating_use_stack_trace=trace)


def test_torchs_skip_messages_read_as_their_kinds_without_their_stack_traces():
    mutated = utils.get_mutation_stack_trace([_placeholder("arg0_1"), _placeholder("arg1_1", "  File x.py, line 4")], [1])
    assert skip_kind(mutated) == SkipKind.MUTATED_INPUT
    assert skip_message(mutated) == "skipping cudagraphs due to mutated inputs (1 instances)"
    cpu = utils.check_multiple_devices_or_any_cpu_nodes({torch.device("cpu"): _node("arg1_1")})
    if cpu is not None:  # with graph partitions on, torch leaves CPU nodes to the partitions
        assert skip_kind(cpu) == SkipKind.CPU_TENSOR and "arg1_1" in skip_message(cpu)
    devices = utils.check_multiple_devices_or_any_cpu_nodes({torch.device("cuda", 0): _node("a"),
                                                             torch.device("cuda", 1): _node("b")})
    assert skip_kind(devices) == SkipKind.MULTIPLE_DEVICES
    assert skip_kind("skipping cudagraph due to function 0 exceeding max re-recording limit (=128) on cudagraph "
                     "node None due to static input data pointer changed.") == SkipKind.TOO_MANY_RECORDINGS
    assert skip_kind("disabling cudagraphs due to incompatible op aten.nonzero.default") == SkipKind.INCOMPATIBLE_OP
    assert skip_kind("something torch says one day") == SkipKind.OTHER


def _node(name: str) -> object:
    graph = torch.fx.Graph()
    return graph.placeholder(name)


# ---------------------------------------------------------------- the tree's manager, its CUDA work stubbed


class Func:
    """What the manager keeps of a function (``WrappedFunction``)."""

    def __init__(self, model, mutated=(), static=()):
        self.model, self.mutated_input_idxs, self.static_input_idxs = model, list(mutated), list(static)
        self.placeholders = [_placeholder("arg0_1"), _placeholder("arg1_1")]


class Manager(trees.CUDAGraphTreeManager):
    """A ``CUDAGraphTreeManager`` without its CUDA state: the tree's methods run on it (wrapped by the
    adapter), their CUDA work replaced by the stubs installed in ``stubbed``."""

    def __init__(self, funcs):  # torch's would make a CUDA stream and a graph pool
        self.ids_to_funcs = funcs
        self.id_to_compile_id = {fid: "0/0" for fid in funcs}
        self.id_to_mode = {fid: trees.CompilationMode.INFERENCE for fid in funcs}
        self.device_index, self.warmed_up_functions, self.cuda_graphs_thread_pool = 0, set(), None
        self.current_node = None


class Node(trees.CUDAGraphNode):
    """A recorded node without its CUDA graph; whether it fits the inputs is set by the test."""

    def __init__(self, function_id, graph_id, fits=True):  # torch's would record a CUDA graph
        self.wrapped_function = type("W", (), {"id": function_id})()
        self.id = trees.GraphID(graph_id)
        self.fits = fits


def _check_invariants(self, inputs):
    if self.fits:
        return utils.CheckInvariantStatus.SUCCESS, lambda: "ok"
    return utils.CheckInvariantStatus.StaticInputIdxMismatch, lambda: "static input data pointer changed"


@pytest.fixture
def stubbed(monkeypatch):
    """The manager's methods that do CUDA work, stubbed; ``_run`` plays a small script of the tree's path."""

    def run(self, inputs, function_id):
        if function_id not in self.warmed_up_functions:
            return self.run_eager(inputs, function_id)
        nodes = self.recorded.get(function_id, [])
        for node in nodes:
            if node.check_invariants(inputs)[0] == utils.CheckInvariantStatus.SUCCESS:
                return self.execute_node(node, inputs)
        if self.ids_to_funcs[function_id].mutated_input_idxs:  # the tree checks mutation, and logs a skip
            utils.log_cudagraph_skip_and_bump_counter(utils.get_mutation_stack_trace(
                self.ids_to_funcs[function_id].placeholders, self.ids_to_funcs[function_id].mutated_input_idxs))
            return self.ids_to_funcs[function_id].model(inputs)
        return self.record_function(inputs, function_id)

    def run_eager(self, inputs, function_id):
        self.warmed_up_functions.add(function_id)
        return "eager"

    def record_function(self, inputs, function_id):
        node = Node(function_id, len(self.recorded.get(function_id, [])))
        self.recorded.setdefault(function_id, []).append(node)
        self.current_node = node
        return "recorded"

    def execute_node(self, node, inputs):
        return "replayed"

    for name, fn in (("_run", run), ("run_eager", run_eager), ("record_function", record_function),
                     ("execute_node", execute_node)):
        monkeypatch.setattr(trees.CUDAGraphTreeManager, name, fn)
    monkeypatch.setattr(trees.CUDAGraphNode, "check_invariants", _check_invariants)


def partition_0(args):
    return args


def call(args):
    return args


def test_the_trees_events_reach_the_function_they_are_of(stubbed):
    fid = utils.FunctionID(0)
    manager = Manager({fid: Func(partition_0)})
    manager.recorded = {}
    seen = []
    with cudagraph_tree.observed(seen.append):
        for _ in range(4):
            trees.CUDAGraphTreeManager._run(manager, [], fid)
        manager.recorded[fid][0].fits = False  # the recorded graph no longer fits: recorded again
        trees.CUDAGraphTreeManager._run(manager, [], fid)
    assert [e.kind for e in seen] == ["warm-up", "record", "replay", "replay", "re-record"]
    assert all(e.model is partition_0 and e.compile_id == "0/0" and e.mode == "INFERENCE" for e in seen)
    assert seen[-1].reason == "static input data pointer changed" and seen[-1].cuda_graph == 1
    # outside the block the methods are torch's again (the stubs here): nothing is reported
    trees.CUDAGraphTreeManager._run(manager, [], fid)
    assert len(seen) == 5


def test_a_skip_on_the_cudagraphs_log_is_the_skip_of_the_function_running(stubbed):
    fid = utils.FunctionID(3)
    manager = Manager({fid: Func(call, mutated=[1])})
    manager.recorded = {}
    manager.warmed_up_functions.add(fid)
    seen = []
    logger = logging.getLogger(cudagraph_tree.SKIP_LOGGER)
    with cudagraph_tree.observed(seen.append):
        assert trees.CUDAGraphTreeManager._run(manager, [1, 2], fid) == [1, 2]  # run eagerly by the tree
    (skip,) = seen
    assert skip.kind == "skip" and skip.mutated == ("arg1_1",) and skip.function == 3
    assert "mutated inputs (1 instances)" in skip.reason
    assert not [h for h in logger.handlers if isinstance(h, cudagraph_tree._SkipLog)]  # its handler is gone


def test_without_cuda_graphs_the_tree_runs_each_callable_itself(stubbed):
    fid = utils.FunctionID(0)
    manager = Manager({fid: Func(lambda inputs: ("ran", list(inputs)))})
    with cudagraph_tree.without_cuda_graphs() as changed:
        assert changed and trees.CUDAGraphTreeManager._run(manager, [7], fid) == ("ran", [7])
    manager.recorded = {}
    assert trees.CUDAGraphTreeManager._run(manager, [7], fid) == "eager"  # torch's path again


def test_place_finds_a_partition_or_the_graph_through_inductors_wrappers():
    def cudagraphified(model):
        def run(new_inputs):
            return model(new_inputs)
        return run

    partitioned = type("G", (), {})()
    partitioned.compiled_fn_runner = type("R", (), {"partitions": [cudagraphified(call), cudagraphified(partition_0)]})()
    partitioned.current_callable = lambda args: args
    whole = type("G", (), {"compiled_fn_runner": None, "current_callable": cudagraphified(call)})()
    assert cudagraph_tree.place(partitioned, partition_0) == 0  # its name says which partition function
    assert cudagraph_tree.place(whole, call) == -1
    assert cudagraph_tree.place(whole, partition_0) is None


# ----------------------------------------------------------------------- events into g.cudagraphs


class Event:
    def __init__(self, kind, function=0, model=call, reason="", graph=None, mutated=()):
        self.kind, self.function, self.model, self.reason, self.cuda_graph = kind, function, model, reason, graph
        self.device, self.pool_bytes, self.mutated, self.compile_id, self.mode = 0, None, mutated, "0/0", "FORWARD"


def test_replays_merge_into_a_count_and_each_recording_stays_its_own():
    state = GraphCudaGraphs(device="cuda:0")
    recorder = EventRecorder("run", lambda fn, model: -1 if fn == "compiled" and model is call else None)
    recorder.add("compiled", state)
    for kind, graph in [("warm-up", None), ("record", 0), ("replay", 0), ("replay", 0), ("replay", 0),
                        ("re-record", 1), ("replay", 1)]:
        recorder(Event(kind, graph=graph))
    recorder(Event("replay", function=7, model=partition_0))  # another compilation's function: not this graph's
    assert [(e.kind, e.count, e.cuda_graph) for e in state.events] == [
        (EventKind.WARMUP, 1, None), (EventKind.RECORD, 1, 0), (EventKind.REPLAY, 3, 0), (EventKind.RERECORD, 1, 1),
        (EventKind.REPLAY, 1, 1)]
    assert state.counts() == {"warm-up": 1, "record": 1, "replay": 4, "re-record": 1}
    assert {e.run for e in state.events} == {"run"} and all(e.partition is None for e in state.events)


def _graph():
    from tests.unit.test_contract import _sample

    c = _sample()
    graph = c.graphs[0]
    post_grad = graph.post_grad
    from compiler.model.stages import FxNode

    post_grad.nodes = [FxNode("arg1_1", "placeholder", "arg1_1"),
                       FxNode("add", "call_function", "aten.add.Tensor", inputs=["arg1_1"], user_line=("/m.py", 4),
                              kernels=["k0"]),
                       FxNode("copy_", "call_function", "aten.copy_.default", inputs=["arg1_1", "add"],
                              user_line=("/m.py", 4), kernels=["k0"])]
    return graph


def test_a_skip_at_run_time_names_the_node_that_writes_the_input_and_its_line():
    graph = _graph()
    state = GraphCudaGraphs(device="cuda:0", partitions=[
        CudaGraphPartition(index=0, captured=True, function="partition_0", kernels=["k0"], launches=["k0"])])
    message = utils.get_mutation_stack_trace([_placeholder("arg0_1"), _placeholder("arg1_1", "File m.py line 4")], [1])
    add_event(state, Event("skip", reason=message, mutated=("arg1_1",)), 0, "capture")
    link_skip(state, graph)
    skip = state.skip
    assert (skip.kind, skip.when, skip.node, skip.inputs, skip.kernels, skip.line, skip.partition) == (
        SkipKind.MUTATED_INPUT, "run", "copy_", ["arg1_1"], ["k0"], ("/m.py", 4), 0)
    assert state.state == CudaGraphState.SKIPPED and not state.replays(state.partitions[0])
    assert state.kernel_state("k0") == (False, "graph skipped: mutated input")


def test_the_writer_of_an_input_is_its_copy_else_its_only_user():
    graph = _graph()
    assert mutating_node(graph.post_grad.nodes, "arg1_1") == "copy_"
    assert mutating_node(graph.post_grad.nodes[:2], "arg1_1") == "add"  # no copy_: the only user
    assert mutating_node(graph.post_grad.nodes, "arg9_9") is None


def test_a_partition_skipped_leaves_the_others_replaying():
    state = GraphCudaGraphs(device="cuda:0", partitions=[
        CudaGraphPartition(index=0, captured=True, function="partition_0", kernels=["a"]),
        CudaGraphPartition(index=1, captured=False, function=None, kernels=["b"]),
        CudaGraphPartition(index=2, captured=True, function="partition_1", kernels=["c"])],
        skip=CudaGraphSkip(kind=SkipKind.MUTATED_INPUT, message="m", when="run", partition=1))
    assert [state.replays(p) for p in state.partitions] == [True, False, False]
    assert state.state == CudaGraphState.PARTIAL and state.captured_kernels() == ["a"]
    assert GraphCudaGraphs(device="cpu", partitions=state.partitions).state == CudaGraphState.NO_GPU


# ----------------------------------------------------------------------------------- %%compile --mode


def test_mode_sets_the_inductor_settings_torch_compile_would_and_flags_win():
    from explorer.magic import ExplorerMagics, _parsed, parse_config

    magic = ExplorerMagics(shell=None).compile_cell
    modes = torch._inductor.list_mode_options()
    assert parse_config(_parsed(magic, "--mode reduce-overhead")) == {"cudagraphs": True}
    assert modes["reduce-overhead"] == {"triton.cudagraphs": True}  # torch's own table says the same
    assert parse_config(_parsed(magic, "--mode reduce-overhead --config triton.cudagraphs=false")) == {
        "triton.cudagraphs": False}
    assert parse_config(_parsed(magic, "--mode max-autotune --deterministic")) == {
        **{name: value for name, value in _toggle_names(modes["max-autotune"]).items()}, "deterministic": True}
    with pytest.raises(UsageError, match="--mode: unknown mode 'reduce_overhead' .*did you mean 'reduce-overhead'"):
        parse_config(_parsed(magic, "--mode reduce_overhead"))


def _toggle_names(settings: dict) -> dict:
    from compiler.api import toggle_names_for

    return toggle_names_for(settings)


# ------------------------------------------------------------------------------------ a watched run


def _tree(fid=0):
    """A manager of one function (``partition_0`` of compile 0/0) and a call that runs it through the tree."""
    function_id = utils.FunctionID(fid)
    manager = Manager({function_id: Func(partition_0)})
    manager.recorded = {}
    return manager, function_id, lambda: trees.CUDAGraphTreeManager._run(manager, [], function_id)


def _seen(events):
    return [(e.step, e.kind.value, e.count) for e in events]


def test_a_watch_keeps_the_trees_events_in_their_steps_and_each_report_as_it_was(stubbed):
    from compiler.pipeline.watch import Watch

    manager, fid, run = _tree()
    with Watch(live=False) as w:
        for step in w.steps_of(range(4)):
            run()
            if step == 1:
                early = w.report()  # the step's first replay kept; its second comes after
            if step == 2:
                manager.recorded[fid][0].fits = False  # the recorded graph no longer fits: recorded again
            run()
    assert _seen(w.cudagraph_events) == [(0, "warm-up", 1), (0, "record", 1), (1, "replay", 2), (2, "replay", 1),
                                         (2, "re-record", 1), (3, "replay", 2)]
    assert _seen(early.cudagraph_events) == [(0, "warm-up", 1), (0, "record", 1), (1, "replay", 1)]  # as it was
    rerecord = w.cudagraph_events[4]
    assert (rerecord.compile_id, rerecord.function, rerecord.mode, rerecord.reason) == (
        "0/0", "partition_0", "inference", "static input data pointer changed")
    assert "CUDA graphs (replays counted per step)" in str(w)
    run()  # after the watch: nothing observed
    assert len(w.cudagraph_events) == 6


def test_a_stronger_step_rule_folds_the_trees_events_into_its_step_0(stubbed):
    from compiler.pipeline.watch import Watch

    _, _, run = _tree()
    weight = torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([weight], lr=0.1)
    with Watch(live=False) as w:
        for _ in range(4):
            run()
            optimizer.step()  # one step per optimizer step
        assert _seen(w.cudagraph_events) == [(0, "warm-up", 1), (1, "record", 1), (2, "replay", 1), (3, "replay", 1)]
        w.step()  # the loop's marks win: every step so far is step 0
        run()
    assert _seen(w.cudagraph_events) == [(0, "warm-up", 1), (0, "record", 1), (0, "replay", 2), (1, "replay", 1)]


def test_each_frame_counts_its_graphs_replays_and_skips():
    from compiler.model.watch import CompileEvent
    from compiler.model.watch_cudagraphs import CudaGraphStepEvent
    from compiler.pipeline.watch_records import frame_stats

    events = [CudaGraphStepEvent(1, "0/0", EventKind.REPLAY, "call", count=3),
              CudaGraphStepEvent(2, "0/1", EventKind.REPLAY, "call", count=2),
              CudaGraphStepEvent(2, "0/1", EventKind.SKIP, "partition_1", reason="mutated inputs"),
              CudaGraphStepEvent(3, "1/0", EventKind.RECORD, "call")]
    compiles = [CompileEvent("0/0", "f"), CompileEvent("0/1", "f", reasons=["0/0: x"]), CompileEvent("1/0", "g")]
    frames = frame_stats(compiles, {}, [], events)
    assert [(f.frame_id, f.cudagraph_replays, f.cudagraph_skips, f.replays_cuda_graphs) for f in frames] == [
        ("0", 5, 1, True), ("1", 0, 0, False)]


# ---------------------------------------------------------------------------------------- the terminal


def _partitioned_trace(device: str) -> dict:
    """A real GPU compilation (tests/fixtures/gpu_default.json) given a ``cudagraphs`` record of its own
    kernels: the matmul's partition left out for a CPU op, the gelu kernel's captured."""
    import json

    from tests.paths import FIXTURES

    trace = json.loads((FIXTURES / "gpu_default.json").read_text())
    graph = trace["graphs"][0]
    fused = {f["name"]: f for f in graph["fused"]}

    def partition(index, group, captured):
        reasons = [] if captured else [{"node": group["name"], "reason": "cpu ops", "op": "aten.mm.default",
                                        "post_grad": group["origins"][0], "kernels": group["kernels"], "line": None}]
        return {"index": index, "captured": captured, "replays": captured,
                "function": "partition_0" if captured else None, "nodes": [group["name"]],
                "kernels": group["kernels"], "launches": group["kernels"], "post_grad_nodes": group["origins"],
                "reasons": reasons}

    graph["cudagraphs"] = {"device": device, "state": "partial", "skip": None, "events": [], "user_inputs": {},
                           "notes": [], "partitions": [partition(0, fused["op0"], False), partition(1, fused["op1"], True)]}
    return trace


def _compact(trace: dict, width: int) -> list[str]:
    from rich.console import Console

    from compiler import from_json
    from compiler.api import compact_view

    console = Console(record=True, width=width, file=io.StringIO())
    console.print(compact_view(from_json(trace)))
    return console.export_text().splitlines()


def test_the_kernels_table_says_which_kernels_a_cuda_graph_holds_on_80_columns():
    trace = _partitioned_trace("cuda:0")
    held = {k: p["replays"] for p in trace["graphs"][0]["cudagraphs"]["partitions"] for k in p["kernels"]}
    lines = _compact(trace, 80)
    (header,) = [line for line in lines if line.startswith("kernel ")]
    assert header.split() == ["kernel", "kind", "CUDA", "graph", "your", "line"]
    rows = {line.split()[0]: line.split()[2] for line in lines if line.split() and line.split()[0] in held}
    assert rows == {kernel: "yes" if replays else "no" for kernel, replays in held.items()}
    assert max(len(line) for line in lines) <= 80
    # the same record on a CPU device: no CUDA graph holds anything there, and the column is left out
    (header,) = [line for line in _compact(_partitioned_trace("cpu"), 80) if line.startswith("kernel ")]
    assert header.split() == ["kernel", "kind", "your", "line"]
