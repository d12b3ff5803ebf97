"""c.profile(): kernel times measured in place on CPU, attributed to kernels, nodes and the user's lines."""

from __future__ import annotations

import io
import json

import pytest
import torch
from rich.console import Console

import explorer
from compiler.model import provenance
from compiler._torch import profiling, runtime
from compiler.io import chrome_trace as profile_trace
from compiler.runs.profile import ProfilerBusyError
from compiler.runs.replay import NotRunnableError
from tests import workloads


@pytest.fixture(scope="session")
def blocks():
    torch.manual_seed(0)
    model = torch.nn.Sequential(workloads.ResidualBlock(256), workloads.ResidualBlock(256))
    x = torch.randn(1024, 256)
    with torch.no_grad():
        c = explorer.compile(model, x)
    return c, c.profile(runs=5, warmup=2)


def test_kernel_time_is_attributed_to_kernels(blocks):
    c, p = blocks
    assert p.device == "cpu" and p.runs == 5 and p.warmup == 2
    assert set(p.kernel_ms) == {k.id for k in c.kernels}
    assert all(ms > 0 for ms in p.kernel_ms.values()), p.kernel_ms
    assert all(calls == 1 for calls in p.kernel_calls.values())
    assert {c.graphs[0].kernel(ref.kernel).language for ref in p.kernels.values()} == {"cpp", "extern"}
    # every operator ran inside a kernel's range: only the wrapper's own Python is left unattributed (how
    # long that takes depends on the machine's load, so it is not compared with the kernels' time)
    assert set(p.unattributed) <= {"wrapper Python code"}, p.unattributed
    assert p.unattributed_ms == pytest.approx(p.total_ms - p.attributed_ms, rel=1e-6, abs=1e-9)
    assert p.wall_ms >= p.total_ms
    assert sum(p.fraction.values()) == pytest.approx(p.attributed_ms / p.total_ms)
    assert p is c.profiles[-1]


def test_times_spread_to_nodes_and_the_models_lines(blocks):
    c, p = blocks
    graph = c.graphs[0]
    linked = sum(p.ms(k) for k in graph.kernels if k.post_grad_nodes)
    assert sum(p.post_grad_ms["g0"].values()) == pytest.approx(linked)
    assert sum(p.fx_node_ms["g0"].values()) == pytest.approx(sum(p.ms(k) for k in graph.kernels if k.fx_nodes))
    assert sum(p.line_ms.values()) == pytest.approx(sum(p.ms(k) for k in graph.kernels if k.user_lines))
    assert p.line_ms and all(file.endswith("tests/workloads.py") for file, _ in p.line_ms)
    mm = next(k for k in graph.kernels if k.language == "extern")
    (where, _), *_ = p.top_lines(1)
    assert where in [tuple(u) for u in mm.user_lines]  # the matmul's line costs the most
    nodes = {n.name: n for n in graph.post_grad.nodes}
    computing = provenance.computing_nodes(mm, nodes)
    assert computing and len(computing) < len(mm.post_grad_nodes)  # the weight's view computes nothing...
    for name in mm.post_grad_nodes:  # ...and gets none of the matmul's time
        expected = p.ms(mm) / len(computing) - 1e-12 if name in computing else 0.0
        assert p.post_grad_ms["g0"].get(name, 0.0) >= expected and (name in computing or name not in p.post_grad_ms["g0"])


def test_profile_round_trips_through_the_trace(tmp_path, blocks):
    c, p = blocks
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    (again,) = loaded.profiles[-1:]
    assert again == p
    assert again.line_ms == p.line_ms and again.kernel_ms == p.kernel_ms
    out = tmp_path / "loaded.trace.json"
    again.export_chrome_trace(out)
    names = {e["name"] for e in json.loads(out.read_text())["traceEvents"]}
    assert names == set(p.kernel_ms)


def test_profile_renders_top_kernels_and_lines(blocks):
    _, p = blocks
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(p)
    text = console.file.getvalue()
    top = p.top_kernels(1)[0][0]
    assert "top kernels" in text and "top source lines" in text and top in text and "workloads.py:" in text
    assert top in p._repr_html_() and "Profile(cpu, 5 runs" in repr(p)


