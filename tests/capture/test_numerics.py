"""c.check_numerics(): every kernel's output against eager on CPU, and the first kernel that diverges."""

from __future__ import annotations

import io
import math
import warnings

import pytest
import torch
from rich.console import Console

import explorer
from compiler._torch import inductor_config
from compiler.io import reports
from compiler.model.numerics import Divergence
from compiler.runs import numerics
from compiler.runs.replay import NotRunnableError
from tests import workloads


# Whether this torch's C++ backend reproduces eager's bf16 rounding when asked (it learnt to in 2.13):
# where it never reads emulate_precision_casts, the drift stays and the capture says so up front.
CPU_EMULATES_CASTS = inductor_config.codegen_reads("cpp", "emulate_precision_casts")


@pytest.fixture(scope="session")
def cancellation():
    """The drifting compile, the same with emulate_precision_casts, and the warnings the latter gave."""
    torch.manual_seed(0)
    args = (torch.randn(32, 16), torch.randn(16, 64))
    drift = explorer.compile(workloads.bf16_cancellation, *args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        emulated = explorer.compile(workloads.bf16_cancellation, *args, config={"emulate_precision_casts": True})
    return drift, emulated, [w for w in caught if issubclass(w.category, explorer.ToggleWarning)]


def _line_of(fn, text):
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_bf16_drift_is_flagged_at_the_fused_kernel_with_its_node_and_line(cancellation):
    c, _, _ = cancellation
    report = c.check_numerics()
    mm = next(k for k in c.kernels if k.language == "extern")
    fused = next(k for k in c.kernels if k.language == "cpp")
    assert list(report.kernels) == [mm.id, fused.id]  # execution order
    assert report.kernels[mm.id].ok is True  # the float32 matmul agrees with eager
    row = report.kernels[fused.id]
    assert row.ok is False and row.mismatched > 0.5 and row.max_abs >= 0.5
    assert report.first_divergent == fused.id and report.divergent == [fused.id]
    nodes = report.first_divergent_nodes
    assert "sub" in nodes["fx"] and "sub" in nodes["post_grad"]
    assert [workloads.__file__, _line_of(workloads.bf16_cancellation, "return (big + 1) - big")] in nodes["user_lines"]
    # the fused kernel is closer to the exact result than eager is: the benign kind of drift
    assert row.compiled_vs_float64 < row.eager_vs_float64
    assert report.post_grad_error["g0"]["sub"] == row.max_rel and report.fx_error["g0"]["sub"] == row.max_rel


@pytest.mark.skipif(not CPU_EMULATES_CASTS, reason="this torch's C++ backend never reads emulate_precision_casts")
def test_emulate_precision_casts_removes_the_drift(cancellation):
    _, emulated, said = cancellation
    report = emulated.check_numerics()
    assert report.ok and report.first_divergent is None
    assert all(row.ok for row in report.kernels.values())
    assert said == []


@pytest.mark.skipif(CPU_EMULATES_CASTS, reason="this torch's C++ backend honours emulate_precision_casts")
def test_a_toggle_the_cpu_backend_ignores_is_said_and_the_drift_stays(cancellation):
    drift, emulated, said = cancellation
    (warning,) = said
    assert "'emulate_precision_casts' may do nothing on cpu" in str(warning.message)
    fused = next(k for k in emulated.kernels if k.language == "cpp")
    assert emulated.check_numerics().first_divergent == fused.id


@pytest.fixture(scope="module")
def amplified():
    """bfloat16 rounding within tolerance that a matmul amplifies past it: alone, and followed by a kernel
    whose own error leaves tolerance."""
    torch.manual_seed(0)
    args = ((torch.rand(32, 64) + 1).bfloat16(), torch.randn(64, 48).bfloat16())
    return (args, explorer.compile(workloads.bf16_rounding_amplified, *args),
            explorer.compile(workloads.bf16_amplified_then_cancelled, *args))


def _within(a, b):
    rtol, atol = numerics.TOLERANCES[torch.bfloat16]
    return torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol)


