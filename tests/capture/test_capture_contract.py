"""Toggles, errors, global-state restoration and save/load: the capture's promises."""

from __future__ import annotations

import io
import json
import logging
import sys
import types

import pytest
import torch
from rich.console import Console
from torch._inductor import config as inductor_config  # tests may read torch internals to check restoration

import explorer
from compiler import CompileError, ToggleError, TraceFormatError
from compiler.model.contract import TRACE_VERSION
from compiler.pipeline import toggles
from compiler._torch import benchmark_harness, fusion_log
from tests import workloads
from tests.paths import FIXTURES


# ------------------------------------------------------------------------------------------ toggles


def test_unknown_toggle_is_refused_before_compiling():
    with pytest.raises(ToggleError) as info:
        explorer.compile(workloads.reduction_with_pointwise, torch.randn(4, 4), config={"native_matmull": True})
    message = str(info.value)
    assert "unknown toggle 'native_matmull'" in message and "native_matmul" in message and "deterministic" in message


def test_wrong_value_type_is_refused():
    with pytest.raises(ToggleError, match="'deterministic' takes a bool"):
        toggles.resolve({"deterministic": "yes"})
    with pytest.raises(ToggleError, match="takes a int"):
        toggles.resolve({"realize_reads_threshold": 1.5})


def test_conflicting_toggles_are_refused():
    with pytest.raises(ToggleError, match="'native_matmul' and 'use_block_ptr' cannot both be on"):
        toggles.resolve({"native_matmul": True, "use_block_ptr": True})


def test_toggles_map_to_installed_keys():
    settings = toggles.resolve({"native_matmul": True, "deterministic": True, "triton.cudagraphs": False})
    assert settings == {"triton.native_matmul": True, "deterministic": True, "triton.cudagraphs": False}
    assert set(toggles.available()) >= {"native_matmul", "deterministic", "loop_ordering_after_fusion",
                                        "combo_kernels", "use_block_ptr", "max_autotune",
                                        "coordinate_descent_tuning", "emulate_precision_casts"}


def test_toggle_takes_visible_effect():
    # On the CPU backend emulate_precision_casts visibly changes codegen (loop ordering after fusion
    # only changes fusion on GPU backends: the GPU tests cover it).
    x = torch.randn(64, 64)
    on = explorer.compile(workloads.bf16_roundtrip, x, config={"emulate_precision_casts": True})
    off = explorer.compile(workloads.bf16_roundtrip, x, config={"emulate_precision_casts": False})
    assert on.toggles == {"emulate_precision_casts": True}
    assert on.inductor_overrides == {"emulate_precision_casts": True}
    assert off.inductor_overrides == {}
    source_on, source_off = on.graphs[0].kernels[0].source, off.graphs[0].kernels[0].source
    assert source_on != source_off
    assert source_on.count("at::BFloat16") > source_off.count("at::BFloat16")  # a rounding cast per op
    eager = workloads.bf16_roundtrip(x)
    if workloads.rounding_feeds_the_math(source_on):  # the casts round what the next op reads: eager's numerics
        torch.testing.assert_close(on.outputs, eager)
        assert (off.outputs - eager).abs().max() > (on.outputs - eager).abs().max()
    else:  # torch 2.11/2.12: the casts are computed but never read (see workloads.rounding_feeds_the_math)
        assert torch.equal(on.outputs, off.outputs)


def test_stage_timings_sum_inductor_timers():
    from compiler._torch import timing

    got = timing.stages({"mm_template_autotuning": 2.0, "addmm_template_precompiling": 1.0,
                         "GraphLowering.run": 0.5, "Scheduler.codegen": 1.0, "PythonWrapperCodegen.generate": 0.25,
                         "unrelated": 9.0})
    assert got["autotune"] == 3.0 and got["lowering"] == 0.5 and got["codegen"] == 1.25
    assert sum(got.values()) == 4.75  # unknown timers are not counted anywhere


# ------------------------------------------------------------------------------------------ errors


def _broken_post_grad_pass(graph):
    raise ValueError("boom in a post-grad pass")


def test_compile_failure_names_stage_and_keeps_earlier_graphs():
    x = torch.randn(8, 8)
    with pytest.raises(CompileError) as info:
        explorer.compile(workloads.with_graph_break, x, config={"post_grad_custom_post_pass": _broken_post_grad_pass})
    error = info.value
    assert error.stage == "lowering"
    first, where = str(error).splitlines()[:2]
    assert first == "compilation failed during lowering: ValueError: boom in a post-grad pass"
    line = _broken_post_grad_pass.__code__.co_firstlineno + 1  # the user's pass raised it: its line is named
    assert where == f'  at {__file__}:{line} in _broken_post_grad_pass: raise ValueError("boom in a post-grad pass")'
    assert error.__cause__ is not None
    partial = error.partial
    assert len(partial.graphs) == 1 and partial.graphs[0].fx.nodes  # the first Dynamo graph got this far
    assert partial.graphs[0].kernels == []


