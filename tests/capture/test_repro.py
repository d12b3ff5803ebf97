"""k.repro(path): a kernel as a standalone script, run in a fresh interpreter that can import torch and
nothing of this project (tests/isolated.py).

On CPU the kernels are C++; the Triton side is written from the GPU traces under tests/fixtures/ (and
run by tests/gpu/test_gpu_repro.py on the GPU machine).
"""

from __future__ import annotations

import runpy
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import explorer
from compiler.model import launch_args
from compiler.runs import repro
from tests import isolated, workloads
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def mix():
    torch.manual_seed(0)
    args = (torch.randn(16, 32), torch.randn(32, 48), torch.randn(48))
    return explorer.compile(workloads.kernel_mix, *args), args


def _header(script: Path) -> str:
    """The script's opening comment as one line of text, spaces collapsed (it is wrapped at 100 columns)."""
    lines = script.read_text().splitlines()
    comment = " ".join(line.lstrip("#") for line in lines[:lines.index("from __future__ import annotations")])
    return " ".join(comment.split())


def _generated(c):
    return [k for k in c.kernels if k.language == "cpp"]


def _accumulating(c):
    """The kernel that stores a reduction's accumulator (sum over the epilogue's output)."""
    return next(k for k in _generated(c) if "static_cast<float>(tmp_acc0);" in k.source)


def test_every_generated_kernel_reproduces_in_a_bare_interpreter(mix, tmp_path):
    c, args = mix
    before = [a.clone() for a in args]
    kernels = _generated(c)
    assert len(kernels) == 2 and {"extern"} == {k.language for k in c.kernels} - {"cpp"}  # mm and cumsum are ATen calls
    for kernel in kernels:
        script = kernel.repro(tmp_path / f"{kernel.id}.py")
        text = _header(script)
        for fact in ("model: kernel_mix", f"compile id {c.graphs[0].compile_id}", f"torch {torch.__version__}",
                     ", ".join(kernel.fx_nodes), f"{kernel.user_lines[0][0]}:{kernel.user_lines[0][1]}"):
            assert fact in text, fact
        timed = kernel is kernels[0]
        done = isolated.run(script, *(["--bench"] if timed else []))
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        assert "outputs match the saved ones" in done.stdout and ("ms per launch" in done.stdout) == timed
    assert all(torch.equal(a, b) for a, b in zip(args, before))  # the run took clones


def test_saved_inputs_are_the_arguments_before_the_launch(mix, tmp_path):
    c, (x, _, _) = mix
    kernel = next(k for k in _generated(c) if "sin" in k.id)  # (running * 2 in place, x, sin(x) + 1)
    kernel.repro(tmp_path / "pointwise.py")
    saved = torch.load(tmp_path / "pointwise.pt", weights_only=True)
    assert sorted(saved["outputs"]) == [0, 2] and torch.equal(saved["inputs"][1], x)
    torch.testing.assert_close(saved["outputs"][0], saved["inputs"][0] * 2)
    torch.testing.assert_close(saved["outputs"][2], torch.sin(x) + 1)


def test_corrupted_saved_outputs_exit_1_printing_the_max_error(mix, tmp_path):
    kernel = _generated(mix[0])[0]
    script = kernel.repro(tmp_path / "broken.py")
    saved = torch.load(tmp_path / "broken.pt", weights_only=True)
    position = next(iter(saved["outputs"]))
    saved["outputs"][position] = saved["outputs"][position] + 1.0
    torch.save(saved, tmp_path / "broken.pt")
    done = isolated.run(script)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "MISMATCH: max error 1" in done.stdout


def test_an_edited_cpp_source_is_checked_against_the_original_outputs(mix, tmp_path):
    kernel = _accumulating(mix[0])
    edited = kernel.source.replace("static_cast<float>(tmp_acc0);", "static_cast<float>(tmp_acc0 + 1.0f);")
    script = kernel.repro(tmp_path / "edited.py", source=edited)
    assert "EDITED" in _header(script) and "tmp_acc0 + 1.0f" in script.read_text()
    done = isolated.run(script)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "out_ptr0 (buf1): max abs error 1.0" in done.stdout and "MISMATCH: max error 1.0" in done.stdout


