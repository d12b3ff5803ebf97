"""GPU tests of k.ir, g.memory (measured against the plan) and g.wrapper.fx: `pytest -m gpu`."""

from __future__ import annotations

import pytest
import torch

import explorer
from tests import workloads

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def block():
    torch.manual_seed(0)
    model = workloads.TransformerBlock(dim=512, heads=8).cuda().eval().requires_grad_(False)
    x = torch.randn(8, 512, 512, device="cuda")
    return explorer.compile(model, x), (model, x)


def test_ir_stages_of_real_kernels():
    x = torch.randn(2048, 2048, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x)
    (kernel,) = [k for k in c.kernels if k.language == "triton"]
    ir = kernel.ir
    assert list(ir.stages)[:4] == ["ttir", "ttgir", "llir", "ptx"], ir.notes
    assert "sass" in ir.stages, ir.notes  # Triton ships nvdisasm
    assert ir.meta["registers"] >= 1 and ir.meta["spills"] == 0 and ir.meta["num_warps"] == kernel.meta["num_warps"]
    load = next(i for i, line in enumerate(kernel.lines, 1) if "tl.load(" in line)
    ptx = ir.lines("ptx")
    assert any("ld.global" in ptx[i - 1] for i in ir.ir_lines(load)["ptx"])
    assert c.graphs[0].timings["kernel_ir"] > 0


def test_capture_leaves_the_disassembly_line_maps_and_wrapper_fx_for_first_use(monkeypatch, tmp_path):
    """Capturing copies Triton's texts only: nvdisasm and the line maps run when k.ir is first read, and
    the FX converter when g.wrapper.fx is. Saving converts the wrapper and writes an unread IR raw: it is
    disassembled where the trace is loaded, when that kernel is opened."""
    from compiler._torch import wrapper_fx as converter
    from compiler.pipeline import sass

    real, calls = sass.disassemble, []
    monkeypatch.setattr(sass, "disassemble", lambda cubin: calls.append(1) or real(cubin))
    real_convert, conversions = converter.convert, []
    monkeypatch.setattr(converter, "convert", lambda planned, loaded: conversions.append(1) or real_convert(planned, loaded))
    from torch._inductor.codegen.wrapper_fxir import FxConverter

    real_import, imports = FxConverter._import_kernel, []
    monkeypatch.setattr(FxConverter, "_import_kernel", lambda self, code, name: imports.append(name) or real_import(self, code, name))
    x = torch.randn(1024, 1024, device="cuda")
    c = explorer.compile(workloads.reduction_with_pointwise, x)
    kernels = [k for k in c.kernels if k.language == "triton"]
    assert kernels and calls == [] and all(k.ir.pending is not None for k in kernels)
    assert conversions == [] and c.graphs[0].wrapper.fx_pending is not None
    assert "sass" in kernels[0].ir.stages and len(calls) == 1 and kernels[0].ir.pending is None
    loaded = explorer.load(c.save(tmp_path / "trace.json"))
    assert len(calls) == 1 and len(conversions) == 1  # the save disassembled nothing
    assert imports == []  # the converter took the kernels the compiled wrapper loaded: none imported again
    assert all(k.ir.line_map for k in loaded.kernels if k.language == "triton")
    assert len(calls) == len(kernels)  # each unread one, once opened in the loaded trace
    assert [n.kernel for n in loaded.graphs[0].wrapper.fx.kind("kernel")] == [k.id for k in kernels]


def test_kernels_of_a_later_compile_keep_their_ir(block):
    """Once Inductor's compile workers are up, kernels come back from them without their Python function;
    their IR is still found (in the worker's Triton cache) and mapped to the kernel's lines."""
    c, _ = block
    kernels = [k for k in c.kernels if k.language in ("triton", "template")]
    assert kernels and all("ptx" in k.ir.stages for k in kernels), [(k.id, k.ir.notes) for k in kernels]
    assert all(any(k.ir.ir_lines(line).get("ptx") for line in range(1, len(k.lines) + 1)) for k in kernels)


def test_measured_peak_within_ten_percent_of_the_plan(block):
    c, _ = block
    (measured,) = c.measure_memory()
    print(f"\ntransformer block: planned {c.graphs[0].memory.peak_bytes} B, measured {measured.peak_bytes} B, "
          f"ratio {measured.ratio:.3f}")
    assert 0.9 <= measured.ratio <= 1.1, measured
    assert c.graphs[0].memory.measured is measured


