"""Hardware counters on a CPU machine: Nsight Compute's exports recorded on an H200 (tests/fixtures/counters,
made by tests/record_counters_fixture.py) are parsed, checked against ncu's own details page, rolled up
through provenance, saved, loaded and rendered; the launcher runs against a stand-in ncu (fake_ncu.py)."""

from __future__ import annotations

import csv
import gzip
import io
import os
import sys
from pathlib import Path

import pytest
import torch
from rich.console import Console

import explorer
from compiler.model import progress, provenance
from compiler.model.counters import CountersReport, KernelCounters
from compiler.model.errors import CountersUnavailable
from compiler.model.kernel_file import source_offset
from compiler.runs import counters as counters_run
from compiler.runs import counters_job, ncu_report
from tests import fake_ncu as fake_ncu_module
from tests import paths

FIXTURES = paths.FIXTURES / "counters"
KERNEL_FILES = sorted(FIXTURES.glob("counters_*.py"))


def _text(name: str) -> str:
    return gzip.decompress((FIXTURES / name).read_bytes()).decode()


def details_page(text: str) -> dict[str, dict[tuple[str, str], float]]:
    """ncu's details page (``--page details --csv --print-units base``): kernel name -> (section, metric) -> value."""
    rows = list(csv.DictReader(io.StringIO(text)))
    out: dict[str, dict[tuple[str, str], float]] = {}
    for row in rows:
        out.setdefault(row["Kernel Name"], {})[(row["Section Name"], row["Metric Name"])] = ncu_report.number(row["Metric Value"])
    return out


@pytest.fixture(scope="module")
def parsed() -> list[KernelCounters]:
    rows = ncu_report.raw_rows(_text("raw.csv.gz"))
    sources = {p.name.split(".")[1]: p.read_text() for p in KERNEL_FILES}
    kernels = []
    for i, row in enumerate(rows):
        name = row["Kernel Name"][0]
        kernels.append(ncu_report.kernel_counters(row, _text(f"src_cuda_sass.{i}.csv.gz"), name,
                                                  kernel_source=sources[name]))
    return kernels


def test_raw_page_figures_agree_with_ncus_details_page(parsed):
    details = details_page(_text("details_base.csv.gz"))
    assert [k.name for k in parsed] == list(details)
    for k in parsed:
        page = details[k.name]
        assert k.duration_ns == pytest.approx(page[("GPU Speed Of Light Throughput", "Duration")])
        assert k.memory_sol == pytest.approx(page[("GPU Speed Of Light Throughput", "Memory Throughput")])
        assert k.compute_sol == pytest.approx(page[("GPU Speed Of Light Throughput", "Compute (SM) Throughput")])
        assert k.dram_bandwidth == pytest.approx(page[("Memory Workload Analysis", "Memory Throughput")], rel=1e-6)
        assert k.registers == page[("Launch Statistics", "Registers Per Thread")]
        assert k.achieved_occupancy == pytest.approx(page[("Occupancy", "Achieved Occupancy")])
        assert k.theoretical_occupancy == pytest.approx(page[("Occupancy", "Theoretical Occupancy")])
        assert k.device == "NVIDIA H200" and k.grid > 0 and k.block > 0


def test_line_figures_sum_to_the_kernel_and_own_lines_are_the_kernels_source(parsed):
    sources = {p.name.split(".")[1]: p.read_text().splitlines() for p in KERNEL_FILES}
    for k in parsed:
        assert k.samples > 0 and sum(line.samples for line in k.lines) == k.samples
        assert sum(line.instructions for line in k.lines) == k.instructions
        assert sum(k.stalls.values()) == k.samples  # every sample has a reason
        own = k.own_lines
        assert own, f"{k.name}: no line was recognised as the kernel's own source"
        for line in own:
            assert sources[k.name][line.line - 1].strip() == line.text
    softmax = next(k for k in parsed if "softmax" in k.name)
    assert any(line.file and line.file.endswith("triton_helpers.py") for line in softmax.lines)  # inlined helpers kept apart


