"""GPU: a Hugging Face GPT-2 (built from a small config) exported and compiled with AOTInductor, captured,
profiled, checked kernel by kernel, measured with Nsight Compute and its Triton kernels reproduced on the
loaded package (run with `pytest -m gpu tests/gpu/test_gpu_export.py`); a package torch's loader would
crash on is refused; the JIT compile with the C++ wrapper."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch
import transformers

import explorer
from tests import gpu_edits, isolated

pytestmark = pytest.mark.gpu


_TORCH_ALONE = """
import torch
m = torch.nn.Linear(16, 16).cuda()
x = torch.randn(4, 16, device="cuda")
path = torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,)))
torch.testing.assert_close(torch._inductor.aoti_load_package(path)(x), m(x))
"""


SYSTEM_GXX = "/usr/bin/g++"


def _torch_alone(env: dict[str, str]) -> int:
    """Exit code of torch's own AOTInductor, without the explorer, in a child process (negative: a signal)."""
    result = subprocess.run([sys.executable, "-c", _TORCH_ALONE], capture_output=True, text=True, timeout=600,
                            env={**os.environ, **env})
    assert result.returncode <= 0, result.stderr[-2000:]
    return result.returncode


@pytest.fixture(scope="module")
def default_compiler_crashes():
    """Whether torch itself dies loading a CUDA package built with this machine's default C++ compiler. On
    the device machines CXX names a GCC under /opt that links libstdc++ statically into the package's
    library, and torch's loader then dies with signal 11 (std::regex in the model container)."""
    return _torch_alone({}) < 0


@pytest.fixture(scope="module")
def package_config(default_compiler_crashes):
    """The config the GPU package tests build with: the default compiler, or the system g++ where the
    default one's packages crash torch itself."""
    if not default_compiler_crashes:
        return {}
    if not os.path.exists(SYSTEM_GXX) or _torch_alone({"CXX": SYSTEM_GXX}) < 0:
        pytest.fail(f"torch's own packages crash on load here with the default compiler and with {SYSTEM_GXX}")
    return {"cpp.cxx": (SYSTEM_GXX,)}


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory, package_config):
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=2048, n_positions=128)
    model = transformers.GPT2LMHeadModel(config).eval().cuda()
    ids = torch.randint(0, config.vocab_size, (4, 64), device="cuda")
    kwargs = {"use_cache": False, "return_dict": False}
    folder = tmp_path_factory.mktemp("gpt2")
    c = explorer.export(model, (ids,), kwargs=kwargs, package_path=folder / "gpt2.pt2", trace_dir=folder / "trace",
                        config=package_config)
    return c, model, ids, kwargs


def test_a_package_torch_cannot_load_here_is_refused_without_ending_the_process(default_compiler_crashes, tmp_path):
    """With the default compiler: where its packages crash torch's loader, explorer.export says why after a
    child process tried; elsewhere the export simply works. Either way this process is still running."""
    model = torch.nn.Linear(16, 16).cuda()
    x = torch.randn(4, 16, device="cuda")
    if default_compiler_crashes:
        with pytest.raises(explorer.CompileError, match=r"died with signal 11 .*carries its own copy of the C\+\+ runtime"):
            explorer.export(model, (x,), package_path=tmp_path / "linear.pt2")
    else:
        torch.testing.assert_close(explorer.export(model, (x,), package_path=tmp_path / "linear.pt2").run(), model(x))


def test_gpt2_package_is_captured_with_triton_kernels_linked_to_the_model(gpt2):
    c, model, _, _ = gpt2
    assert c.device.startswith("cuda") and c.export is not None
    assert c.export.user_inputs and any(s["kind"] == "PARAMETER" for s in c.export.inputs)
    (g,) = c.graphs
    assert g.wrapper.language == "cpp" and g.loop_ir and g.fused
    triton = [k for k in g.kernels if k.language in ("triton", "template")]
    assert triton and all("@triton.jit" in k.source for k in triton)  # sources from the Python pass
    called = set(g.wrapper.kernel_lines.values())
    assert {k.id for k in triton} <= called
    gpt2_file = type(model.transformer.h[0]).__module__.replace(".", "/")
    linked = [k for k in triton if any(gpt2_file in file for file, _ in k.user_lines)]
    assert len(linked) >= len(triton) // 2, [(k.id, k.user_lines[:2]) for k in triton]


def test_gpt2_package_outputs_match_eager_and_torchs_own_loader(gpt2):
    c, model, ids, kwargs = gpt2
    with torch.no_grad():
        expected = model(ids, **kwargs)[0]
    torch.testing.assert_close(c.run()[0], expected, rtol=1e-3, atol=1e-3)
    own = torch._inductor.aoti_load_package(c.export.package_path)
    torch.testing.assert_close(own(ids, **kwargs)[0], c.run()[0])


def test_gpt2_profile_attributes_the_package_kernels(gpt2):
    c, _, _, _ = gpt2
    p = c.profile(runs=10)
    triton = [k.id for k in c.graphs[0].kernels if k.language in ("triton", "template")]
    timed = [k for k in triton if p.kernel_ms.get(k, 0) > 0]
    assert len(timed) == len(triton), sorted(set(triton) - set(timed))  # every launch seen on the device
    externs = [k.id for k in c.graphs[0].kernels if k.language == "extern"]
    assert any(p.kernel_ms.get(k, 0) > 0 for k in externs), p.kernel_ms  # cuBLAS inside the shims' ranges
    assert 0 < p.attributed_ms <= p.total_ms, p
    assert p.line_ms  # time reached the model's lines


