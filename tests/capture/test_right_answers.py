"""Answers checked against the truth of models whose truth is known.

Every kernel owns exactly the post-grad nodes it computes (an extern matmul never claims the kernel
that feeds it, a ``torch.cond`` branch kernel only its branch), so the time of a line with one kernel
is that kernel's time; two identical compiles diff as all ``same``; a run never compiles; a compile
error leads with the cause in the user's code; a numerics check compares the kernel inside a branch;
a frame Dynamo skips is said to have run eagerly; graph-break reasons are Dynamo's own.
"""

from __future__ import annotations

import inspect
import itertools
import json
import logging

import pytest
import torch
from torch._dynamo.utils import counters

import explorer
from compiler.io.trace import from_json
from compiler.model import provenance
from compiler.runs.replay import NotRunnableError
from tests import workloads

FILE = inspect.getsourcefile(workloads.LayerNormMLP)


def _line(fn, text: str) -> tuple[str, int]:
    source, start = inspect.getsourcelines(fn)
    return FILE, start + next(i for i, line in enumerate(source) if text in line)


def _frames_compiled() -> int:
    return counters["frames"]["total"]


def _computed_on(graph, line: tuple[str, int], subgraph: str | None = None) -> set[str]:
    """The truth, read off the post-grad graph alone: the nodes written on ``line`` that compute
    something (views and graph inputs compute nothing)."""
    return {n.name for n in graph.post_grad.nodes if n.op == "call_function" and n.user_line == line
            and n.subgraph == subgraph and not provenance.is_view(n)}


LN_LINE = _line(workloads.LayerNormMLP.forward, "self.ln(x)")
FC1_LINE = _line(workloads.LayerNormMLP.forward, "gelu(self.fc1(z))")
FC2_LINE = _line(workloads.LayerNormMLP.forward, "self.fc2(h)")


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    """The MLP captured under no_grad; its TORCH_TRACE log is written to ``c.origin["log"]``'s folder."""
    torch.manual_seed(0)
    model, x = workloads.LayerNormMLP(), torch.randn(64, 96)
    with torch.no_grad():
        c = explorer.compile(model, x, trace_dir=tmp_path_factory.mktemp("mlp_trace"))
    return c, model, x


def _from_log(c):
    """The same compile read back from its TORCH_TRACE log (no loop IR there: Inductor's map alone)."""
    return next(iter(explorer.load_trace(c.origin["log"])[0]))


def _mlp_kernels(c):
    graph = c.graphs[0]
    externs = sorted((k for k in graph.kernels if k.language == "extern"), key=lambda k: k.wrapper_lines[0])
    norm = next(k for k in graph.kernels if k.language != "extern" and "layer_norm" in k.name)
    gelu = next(k for k in graph.kernels if k.language != "extern" and "gelu" in k.name)
    return graph, norm, externs[0], gelu, externs[1]


# ------------------------------------------------------------------------------------ extern kernels


def test_each_kernel_of_the_mlp_owns_exactly_the_nodes_it_computes(mlp):
    c, _, _ = mlp
    graph, norm, fc1, gelu, fc2 = _mlp_kernels(c)
    assert len(graph.kernels) == 4
    targets = {n.name: n.target for n in graph.post_grad.nodes}
    computing = {n for n in norm.post_grad_nodes if not provenance.is_view(graph.post_grad.node(n))}
    assert computing == _computed_on(graph, LN_LINE) and "var_mean" in norm.post_grad_nodes
    assert {targets[n] for n in norm.post_grad_nodes if n not in computing} == {"operator.getitem"}  # mean, rstd
    fc1_matmul = {n for n in _computed_on(graph, FC1_LINE) if targets[n].startswith("aten.addmm")}
    assert {n for n in fc1.post_grad_nodes if not provenance.is_view(graph.post_grad.node(n))} == fc1_matmul
    assert [targets[n] for n in fc1.post_grad_nodes if n not in fc1_matmul] == ["aten.permute.default"]  # the weight's view
    assert set(gelu.post_grad_nodes) == _computed_on(graph, FC1_LINE) - fc1_matmul
    assert {targets[n] for n in fc2.post_grad_nodes} == {"aten.addmm.default", "aten.permute.default"}
    claimed = [n for k in graph.kernels for n in k.post_grad_nodes]
    assert len(claimed) == len(set(claimed)), "a post-grad node is claimed by two kernels"
    assert c.provenance().shared == [] and c.provenance().complete
    for node in graph.post_grad.nodes:  # and back: a node links to the one kernel that computes it
        assert len(node.kernels) <= 1, (node.name, node.kernels)
    ln_ir = [ir for ir in graph.loop_ir if ir.kernels == [fc1.id]]
    assert ln_ir and set(ln_ir[0].inherited_origins) >= computing - {"var_mean"}  # Inductor's list kept