def test_a_matmul_that_amplifies_earlier_rounding_is_never_first_divergent(amplified):
    (x, w), c, _ = amplified
    (pointwise,), (mm,) = [k for k in c.kernels if k.language == "cpp"], [k for k in c.kernels if k.language == "extern"]
    # the premise, against eager: the pointwise kernel rounds otherwise than eager, within tolerance; the
    # matmul of the compiled h is the compiled y bit for bit; y is outside tolerance of eager's
    h, y = c.run()
    eager_h, eager_y = workloads.bf16_rounding_amplified(x, w)
    assert not torch.equal(h, eager_h) and _within(h, eager_h)
    assert torch.equal(h @ w, y) and not _within(y, eager_y)
    report = c.check_numerics()
    assert list(report.kernels) == [pointwise.id, mm.id]
    row = report.kernels[mm.id]
    assert row.ok is False and report.divergent == [mm.id]  # its propagated error: what was blamed before
    assert row.local_ok is True and row.local_max_abs == 0.0 and row.divergence is Divergence.PROPAGATED
    first = report.kernels[pointwise.id]
    assert first.ok is True and first.divergence is None
    assert first.local_ok is None and first.local_max_abs is None  # within tolerance: nothing to trace back
    assert report.first_divergent is None and report.first_divergent_nodes == {} and report.locally_divergent == []
    assert not report.ok and report.verdict == (
        f"no kernel's own error leaves tolerance of eager; their accumulated error does, first at {mm.id} "
        "(propagated error)")
    assert repr(row).startswith(f"KernelNumerics({mm.id}: DIVERGES (propagated), max rel ")
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(report)
    text = console.file.getvalue()
    assert report.verdict in text and "local max rel" in text
    line = next(t for t in text.splitlines() if t.lstrip("│ ").startswith(mm.id))
    assert "DIVERGES" in line and "propagated" in line
    # against float64 too: the matmul of the compiled h in float64 is the compiled y, rounded once
    exact = c.check_numerics(reference="float64")
    row = exact.kernels[mm.id]
    assert row.ok is False and row.local_ok is True and 0 < row.local_max_rel < 0.01 and exact.first_divergent is None


def test_a_kernel_wrong_after_the_amplifying_matmul_is_still_named(amplified):
    _, _, c = amplified
    (pointwise, cancel), (mm,) = [k for k in c.kernels if k.language == "cpp"], [k for k in c.kernels if k.language == "extern"]
    report = c.check_numerics()
    assert list(report.kernels) == [pointwise.id, mm.id, cancel.id]
    assert report.divergent == [mm.id, cancel.id] and report.locally_divergent == [cancel.id]
    assert report.first_divergent == cancel.id and report.kernels[cancel.id].divergence is Divergence.LOCAL
    assert report.kernels[mm.id].divergence is Divergence.PROPAGATED and report.kernels[mm.id].local_max_abs == 0.0
    assert report.kernels[cancel.id].local_mismatched > 0.5
    assert report.verdict == f"first divergent kernel: {cancel.id} (local error)"
    assert "sub" in report.first_divergent_nodes["post_grad"]
    loaded = reports.numerics_from_json(reports.numerics_to_json(report))
    assert loaded == report and loaded.kernels[mm.id].divergence is Divergence.PROPAGATED


