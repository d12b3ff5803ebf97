"""Compiled fixtures are shared by the whole session: CPU compiles take seconds each."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import torch

import explorer
from tests import workloads


def pytest_configure(config):
    """Each test process gets an Inductor cache directory of its own, so the warm captures a test meets are
    those of this run (explorer.compile is warm by default: capture_store.py), never an earlier run's."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-explorer-tests-")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU: run `pytest -m gpu` on the device machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def inductor_cache_dir(tmp_path: Path):
    """A fresh Inductor cache directory for one test (the warm-capture store lives under it): what a warm
    capture finds there is what the test itself stored."""
    before = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path / "inductor")
    try:
        yield tmp_path / "inductor"
    finally:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def no_idle_sweep_workers():
    """Sweep workers kept idle for a next sweep hold a torch process each; a test's are not reused by the
    next test (its environment differs), so they stop when it ends."""
    yield
    explorer.close_sweep_workers()


SWEEP_CONFIGS = [{}, {"allow_buffer_reuse": False}, {"inplace_buffers": False},
                 {"native_matmul": True, "use_block_ptr": True}]  # the last one raises: Inductor refuses the pair


@pytest.fixture(scope="session")
def local_sweep():
    """A 4-point sweep on two local workers, one point failing; and the progress steps it reported."""
    steps = []
    torch.manual_seed(0)
    result = explorer.sweep(workloads.matmul_relu, torch.randn(8, 8), configs=SWEEP_CONFIGS, runs=3,
                            progress_display=steps.append)
    return result, steps


@pytest.fixture(scope="session")
def reduction_compilation():
    torch.manual_seed(0)
    x = torch.randn(32, 64)
    return explorer.compile(workloads.reduction_with_pointwise, x), (x,)


@pytest.fixture(scope="session")
def matmul_compilation():
    torch.manual_seed(0)
    args = (torch.randn(16, 32), torch.randn(32, 48), torch.randn(48))
    return explorer.compile(workloads.matmul_epilogue, *args), args


@pytest.fixture(scope="session")
def graph_break_compilation():
    x = torch.randn(8, 8)
    return explorer.compile(workloads.with_graph_break, x), (x,)


@pytest.fixture(scope="session")
def training_compilation():
    torch.manual_seed(0)
    model = workloads.TinyMLP()
    x = torch.randn(4, 16)
    return explorer.compile(model, x, backward=True), (model, x)


@pytest.fixture(scope="session")
def demo_compilation():
    from explorer.demo import example

    model, x = example()
    with torch.no_grad():
        return explorer.compile(model, x), (model, x)


@pytest.fixture(scope="session")
def transformer_compilation():
    torch.manual_seed(0)
    model, x = workloads.TransformerBlock().eval(), torch.randn(2, 16, 64)
    with torch.no_grad():
        return explorer.compile(model, x), (model, x)


@pytest.fixture(scope="session")
def all_compilations(reduction_compilation, matmul_compilation, graph_break_compilation, training_compilation,
                     demo_compilation):
    return [reduction_compilation[0], matmul_compilation[0], graph_break_compilation[0],
            training_compilation[0], demo_compilation[0]]


@pytest.fixture(scope="session")
def two_rank_trace(tmp_path_factory):
    """examples/two_ranks.py run once under torchrun (gloo, 2 CPU ranks) with TORCH_TRACE: the logs' directory."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "two_ranks.py"
    spec = importlib.util.spec_from_file_location("two_ranks", path)
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    trace_dir = tmp_path_factory.mktemp("two_rank_trace")
    result = job.launch(trace_dir, backend="gloo")
    assert result.returncode == 0, f"the torchrun job failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    return trace_dir


@pytest.fixture(scope="session")
def kernel_specs(tmp_path_factory):
    """A kernelspec that launches this interpreter (the venv's), not whatever `python3` is on PATH."""
    from tests.notebook_runner import write_kernel_spec  # notebook tests only: GPU machines lack jupyter_client

    return write_kernel_spec(tmp_path_factory.mktemp("kernels"))