def test_random_inputs_write_a_small_file_and_still_check(mix, tmp_path):
    kernel = _accumulating(mix[0])
    kernel.repro(tmp_path / "captured.py")
    script = kernel.repro(tmp_path / "random.py", inputs="random")
    assert "inputs" not in torch.load(tmp_path / "random.pt", weights_only=True)
    assert (tmp_path / "random.pt").stat().st_size < (tmp_path / "captured.pt").stat().st_size
    done = isolated.run(script)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "inputs: random (seed 0)" in done.stdout and "outputs match the saved ones" in done.stdout


def test_a_loaded_trace_kernel_gets_random_inputs_and_says_so(mix, tmp_path):
    mix[0].save(tmp_path / "trace.json")
    loaded = explorer.load(tmp_path / "trace.json")
    for kernel in _generated(loaded):
        with pytest.warns(UserWarning, match="loaded trace"):
            script = kernel.repro(tmp_path / f"{kernel.id}.py")
        assert not script.with_suffix(".pt").exists()
        assert "note: " in _header(script) and "INPUTS = 'random'" in script.read_text()
        done = isolated.run(script)
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        assert "no saved outputs: ran only" in done.stdout


def test_an_existing_path_is_kept_without_overwrite(mix, tmp_path):
    kernel = _generated(mix[0])[0]
    script = tmp_path / "kept.py"
    script.write_text("# mine\n")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        kernel.repro(script)
    assert script.read_text() == "# mine\n" and not (tmp_path / "kept.pt").exists()
    (tmp_path / "other.pt").write_bytes(b"mine")  # the tensors file alone is protected too
    with pytest.raises(FileExistsError, match="other.pt"):
        kernel.repro(tmp_path / "other.py")
    assert kernel.repro(script, overwrite=True) == script and "def main(" in script.read_text()


def test_extern_kernels_and_bad_arguments_raise_clear_errors(mix, tmp_path):
    c, _ = mix
    for kernel in (k for k in c.kernels if k.language == "extern"):
        with pytest.raises(ValueError, match="extern kernel, a call of an existing op"):
            kernel.repro(tmp_path / "extern.py")
    kernel = _generated(c)[0]
    with pytest.raises(ValueError, match="inputs='zeros'"):
        kernel.repro(tmp_path / "x.py", inputs="zeros")
    with pytest.raises(ValueError, match="full source text"):
        kernel.repro(tmp_path / "x.py", source="  ")
    assert list(tmp_path.iterdir()) == []


def test_large_tensors_warn_with_their_size(mix, tmp_path, monkeypatch):
    monkeypatch.setattr(repro, "LARGE_BYTES", 1)
    with pytest.warns(UserWarning, match=r"writing 0 MB of tensors to .*large\.pt"):
        _generated(mix[0])[0].repro(tmp_path / "large.py")


