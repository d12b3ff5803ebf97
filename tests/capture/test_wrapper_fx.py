"""g.wrapper.fx on CPU, and a custom FX wrapper backend registered for the CPU device.

Inductor's FX wrapper codegen converts Triton launches and extern calls; the C++ backend's kernels it
refuses. A graph of extern calls only (two matmuls) converts on CPU, so both are tested here; Triton
graphs are covered by the GPU fixtures and tests/gpu/test_gpu_memory_ir.py.
"""

from __future__ import annotations

import io
import json

import pytest
import torch
from rich.console import Console

import explorer
from compiler import ToggleError, from_json
from tests import workloads


def chain(x, w1, w2):
    return (x @ w1) @ w2


@pytest.fixture(scope="module")
def extern_only():
    torch.manual_seed(0)
    args = (torch.randn(8, 16), torch.randn(16, 32), torch.randn(32, 4))
    return explorer.compile(chain, *args), args


def test_cpp_kernels_are_refused_with_inductors_reason(transformer_compilation):
    fx = transformer_compilation[0].graphs[0].wrapper.fx
    assert fx.status == "unsupported" and not fx.built and fx.module is None
    assert "NotImplementedError" in fx.reason and "cpp_fused_" in fx.reason
    assert "unsupported" in repr(fx)


def test_extern_graph_becomes_an_fx_graph_linked_to_kernels(extern_only):
    c, args = extern_only
    g = c.graphs[0]
    fx = g.wrapper.fx
    assert fx.built and fx.seconds is not None and fx.seconds >= 0
    kinds = [n.kind for n in fx.nodes]
    assert kinds.count("input") == 3 and kinds.count("output") == 1
    allocs, externs = fx.kind("alloc"), fx.kind("extern")
    assert [n.buffer for n in allocs] == [b.name for b in g.memory.buffers if b.kind == "alloc"]
    assert [n.kernel for n in externs] == [k.id for k in g.kernels if k.language == "extern"]
    assert all(n.target == "aten.mm.out" and n.buffer in {a.name for a in allocs} for n in externs)
    assert [n.frees for n in externs] == [s.freed for s in g.memory.steps]
    assert "torch.ops.aten.mm.out" in fx.code
    torch.testing.assert_close(fx.module(*args), chain(*args))  # the live GraphModule runs the wrapper


def test_capture_leaves_the_conversion_for_first_read(monkeypatch, tmp_path):
    """A capture keeps the planned wrapper only: Inductor's converter runs once, when g.wrapper.fx is first
    read, or for every graph still pending when the trace is saved."""
    from compiler._torch import wrapper_fx as converter

    real, calls = converter.convert, []
    monkeypatch.setattr(converter, "convert", lambda planned, loaded: calls.append(planned) or real(planned, loaded))

    def project(x, w1, w2):
        return (x @ w1) @ w2.t()

    args = (torch.randn(4, 8), torch.randn(8, 6), torch.randn(3, 6))
    first = explorer.compile(project, *args, cache=False)  # cold: a warm capture may serve what another test built
    wrapper = first.graphs[0].wrapper
    assert calls == [] and wrapper.fx_pending is not None
    assert wrapper.fx.built and len(calls) == 1 and wrapper.fx_pending is None
    assert wrapper.fx.kind("extern") and len(calls) == 1
    second = explorer.compile(project, *args, cache=False)
    assert len(calls) == 1
    loaded = explorer.load(second.save(tmp_path / "trace.json"))
    assert len(calls) == 2 and loaded.graphs[0].wrapper.fx.built
    assert second.graphs[0].wrapper.fx_pending is None


def test_wrapper_fx_round_trips_and_renders(extern_only):
    c, _ = extern_only
    data = json.loads(json.dumps(c.to_json()))
    assert data["graphs"][0]["wrapper"]["fx"]["status"] == "built"
    loaded = from_json(data)
    fx = loaded.graphs[0].wrapper.fx
    assert loaded.to_json() == data and fx.module is None
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(fx)
    assert "aten.mm.out" in console.file.getvalue() and "extern" in console.file.getvalue()
    assert "wrapper as FX" in loaded.graphs[0]._repr_html_()