def test_gpt2_numerics_on_the_package_compare_its_triton_kernels(gpt2):
    c, _, _, _ = gpt2
    report = c.check_numerics()
    triton = {k.id for k in c.graphs[0].kernels if k.language in ("triton", "template")}
    assert triton
    compared = {kid for kid, row in report.kernels.items() if any(b.compared for b in row.buffers)}
    intermediate = "no post-grad node holds this buffer's value"
    unexplained = {k: [(b.buffer, b.note) for b in report.kernels[k].buffers] for k in sorted(triton - compared)
                   if not all(intermediate in (b.note or "") for b in report.kernels[k].buffers)}
    assert not unexplained, (report.notes, unexplained)
    # only the attention's mask kernel may go uncompared: what it writes is a buffer Inductor made for the
    # attention call, which no post-grad node holds
    assert all("scaled_dot_product" in k for k in triton - compared), sorted(triton - compared)


def test_gpt2_package_triton_kernels_reproduce_from_their_launch_in_the_package(gpt2, tmp_path):
    """A Triton kernel's reproducer takes its arguments from the package's saving copy (the launcher's
    call line names them), runs in an interpreter that cannot import this project and matches the package's
    own outputs; a wrong edit of one of them exits 1, and random inputs still check."""
    c, _, _, _ = gpt2
    triton = [k for k in c.graphs[0].kernels if k.language == "triton"]
    for kernel in (triton[0], triton[-1]):  # each reproducer runs the package once: two of them
        done = isolated.run(kernel.repro(tmp_path / f"{kernel.id}.py"))
        assert done.returncode == 0 and "outputs match the saved ones" in done.stdout, \
            f"{kernel.id}: {done.stdout}{done.stderr[-3000:]}"
    kernel = next(k for k in triton if "layer_norm" in k.name)  # float outputs: scaling a store shows
    wrong = isolated.run(kernel.repro(tmp_path / "wrong.py", source=gpu_edits.wrong(kernel.source)))
    assert wrong.returncode == 1 and "MISMATCH: max error" in wrong.stdout, wrong.stdout + wrong.stderr[-3000:]
    drawn = isolated.run(kernel.repro(tmp_path / "random.py", inputs="random"))
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr[-3000:]


def test_gpt2_package_counters_measure_triton_kernels_and_shim_calls(gpt2):
    """Nsight Compute on the package's kernels: a Triton kernel from its source, its stall samples on the
    model's lines; a matmul shim (``aoti_torch_cuda_mm_out`` / ``addmm_out``) re-run as its post-grad
    node's ATen op, measured as cuBLAS kernels; the attention shim as its op too."""
    c, model, _, _ = gpt2
    kernels = c.graphs[0].kernels
    triton = next(k for k in kernels if k.language == "triton" and "layer_norm" in k.name)
    shim = next(k for k in kernels if k.language == "extern" and re.search(r"_(add)?mm_out$", k.name))
    attention = next(k for k in kernels if k.language == "extern" and "scaled_dot_product" in k.name)
    report = c.counters([triton, shim, attention])  # the attention's node comes with the getitems of its outputs
    assert not report.failed, report.failed
    assert report.kernel(attention).duration_ns > 0
    measured, matmul = report.kernel(triton), report.kernel(shim)
    assert measured.duration_ns > 0 and measured.lines and measured.samples > 0, measured
    assert matmul.language == "extern" and matmul.duration_ns > 0 and matmul.device_kernels, matmul
    assert re.search(r"gemm|nvjet|cutlass|xmma|sm\d\d|cublas", matmul.name, re.IGNORECASE), matmul.device_kernels
    gpt2_file = type(model.transformer.h[0]).__module__.replace(".", "/")
    assert any(gpt2_file in file and samples > 0 for (file, _), samples in report.line_samples.items()), \
        report.line_samples


def test_gpt2_torch_trace_of_the_aot_compile_loads(gpt2):
    c, _, _, _ = gpt2
    (rank,) = explorer.load_trace(c.origin["log"]).ranks.values()
    loaded = rank["aot/0"]
    assert {k.id for k in loaded.graphs[0].kernels} == {k.id for k in c.graphs[0].kernels}


def test_jit_cpp_wrapper_launches_triton_kernels_linked_and_profiled():
    """``cpp_wrapper`` on a GPU JIT compile: the wrapper stage is C++ that launches the Triton kernels,
    each launch linked to its kernel, outputs equal eager, and the profile finds every launch."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128)).cuda()
    x = torch.randn(32, 64, device="cuda")
    c = explorer.compile(model, x, config={"cpp_wrapper": True})
    (g,) = c.graphs
    assert g.wrapper.language == "cpp"
    triton = [k for k in g.kernels if k.language in ("triton", "template")]
    assert triton and {k.id for k in triton} <= set(g.wrapper.kernel_lines.values())
    with torch.no_grad():
        torch.testing.assert_close(c.run(x), model(x), rtol=1e-4, atol=1e-4)
    p = c.profile(runs=5)
    assert all(p.kernel_ms.get(k.id, 0) > 0 for k in triton), (p.kernel_ms, [k.id for k in triton])
    assert p.line_ms