def test_a_logs_kernels_own_the_same_nodes_and_lines(mlp):
    c, _, _ = mlp
    live, logged = _mlp_kernels(c)[1:], _mlp_kernels(_from_log(c))[1:]
    for a, b in zip(live, logged):  # the log's views go to their readers too: the weight's permute to its matmul
        assert (b.id, sorted(b.post_grad_nodes)) == (a.id, sorted(a.post_grad_nodes))
        assert [u for u in b.user_lines if u[0] == FILE] == [u for u in a.user_lines if u[0] == FILE]


def test_each_kernel_lists_only_its_own_lines(mlp):
    c, _, _ = mlp
    _, norm, fc1, gelu, fc2 = _mlp_kernels(c)
    user = lambda k: [line for line in k.user_lines if line[0] == FILE]  # noqa: E731 - the model's own lines
    assert user(norm) == [LN_LINE] and user(fc1) == [FC1_LINE] and user(gelu) == [FC1_LINE] and user(fc2) == [FC2_LINE]
    assert fc1.fx_nodes == ["linear"] and fc2.fx_nodes == ["linear_1"]
    [trace] = fc1.meta["stack_traces"]  # Inductor's trace of the matmul, not of the LayerNorm it reads
    assert "self.fc1(z)" in trace and "self.ln(x)" not in trace


def test_a_line_with_one_kernel_gets_that_kernels_time(mlp):
    c, _, _ = mlp
    _, norm, fc1, gelu, fc2 = _mlp_kernels(c)
    p = c.profile(runs=5, warmup=1)
    assert p.line_ms[LN_LINE] == pytest.approx(p.kernel_ms[norm.id], rel=1e-9)
    assert p.line_ms[FC2_LINE] == pytest.approx(p.kernel_ms[fc2.id], rel=1e-9)
    assert p.line_ms[FC1_LINE] == pytest.approx(p.kernel_ms[fc1.id] + p.kernel_ms[gelu.id], rel=1e-9)
    nodes = p.post_grad_ms["g0"]
    matmul = next(n for n in fc2.post_grad_nodes if n.startswith("addmm"))
    assert nodes[matmul] == pytest.approx(p.kernel_ms[fc2.id], rel=1e-9)  # the view of the weight costs nothing
    assert sum(nodes.get(n, 0.0) for n in norm.post_grad_nodes) == pytest.approx(p.kernel_ms[norm.id], rel=1e-9)
    assert sorted(n for n in norm.post_grad_nodes if n not in nodes) == ["getitem", "getitem_1"]  # views: no time


def test_identical_compiles_diff_as_all_same_and_a_toggle_pairs_counterparts(mlp):
    c, model, x = mlp
    with torch.no_grad():
        again = explorer.compile(model, x)
        toggled = explorer.compile(model, x, config={"inplace_buffers": False})
    same = explorer.diff(c, again)
    assert same.counts() == {"added": 0, "removed": 0, "changed": 0, "same": 4}
    assert all(k.source_diff == "" for k in same.kernels)
    changed = explorer.diff(c, toggled)
    assert [(k.a, k.b) for k in changed.kernels] == [(k.id, k.id) for k in c.graphs[0].kernels]
    assert {k.status for k in changed.kernels} <= {"same", "changed"}


# ------------------------------------------------------------------------------------ runs never compile


def test_a_run_on_another_shape_says_what_differs_and_compiles_nothing(mlp):
    c, _, _ = mlp
    graphs, before = len(c.graphs), _frames_compiled()
    with pytest.raises(NotRunnableError) as error:
        c.run(torch.randn(8, 96))
    message = str(error.value)
    assert "input 0 has shape [8, 96] where the capture had [64, 96]" in message
    assert "Nothing was compiled" in message and "c.recompile(" in message
    with pytest.raises(NotRunnableError, match="dtype torch.float64 where the capture had torch.float32"):
        c.run(torch.randn(64, 96, dtype=torch.float64))
    assert _frames_compiled() == before and len(c.graphs) == graphs and not c.recompiles


@pytest.mark.parametrize("run", ["run", "profile", "check_numerics", "check_determinism"])
def test_runs_replay_the_captures_grad_mode(mlp, run):
    c, _, _ = mlp  # captured under torch.no_grad()
    graphs, before = len(c.graphs), _frames_compiled()
    assert torch.is_grad_enabled()
    result = {"run": c.run, "profile": lambda: c.profile(runs=2, warmup=1), "check_numerics": c.check_numerics,
              "check_determinism": lambda: c.check_determinism(runs=2)}[run]()
    assert _frames_compiled() == before and len(c.graphs) == graphs
    if run == "run":
        assert torch.equal(result, c.outputs) and not result.requires_grad