@pytest.mark.parametrize("named_file", [True, False], ids=["worker-names-the-file", "file-found-by-its-text"])
def test_own_lines_are_the_captured_sources_when_the_loaded_file_has_a_line_above_it(named_file):
    """PyCodeCache can load a kernel from Inductor's own file of it, which holds the captured source one
    line lower (Inductor's text starts with a newline): ncu's lines are the file's, and shifted by the
    lines above the source they read as the captured source's, whether the worker names the file or
    the file is recognised by its text."""
    row = ncu_report.raw_rows(_text("raw.csv.gz"))[0]
    name = row["Kernel Name"][0]
    page = _text("src_cuda_sass.0.csv.gz")
    file_text = next(p for p in KERNEL_FILES if p.name.split(".")[1] == name).read_text()
    captured = file_text.split("\n", 1)[1]  # the file holds the captured source one line lower
    lines_above = source_offset(file_text, captured, name)
    assert lines_above == 1
    (own_path,) = [path for path, _, _ in ncu_report.source_blocks(page) if path.startswith("<inductor-cache>")]
    file = own_path if named_file else None
    k = ncu_report.kernel_counters(row, page, name, kernel_file=file, kernel_source=captured, lines_above=lines_above)
    in_file = ncu_report.kernel_counters(row, page, name, kernel_file=file, kernel_source=file_text)
    assert k.own_lines and [line.line for line in k.own_lines] == [line.line - 1 for line in in_file.own_lines]
    assert all(captured.splitlines()[line.line - 1].strip() == line.text for line in k.own_lines)
    unshifted = ncu_report.kernel_counters(row, page, name, kernel_file=file, kernel_source=captured)
    if named_file:  # the file's own numbers, read as the captured source's: the wrong lines
        assert any(captured.splitlines()[line.line - 1].strip() != line.text for line in unshifted.own_lines)
    else:  # no block reads as the captured source: no own line at all
        assert not unshifted.own_lines


def test_bound_by_follows_the_stated_rule(parsed):
    figures = {k.name: k for k in parsed}
    matmul = figures["triton_red_fused_add_gelu_mm_0"]
    assert matmul.memory_sol >= 60 and matmul.bound_by == "memory"
    softmax = next(k for name, k in figures.items() if "softmax" in name)
    assert max(softmax.memory_sol, softmax.compute_sol) < 60 and softmax.bound_by == "latency"
    assert KernelCounters("k", "k", memory_sol=40, compute_sol=75).bound_by == "compute"


def test_exports_that_are_not_ncus_are_refused_with_the_command_to_make_them():
    with pytest.raises(ncu_report.NcuExportError, match="--page raw --csv"):
        ncu_report.raw_rows("a,b\n1,2\n")
    with pytest.raises(ncu_report.NcuExportError, match="--print-source cuda,sass"):
        ncu_report.source_blocks("nothing here\n")


@pytest.fixture()
def fake_ncu(tmp_path, monkeypatch) -> Path:
    script = tmp_path / "ncu"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {paths.TESTS / 'fake_ncu.py'} \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("INDUCTOR_EXPLORER_NCU", str(script))
    return script


def _loaded(name: str):
    return explorer.load(FIXTURES / f"{name}.json")


def _loaded_gpu(name: str):
    """A GPU trace of tests/fixtures (its extern calls and, for gpu_profile, a profile ranking them)."""
    return explorer.load(FIXTURES.parent / f"{name}.json")


def test_counters_of_a_loaded_gpu_trace_roll_up_to_nodes_and_lines_and_survive_save(fake_ncu, tmp_path):
    c = _loaded("softmax")
    steps: list[progress.Step] = []
    with progress.task("test", steps.append):
        report = c.counters()
    assert isinstance(report, CountersReport) and c.counter_reports == [report]
    assert [s.done for s in steps if s.stage == "profiling"] == [0, 1]
    assert report.tool == "Nsight Compute 2025.3.1.0" and report.device == "NVIDIA H200" and not report.failed
    (k,) = report.kernels
    kernel = c.graphs[0].kernels[0]
    assert (k.kernel, k.graph) == (kernel.id, c.graphs[0].id)
    assert k.own_lines and all(kernel.lines[line.line - 1].strip() == line.text for line in k.own_lines)
    # the roll-up spreads every sample, and no more, to post-grad nodes, FX nodes and user lines
    graph = c.graphs[0].id
    assert sum(report.post_grad_samples[graph].values()) == pytest.approx(k.samples)
    assert sum(report.fx_node_samples[graph].values()) == pytest.approx(k.samples)
    assert sum(report.line_samples.values()) == pytest.approx(k.samples)
    assert set(report.post_grad_samples[graph]) <= set(kernel.post_grad_nodes)
    linked = [line for line in k.own_lines if kernel.line_nodes.get(line.line)]
    assert linked, "no measured line is linked to a post-grad node"
    assert kernel.counters() is not None and len(c.counter_reports) == 2
    # saved and loaded: every figure comes back
    path = c.save(tmp_path / "with_counters.json.gz")
    back = explorer.load(path).counter_reports
    assert len(back) == 2 and back[0].to_json() == report.to_json()
    text = Console(width=200, record=True)
    text.print(report)
    shown = text.export_text()
    assert "latency" in shown and "hardware counters" in shown and k.kernel[:20] in shown
    page = report.kernels[0]._repr_html_()
    assert f"<td>{next(iter(k.stalls))}</td>" in page and k.kernel in page