def test_live_chrome_trace_names_kernels_by_explorer_id(tmp_path, blocks):
    _, p = blocks
    path = p.export_chrome_trace(tmp_path / "live.json")
    names = {e.get("name") for e in json.loads(path.read_text())["traceEvents"]}
    assert set(p.kernel_ms) - {k for k in p.kernel_ms if k.startswith("extern")} <= names


def test_gpu_kernels_are_renamed_by_the_kernel_they_were_attributed_to(blocks):
    # The CUDA branch of the export, on a trace shaped like Kineto's: a GPU kernel whose correlation the
    # profile attributed takes that kernel's key; one it did not attribute keeps its name.
    import dataclasses

    _, p = blocks
    key = next(iter(p.kernel_ms))
    gpu = dataclasses.replace(p, _gpu_kernel_keys={11: key})
    trace = {"traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 7, "ts": 120.0, "dur": 2.0,
         "args": {"correlation": 11}},
        {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "tid": 0, "ts": 130.0, "dur": 9.0, "args": {"correlation": 11}},
        {"ph": "X", "cat": "kernel", "name": "memset", "tid": 0, "ts": 310.0, "dur": 1.0, "args": {"correlation": 12}},
    ]}
    assert profile_trace.rename_gpu_kernels(trace, gpu) == 1
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert kernels[0]["name"] == key and kernels[0]["args"]["cuda_name"] == "sm90_gemm"
    assert kernels[1]["name"] == "memset" and trace["traceEvents"][0]["name"] == "cudaLaunchKernel"


def test_backward_profile_runs_backward_and_leaves_grads_alone():
    torch.manual_seed(0)
    model = workloads.TinyMLP(64, 128)
    x = torch.randn(256, 64)
    c = explorer.compile(model, x, backward=True)
    for param in model.parameters():
        param.grad = None
    p = c.profile(runs=2, warmup=1)
    backward = next(g for g in c.graphs if g.kind == "backward")
    assert any(p.ms(k) > 0 for k in backward.kernels)
    assert all(param.grad is None for param in model.parameters())


def test_bad_requests_are_refused_and_change_nothing(tmp_path, blocks):
    c, _ = blocks
    before = list(c.profiles)
    with pytest.raises(ValueError, match="runs must be an int >= 1"):
        c.profile(runs=0)
    with pytest.raises(ValueError, match="warmup must be an int >= 0"):
        c.profile(warmup=-1)
    with torch.profiler.profile():
        with pytest.raises(ProfilerBusyError, match="another torch.profiler is already recording"):
            c.profile(runs=1)
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    with pytest.raises(NotRunnableError, match="loaded from a file"):
        loaded.profile()
    assert c.profiles == before and not profiling.profiler_active()


def test_kernel_globals_are_restored_even_when_a_run_fails(blocks):
    c, _ = blocks
    graph = c.graphs[0]
    names = [k.name for k in graph.kernels if k.language == "cpp"]
    namespace = runtime.wrapper_globals(graph.compiled_fn, names)
    originals = {name: namespace[name] for name in names}
    with pytest.raises(RuntimeError, match="boom"):
        with profiling.marked_kernels([(namespace, {n: f"explorer:g0/{n}" for n in names})]) as marked:
            assert marked == len(names) and all(namespace[n] is not originals[n] for n in names)
            raise RuntimeError("boom")
    assert all(namespace[n] is originals[n] for n in names)


def test_a_profile_writes_none_of_the_profilers_native_lines(blocks, capfd):
    """kineto writes ``USDT: ... profiler_start`` / ``profiler_stop`` to file descriptor 2, which a notebook
    shows in red under the cell; a profile drops those lines and only those."""
    import os

    from compiler._torch import profiling

    c = blocks[0]
    capfd.readouterr()
    c.profile(runs=1, warmup=0)
    with profiling.native_lines_dropped():
        os.write(2, b"USDT:2026-11-23 23:47:58 18231:18231 SyncActivityProfilerHandler.cpp:52] profiler_start\n")
        os.write(2, b"a line of the user's own\n")
    err = capfd.readouterr().err
    assert "profiler_start" not in err and "profiler_stop" not in err and "SyncActivityProfilerHandler" not in err
    assert "a line of the user's own" in err