def test_recompile_is_the_call_that_compiles(mlp):
    c, model, _ = mlp
    with torch.no_grad():
        again = explorer.compile(model, torch.randn(64, 96))
    x = torch.randn(8, 96)
    with torch.no_grad():
        torch.testing.assert_close(again.recompile(x), model(x))
    assert len(again.recompiles) == 1 and len(again.graphs) == 2
    torch.testing.assert_close(again.run(x), model(x).detach())  # now captured: it runs


# ------------------------------------------------------------------------------------ compile errors


def test_a_compile_error_leads_with_the_cause_in_the_users_code():
    with pytest.raises(explorer.CompileError) as info, torch.no_grad():
        explorer.compile(workloads.LayerNormMLP(), torch.randn(64, 95))
    message = str(info.value)
    first, second = message.splitlines()[:2]
    assert first.startswith("compilation failed during tracing: RuntimeError: Given normalized_shape=[96]")
    assert "got input of size torch.Size([64, 95])" in first
    assert second.strip() == f"at {LN_LINE[0]}:{LN_LINE[1]} in forward: z = self.ln(x)"
    assert "compiler/pipeline/capture.py" not in message  # the explorer's own frames are not user code
    assert "The compiler's context: TorchRuntimeError" in message


# ------------------------------------------------------------------------------------ torch.cond


@pytest.fixture(scope="module")
def cond(tmp_path_factory):
    torch.manual_seed(0)
    x, p = torch.randn(64, 64), torch.ones(4)
    return explorer.compile(workloads.cond_after_work, x, p, trace_dir=tmp_path_factory.mktemp("cond_trace")), (x, p)


def test_a_branch_kernel_owns_its_branch_and_nothing_of_the_outer_graph(cond):
    c, _ = cond
    graph = c.graphs[0]
    true_line = _line(workloads._cancelling_branch, "return")
    false_line = _line(workloads._plain_branch, "return")
    operand_line = _line(workloads.cond_after_work, "s = x * 2")
    cond_line = _line(workloads.cond_after_work, "torch.cond(")
    owners = {}
    for kernel in graph.kernels:
        for node in kernel.post_grad_nodes:
            assert node not in owners, f"{node} claimed by {owners[node]} and {kernel.id}"
            owners[node] = kernel.id
    true_kernel = owners[next(iter(_computed_on(graph, true_line, "true_graph_0")))]
    false_kernel = owners[next(iter(_computed_on(graph, false_line, "false_graph_0")))]
    outer = owners[next(iter(_computed_on(graph, operand_line)))]
    assert set(graph.kernel(true_kernel).post_grad_nodes) == _computed_on(graph, true_line, "true_graph_0")
    assert set(graph.kernel(false_kernel).post_grad_nodes) == _computed_on(graph, false_line, "false_graph_0")
    assert set(graph.kernel(outer).post_grad_nodes) == _computed_on(graph, operand_line) | _computed_on(graph, cond_line) - {"cond"}
    assert "cond" not in owners and "true_graph_0" not in owners  # the control flow is the wrapper's, no kernel's
    kernel = graph.kernel(true_kernel)
    assert kernel.user_lines[0] == true_line and operand_line not in kernel.user_lines
    assert all(n.startswith("cond_true_0.") for n in kernel.fx_nodes)


def test_a_logs_branch_kernels_own_their_branch(cond):
    c, _ = cond
    logged = _from_log(c)
    [graph] = logged.graphs
    for live in c.graphs[0].kernels:
        kernel = graph.kernel(live.id)
        assert sorted(kernel.post_grad_nodes) == sorted(live.post_grad_nodes), kernel.id
        assert kernel.user_lines[0] == live.user_lines[0]
    assert logged.provenance().complete and not logged.provenance().shared
    assert {n.subgraph for n in graph.post_grad.nodes} == {None, "true_graph_0", "false_graph_0"}


def test_a_branch_line_gets_its_kernels_time_and_the_branch_not_taken_none(cond):
    c, _ = cond
    graph = c.graphs[0]
    p = c.profile(runs=5, warmup=1)
    true_line = _line(workloads._cancelling_branch, "return")
    false_line = _line(workloads._plain_branch, "return")
    true_kernel = next(k for k in graph.kernels if any(n.startswith("true_graph_0.") for n in k.post_grad_nodes))
    assert p.line_ms[true_line] == pytest.approx(p.kernel_ms[true_kernel.id], rel=1e-9)
    assert p.line_ms.get(false_line, 0.0) == 0.0
    assert not any(n.startswith("false_graph_0") for n, ms in p.post_grad_ms["g0"].items() if ms > 0)


