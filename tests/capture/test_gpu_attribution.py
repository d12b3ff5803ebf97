"""GPU profile attribution from the profiler's native events (compiler/runs/gpu_attribution.py), on events
shaped like the ones CUPTI and kineto record, around a real compilation's kernels (runs on CPU)."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler._torch import profiling
from compiler._torch.profiling import RawEvent
from compiler.model.cudagraphs import CudaGraphPartition, GraphCudaGraphs
from compiler.model.keys import kernel_keys
from compiler.model.profile import KernelRef
from compiler.runs.externs import externs_in_wrapper_order
from compiler.runs.gpu_attribution import attribute_gpu
from compiler.runs.profile import run_ms
from tests import workloads

RUN, GRAPH = "run", "explorer-graph:"


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    with torch.no_grad():
        c = explorer.compile(workloads.ResidualBlock(64), torch.randn(8, 64))
    keys = kernel_keys(c)
    refs = {keys[(g.id, k.id)]: KernelRef(g.id, k.id, k.language) for g in c.graphs for k in g.kernels}
    return c, refs


class Recorder:
    """Builds a native event list: host events get ids, GPU activities link to the host event they ran under."""

    def __init__(self) -> None:
        self.events: list[RawEvent] = []
        self.next_id = 1

    def host(self, name: str, thread: int, start: int, end: int) -> int:
        self.next_id += 1
        self.events.append(RawEvent(name, False, thread, start, end, self.next_id, 0))
        return self.next_id

    def launch(self, under: int, name: str, start: int, duration: int, thread: int, at: int) -> int:
        """A runtime call at ``at`` on ``thread`` under host event ``under``, and its GPU activity."""
        self.next_id += 1
        correlation = 1000 + self.next_id
        self.events.append(RawEvent("cudaLaunchKernel", False, thread, at, at + 1, correlation, under))
        self.events.append(RawEvent(name, True, 0, start, start + duration, correlation, under))
        return correlation


def test_gpu_activities_go_to_the_kernel_or_extern_call_that_launched_them(compiled):
    c, refs = compiled
    graph = c.graphs[0]
    generated = [k for k in graph.kernels if k.language != "extern"]
    (extern_key, extern_op), = externs_in_wrapper_order(c, refs)[graph.id][:1]
    key_of = {k.name: next(key for key, r in refs.items() if r.kernel == k.id) for k in generated}
    first, second = generated[0].name, generated[-1].name
    r = Recorder()
    r.host(RUN, 1, 0, 10_000)
    # the forward graph call on the main thread
    mark = r.host(GRAPH + graph.id, 1, 100, 5_000)
    launch = r.host(first, 1, 200, 300)
    a = r.launch(launch, "triton_gpu_name_does_not_matter", 1_000, 400, 1, 250)
    op = r.host(extern_op, 1, 400, 900)
    nested = r.host("aten::inner_helper", 1, 450, 850)  # the operator launches under a nested one
    b = r.launch(nested, "sm90_xmma_gemm", 1_500, 2_000, 1, 500)
    c2 = r.launch(op, "splitk_reduce", 3_500, 100, 1, 800)
    r.host("aten::empty_strided", 1, 950, 960)
    d = r.launch(mark, second, 3_700, 300, 1, 1_000)  # directly under the graph mark: found by its CUDA name
    r.launch(mark, "unexpected_memset", 4_000, 50, 1, 1_100)
    # the same graph called on another thread (autograd's device thread), and work outside any graph
    r.host(GRAPH + graph.id, 2, 5_200, 6_000)
    launch2 = r.host(first, 2, 5_300, 5_400)
    f = r.launch(launch2, first, 6_100, 400, 2, 5_350)
    outside = r.host("aten::add", 1, 7_000, 7_100)
    r.launch(outside, "vectorized_add", 7_200, 500, 1, 7_050)

    out = attribute_gpu(c, refs, r.events, RUN, GRAPH)

    assert out.kernel_us[key_of[first]] == pytest.approx(0.8)
    assert out.kernel_us[extern_key] == pytest.approx(2.1)  # both kernels of the operator, nested or not
    assert out.kernel_us[key_of[second]] == pytest.approx(0.3)
    assert dict(out.unattributed) == {"unexpected_memset": pytest.approx(0.05)}
    assert out.total_us == pytest.approx(0.8 + 2.1 + 0.3 + 0.05)  # the work outside the graphs is not counted
    assert out.calls[key_of[first]] == 2 and out.calls[extern_key] == 1 and out.calls[key_of[second]] == 1
    assert out.key_of_correlation == {a: key_of[first], b: extern_key, c2: extern_key, d: key_of[second],
                                      f: key_of[first]}
    assert [row[0] for row in out.timeline] == [key_of[first], extern_key, extern_key, key_of[second], key_of[first]]
    assert out.timeline[0][1:] == [1.0, 0.4]  # µs from the run's start, and its duration


def test_extern_calls_match_in_wrapper_order_past_unrelated_operators(compiled):
    c, refs = compiled
    graph = c.graphs[0]
    externs = externs_in_wrapper_order(c, refs)[graph.id]
    r = Recorder()
    r.host(RUN, 1, 0, 1_000)
    r.host(GRAPH + graph.id, 1, 0, 1_000)
    other = r.host("aten::not_an_extern", 1, 10, 20)
    r.launch(other, "fill", 100, 10, 1, 15)
    calls = []
    for i, (_, op) in enumerate(externs):
        host = r.host(op, 1, 100 + 100 * i, 150 + 100 * i)
        calls.append(r.launch(host, "gemm", 500 + 10 * i, 5, 1, 120 + 100 * i))
    out = attribute_gpu(c, refs, r.events, RUN, GRAPH)
    assert [out.key_of_correlation[x] for x in calls] == [key for key, _ in externs]
    assert dict(out.unattributed) == {"fill": pytest.approx(0.01)}


def test_each_kernels_time_per_run_is_kept_and_a_kernel_that_moves_more_than_2x_gets_a_note(compiled):
    from compiler.model.unstable_times import spread_note
    from compiler.runs.profile import run_ms

    c, refs = compiled
    graph = c.graphs[0]
    generated = [k for k in graph.kernels if k.language != "extern"]
    key_of = {k.name: next(key for key, r in refs.items() if r.kernel == k.id) for k in generated}
    steady, jumpy = generated[0].name, generated[-1].name
    r = Recorder()
    for start, jumpy_us in [(0, 1_000), (20_000, 3_000), (40_000, 1_100)]:  # three runs
        r.host(RUN, 1, start, start + 10_000)
        r.host(GRAPH + graph.id, 1, start + 100, start + 9_000)
        r.launch(r.host(steady, 1, start + 200, start + 300), steady, start + 1_000, 500, 1, start + 250)
        r.launch(r.host(jumpy, 1, start + 400, start + 500), jumpy, start + 2_000, jumpy_us, 1, start + 450)
    r.host(GRAPH + graph.id, 1, 60_000, 61_000)  # a graph call outside every run: counted, in no run
    r.launch(r.host(steady, 1, 60_100, 60_200), steady, 60_300, 500, 1, 60_150)
    # the profiler lists events in no promised order: the second run's mark comes first
    r.events.insert(0, r.events.pop(r.events.index(next(e for e in r.events if e.start_ns == 20_000))))

    out = attribute_gpu(c, refs, r.events, RUN, GRAPH)

    assert run_ms(out.run_us) == {key_of[steady]: pytest.approx([5e-4, 5e-4, 5e-4]),  # ms, from ns
                                  key_of[jumpy]: pytest.approx([1e-3, 3e-3, 1.1e-3])}
    assert out.kernel_us[key_of[steady]] == pytest.approx(2.0)  # the call outside the runs still counts
    note = spread_note(run_ms(out.run_us), "cuda:0")
    assert note.startswith("1 kernel's time varied more than 2x between runs") and key_of[jumpy] in note


def test_raw_events_of_a_real_profile_link_nothing_on_cpu_and_carry_the_marks():
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    prof.start()
    with torch.profiler.record_function(GRAPH + "g0"):
        torch.ones(4) + 1
    prof.stop()
    events = profiling.raw_events(prof)
    mark = next(e for e in events if e.name == GRAPH + "g0")
    inside = [e for e in events if e.name == "aten::add" and mark.start_ns <= e.start_ns <= mark.end_ns]
    assert inside and inside[0].thread == mark.thread and not inside[0].on_device
    assert all(e.linked == 0 for e in events)


def test_kernels_replayed_from_a_cuda_graph_go_to_the_recorded_functions_launches(compiled):
    c, refs = compiled
    graph = c.graphs[0]
    launches = [k.id for _, k in sorted((line, k) for k in graph.kernels for line in k.wrapper_lines)]
    assert any(graph.kernel(k).language == "extern" for k in launches)
    graph.cudagraphs = GraphCudaGraphs(device="cuda:0", partitions=[CudaGraphPartition(
        index=0, captured=True, function="partition_0", kernels=list(dict.fromkeys(launches)), launches=launches)])
    key_of = {r.kernel: key for key, r in refs.items() if r.graph == graph.id}
    try:
        r = Recorder()
        expected_us: dict[str, float] = {}
        for run, start in enumerate((0, 100_000)):
            r.host(RUN, 1, start, start + 50_000)
            mark = r.host(GRAPH + graph.id, 1, start + 100, start + 40_000)
            call = r.host("## Call CompiledFxGraph fx0 ##", 1, start + 200, start + 39_000)
            r.next_id += 1
            correlation = 5000 + r.next_id  # one launch of the whole recorded function
            r.events.append(RawEvent("cudaGraphLaunch", False, 1, start + 300, start + 310, correlation, call))
            at = start + 1_000
            for kernel_id in launches:
                kernel = graph.kernel(kernel_id)
                # cuBLAS may run two device kernels for one extern call
                names = ["gemm_main", "gemm_epilogue"] if kernel.language == "extern" else [kernel.name]
                for name in names:
                    r.events.append(RawEvent(name, True, 0, at, at + 100, correlation, mark))
                    expected_us[key_of[kernel_id]] = expected_us.get(key_of[kernel_id], 0.0) + 0.1
                    at += 200
        out = attribute_gpu(c, refs, r.events, RUN, GRAPH)
    finally:
        graph.cudagraphs = None
    assert dict(out.unattributed) == {}
    assert {key: pytest.approx(us) for key, us in expected_us.items()} == dict(out.kernel_us)
    assert dict(out.calls) == {key_of[k]: 2 * launches.count(k) for k in set(launches)}  # two runs
    assert out.key_of_correlation == {}  # one correlation names a whole replay, not a kernel
    assert {key: len(runs) for key, runs in run_ms(out.run_us).items()} == {key: 2 for key in expected_us}