def test_tracing_failure_names_tracing():
    def bad_shapes(x):
        return x @ x  # (3, 5) @ (3, 5) cannot multiply

    with pytest.raises(CompileError) as info:
        explorer.compile(bad_shapes, torch.randn(3, 5))
    assert info.value.stage == "tracing"
    assert info.value.partial.graphs == []


def test_backward_without_grad_is_explained():
    with pytest.raises(CompileError, match="no output requires grad"):
        explorer.compile(workloads.reduction_with_pointwise, torch.randn(4, 4), backward=True)


# ------------------------------------------------------------------------------------------ state


def _global_state():
    from torch._inductor.codegen.common import Kernel
    from torch._inductor.graph import GraphLowering

    logger = logging.getLogger(fusion_log.FUSION_LOGGER)
    return (
        inductor_config.get_config_copy(),
        GraphLowering.save_output_code,
        Kernel.set_current_node,
        (logger.level, logger.propagate, list(logger.handlers)),
    )


def test_capture_leaves_global_state_as_found(reduction_compilation):
    calls = []

    def counting_backend(gm, inputs):
        calls.append(gm)
        return gm.forward

    @torch.compile(backend=counting_backend)
    def other(x):
        return x.cos() + 1

    x = torch.randn(4, 4)
    other(x)
    before = _global_state()
    explorer.compile(workloads.reduction_with_pointwise, x, config={"deterministic": True})
    with pytest.raises(CompileError):
        explorer.compile(workloads.with_graph_break, x, config={"post_grad_custom_post_pass": _broken_post_grad_pass})
    assert _global_state() == before
    other(x)
    assert len(calls) == 1  # the other function's Dynamo cache survived both captures


def test_inductors_module_path_notice_stays_out_of_stderr(capsys):
    """A GPU capture turns on benchmark_kernel, under which Inductor prints the compiled module's path for
    every graph; plain torch.compile prints nothing, so neither does the capture (other writes pass)."""
    x = torch.randn(4, 4)
    explorer.compile(workloads.reduction_with_pointwise, x, config={"benchmark_kernel": True})
    assert "Compiled module path" not in capsys.readouterr().err
    with inductor_config.patch(benchmark_kernel=True, force_disable_caches=True):  # the notice itself, unfiltered
        torch._dynamo.reset()
        torch.compile(workloads.reduction_with_pointwise)(x)
    assert "Compiled module path: " in capsys.readouterr().err


def test_kernel_harness_imports_dynamo_only_when_get_args_runs():
    """Every compile worker loads each kernel module; in a capture the harness's Dynamo import waits until
    get_args() runs. Inductor's method is back as found afterwards."""
    from torch._inductor.codegen.triton import TritonKernel
    from torch._inductor.virtualized import V

    found = TritonKernel.__dict__["imports_for_benchmark_kernel"]
    device_ops = types.SimpleNamespace(import_get_raw_stream_as=lambda name: f"{name} = None")
    graph = types.SimpleNamespace(device_ops=device_ops)
    with V.set_graph_handler(graph):
        eager = TritonKernel.imports_for_benchmark_kernel(None)
        with benchmark_harness.lazy_harness_import():
            lazy = TritonKernel.imports_for_benchmark_kernel(None)
    assert benchmark_harness.EAGER_IMPORT in eager.splitlines()
    assert benchmark_harness.EAGER_IMPORT not in lazy.splitlines()
    namespace: dict = {}
    exec(lazy, namespace)
    assert namespace["rand_strided"]((2, 3), (1, 2)).stride() == (1, 2)
    assert TritonKernel.__dict__["imports_for_benchmark_kernel"] is found


def test_notice_filter_passes_other_writes_through(capsys):
    found = sys.stderr
    with benchmark_harness.quiet_module_path():
        print("Compiled module path: /tmp/x.py", file=sys.stderr)
        print("a warning\n", end="", file=sys.stderr)
        print("\n", end="", file=sys.stderr)
        sys.stderr.flush()
    err = capsys.readouterr().err
    assert err == "a warning\n\n"
    assert sys.stderr is found


def test_repeated_captures_do_not_pile_up_recompiles():
    x = torch.randn(4, 4)
    for _ in range(torch._dynamo.config.recompile_limit + 1):
        c = explorer.compile(workloads.reduction_with_pointwise, x, config={"triton.cudagraphs": False})
        assert len(c.graphs) == 1


def test_compiled_handle_reruns_without_recompiling(reduction_compilation):
    c, (x,) = reduction_compilation
    graphs = len(c.graphs)
    torch.testing.assert_close(c.run(), workloads.reduction_with_pointwise(x))
    assert len(c.graphs) == graphs


# ------------------------------------------------------------------------------------------ save / load


def test_save_load_round_trip(tmp_path, all_compilations):
    for c in all_compilations:
        path = c.save(tmp_path / "trace.json")
        loaded = explorer.load(path)
        assert not loaded.live
        assert loaded.save(tmp_path / "again.json").read_text() == path.read_text()
        assert loaded.to_json() == c.to_json()
        graph, original = loaded.graphs[-1], c.graphs[-1]
        assert [k.line_nodes for k in graph.kernels] == [k.line_nodes for k in original.kernels]
        for a, b in zip(graph.loop_ir, original.loop_ir):
            assert {str(k): str(v) for k, v in a.indexing.items()} == {str(k): str(v) for k, v in b.indexing.items()}