def test_counters_name_what_is_missing_and_keep_the_compilation_as_it_was(fake_ncu, monkeypatch, tmp_path):
    c = _loaded("matmul")
    monkeypatch.setenv("FAKE_NCU_MODE", "denied")
    with pytest.raises(CountersUnavailable, match="ERR_NVGPUCTRPERM"):
        c.counters()
    monkeypatch.delenv("FAKE_NCU_MODE")
    with pytest.raises(KeyError, match="did you mean"):
        c.counters(kernels=["triton_red_fused_add_gelu_mm_1"])
    assert c.counter_reports == []
    monkeypatch.setenv("INDUCTOR_EXPLORER_NCU", str(tmp_path / "nowhere" / "ncu"))
    with pytest.raises(CountersUnavailable, match="INDUCTOR_EXPLORER_NCU"):
        c.counters()
    monkeypatch.delenv("INDUCTOR_EXPLORER_NCU")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("CUDA_HOME", str(empty))
    with pytest.raises(CountersUnavailable, match="`ncu` was not found"):
        c.counters()
    assert c.counter_reports == []


def test_cancelling_stops_ncu_and_keeps_nothing(fake_ncu, monkeypatch, tmp_path):
    c = _loaded("softmax")
    monkeypatch.setenv("FAKE_NCU_MODE", "slow")
    monkeypatch.setenv("FAKE_NCU_PID", str(tmp_path / "pid"))

    def interrupt_after_the_first_kernel(step: progress.Step) -> None:
        if step.stage == "profiling" and step.done == 1:
            raise KeyboardInterrupt

    with pytest.raises(progress.Cancelled, match="cancelled during profiling"):
        with progress.task("counters", interrupt_after_the_first_kernel):
            c.counters()
    assert c.counter_reports == []
    with pytest.raises(ProcessLookupError):  # the stand-in ncu is gone, not left hanging
        os.kill(int((tmp_path / "pid").read_text()), 0)


def test_counters_of_a_cpu_compilation_say_they_need_a_gpu(reduction_compilation):
    with pytest.raises(CountersUnavailable, match="compiled for cpu"):
        reduction_compilation[0].counters()


# Extern kernels (cuBLAS, cuDNN, attention): each call re-run as the wrapper makes it, every device kernel
# it launched inside its NVTX range measured and combined, the whole attributed to its nodes and lines.

def _profile_ms(c, kernel) -> float:
    try:
        return c.profiles[-1].ms(kernel)
    except KeyError:
        return -1.0


def test_the_default_selection_is_the_slowest_kernels_extern_calls_included(fake_ncu):
    c = _loaded_gpu("gpu_profile")
    gpu = [k for k in c.kernels if k.language in ("triton", "template", "extern")]
    expected = sorted(gpu, key=lambda k: _profile_ms(c, k), reverse=True)[:6]
    assert {k.language for k in expected} == {"triton", "extern"}  # the selection mixes both kinds
    report = c.counters(top=6)
    assert [k.kernel for k in report.kernels] == [k.id for k in expected] and not report.failed
    for k, kernel in zip(report.kernels, expected):
        assert k.language == kernel.language and k.duration_ns > 0
        assert (k.device_kernels == [kernel.name]) == (kernel.language == "triton")


def test_an_extern_call_is_re_run_as_the_wrapper_calls_it():
    c = _loaded_gpu("gpu_profile")
    graph = c.graphs[0]
    kernel = graph.kernel("extern_kernels.mm:8")
    item = counters_job.job_item(kernel, 3)
    call = item["call"]
    line = graph.wrapper.source.splitlines()[kernel.wrapper_lines[0] - 1]
    assert item["kind"] == "extern" and item["range"] == f"{counters_job.RANGE_PREFIX}3"
    assert line.strip().startswith(call["function"] + "(")
    a, b = call["args"]
    out = call["kwargs"]["out"]
    node = next(graph.post_grad.node(n) for n in kernel.post_grad_nodes
                if graph.post_grad.node(n).target == "aten.mm.default")
    assert a["shape"][1] == b["shape"][0] and out["shape"] == [a["shape"][0], b["shape"][1]] == list(node.shape)
    for spec in (a, b):  # each operand with the view the wrapper passes (reinterpret_tensor's size and stride)
        assert f"({', '.join(map(str, spec['shape']))}), ({', '.join(map(str, spec['stride']))})" in line
    assert {spec["dtype"] for spec in (a, b, out)} == {str(node.dtype).removeprefix("torch.")}