@pytest.mark.parametrize("fixture", ["gpu_max_autotune", "gpu_split_scan", "gpu_default"])
def test_gpu_trace_kernels_write_pinned_triton_reproducers(fixture, tmp_path):
    """Written (not run: no GPU here) from a GPU trace: the chosen config pinned, the arguments from the
    kernel module's get_args(), the scan's workspace an integer tensor (drawn as zeros)."""
    c = explorer.load(FIXTURES / f"{fixture}.json")
    for kernel in (k for k in c.kernels if k.language in ("triton", "template")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            script = kernel.repro(tmp_path / f"{kernel.id}.py")
        namespace = runpy.run_path(str(script), run_name="reading")  # defines, launches nothing
        assert namespace["CONFIG"] == {"kwargs": kernel.meta["config"], "num_warps": kernel.meta["num_warps"],
                                       "num_stages": kernel.meta["num_stages"], "num_ctas": kernel.meta["num_ctas"]}
        assert namespace["NAME"] == kernel.name and namespace["SOURCE"] == kernel.source
        assert "pinned (no autotuning)" in _header(script) and f"Triton {c.triton}" in _header(script)
        args = namespace["ARGS"]
        assert [a for a in args if not isinstance(a, dict)] == [int(v) for v in kernel.meta["call_args"]
                                                               if v.lstrip("-").isdigit()]
        if fixture == "gpu_split_scan":
            assert args[2] == {"shape": [32768], "stride": [1], "dtype": "uint8", "device": "cuda:0"}
            workspace = namespace["make_args"]([{**args[2], "device": "cpu"}], 0)[0]
            assert workspace.dtype == torch.uint8 and not workspace.any()


def _launch_args(call: str, body: str) -> list:
    """launch_args of a C++ kernel whose wrapper is ``body`` followed by the kernel's ``call`` line."""
    kernel = SimpleNamespace(name="cpp_fused_k_0", language="cpp", source="", meta={}, wrapper_lines=[1, 3], call_lines=[3])
    wrapper = ("cpp_fused_k_0 = async_compile.cpp_pybinding(['const float*', 'float*', 'const int64_t'], '')\n"
               f"def call(args):\n    {call}\n{body}")
    return launch_args.launch_args(kernel, wrapper)


def test_launch_args_read_from_the_wrapper_alone():
    reuse = """
    buf0 = empty_strided_cpu((8, ), (1, ), torch.bfloat16)
    buf2 = torch.ops.aten.cumsum.default(arg0_1, dim=1)
    assert_size_stride(buf2, (4, 4), (4, 1), 'torch.ops.aten.cumsum.default')
    buf3 = buf2; del buf2  # reuse
"""
    assert _launch_args("cpp_fused_k_0(buf3, reinterpret_tensor(buf0, (4, ), (2, ), 1), 7)", reuse) == [
        {"shape": [4, 4], "stride": [4, 1], "dtype": "float32", "device": "cpu"},  # the parameter's dtype
        {"shape": [4], "stride": [2], "dtype": "bfloat16", "device": "cpu"}, 7]
    torch_2_14 = """
    assert_size_stride_grouped((arg0_1, ), ((4, ), ), ((1, ), ), 'input')
    buf1 = torch.ops.aten.sort.default(arg0_1)
    assert_tensor_metadata(buf1, (4, ), (1, ), torch.float64, 'torch.ops.aten.sort.default')
"""
    assert _launch_args("cpp_fused_k_0(arg0_1, buf1, 3)", torch_2_14) == [
        {"shape": [4], "stride": [1], "dtype": "float32", "device": "cpu"},
        {"shape": [4], "stride": [1], "dtype": "float64", "device": "cpu"}, 3]
    with pytest.raises(ValueError, match="'ks0' .*a symbol with no value in the trace"):
        _launch_args("cpp_fused_k_0(arg0_1, buf1, ks0)", torch_2_14)
    dynamic = """
    s77 = arg0_1
    buf0 = empty_strided_cpu((2*s77 + 1, s77), (s77, 1), torch.float32)
def get_args():
    arg0_1 = 5
"""
    assert _launch_args("cpp_fused_k_0(buf0, buf0, s77)", dynamic)[1:] == [
        {"shape": [11, 5], "stride": [5, 1], "dtype": "float32", "device": "cpu"}, 5]


def test_a_running_sum_matches_at_its_own_scale_and_a_wrong_value_does_not(capsys):
    """A split scan adds in another order on each launch: its error grows with the sum, not the element."""
    from compiler.runs import repro_script

    saved = torch.tensor([0.0, 1e-3, 50.0, 100.0])
    reordered = saved + torch.tensor([0.0, 2e-4, 4e-4, -4e-4])  # error 4e-4 at an element near 0
    assert repro_script.check([reordered], {0: saved}, {0: "out"}, {"float32": (1e-4, 1e-5)}) == 0
    wrong = saved + torch.tensor([0.0, 0.0, 0.0, 1.0])
    assert repro_script.check([wrong], {0: saved}, {0: "out"}, {"float32": (1e-4, 1e-5)}) == 1
    assert "MISMATCH: max error 1" in capsys.readouterr().out