def test_numerics_compares_the_branch_kernel_and_blames_it_first(cond):
    c, _ = cond
    graph = c.graphs[0]
    report = c.check_numerics()
    true_kernel = next(k for k in graph.kernels if any(n.startswith("true_graph_0.") for n in k.post_grad_nodes))
    false_kernel = next(k for k in graph.kernels if any(n.startswith("false_graph_0.") for n in k.post_grad_nodes))
    row = report.kernels[true_kernel.id]
    assert row.compared and row.ok is False and row.max_rel > 0.01
    assert report.first_divergent == true_kernel.id
    assert report.first_divergent_nodes["user_lines"][0] == list(_line(workloads._cancelling_branch, "return"))
    assert "did not run" in report.kernels[false_kernel.id].buffers[0].note


# ------------------------------------------------------------------------------------ loops and fallbacks


def test_a_loop_body_kernel_is_compared_on_every_iteration():
    torch.manual_seed(0)
    c = explorer.compile(workloads.doubling_loop, torch.randn(16, 16))
    body = [k for g in c.graphs for k in g.kernels if any("body_graph" in n for n in k.post_grad_nodes)]
    report = c.check_numerics()
    assert body and all(report.kernels[k.id].compared and report.kernels[k.id].ok for k in body)
    assert max(report.kernels[k.id].calls for k in body) == 3  # one check per iteration


def test_a_fallback_kernel_owns_only_its_own_op():
    c = explorer.compile(workloads.sort_after_pointwise, torch.randn(16, 32))
    graph = c.graphs[0]
    sort = next(k for k in graph.kernels if "sort" in k.name)
    outputs = [n.name for n in graph.post_grad if n.inputs == ["sort"]]  # the getitems picking values, indices
    assert sort.language == "extern" and sort.post_grad_nodes == ["sort", *outputs] and len(outputs) == 2
    line = _line(workloads.sort_after_pointwise, "torch.sort(")
    assert [u for u in sort.user_lines if u[0] == FILE] == [line]
    assert not c.provenance().shared


# ------------------------------------------------------------------------------------ Dynamo's answers


class _GraphBreakLog(logging.Handler):
    """What TORCH_LOGS=graph_breaks prints: each record's "Graph Break Reason:" field."""

    def __init__(self) -> None:
        super().__init__()
        self.reasons: list[str] = []
        self.explanations: list[str] = []  # each break's explanation block, whitespace squeezed

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.endswith("__graph_breaks"):
            return
        lines = [line.strip() for line in record.getMessage().splitlines()]
        for number, line in enumerate(lines):
            if line.startswith("Graph Break Reason:"):
                self.reasons.append(line[len("Graph Break Reason:"):].strip())
            if line.startswith("Explanation:"):
                block = [line[len("Explanation:"):]] + list(itertools.takewhile(
                    lambda text: not text.startswith(("Hint:", "Developer debug context:")), lines[number + 1:]))
                self.explanations.append(" ".join(" ".join(block).split()))


@pytest.fixture
def graph_break_log():
    handler = _GraphBreakLog()
    logger = logging.getLogger("torch._dynamo")  # the artifact's loggers (torch._dynamo.*.__graph_breaks) propagate here
    torch._logging.set_logs(graph_breaks=True)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()


def test_a_skipped_frame_says_it_ran_eagerly(graph_break_log):
    x = torch.randn(8)
    c = explorer.compile(workloads.print_in_loop, x)
    assert torch.equal(c.outputs, x * 8 + 1) and c.graphs == []  # it ran, eagerly
    [graph_break] = c.graph_breaks
    [logged] = graph_break_log.reasons
    assert "Skipping the function and falling back to eager" in logged  # torch's own words
    assert graph_break.reason == "Failed to trace builtin operator"
    assert graph_break.user_line == _line(workloads.print_in_loop, 'print("step"')
    assert graph_break.frame_skipped.startswith("graph break in loop: ")
    [frame] = c.skipped_frames
    assert frame.function == "print_in_loop" and frame.skipped == graph_break.frame_skipped and frame.graphs == ()
    assert "1 skipped (ran eagerly)" in repr(c.dynamo)
    again = from_json(json.loads(json.dumps(c.to_json())))
    assert again.skipped_frames == c.skipped_frames and again.graph_breaks[0].frame_skipped == graph_break.frame_skipped
    assert "frame skipped, ran eagerly" in graph_break._repr_html_()


def test_a_data_dependent_branch_gets_dynamos_reason(graph_break_log):
    c = explorer.compile(workloads.data_dependent_if, torch.randn(8))
    [graph_break] = c.graph_breaks
    assert graph_break_log.reasons == [graph_break.reason] == ["Data-dependent branching"]
    assert graph_break.explanation.startswith("Detected data-dependent branching")
    # with the lines Dynamo indents below it (torch >= 2.12 prints the tensor the branch reads there)
    assert graph_break_log.explanations == [" ".join(graph_break.explanation.split())]
    assert graph_break.hints and not graph_break.frame_skipped and not c.skipped_frames
