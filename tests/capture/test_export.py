"""explorer.export: torch.export + AOTInductor captured like a JIT compile, runs on the loaded package.

AOT compiles on CPU take 20-30 s each (the C++ wrapper is compiled), so two packages are built for the
whole module: a static MLP and a model with a dynamic batch dim. Everything else reads them.
"""

from __future__ import annotations

import inspect
import os

import pytest
import torch
from IPython.testing import globalipapp
from IPython.utils.capture import capture_output

import explorer
from compiler.pipeline import package_check
from compiler.runs import package_numerics
from compiler.runs.replay import NotRunnableError
from tests import isolated, workloads


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))  # MLP_HIDDEN
        return torch.tanh(self.fc2(h)) * 2  # MLP_OUT


class Scaled(torch.nn.Module):
    """A normalisation and a softmax over rows: a reduction whose loops depend on the batch dim."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(24)

    def forward(self, x):
        y = self.norm(x) * 3.0  # SCALED_NORM
        return torch.softmax(y, dim=-1) + x.mean()  # SCALED_SOFTMAX


class Counted(torch.nn.Module):
    """GPT-2's shape of inputs: a flag that is not a tensor before a tensor keyword, and a cumsum (a fallback
    op on the CPU) over an integer mask."""

    def forward(self, x, use_cache=False, mask=None):
        positions = torch.cumsum(mask, dim=-1)  # COUNTED_POSITIONS
        return torch.relu(x) * positions + x.sum(-1, keepdim=True)  # COUNTED_OUT


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # BRANCH
            return x * 2
        return x - 1


def _line(cls: type, marker: str) -> tuple[str, int]:
    lines, first = inspect.getsourcelines(cls)
    return __file__, first + next(i for i, text in enumerate(lines) if marker in text)


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(4, 16)
    folder = tmp_path_factory.mktemp("export")
    c = explorer.export(model, (x,), package_path=folder / "mlp.pt2", trace_dir=folder / "trace")
    return c, model, x


@pytest.fixture(scope="module")
def dynamic():
    torch.manual_seed(0)
    model, x = Scaled().eval(), torch.randn(6, 24)
    batch = torch.export.Dim("batch", min=2, max=64)
    return explorer.export(model, (x,), dynamic_shapes={"x": {0: batch}}), model, x


def test_exported_program_is_a_stage(mlp, dynamic):
    c, _, _ = mlp
    assert c.export is not None and c.export.package_path.endswith("mlp.pt2")
    assert c.export.user_inputs == ["x"]
    assert {s["target"] for s in c.export.inputs if s["kind"] == "PARAMETER"} == {"fc1.weight", "fc1.bias",
                                                                                 "fc2.weight", "fc2.bias"}
    assert "aten.relu" in c.export.graph and c.export.range_constraints == {}
    d = dynamic[0]
    ((symbol, bounds),) = d.export.range_constraints.items()
    assert bounds == [2, 64] and d.export.dynamic
    assert "Dim" in d.export.dynamic_shapes and d.inputs[0]["shape"] == [6, 24]


def test_kernels_link_to_the_test_lines_through_every_stage(mlp):
    c, _, _ = mlp
    (g,) = c.graphs
    assert g.kind == "inference" and g.loop_ir and g.fused and g.post_grad.nodes
    by_language = {}
    for k in g.kernels:
        by_language.setdefault(k.language, []).append(k)
    assert len(by_language["extern"]) == 2 and by_language["cpp"]  # two addmm shims, fused C++ kernels
    hidden, out = _line(MLP, "MLP_HIDDEN"), _line(MLP, "MLP_OUT")
    relu = next(k for k in by_language["cpp"] if "relu" in k.name)
    assert relu.user_lines[0] == hidden and 'extern "C"' in relu.source and relu.loop_ir and relu.line_nodes
    tanh = next(k for k in by_language["cpp"] if "tanh" in k.name)
    assert out in tanh.user_lines and set(tanh.fx_nodes) == {"tanh", "mul"}
    assert all(hidden in k.user_lines or out in k.user_lines for k in g.kernels)


def test_the_wrapper_stage_is_the_cpp_wrapper_linked_to_kernels(mlp):
    c, _, _ = mlp
    g = c.graphs[0]
    assert g.wrapper.language == "cpp" and "AOTInductorModel::run_impl" in g.wrapper.source
    lines = g.wrapper.source.splitlines()
    for k in g.kernels:
        called = [line for line, kid in g.wrapper.kernel_lines.items() if kid == k.id]
        assert called, k.id
        assert any(k.name in lines[line - 1] for line in called), (k.id, [lines[n - 1] for n in called])
    assert g.memory is not None and g.memory.peak_bytes > 0


def test_the_loaded_package_gives_eager_outputs_also_through_torch(mlp, dynamic):
    c, model, x = mlp
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(c.outputs, expected)
    torch.testing.assert_close(c.run(), expected)
    own = torch._inductor.aoti_load_package(c.export.package_path)  # as a deployment loads it
    torch.testing.assert_close(own(x), c.run(x))
    d, scaled, _ = dynamic
    for batch in (3, 17):
        other = torch.randn(batch, 24)
        with torch.no_grad():
            torch.testing.assert_close(d.run(other), scaled(other))


def test_profile_puts_the_package_kernels_on_the_test_lines(mlp):
    c, _, _ = mlp
    p = c.profile(runs=3, warmup=1)
    assert set(p.kernel_ms) == {k.id for k in c.graphs[0].kernels}
    assert all(p.kernel_calls[k] == 1 for k in p.kernel_ms), p.kernel_calls
    assert p.kernel_ms["aoti_torch_cpu_addmm_out:1"] > 0
    assert set(p.line_ms) >= {_line(MLP, "MLP_HIDDEN"), _line(MLP, "MLP_OUT")}
    assert p.attributed_ms <= p.total_ms


def test_check_numerics_compares_every_package_kernel_and_keeps_its_saving_copy(mlp):
    c, _, _ = mlp
    report = c.check_numerics()
    g = c.graphs[0]
    assert list(report.kernels) == [k.id for k in g.kernels]  # the package's launch order
    assert report.ok and report.first_divergent is None and not report.notes
    compared = {(kid, b.buffer, b.node) for kid, row in report.kernels.items() for b in row.buffers if b.compared}
    assert {("aoti_torch_cpu_addmm_out:1", "buf0", "addmm"), ("aoti_torch_cpu_addmm_out:3", "buf3", "addmm_1")} <= compared
    assert {kid for kid, _, _ in compared} == {k.id for k in g.kernels}
    (saving,) = c.live.derived.values()
    built = os.stat(saving).st_mtime_ns
    assert c.check_numerics(reference="float64").ok
    assert c.live.derived == {next(iter(c.live.derived)): saving} and os.stat(saving).st_mtime_ns == built  # built once
    with pytest.raises(ValueError, match="a package's kernels are compiled into its library"):
        c.check_numerics(edits={g.kernels[1]: g.kernels[1].source})


@pytest.mark.heavy  # minutes of compiling: `make test-heavy`
def test_check_numerics_on_a_package_with_keyword_and_non_tensor_inputs_compares_its_kernels():
    """The graph has a placeholder for ``use_cache`` too, so the eager reference takes every input, in the
    order of the export; the cumsum shim's saves are its own, and its output, which AOTInductor does not
    save, is said to be missing."""
    torch.manual_seed(0)
    x, mask = torch.randn(4, 8), torch.randint(0, 2, (4, 8))
    c = explorer.export(Counted().eval(), (x,), kwargs={"use_cache": False, "mask": mask})
    report = c.check_numerics()
    assert report.notes == [] and report.ok
    generated = [k for k in c.graphs[0].kernels if k.language == "cpp"]
    (cumsum,) = [k for k in c.graphs[0].kernels if k.language == "extern"]
    assert generated and all(any(b.compared for b in report.kernels[k.id].buffers) for k in generated)
    assert "saved none of the tensors this call computes" in report.kernels[cumsum.id].buffers[0].note


@pytest.mark.heavy  # minutes of compiling: `make test-heavy`
def test_check_numerics_on_a_package_finds_the_drift_the_jit_compile_finds():
    """bf16_cancellation's fused kernel keeps float32 intermediates where eager rounds to bfloat16 (the
    1 in (big + 1) - big survives): the package's kernel must diverge exactly as the JIT compile's."""
    torch.manual_seed(0)
    args = (torch.randn(32, 16), torch.randn(16, 64))
    aot = explorer.export(workloads.bf16_cancellation, args)
    jit = explorer.compile(workloads.bf16_cancellation, *args)
    report, expected = aot.check_numerics(), jit.check_numerics()
    mm = next(k for k in aot.graphs[0].kernels if k.language == "extern")
    fused = next(k for k in aot.graphs[0].kernels if k.language == "cpp")
    assert report.kernels[mm.id].ok is True and report.first_divergent == fused.id == expected.first_divergent
    row, same = report.kernels[fused.id], expected.kernels[expected.first_divergent]
    assert row.ok is False and (row.max_abs, row.mismatched) == (same.max_abs, same.mismatched)
    assert row.compiled_vs_float64 < row.eager_vs_float64
    line = inspect.getsourcelines(workloads.bf16_cancellation)[1] + 5  # return (big + 1) - big
    assert [workloads.__file__, line] in report.first_divergent_nodes["user_lines"]  # the function's own line


def test_a_package_that_fails_in_its_child_process_leaves_the_notebook_intact(mlp, tmp_path):
    c, model, x = mlp
    (key,) = c.live.derived
    kept = c.live.derived[key]
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(b"not a package")
    c.live.derived[key] = str(broken)
    try:
        with pytest.raises(package_numerics.PackageRunError, match=r"failed \(exit code \d+\) in its child process "
                           r"\(this process is unaffected\); no kernel had been launched"):
            c.check_numerics()
    finally:
        c.live.derived[key] = kept
    with torch.no_grad():
        torch.testing.assert_close(c.run(), model(x))


@pytest.mark.heavy  # minutes of compiling: `make test-heavy`
def test_repro_of_a_package_kernel_takes_its_launch_from_the_package(dynamic, tmp_path):
    """The fused kernel reads the input, the LayerNorm's weights (package constants, never saved) and the
    batch size (a symbol the wrapper reads from the input's shape): all three reach the script."""
    d, model, x = dynamic
    (kernel,) = [k for k in d.graphs[0].kernels if k.language == "cpp"]
    script = kernel.repro(tmp_path / "fused.py")
    saved = torch.load(tmp_path / "fused.pt", weights_only=True)
    values = saved["inputs"]
    assert any(isinstance(v, torch.Tensor) and torch.equal(v, x) for v in values)
    assert any(isinstance(v, torch.Tensor) and torch.equal(v, model.norm.weight.detach()) for v in values)
    assert values[-1] == x.shape[0] and saved["outputs"]  # the batch, as the package passed it
    done = isolated.run(script)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "outputs match the saved ones" in done.stdout
    edited = kernel.source.replace("static_cast<float>(3.0)", "static_cast<float>(3.5)")
    assert edited != kernel.source
    done = isolated.run(kernel.repro(tmp_path / "edited.py", source=edited))
    assert done.returncode == 1 and "MISMATCH" in done.stdout, done.stdout + done.stderr[-3000:]
    random = isolated.run(kernel.repro(tmp_path / "random.py", inputs="random"))
    assert random.returncode == 0, random.stdout + random.stderr[-3000:]


@pytest.mark.heavy  # minutes of compiling: `make test-heavy`
def test_a_package_carrying_its_own_cpp_runtime_is_loaded_in_a_child_first(mlp, tmp_path, monkeypatch):
    """A library with libstdc++ linked in statically can crash torch's loader (signal 11 in std::regex):
    such a package is loaded in a child process before this one loads it, and refused if the child dies."""
    c, _, _ = mlp
    monkeypatch.setattr(package_check, "own_cpp_runtime", lambda path: ["model/data/aotinductor/model/x.wrapper.so"])
    assert package_check.refusal(c.export.package_path, lambda: "g++") is None  # a real child loaded the real package
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(b"not a package")
    assert package_check.refusal(str(broken), lambda: "g++").startswith("loading the package failed (exit code")
    monkeypatch.setattr(package_check, "loads_in_a_child", lambda path: "died with signal 11")
    with pytest.raises(explorer.CompileError, match=r"died with signal 11 in a child process \(this process is "
                       r"unaffected\).*x.wrapper.so carries its own copy of the C\+\+ runtime.*CXX") as caught:
        explorer.export(MLP().eval(), (torch.randn(2, 16),), package_path=tmp_path / "refused.pt2")
    assert caught.value.stage == "aot"


def test_counters_re_run_a_package_shim_as_the_aten_op_of_its_node(mlp, tmp_path):
    """``aoti_torch_cpu_addmm_out(buf0, ...)`` in the C++ wrapper is the post-grad ``addmm`` node: the
    counters worker calls that op on tensors of the node's input layouts (the weight transposed)."""
    from compiler.runs import counters_job, counters_worker

    c, _, _ = mlp
    item = counters_job.job_item(c.graphs[0].kernel("aoti_torch_cpu_addmm_out:1"), 0)
    call = item["call"]
    assert item["kind"] == "extern" and call["function"] == "torch.ops.aten.addmm.default"
    assert [(spec["shape"], spec["stride"]) for spec in call["args"]] == [([32], [1]), ([4, 16], [16, 1]),
                                                                           ([16, 32], [1, 16])]
    out = counters_worker._extern_call(item)()
    torch.manual_seed(counters_worker.SEED)  # the same seeded tensors again: the call computed bias + x @ w
    bias, x, w = (counters_worker._value(spec) for spec in call["args"])
    torch.testing.assert_close(out, bias + x @ w)
    loaded = explorer.load(c.save(tmp_path / "mlp.json"))  # no post-grad graph to call: said so
    with pytest.raises(ValueError, match="the post-grad graph is not held"):
        counters_job.job_item(loaded.graphs[0].kernel("aoti_torch_cpu_addmm_out:1"), 0)


def test_per_kernel_runs_say_what_works_instead(mlp):
    c, _, _ = mlp
    kernel = c.graphs[0].kernels[1]
    with pytest.raises(NotRunnableError, match=r"c.check_numerics\(\).*explorer.compile\(model, \*inputs\).*explorer.diff"):
        with c.with_edits({kernel: kernel.source}):
            pass
    with pytest.raises(RuntimeError, match="never recompiles"):
        c.recompile(torch.randn(4, 16))


def test_save_and_load_keep_the_aot_stages(mlp, tmp_path):
    c, _, _ = mlp
    loaded = explorer.load(c.save(tmp_path / "aot.json.gz"))
    assert loaded.export == c.export
    g, h = c.graphs[0], loaded.graphs[0]
    assert h.wrapper.language == "cpp" and h.wrapper.source == g.wrapper.source
    assert h.wrapper.kernel_lines == g.wrapper.kernel_lines
    assert [(k.id, k.language, k.user_lines) for k in h.kernels] == [(k.id, k.language, k.user_lines) for k in g.kernels]


def test_diff_pairs_jit_and_aot_kernels_by_fx_node(mlp):
    c, model, x = mlp
    with torch.no_grad():
        jit = explorer.compile(model, x)
    d = explorer.diff(jit, c)
    assert d.b.endswith("(AOT)") and d.outputs.compared and d.outputs.max_abs < 1e-5
    assert d.counts()["added"] == 0 and d.counts()["removed"] == 0
    pairs = {(k.a, k.b) for k in d.kernels}
    assert ("extern_kernels.addmm:1", "aoti_torch_cpu_addmm_out:1") in pairs
    fused = [k for k in d.kernels if k.a_language == "cpp"]
    assert fused and all(k.a == k.b for k in fused)  # the same fused C++ kernels in both, matched across names


def test_the_torch_trace_of_an_aot_compile_loads_with_its_kernels(mlp):
    c, _, _ = mlp
    traces = explorer.load_trace(c.origin["log"])
    (rank,) = traces.ranks.values()
    assert [s.compile_id for s in rank.summary.compiles] == ["aot/0"] and not rank.summary.problems
    loaded = rank["aot/0"]
    (g,) = loaded.graphs
    assert g.wrapper.language == "cpp" and g.wrapper.source == c.graphs[0].wrapper.source
    assert [(k.id, k.language, k.fx_nodes) for k in g.kernels] == [(k.id, k.language, k.fx_nodes)
                                                                  for k in c.graphs[0].kernels]
    relu = next(k for k in g.kernels if "relu" in k.name)
    assert _line(MLP, "MLP_HIDDEN") in relu.user_lines


def test_cpp_wrapper_toggle_makes_the_jit_wrapper_stage_cpp(mlp):
    _, model, x = mlp
    with torch.no_grad():
        c = explorer.compile(model, x, config={"cpp_wrapper": True})
    g = c.graphs[0]
    assert g.wrapper.language == "cpp" and 'extern "C"' in g.wrapper.source
    cpp = [k for k in g.kernels if k.language == "cpp"]
    assert cpp and all(k.source.lstrip().startswith(("#include", "extern")) for k in cpp)
    p = c.profile(runs=2, warmup=1)
    assert all(p.kernel_calls[k.id] == 1 for k in g.kernels)


def test_a_model_export_cannot_trace_gets_torch_reason_line_and_hint():
    with pytest.raises(explorer.ExportError) as caught:
        explorer.export(Branchy(), (torch.randn(3),))
    text = str(caught.value)
    file, line = _line(Branchy, "BRANCH")
    assert caught.value.stage == "export" and f"{file}:{line}" in text
    assert "data-dependent" in text and "torch.cond" in caught.value.hint
    assert caught.value.__cause__ is not None


def test_bad_arguments_are_refused_before_exporting():
    with pytest.raises(ValueError, match="ending in .pt2"):
        explorer.export(MLP(), (torch.randn(2, 16),), package_path="model.so")
    with pytest.raises(explorer.ToggleError):
        explorer.export(MLP(), (torch.randn(2, 16),), config={"natve_matmul": True})


def test_compile_magic_exports_a_cell_and_runs_its_package_on_other_batches():
    globalipapp.start_ipython()  # one test shell per process: another module may have started it already
    ip = globalipapp.get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    torch.manual_seed(0)
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    ip.user_ns.update(torch=torch, x=x, w=w)
    cell = "%%compile --export --dynamic --name aot --quiet\nh = torch.relu(x @ w)\nout = h.sum(-1) * 2\n"
    with capture_output():
        assert ip.run_cell(cell).success
    c = ip.user_ns["aot"]
    assert c.export is not None and c.graphs[0].wrapper.language == "cpp"
    assert [bounds[0] for bounds in c.export.range_constraints.values()] == [2]  # Dim.AUTO on dim 0
    assert sorted(c.export.user_inputs) == ["w", "x"]  # the cell's variables, by name
    linked = {line for k in c.graphs[0].kernels for _, line in k.user_lines}
    assert linked == {1, 2}, [k.user_lines for k in c.graphs[0].kernels]  # the cell's own two lines
    torch.testing.assert_close(ip.user_ns["out"], (torch.relu(x @ w).sum(-1) * 2))
    other = torch.randn(5, 16)
    ip.user_ns["x"] = other
    session = ip.magics_manager.registry["ExplorerMagics"].session
    entries = len(session)
    with capture_output():
        assert ip.run_cell(cell).success
    assert ip.user_ns["aot"] is c and len(session) == entries  # the same package ran: nothing compiled
    torch.testing.assert_close(ip.user_ns["out"], (torch.relu(other @ w).sum(-1) * 2))


def test_no_cpp_compiler_is_a_clear_error_before_anything_runs():
    with pytest.raises(explorer.CompileError, match="no C\\+\\+ compiler found.*Install one") as caught:
        explorer.export(MLP(), (torch.randn(2, 16),), config={"cpp.cxx": ("/nonexistent/clang++",)})
    assert caught.value.stage == "aot" and caught.value.partial is None