def test_an_extern_calls_launches_are_combined_and_attributed_to_its_nodes_and_lines(fake_ncu, tmp_path):
    c = _loaded_gpu("gpu_profile")
    graph = c.graphs[0]
    kernel = graph.kernel("extern_kernels.mm:8")
    report = c.counters(kernels=[kernel])
    (k,) = report.kernels
    launches = [ncu_report.kernel_figures(row) for row in ncu_report.raw_rows(_text("raw.csv.gz"))]
    launched = fake_ncu_module.EXTERN_LAUNCHES["extern_kernels.mm"]
    parts = [{**launches[template], "name": name} for name, template in launched]
    assert len(parts) > 1  # the stand-in's mm launches a gemm and a split-K reduction
    assert k.device_kernels == [name for name, _ in launched]
    time = sum(p["duration_ns"] for p in parts)
    assert k.duration_ns == pytest.approx(time)
    assert k.dram_bytes == pytest.approx(sum(p["dram_bytes"] for p in parts)) and k.dram_bytes > 0
    assert k.dram_bandwidth == pytest.approx(k.dram_bytes / (time * 1e-9), rel=0.02)  # bytes over the time taken
    assert k.memory_sol == pytest.approx(sum(p["memory_sol"] * p["duration_ns"] for p in parts) / time)
    assert k.samples == sum(p["samples"] for p in parts) > 0 and k.lines == []
    longest = max(parts, key=lambda p: p["duration_ns"])
    assert (k.name, k.registers, k.grid) == (longest["name"], longest["registers"], longest["grid"])
    # every sample goes to the matmul's computing node (not the views of its operands), its FX node, its line
    nodes = {n.name: n for n in graph.post_grad.nodes}
    computing = [n for n in kernel.post_grad_nodes if not provenance.is_view(nodes[n])]
    assert computing and len(computing) < len(kernel.post_grad_nodes)
    assert report.post_grad_samples[graph.id] == {n: pytest.approx(k.samples / len(computing)) for n in computing}
    fx = {origin for n in computing for origin in nodes[n].fx}
    assert set(report.fx_node_samples[graph.id]) == fx
    assert sum(report.fx_node_samples[graph.id].values()) == pytest.approx(k.samples)
    assert report.line_samples == {nodes[computing[0]].user_line: pytest.approx(k.samples)}
    assert nodes[computing[0]].user_line in kernel.user_lines
    # shown with its device kernels, and kept through save and load
    text = Console(width=250, record=True)
    text.print(report)
    text.print(k)
    shown = text.export_text()
    assert kernel.id in shown and all(name[:30] in shown for name in k.device_kernels)
    assert all(name[:30] in report._repr_html_() for name in k.device_kernels)
    back = explorer.load(c.save(tmp_path / "extern.json")).counter_reports[-1]
    assert back.to_json() == report.to_json() and back.kernels[0].device_kernels == k.device_kernels


def test_kernels_that_cannot_be_measured_say_why(fake_ncu, monkeypatch):
    c = _loaded_gpu("gpu_profile")
    triton = next(k for k in c.kernels if k.language == "triton")
    monkeypatch.setenv("FAKE_NCU_MODE", "no_extern_launch")  # a fallback whose call launches no device kernel
    report = c.counters(kernels=["extern_kernels.mm:8", triton])
    assert [k.kernel for k in report.kernels] == [triton.id]
    assert "launched no GPU kernel" in report.failed["extern_kernels.mm:8"]
    only_extern = c.counters(kernels=["extern_kernels.addmm"])  # nothing profiled at all: ncu writes no report
    assert only_extern.kernels == [] and "launched no GPU kernel" in only_extern.failed["extern_kernels.addmm"]
    monkeypatch.delenv("FAKE_NCU_MODE")
    lost = c.graphs[0].kernel("extern_kernels.mm:6")
    monkeypatch.setattr(lost, "wrapper_lines", [])  # its call is not in the wrapper any more
    with pytest.raises(CountersUnavailable, match="extern_kernels.mm:6: its call cannot be re-run"):
        c.counters(kernels=[lost])
    report = c.counters(top=5)  # picked by the default selection: reported, the others measured
    assert "cannot be re-run" in report.failed[lost.id] and lost.id not in [k.kernel for k in report.kernels]
    assert len(report.kernels) == 4
    monkeypatch.setattr(triton, "language", "cpp")
    with pytest.raises(CountersUnavailable, match="cpp kernel, which runs on the CPU"):
        c.counters(kernels=[triton])