def test_wrapper_fx_graph_of_the_transformer_block(block):
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    c, (model, x) = block
    g = c.graphs[0]
    fx = g.wrapper.fx
    assert fx.built, fx.reason
    assert {n.kernel for n in fx.kind("kernel")} == {k.id for k in g.kernels if k.language in ("triton", "template")}
    assert fx.kind("extern") and all(n.kernel for n in fx.kind("extern"))
    assert fx.seconds < c.timings["total"]
    tables = len(kernel_side_table.id_to_kernel), len(kernel_side_table.constant_args)
    other = explorer.compile(workloads.reduction_with_pointwise, torch.randn(64, 64, device="cuda"))
    assert other.graphs[0].wrapper.fx.built  # converting adds kernels to the side table, then removes them
    assert (len(kernel_side_table.id_to_kernel), len(kernel_side_table.constant_args)) == tables


def test_reading_the_wrapper_as_fx_reloads_no_kernel_from_the_compile_workers():
    """A kernel built in Inductor's compile workers comes back without its Python function: the worker runs
    ``prepare_for_pickle``, the parent ``restore_after_unpickle(None)``. Whether a compile's kernels take that
    path depends on Inductor's caches, so each kernel is put through those two steps here. Reading
    g.wrapper.fx then registers them by the hash Triton computed and reloads none of them (a reload each
    was most of a process's first conversion), and every launch is still linked to its kernel."""
    from compiler.pipeline.assemble import loaded_kernels

    torch.manual_seed(0)
    model = workloads.TransformerBlock(dim=384, heads=6).cuda().eval().requires_grad_(False)
    c = explorer.compile(model, torch.randn(4, 128, 384, device="cuda"), cache=False)
    g = c.graphs[0]
    namespace = loaded_kernels(g.kernels, g.compiled_fn)
    names = {k.name for k in g.kernels if k.language in ("triton", "template")}
    assert names and names <= set(namespace), names - set(namespace)
    reloads, saved = [], {}
    for name in names:
        kernel = namespace[name]
        saved[name] = kernel.prepare_for_pickle(), kernel.__dict__.get("_reload_kernel")
        kernel.restore_after_unpickle(None)
        kernel._reload_kernel = lambda: reloads.append(1)
    try:
        assert all(namespace[name].fn.fn is None for name in names)
        fx = g.wrapper.fx
        assert fx.built, fx.reason
        assert reloads == [], f"{len(reloads)} of {len(names)} kernels reloaded"
        assert {n.kernel for n in fx.kind("kernel")} == {k.id for k in g.kernels if k.language in ("triton", "template")}
    finally:  # Inductor keeps these kernel objects for any later compile of the same source
        for name, (values, reload) in saved.items():
            namespace[name].restore_after_unpickle(values)
            if reload is None:
                del namespace[name]._reload_kernel
            else:
                namespace[name]._reload_kernel = reload


def test_wrapper_fx_values_are_the_metadata_hooks_own(monkeypatch):
    """The lean conversion (no fake run for launches, extern outs, allocations and views) gives every node of a
    training step's two wrappers the value torch's own metadata hook gives."""
    import contextlib

    from compiler._torch import wrapper_fx as converter
    from tests.capture.test_wrapper_fx import _values

    torch.manual_seed(0)
    model = workloads.TransformerBlock(dim=256, heads=4).cuda()
    c = explorer.compile(model, torch.randn(4, 64, 256, device="cuda", requires_grad=True), backward=True, cache=False)
    pending = [g.wrapper.fx_pending for g in c.graphs]
    assert len(pending) == 2 and all(pending)
    lean = [p() for p in pending]
    monkeypatch.setattr(converter, "_lean_metadata", contextlib.nullcontext)
    full = [p() for p in pending]
    for a, b in zip(lean, full):
        assert a.built and b.built and a.code == b.code
        assert _values(a.module) == _values(b.module)
        assert a.kind("reinterpret") and a.kind("alloc")


def test_custom_fx_wrapper_backend_on_cuda():
    launches = []

    def compile_graph(gm):
        class Logged(torch.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                launches.append(getattr(target, "__name__", str(target)))
                return super().call_function(target, args, kwargs)

        return lambda *args: Logged(gm).run(*args)

    x = torch.randn(512, 512, device="cuda")
    with explorer.fx_wrapper_backend("cuda", compile_graph):
        out = torch.compile(workloads.reduction_with_pointwise)(x)
    torch.testing.assert_close(out, workloads.reduction_with_pointwise(x))
    assert "triton_kernel_wrapper_mutation" in launches
