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
from rich.console import Console

import explorer
from compiler.model import progress
from compiler.model.counters import CountersReport, KernelCounters
from compiler.model.errors import CountersUnavailable
from compiler.runs import ncu_report

FIXTURES = Path(__file__).parent / "fixtures" / "counters"
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
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).parent / 'fake_ncu.py'} \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("INDUCTOR_EXPLORER_NCU", str(script))
    return script


def _loaded(name: str):
    return explorer.load(FIXTURES / f"{name}.json")


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