def test_each_launch_goes_to_the_job_item_whose_nvtx_range_it_ran_in():
    # items 0 and 2 extern, 1 Triton; None: a launch a library's own range renamed (CUB, Thrust)
    assert ncu_report.launches_by_item([0, None, 0, 1, None, 2], 3, {0, 2}) == [[0, 1, 2], [3], [4, 5]]
    assert ncu_report.launches_by_item([None, 1], 2, {0}) == [[0], [1]]  # before the first named: the extern
    assert ncu_report.launches_by_item([0, 0], 3, {0, 2}) == [[0, 1], [], []]  # an item that launched nothing
    with pytest.raises(ValueError, match=r"items \[0, 1\] could each"):
        ncu_report.launches_by_item([0, None, 1], 2, {0, 1})


def test_without_the_nvtx_filter_warm_up_launches_cannot_be_told_apart(fake_ncu, monkeypatch):
    """Without ``--nvtx`` the warm-up calls are profiled too, outside any range: between two extern calls
    nothing says whose they are, and the run says so rather than adding them to either."""
    c = _loaded_gpu("gpu_profile")
    at = counters_run.NCU_OPTIONS.index("--nvtx")
    monkeypatch.setattr(counters_run, "NCU_OPTIONS", counters_run.NCU_OPTIONS[:at])
    with pytest.raises(CountersUnavailable, match="cannot be told apart by NVTX range"):
        c.counters(kernels=["extern_kernels.mm:8", "extern_kernels.addmm"])
    assert c.counter_reports == []


def _on_cpu(value):
    if isinstance(value, list):
        return [_on_cpu(v) for v in value]
    if isinstance(value, dict) and "shape" in value:
        return {**value, "device": "cpu"}
    return value


def test_the_worker_calls_an_extern_kernel_on_tensors_of_the_wrapper_layouts():
    """The worker's call of an extern item, run on the CPU: Inductor's own extern_kernels.addmm on seeded
    random tensors with the wrapper's sizes and strides (a transposed weight included)."""
    from compiler.runs import counters_worker

    c = _loaded_gpu("gpu_profile")
    item = counters_job.job_item(c.graphs[0].kernel("extern_kernels.addmm"), 0)
    call = item["call"]
    item["call"] = {**call, "args": _on_cpu(call["args"]), "kwargs": {n: _on_cpu(v) for n, v in call["kwargs"].items()}}
    out = counters_worker._extern_call(item)()
    bias, a, b = (counters_worker._value(spec) for spec in item["call"]["args"])
    assert list(out.shape) == call["kwargs"]["out"]["shape"] and list(b.stride()) == call["args"][2]["stride"]
    torch.manual_seed(counters_worker.SEED)  # the same seeded tensors again: the call computed bias + a @ b
    bias, a, b = (counters_worker._value(spec) for spec in item["call"]["args"])
    assert torch.allclose(out, bias + a @ b, atol=1e-4)


def test_an_attention_that_reads_its_qkv_through_views_is_rebuilt_as_its_one_aten_op():
    """An extern attention lists the split, view and permute nodes it reads q, k and v through (views belong
    to their readers); re-running it for counters calls the attention alone, on its inputs' layouts."""
    from compiler.runs.node_call import node_call
    from tests.conformance.test_conformance import result as conformance_result

    graph = conformance_result("gpt2").compilation.graphs[0]
    attention = next(k for k in graph.kernels if k.language == "extern" and "scaled_dot_product" in k.name)
    targets = {graph.post_grad.node(n).target for n in attention.post_grad_nodes}
    assert {"aten.split.Tensor", "aten.permute.default"} <= targets  # the views it reads, listed with it
    call = node_call(attention)
    assert call["function"] == "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
    q, k, v = call["args"]  # each a strided view of the one q/k/v matmul's output
    assert q["shape"] == k["shape"] == v["shape"] == [2, 4, 16, 16] and q["stride"] == [3072, 16, 192, 1]