def test_capture_leaves_wrapper_codegen_as_found():
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    before = PythonWrapperCodegen.run_wrapper_ir_passes
    explorer.compile(chain, torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 5))
    assert PythonWrapperCodegen.run_wrapper_ir_passes is before


# ------------------------------------------------------------------------- a custom FX wrapper backend


def test_registered_backend_runs_the_wrapper_graph_through_user_code():
    graphs, calls = [], []

    def compile_graph(gm):
        graphs.append(gm)

        class Logged(torch.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                calls.append(str(target))
                return super().call_function(target, args, kwargs)

        return lambda *args: Logged(gm).run(*args)

    args = (torch.randn(8, 16), torch.randn(16, 32), torch.randn(32, 4))
    with explorer.fx_wrapper_backend("cpu", compile_graph):
        out = torch.compile(chain)(*args)
    torch.testing.assert_close(out, chain(*args))
    (gm,) = graphs
    assert isinstance(gm, torch.fx.GraphModule)
    assert calls.count("aten.mm.out") == 2 and sum("empty_strided" in c for c in calls) == 2

    def other(x):
        return (x @ x.t()) @ x

    torch.compile(other)(torch.randn(4, 4))  # after the block: Inductor's usual Python wrapper again
    assert len(graphs) == 1


def test_backend_registration_refuses_bad_input():
    with pytest.raises(ValueError, match="no backend registered for device 'tpu0'"):
        with explorer.fx_wrapper_backend("tpu0", lambda gm: gm.forward):
            pass
    with pytest.raises(TypeError, match="compile_graph must be a function"):
        with explorer.fx_wrapper_backend("cpu", "not a function"):
            pass


def test_explorer_refuses_to_capture_an_fx_wrapper_compile():
    x = torch.randn(4, 4)
    with pytest.raises(ToggleError, match="fx_wrapper"):
        explorer.compile(workloads.reduction_with_pointwise, x, config={"fx_wrapper": True})
    with explorer.fx_wrapper_backend("cpu", lambda gm: gm.forward):
        with pytest.raises(ToggleError, match="g.wrapper.fx"):
            explorer.compile(workloads.reduction_with_pointwise, x)


def test_the_converter_takes_the_kernels_the_compiled_wrapper_loaded(monkeypatch):
    # Importing each kernel again waited on Inductor's compile workers (seconds per graph at save):
    # the converter is handed the loaded kernel objects, and imports only what is missing.
    from compiler._torch import wrapper_fx

    converter = wrapper_fx._converter_class()
    imported = []
    monkeypatch.setattr(converter, "_import_kernel", lambda self, code, name: imported.append(name) or f"fresh {name}")

    class Loaded:
        fn = None
        ensured = 0

        def run(self, *args, **kwargs):
            raise AssertionError("the converter does not launch kernels")

        def _ensure_kernel_loaded(self):
            self.ensured += 1

    loaded = Loaded()
    with wrapper_fx.kernels_with_python_functions({"triton_poi_fused_0": loaded}):
        assert converter._import_kernel(None, "code", "triton_poi_fused_0") is loaded
        assert converter._import_kernel(None, "code", "triton_poi_fused_1") == "fresh triton_poi_fused_1"
    assert imported == ["triton_poi_fused_1"] and loaded.ensured == 1
    assert converter._import_kernel(None, "code", "triton_poi_fused_0") == "fresh triton_poi_fused_0"  # put back


class _WorkerJit:
    """A JITFunction as a compile worker hands it back: no Python function (``prepare_for_pickle``), the hash
    Triton computed (or none) and a fresh lock; hashed as a JITFunction is, through that hash."""

    def __init__(self, name: str, hash_: str | None):
        import threading

        self.fn, self.hash, self._hash_lock, self.__name__ = None, hash_, threading.RLock(), name

    def __hash__(self):
        with self._hash_lock:
            return hash(self.hash)


class _WorkerKernel:
    """A kernel (CachingAutotuner) as Inductor's compile workers hand it back, around a ``_WorkerJit``."""

    def __init__(self, name: str, hash_: str | None):
        self.fn = _WorkerJit(name, hash_)
        self.reloads = 0

    def run(self, *args, **kwargs):
        raise AssertionError("the converter does not launch kernels")

    def _reload_kernel(self):
        import types

        self.reloads += 1
        return types.SimpleNamespace(fn=types.SimpleNamespace(fn=lambda: None, __name__=self.fn.__name__))


def test_a_kernel_from_the_workers_is_reloaded_only_where_its_function_is_needed():
    """Reading the wrapper as FX registers kernels by their hash: one with a hash is taken as loaded, one without
    is reloaded; a graph that is run (a custom backend) launches them, so each is reloaded there."""
    from compiler._torch import wrapper_fx

    converter = wrapper_fx._converter_class()
    hashed, unhashed = _WorkerKernel("triton_poi_fused_0", "a1b2"), _WorkerKernel("triton_poi_fused_1", None)
    loaded = {"triton_poi_fused_0": hashed, "triton_poi_fused_1": unhashed}
    with wrapper_fx.kernels_with_python_functions(loaded, to_run=False):
        for name in loaded:
            converter._import_kernel(None, "code", name)
    assert (hashed.reloads, unhashed.reloads) == (0, 1) and hashed.fn.fn is None and unhashed.fn.fn is not None
    again = _WorkerKernel("triton_poi_fused_0", "a1b2")
    with wrapper_fx.kernels_with_python_functions({"triton_poi_fused_0": again}, to_run=True):
        converter._import_kernel(None, "code", "triton_poi_fused_0")
    assert again.reloads == 1 and again.fn.fn is not None


def test_a_launch_is_named_by_its_kernel_without_the_python_function():
    """The side table holds the JITFunction (or an Autotuner around one); a worker's kernel has lost its Python
    function, not its name."""
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    from compiler._torch import wrapper_fx

    jit = _WorkerJit("triton_per_fused_1", "c3d4")
    autotuner = type("Autotuner", (), {})()
    autotuner.fn = jit
    graph = torch.fx.Graph()
    with wrapper_fx._kernel_table_restored():
        launches = [graph.call_function(print, kwargs={"kernel_idx": kernel_side_table.add_kernel(kernel)})
                    for kernel in (jit, autotuner)]
        assert [wrapper_fx._kernel_name(node) for node in launches] == ["triton_per_fused_1"] * 2

def project(x, w1, w2):
    return (x @ w1) @ w2.t()


def _values(gm):
    """Each node's fake value as the metadata hook leaves it: shape, stride, offset, dtype, device."""
    def described(value):
        if isinstance(value, (list, tuple)):
            return [described(v) for v in value]
        if not isinstance(value, torch.Tensor):
            return value
        return (tuple(value.shape), value.stride(), value.storage_offset(), value.dtype, str(value.device))
    return {node.name: described(node.meta.get("val")) for node in gm.graph.nodes}


def test_the_conversion_runs_no_fake_call_whose_result_it_knows(monkeypatch):
    """Extern calls into ``out=``, allocations and views are not run on fake tensors; the graph and every
    node's value are the ones torch's own metadata hook gives."""
    import contextlib

    from torch._inductor.codegen import wrapper_fxir

    from compiler._torch import wrapper_fx as converter

    real, seen = converter.convert, []
    monkeypatch.setattr(converter, "convert", lambda planned, loaded: seen.append((planned, loaded)) or real(planned, loaded))
    c = explorer.compile(project, torch.randn(4, 8), torch.randn(8, 6), torch.randn(3, 6), cache=False)
    first = c.graphs[0].wrapper.fx
    assert first.built and len(seen) == 1
    full_hook, ran = wrapper_fxir._node_metadata_hook, []
    monkeypatch.setattr(wrapper_fxir, "_node_metadata_hook",
                        lambda node, **kw: ran.append(str(node.target)) or full_hook(node, **kw))
    lean = real(*seen[0])
    assert ran == []  # the matmuls into their buffers, the allocations and the view of w2
    monkeypatch.setattr(converter, "_lean_metadata", contextlib.nullcontext)
    full = real(*seen[0])
    assert sum("mm.out" in target for target in ran) == 2
    assert any("empty_strided" in target for target in ran) and any("as_strided" in target for target in ran)
    assert lean["code"] == full["code"] == first.code and lean["nodes"] == full["nodes"]
    assert _values(lean["module"]) == _values(full["module"])