def test_a_bf16_llama_names_a_kernel_that_rounds_and_no_extern_kernel():
    """transformers' Llama from its config in bfloat16 (random weights, SDPA): rounding that fused kernels
    introduce within tolerance reaches the matmuls after them. Each extern kernel runs again on the very
    arguments the program gave it, also where they are buffers no node holds (the attention's output
    the output projection reads): its local error is nil."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=256, max_position_embeddings=64, use_cache=False,
                         attn_implementation="sdpa")
    model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    with torch.no_grad():
        c = explorer.compile(model, torch.randint(0, 256, (2, 32)))
    report = c.check_numerics()
    externs = [row for row in report.kernels.values() if row.language == "extern" and row.compared]
    blamed = [row for row in externs if row.ok is False]  # what the propagated comparison alone blamed
    assert len(externs) >= 14 and len(blamed) >= 7  # 7 matmuls a layer
    assert all(row.local_max_abs == 0.0 for row in blamed), blamed
    assert all(row.local_ok is None for row in externs if row.ok)  # within tolerance: nothing to trace back
    first = report.kernels[report.first_divergent]
    assert first.language == "cpp" and first.divergence is Divergence.LOCAL
    assert first.compiled_vs_float64 < first.eager_vs_float64  # its own rounding, closer to the exact result
    assert report.locally_divergent[0] == report.first_divergent
    assert all(report.kernels[key].language != "extern" for key in report.locally_divergent)


def test_float64_reference_and_explicit_tolerances(cancellation):
    c, _, _ = cancellation
    fused = next(k for k in c.kernels if k.language == "cpp")
    exact = c.check_numerics(reference="float64")
    assert exact.reference == "float64" and exact.kernels[fused.id].ok  # within bf16 tolerance of the truth
    loose = c.check_numerics(rtol=1.0, atol=1.0)
    assert loose.ok and loose.rtol == 1.0
    assert c.numerics[-2:] == [exact, loose]


def test_a_graph_with_no_float64_kernel_is_still_compared_against_eager(cancellation, monkeypatch):
    # Memory-efficient attention on a GPU has no float64 kernel: the float64 run of such a graph fails.
    # The eager comparison must not be lost with it (it was, for every kernel of every GPU sweep point).
    c, _, _ = cancellation
    real_kept, real_streamed = numerics.reference.node_values, numerics.reference.stream_values

    def refuse(upcast):
        if upcast:
            raise RuntimeError('"efficient_attention" not implemented for \'Double\'\nmore detail')

    def no_float64(gm, inputs, upcast=False, written=None):
        refuse(upcast)
        return real_kept(gm, inputs, written=written)

    def no_float64_streamed(gm, inputs, visit, upcast=False, written=None):
        refuse(upcast)
        return real_streamed(gm, inputs, visit, written=written)

    monkeypatch.setattr(numerics.reference, "node_values", no_float64)
    monkeypatch.setattr(numerics.reference, "stream_values", no_float64_streamed)
    report = c.check_numerics()
    fused = next(k for k in c.kernels if k.language == "cpp")
    assert report.kernels[fused.id].compared and report.kernels[fused.id].compiled_vs_float64 is None
    assert any("float64 failed" in note and "not implemented for 'Double')" in note and "against eager only" in note
               for note in report.notes), report.notes
    exact = c.check_numerics(reference="float64")
    assert all(not row.compared for row in exact.kernels.values()) and not exact.divergent


def test_float32_model_is_clean_and_mutated_state_is_left_alone():
    torch.manual_seed(0)
    model = torch.nn.Sequential(workloads.ResidualBlock(32), torch.nn.BatchNorm1d(32))
    x = torch.randn(64, 32)
    c = explorer.compile(model, x)
    before = {name: t.clone() for name, t in model.state_dict().items()}
    x_before = x.clone()
    report = c.check_numerics()
    assert report.ok, report.kernels
    assert report.first_divergent is None and report.locally_divergent == []  # each run started from the same stats
    assert all(torch.equal(before[name], t) for name, t in model.state_dict().items())  # running stats too
    assert torch.equal(x, x_before)
    # the BatchNorm kernel updates its running statistics in place: compared with the graph's copy-back
    checked = [b.buffer for row in report.kernels.values() for b in row.compared]
    assert any(buffer.startswith("primals") for buffer in checked)


def test_reference_runs_copy_only_the_inputs_their_graph_writes():
    from torch.fx.experimental.proxy_tensor import make_fx

    def writes_two_of_three(x, y, z):
        x.view(-1).index_put_((torch.tensor([0]),), torch.tensor(1.0))  # through a view
        y.copy_(z * 2)
        return z + 1

    gm = make_fx(writes_two_of_three)(torch.zeros(2, 2), torch.zeros(4), torch.ones(4))
    assert numerics.reference.mutated_inputs(gm) == {"x_1", "y_1"}
    inputs = [torch.zeros(2, 2), torch.zeros(4), torch.ones(4)]
    eager = numerics.reference.node_values(gm, inputs)
    exact = numerics.reference.node_values(gm, inputs, upcast=True)
    assert [t.tolist() for t in inputs] == [[[0.0, 0.0], [0.0, 0.0]], [0.0] * 4, [1.0] * 4]  # left as they were
    assert eager["z_1"][0] is inputs[2] and exact["z_1"][0] is inputs[2]  # read, so not copied
    assert eager["x_1"][0].tolist() == [[1.0, 0.0], [0.0, 0.0]] and eager["y_1"][0].tolist() == [2.0] * 4
    assert exact["x_1"][0].dtype == exact["add"][0].dtype == torch.float64  # upcast where an op read it


def test_a_streamed_run_hands_over_the_values_a_kept_run_keeps_and_keeps_none_itself():
    import weakref

    from torch.fx.experimental.proxy_tensor import make_fx

    def chain(x, w):
        h = (x @ w).sin()
        return (h * h).sum(-1) + h.mean()

    gm = make_fx(chain)(torch.randn(4, 8, dtype=torch.bfloat16), torch.randn(8, 8, dtype=torch.bfloat16))
    inputs = [torch.randn(4, 8, dtype=torch.bfloat16), torch.randn(8, 8, dtype=torch.bfloat16)]
    kept = numerics.reference.node_values(gm, inputs, upcast=True)
    last = [n.name for n in gm.graph.nodes if n.op == "call_function"][-1]  # the final add
    streamed, refs, alive_at_last = {}, {}, []

    def visit(name, run, value):
        streamed[(name, run)] = value.clone() if isinstance(value, torch.Tensor) else value
        if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
            refs[name] = weakref.ref(value)
        if name == last:
            alive_at_last.extend(n for n, ref in refs.items() if ref() is not None)

    numerics.reference.stream_values(gm, inputs, visit, upcast=True)
    assert streamed.keys() == {(name, 0) for name in kept}
    assert all(torch.equal(streamed[(name, 0)], values[0]) for name, values in kept.items()
               if isinstance(values[0], torch.Tensor))
    # when the last node runs, only it and what it reads are held: the matmul, sin and product are gone
    reads = {a.name for a in next(n for n in gm.graph.nodes if n.name == last).args if isinstance(a, torch.fx.Node)}
    assert len(refs) >= 6 and set(alive_at_last) == {last, *reads}


def test_integer_buffers_compare_exactly_and_nan_is_counted():
    def f(x):
        return (x * 2).to(torch.int32) + 1, torch.log(x - 1)

    x = torch.rand(16) * 4
    c = explorer.compile(f, x)
    report = c.check_numerics()
    buffers = [b for row in report.kernels.values() for b in row.compared]
    ints = [b for b in buffers if b.dtype == "torch.int32"]
    assert ints and all(b.rtol == 0 and b.ok for b in ints)
    logs = [b for b in buffers if b.dtype == "torch.float32"]
    assert logs and logs[0].nan[0] == logs[0].nan[1] > 0 and logs[0].ok  # NaN where x < 1, on both sides


def test_random_ops_are_skipped_with_a_reason():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) * 2

    c = explorer.compile(f, torch.randn(64))
    report = c.check_numerics()
    notes = [n for row in report.kernels.values() for n in row.notes]
    assert notes and all("random" in n for n in notes)
    assert report.first_divergent is None


def test_report_round_trips_and_renders(tmp_path, cancellation):
    c, _, _ = cancellation
    report = c.check_numerics()
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    assert loaded.numerics[-1] == report
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(report)
    text = console.file.getvalue()
    assert "first divergent kernel" in text and "DIVERGES" in text and report.first_divergent in text
    assert "DIVERGES" in report._repr_html_()


def test_infinite_errors_survive_strict_json():
    check = numerics.BufferCheck("buf0", "sub", 0, compared=True, ok=False, max_rel=math.inf)
    row = numerics.KernelNumerics("k", "g0", "k", "cpp", 1, [check])
    report = numerics.NumericsReport("eager", "cpu", None, None, {"k": row}, "k")
    data = reports.numerics_to_json(report)
    import json

    json.dumps(data, allow_nan=False)
    assert reports.numerics_from_json(data).kernels["k"].max_rel == math.inf


def test_diff_shows_how_the_error_changed(cancellation):
    drift, emulated, _ = cancellation
    before = drift.check_numerics()
    after = emulated.check_numerics()
    d = explorer.diff(drift, emulated)
    (change,) = [k for k in d.kernels if k.a and "cpp" in k.a]
    assert change.error_a == before.kernels[change.a].max_rel > 0.1
    assert change.error_b == after.kernels[change.b].max_rel
    assert (change.error_b == 0.0) == CPU_EMULATES_CASTS
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(d)
    assert "error a" in console.file.getvalue()


def test_bad_requests_are_refused(tmp_path, cancellation):
    c, _, _ = cancellation
    before = list(c.numerics)
    with pytest.raises(ValueError, match="use one of"):
        c.check_numerics(reference="float16")
    with pytest.raises(ValueError, match="give a number >= 0"):
        c.check_numerics(rtol=-1)
    with pytest.raises(ValueError, match="only Triton kernels can be edited"):
        c.check_numerics(edits={c.kernels[-1].id: "x"})
    loaded = explorer.load(c.save(tmp_path / "t.json"))
    with pytest.raises(NotRunnableError, match="loaded from a file"):
        loaded.check_numerics()
    assert c.numerics == before


def test_kernels_table_marks_the_first_divergent_kernel_and_sorts_by_error(cancellation):
    from compiler.render import table_rows, tables

    c, _, _ = cancellation
    report = c.numerics[-1] if c.numerics else c.check_numerics()
    rows = table_rows.kernel_rows(c.graphs[0], numerics=report)
    worst = table_rows.select(rows, "error")[0]
    assert worst.id == report.first_divergent and worst.first_divergent and worst.ok is False
    assert worst.max_rel == report.kernels[report.first_divergent].max_rel and worst.divergence == "local"
    assert [r.first_divergent for r in rows].count(True) == 1 and all(r.ms is None for r in rows)
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(tables.kernels_table(rows, "kernels", width=250))
    line = next(t for t in console.file.getvalue().splitlines() if worst.id in t)
    assert "first divergent" in line and "DIVERGES (local)" in line


def test_with_edits_says_what_cannot_be_edited_and_keeps_the_program(reduction_compilation):
    c, (x,) = reduction_compilation
    before = c.run().clone()
    (kernel,) = [k for k in c.kernels if k.language == "cpp"]
    with pytest.raises(ValueError, match=f"with_edits: {kernel.id} is a cpp kernel; only Triton kernels can be "
                                         r"edited in place \(k.repro\(path, source=...\)"):
        with c.with_edits({kernel: kernel.source}):
            pass
    with pytest.raises(KeyError, match="with_edits: no kernel 'cpp_fused_sum_9'"):
        with c.with_edits({"cpp_fused_sum_9": "..."}):
            pass
    with pytest.raises(ValueError, match="needs at least one edit"):
        with c.with_edits({}):
            pass
    assert torch.equal(c.run(), before)
