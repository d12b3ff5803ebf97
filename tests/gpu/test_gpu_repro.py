"""GPU: k.repro() of Triton kernels, run in a fresh interpreter that can import torch and triton but
nothing of this project (run with `pytest -m gpu`)."""

from __future__ import annotations

import runpy

import pytest
import torch

import explorer
from tests import gpu_edits, isolated, workloads

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def compilations():
    """A matmul epilogue fused with a reduction, a scan and a pointwise kernel; a split scan, whose
    kernel shares a zeroed workspace among its blocks; a training step, whose layer-norm kernel
    Inductor autotunes among several configs."""
    torch.manual_seed(0)
    mix = explorer.compile(workloads.kernel_mix, torch.randn(64, 128, device="cuda"),
                           torch.randn(128, 96, device="cuda"), torch.randn(96, device="cuda"))
    scan = explorer.compile(workloads.running_sum, torch.randn(1 << 20, device="cuda"))
    training = explorer.compile(workloads.TinyMLP().cuda(), torch.randn(64, 16, device="cuda"), backward=True)
    return {"mix": mix, "scan": scan, "training": training}


def _triton(c):
    return [k for k in c.kernels if k.language in ("triton", "template")]


def _autotuned(c):
    """Kernels Inductor benchmarked several configs of, each with the config it chose."""
    records = [r for g in c.graphs for r in g.autotune if r.source == "triton_heuristics"]
    chosen = {r.kernel: r.choice for r in records if r.chosen}
    return [(k, chosen[k.name]) for k in _triton(c)
            if k.name in chosen and sum(r.kernel == k.name for r in records) > 1]


def test_every_triton_kernel_reproduces_in_a_bare_interpreter(compilations, tmp_path):
    kernels = [k for c in compilations.values() for k in _triton(c)]
    assert any("scan" in k.source for k in _triton(compilations["mix"]))
    assert any(k.name.startswith("triton_spl_") for k in _triton(compilations["scan"]))
    for kernel in kernels:
        script = kernel.repro(tmp_path / f"{kernel.graph.compilation.function}_{kernel.graph.id}_{kernel.id}.py")
        done = isolated.run(script)
        assert done.returncode == 0, f"{kernel.id}: {done.stdout}{done.stderr[-3000:]}"
        assert "outputs match the saved ones" in done.stdout


def test_an_autotuned_kernel_runs_its_chosen_config_alone(compilations, tmp_path):
    (kernel, choice), *_ = _autotuned(compilations["training"])
    script = kernel.repro(tmp_path / "tuned.py")
    namespace = runpy.run_path(str(script), run_name="reading")  # defines, launches nothing
    config = namespace["CONFIG"]
    assert config["kwargs"] and all(f"{key}: {value}" in choice for key, value in config["kwargs"].items())
    tuner = namespace["load_triton"](namespace["SOURCE"], namespace["NAME"], config)
    assert len(tuner.configs) == 1
    namespace["launch_triton"](tuner, torch.load(tmp_path / "tuned.pt", weights_only=True)["inputs"])
    assert len(tuner.launchers) == 1 and tuner.launchers[0].config.kwargs == config["kwargs"]
    done = isolated.run(script, "--bench")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "outputs match the saved ones" in done.stdout and "ms per launch" in done.stdout


def test_a_wrong_edit_exits_1_and_an_equivalent_one_0(compilations, tmp_path):
    kernel = next(k for k in _triton(compilations["mix"]) if "sin" in k.id)
    wrong = kernel.repro(tmp_path / "wrong.py", source=gpu_edits.wrong(kernel.source))
    done = isolated.run(wrong)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "MISMATCH: max error" in done.stdout
    same = kernel.repro(tmp_path / "same.py", source=gpu_edits.equivalent(kernel.source))
    assert isolated.run(same).returncode == 0


def test_random_inputs_on_the_gpu_still_check(compilations, tmp_path):
    for kernel in _triton(compilations["mix"]):
        done = isolated.run(kernel.repro(tmp_path / f"{kernel.id}.py", inputs="random"))
        assert done.returncode == 0, f"{kernel.id}: {done.stdout}{done.stderr[-3000:]}"
        assert "inputs: random (seed 0)" in done.stdout and "outputs match the saved ones" in done.stdout


def test_a_loaded_gpu_trace_kernel_runs_on_random_inputs(compilations, tmp_path):
    compilations["mix"].save(tmp_path / "trace.json")
    for kernel in _triton(explorer.load(tmp_path / "trace.json")):
        with pytest.warns(UserWarning, match="loaded trace"):
            script = kernel.repro(tmp_path / f"{kernel.id}.py")
        done = isolated.run(script)
        assert done.returncode == 0, f"{kernel.id}: {done.stdout}{done.stderr[-3000:]}"
        assert "no saved outputs: ran only" in done.stdout