def test_version_1_traces_still_load():
    # tests/fixtures/trace_v1.json is a GPU trace saved by schema version 1; it is never re-recorded.
    path = FIXTURES / "trace_v1.json"
    assert json.loads(path.read_text())["version"] == 1
    loaded = explorer.load(path)
    assert loaded.device == "cuda" and loaded.kernels
    assert loaded.to_json()["version"] == TRACE_VERSION > 1


def test_loaded_compilation_renders_the_same(tmp_path, matmul_compilation):
    c, _ = matmul_compilation
    loaded = explorer.load(c.save(tmp_path / "t.json"))

    def text(obj):
        console = Console(file=io.StringIO(), width=120, color_system=None)
        console.print(obj)
        return console.file.getvalue()

    for live, cold in zip(c.graphs[0].kernels, loaded.graphs[0].kernels):
        assert text(live) == text(cold)
    assert loaded.graphs[0].kernels[0]._repr_html_() == c.graphs[0].kernels[0]._repr_html_()
    with pytest.raises(RuntimeError, match="loaded from a file"):
        loaded.run()


def test_malformed_and_newer_files_are_refused(tmp_path, reduction_compilation):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TraceFormatError, match="is not a JSON trace"):
        explorer.load(bad)
    data = reduction_compilation[0].to_json()
    bad.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(TraceFormatError, match="schema version 99, newer"):
        explorer.load(bad)
    bad.write_text(json.dumps({**data, "schema": "something-else"}))
    with pytest.raises(TraceFormatError, match="not an inductor-explorer trace"):
        explorer.load(bad)
    broken = json.loads(json.dumps(data))
    del broken["graphs"][0]["kind"]
    bad.write_text(json.dumps(broken))
    with pytest.raises(TraceFormatError, match="has no 'kind'"):
        explorer.load(bad)


def test_loading_runs_no_code(tmp_path, reduction_compilation):
    data = reduction_compilation[0].to_json()
    marker = tmp_path / "pwned"
    data["graphs"][0]["loop_ir"][0]["indexing"]["index0"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TraceFormatError, match="unsupported syntax"):
        explorer.load(path)
    assert not marker.exists()


# ------------------------------------------------------------------------------------------ rendering


def test_renderings(matmul_compilation):
    c, _ = matmul_compilation
    graph = c.graphs[0]
    kernel = next(k for k in graph.kernels if k.language == "cpp")
    assert repr(kernel).startswith(f"Kernel({kernel.id}: cpp")
    assert repr(c).startswith("Compilation(matmul_epilogue on cpu: 1 graphs, 2 kernels")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(c)
    out = console.file.getvalue()
    assert kernel.id in out and "extern_kernels" in out and "loop IR" in out
    html = kernel._repr_html_()
    assert "style=" in html and "class=" not in html.split("<pre", 1)[1][:200]  # inline styles, no stylesheet
    assert kernel.id in html


def test_html_escapes_trace_strings(tmp_path, reduction_compilation):
    data = reduction_compilation[0].to_json()
    data["graphs"][0]["kernels"][0]["id"] = "<script>alert(1)</script>"
    data["graphs"][0]["kernels"][0]["source"] = "<img src=x onerror=alert(1)>"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    html = explorer.load(path)._repr_html_()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_a_trace_saved_as_gz_is_compressed_json_and_loads_back(tmp_path):
    import gzip

    fixture = FIXTURES / "gpu_transformer.json"
    c = explorer.load(fixture)
    plain, packed = c.save(tmp_path / "t.json"), c.save(tmp_path / "t.json.gz")
    assert packed.read_bytes()[:2] == b"\x1f\x8b" and packed.stat().st_size * 2 < plain.stat().st_size  # IR texts are packed in both
    assert json.loads(gzip.decompress(packed.read_bytes())) == json.loads(plain.read_text())
    renamed = packed.rename(tmp_path / "renamed.json")  # told apart by content, not by name
    loaded = explorer.load(renamed)
    assert [k.id for k in loaded.kernels] == [k.id for k in c.kernels]
    assert [k.ir for k in loaded.kernels] == [k.ir for k in c.kernels] and any(k.ir for k in c.kernels)


def test_a_replaced_method_is_put_back_also_when_the_block_raises_and_inherited_stays_inherited():
    from compiler._torch import method_patch

    class Base:
        def hello(self):
            return "base"

    class Own(Base):
        def hello(self):
            return "own"

    class Inherits(Base):
        pass

    own = Own.__dict__["hello"]
    with pytest.raises(KeyError), method_patch.replaced(Own, "hello", lambda self: "patched"):
        assert Own().hello() == "patched"
        raise KeyError("inside")
    assert Own.__dict__["hello"] is own
    with method_patch.replaced(Inherits, "hello", lambda self: "patched"):
        assert Inherits().hello() == "patched"
    assert "hello" not in Inherits.__dict__ and Inherits().hello() == "base"
