"""Provenance on code nobody here wrote: higher-order ops, torch.nn modules, transformers.

Every kernel links to post-grad nodes, FX nodes and source lines, or carries a stated reason; lines
never point into the explorer; subgraph kernels link to the subgraph's own nodes and lines.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import torch
from torch import nn

import explorer
from benchmarks import real_models
from compiler.pipeline import frames
from compiler.model import provenance
from compiler._torch import module_frames
from compiler.model.stages import FxNode, FxStage, Kernel
from tests.conformance.test_conformance import result as conformance_result

# compiled once for the whole module; `make real-models` runs every model of benchmarks/real_models.py, and
# tests/conformance checks GPT-2's kernels against torch's own records
CI_MODELS = ("conv_bn_relu_train", "cond_experts", "while_loop", "invoke_subgraph", "checkpoint")
_results: dict[str, real_models.Result] = {}


def result(name: str) -> real_models.Result:
    if name not in _results:
        _results[name] = real_models.run(name)
    return _results[name]


def _true_branch(x):
    return x.sin() * 2


def _false_branch(x):
    return x.cos() + 1


def branchy(x):
    return torch.cond(x.sum() > 0, _true_branch, _false_branch, (x,))


@pytest.fixture(scope="module")
def cond_compilation():
    return explorer.compile(branchy, torch.randn(8, 8))


def _line_of(fn, text):
    source, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(source) if text in line)


@pytest.mark.parametrize("name", CI_MODELS)
def test_real_model_is_fully_linked_or_explained(name):
    r = result(name)
    assert r.matches, f"{name}: compiled outputs differ from eager"
    assert r.round_trip, f"{name}: the trace does not survive a JSON round trip"
    assert not r.missing, f"{name}: kernels without provenance: {r.missing}"
    assert not r.overlaps, f"{name}: nodes claimed by two kernels: {r.overlaps}"
    assert r.kernels == r.linked + r.explained > 0


def test_issue_cond_example_links_every_kernel_to_fx_nodes():
    c = explorer.compile(lambda x: torch.cond(x.sum() > 0, torch.sin, torch.cos, (x,)), torch.randn(8, 8))
    (graph,) = c.graphs
    assert len(graph.kernels) == 3
    assert all(k.fx_nodes and k.post_grad_nodes and k.user_lines for k in graph.kernels)
    sin = next(k for k in graph.kernels if "sin" in k.name)
    assert "true_graph_0.sin" in sin.post_grad_nodes and "cond_true_0.sin" in sin.fx_nodes


def test_branch_kernels_link_to_the_branch_nodes_and_lines(cond_compilation):
    graph = cond_compilation.graphs[0]
    true_kernel = next(k for k in graph.kernels if "sin" in k.name)
    branch_nodes = [n for n in graph.fx if n.subgraph == "cond_true_0"]
    assert {"cond_true_0.sin", "cond_true_0.mul"} <= {n.name for n in branch_nodes}
    assert {"cond_true_0.sin", "cond_true_0.mul"} <= set(true_kernel.fx_nodes)
    assert all(graph.post_grad.node(n).subgraph == "true_graph_0" for n in true_kernel.post_grad_nodes
               if n.startswith("true_graph_0."))
    branch_line = (__file__, _line_of(_true_branch, "x.sin()"))
    assert true_kernel.user_lines[0] == branch_line  # the branch's own line comes first
    assert branch_line not in next(k for k in graph.kernels if "cos" in k.name).user_lines
    assert true_kernel.id in graph.fx.node("cond_true_0.sin").kernels  # and back
    for node in graph.post_grad:  # subgraph inputs/users stay inside their subgraph
        assert all(graph.post_grad.node(i).subgraph == node.subgraph for i in node.inputs if node.op != "get_attr")


def test_scheduler_of_each_branch_is_kept_not_only_the_last(cond_compilation):
    graph = cond_compilation.graphs[0]
    names = [n.name for n in graph.loop_ir]
    assert any(n.startswith("true_graph_0_") for n in names) and any(n.startswith("false_graph_0_") for n in names)
    assert any(re.fullmatch(r"op\d+", n) for n in names)  # the main graph's own scheduler nodes
    assert graph.post_grad.node("cond").op == "call_function"  # the main post-grad graph, not a branch


@pytest.mark.parametrize("name, subgraph", [("while_loop", "body_graph"), ("invoke_subgraph", "repeated_subgraph"),
                                            ("cond_experts", "true_graph")])
def test_higher_order_op_kernels_reach_their_subgraph(name, subgraph):
    c = result(name).compilation
    kernels = [k for g in c.graphs for k in g.kernels if any(subgraph in n for n in k.post_grad_nodes)]
    assert kernels, f"no kernel of {name} links into its {subgraph}"
    for kernel in kernels:
        inner = [n for n in kernel.fx_nodes if "." in n]
        assert inner, (kernel.id, kernel.fx_nodes)


def test_checkpointed_backward_links_to_the_checkpointed_body():
    c = result("checkpoint").compilation
    backward = next(g for g in c.graphs if g.kind == "backward")
    body = {n.name for n in backward.fx if n.subgraph}
    assert body and any(set(k.fx_nodes) & body for k in backward.kernels)


def _all_lines(c):
    for graph in c.graphs:
        for stage in (graph.fx, graph.post_grad):
            for node in stage:
                yield from [(f, line) for f, line, _ in node.stack]
                if node.user_line:
                    yield tuple(node.user_line)
        for kernel in graph.kernels:
            yield from kernel.user_lines


def test_a_backward_graph_holds_only_its_own_kernels():
    # Backward graphs compile lazily, outside the scope where Inductor resets its provenance tables:
    # the second training capture must not list the first one's backward kernels.
    from tests import workloads

    torch.manual_seed(0)
    explorer.compile(workloads.TinyMLP(64, 128), torch.randn(256, 64), backward=True)
    block = workloads.ResidualBlock(32)
    c = explorer.compile(block, torch.randn(8, 32, requires_grad=True), backward=True)
    backward = next(g for g in c.graphs if g.kind == "backward")
    names = {n.name for n in backward.post_grad.nodes}
    assert backward.kernels and all(set(k.post_grad_nodes) <= names for k in backward.kernels), \
        [(k.id, k.post_grad_nodes) for k in backward.kernels]
    assert not any("threshold_backward" in k.id for k in backward.kernels)  # TinyMLP's relu, not this block's


def test_a_module_never_points_into_the_explorer():
    c = result("conv_bn_relu_train").compilation
    explorer_root = str(Path(frames.__file__).resolve().parent)
    assert not [line for line in _all_lines(c) if line[0].startswith(explorer_root)]
    traces = [t for k in c.kernels for t in k.meta.get("stack_traces", [])]
    assert traces and not any(entry in t for entry in frames.ENTRY_FILES for t in traces)


def test_torch_nn_frames_are_kept_and_marked_as_library():
    c = result("conv_bn_relu_train").compilation
    graph = c.graphs[0]
    conv = next(k for k in graph.kernels if k.language == "extern")
    files = {file for file, _ in conv.user_lines}
    assert any(f.endswith("torch/nn/modules/conv.py") for f in files)
    assert all(c.library_files.get(f) == "torch" for f in files)
    inputs = {n.name for n in graph.fx if n.op == "placeholder"}
    for copy in (k for k in graph.kernels if all(graph.post_grad.node(n).op == "placeholder" for n in k.post_grad_nodes)):
        # a layout copy of graph inputs (the weight and the input into channels-last on CPU): linked to
        # the Dynamo inputs, and through them to the lines that read them
        assert copy.fx_nodes and set(copy.fx_nodes) <= inputs and copy.user_lines, copy


def test_library_model_lines_name_the_library():
    c = conformance_result("gpt2").compilation  # GPT-2, compiled once for the conformance slice too
    assert "transformers" in set(c.library_files.values()) and "torch" in set(c.library_files.values())
    # the line a node shows is the library's own code, not torch.nn's generic forward
    lines = [n.user_line for g in c.graphs for n in g.fx if n.op == "call_function" and n.user_line]
    assert lines and all(c.library_files.get(f) == "transformers" for f, _ in lines)


class _ResidualNorm(nn.Module):
    """The end of a Hugging Face decoder layer's attention: the output projection, the residual add, the
    next RMSNorm (a linear on 3-d input is a reshape, a matmul and a reshape back)."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, attn):
        projected = self.o_proj(attn)
        h = x + projected
        variance = h.pow(2).mean(-1, keepdim=True)
        return self.weight * (h * torch.rsqrt(variance + 1e-6))


def test_a_residual_add_after_a_projection_lists_its_own_nodes_and_lines():
    """The reshape after the projection's matmul is the projection's (torch traces it to the ``nn.Linear``
    call, with the matmul): it goes with the matmul, and the fused add + norm kernel lists the add and the
    norm with their lines, its FX nodes those of every node it lists."""
    torch.manual_seed(0)
    with torch.no_grad():
        c = explorer.compile(_ResidualNorm(), torch.randn(2, 8, 32), torch.randn(2, 8, 32))
    graph = c.graphs[0]
    (matmul,) = [k for k in graph.kernels if k.language == "extern"]
    (norm,) = [k for k in graph.kernels if k.language != "extern"]
    nodes = {n.name: n for n in graph.post_grad}
    reshape_back = next(n for n in nodes if nodes[n].inputs == ["mm"])
    assert sorted(matmul.post_grad_nodes) == sorted(["view", "permute", "mm", reshape_back])
    assert matmul.fx_nodes == ["projected"]
    assert matmul.user_lines[0] == (__file__, _line_of(_ResidualNorm.forward, "projected = self.o_proj"))
    assert sorted(norm.post_grad_nodes) == ["add", "add_1", "mean", "mul", "mul_1", "pow_1", "rsqrt"]
    assert sorted(norm.fx_nodes) == ["add_1", "h", "mul", "mul_1", "pow_1", "rsqrt", "variance"]
    assert sorted(norm.user_lines) == [(__file__, _line_of(_ResidualNorm.forward, text))
                                       for text in ("h = x + projected", "variance = ", "return self.weight")]
    assert all(set(nodes[n].fx) <= set(k.fx_nodes) for k in graph.kernels for n in k.post_grad_nodes)


class _UsesLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


def test_innermost_user_frame_comes_first_then_library_frames():
    with torch.no_grad():
        c = explorer.compile(_UsesLinear(), torch.randn(4, 8))
    mm = next(k for k in c.kernels if k.language == "extern")
    first_file, first_line = mm.user_lines[0]
    assert first_file == __file__ and first_line == _line_of(_UsesLinear.forward, "self.fc(x)")
    rest = [f for f, _ in mm.user_lines[1:]]
    assert any(f.endswith("torch/nn/modules/linear.py") for f in rest)
    assert all(c.library_files.get(f) for f in rest if f != __file__)


def test_nn_module_frame_patch_is_restored_also_on_failure():
    owner = next(cls for cls in torch._dynamo.symbolic_convert.InstructionTranslatorBase.__mro__
                 if module_frames._NAME in vars(cls))
    before = vars(owner)[module_frames._NAME]
    with pytest.raises(explorer.CompileError):
        explorer.compile(lambda x: x @ x, torch.randn(3, 5))
    assert vars(owner)[module_frames._NAME] is before
    with module_frames.keep_nn_module_frames():
        assert vars(owner)[module_frames._NAME] is not before
    assert vars(owner)[module_frames._NAME] is before


def test_subgraphs_notes_and_library_files_survive_save_and_load(tmp_path, cond_compilation):
    c = result("conv_bn_relu_train").compilation
    c.graphs[0].kernels[0].provenance_note = "a stated reason"
    try:
        for compilation in (c, cond_compilation):
            loaded = explorer.load(compilation.save(tmp_path / "t.json"))
            assert loaded.to_json() == compilation.to_json()
        loaded_c = explorer.load(c.save(tmp_path / "c.json"))
        assert loaded_c.graphs[0].kernels[0].provenance_note == "a stated reason"
        assert loaded_c.library_files == c.library_files and c.library_files
        data = json.loads((tmp_path / "t.json").read_text())
        assert any(n.get("subgraph") == "cond_true_0" for n in data["graphs"][0]["fx"]["nodes"])
        libraries = data.get("library_files", {})  # files of other captures' Dynamo records may be listed
        assert not any(n["user_line"] and n["user_line"][0] in libraries  # the cond example's lines: this file
                       for n in data["graphs"][0]["fx"]["nodes"])
        assert explorer.load(tmp_path / "t.json").provenance().complete
    finally:
        c.graphs[0].kernels[0].provenance_note = None


def _stage(*nodes: FxNode) -> FxStage:
    return FxStage(stage="post_grad", code="", nodes=list(nodes))


def test_notes_state_why_links_are_missing():
    copy = Kernel(id="k", name="k", language="cpp", source="", post_grad_nodes=["primals_1"])
    stage = _stage(FxNode("primals_1", "placeholder", "primals_1"))
    assert "copies graph inputs (primals_1)" in provenance.note_for(copy, stage, "forward")
    assert "backward graph" in provenance.note_for(copy, stage, "backward")
    write_back = Kernel(id="w", name="w", language="cpp", source="", post_grad_nodes=["copy_"])
    stage = _stage(FxNode("arg0_1", "placeholder", "arg0_1"),
                   FxNode("copy_", "call_function", "aten.copy_.default", inputs=["arg0_1", "add"]))
    assert "mutated graph input" in provenance.note_for(write_back, stage, "inference")
    compute = Kernel(id="c", name="c", language="cpp", source="", post_grad_nodes=["add"])
    assert provenance.note_for(compute, _stage(FxNode("add", "call_function", "aten.add.Tensor")), "forward") is None
    linked = Kernel(id="l", name="l", language="cpp", source="", post_grad_nodes=["add"], fx_nodes=["add"],
                    user_lines=[("f.py", 1)])
    assert provenance.note_for(linked, stage, "forward") is None and provenance.status_of(linked) == "linked"
    copy.provenance_note = "why"
    assert provenance.status_of(copy) == "explained" and provenance.status_of(compute) == "missing"


def test_views_mark_library_lines_and_show_notes():
    import io

    from rich.console import Console

    c = result("conv_bn_relu_train").compilation
    kernel = next(k for k in c.kernels if k.language == "extern")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(kernel)
    assert "conv.py:" in console.file.getvalue() and "(torch)" in console.file.getvalue()
    assert "(torch)" in kernel._repr_html_()
    assert repr(c.provenance()).endswith(f"0 explained, 0 missing of {len(c.kernels)} kernels)")
    lines, kernel.user_lines, kernel.provenance_note = kernel.user_lines, [], "a stated reason"
    try:
        marked = c.provenance()
        console.print(marked)
        assert repr(marked).endswith(f"1 explained, 0 missing of {len(c.kernels)} kernels)")
        assert "a stated reason" in console.file.getvalue() and "a stated reason" in marked._repr_html_()
        kernel.provenance_note = None
        assert not c.provenance().complete and c.provenance().missing[0].gaps == ("user_lines",)
    finally:
        kernel.user_lines, kernel.provenance_note = lines, None


def test_backward_nodes_of_repeated_layers_link_within_their_layer():
    """Every layer of a stack of identical blocks runs the same source lines: a backward node found by its
    line links to the FX nodes of its own layer (its forward module), not of every layer."""
    from tests.workloads import TransformerBlock

    torch.manual_seed(0)
    stack = nn.Sequential(*[TransformerBlock(dim=32, heads=2) for _ in range(3)])
    c = explorer.compile(stack, torch.randn(2, 8, 32, requires_grad=True), backward=True)
    backward = next(g for g in c.graphs if g.kind == "backward")
    fx = {n.name: n for n in backward.fx.nodes}
    linked = [n for n in backward.post_grad.nodes if n.fx]
    spread = [n.name for n in linked if len({(fx[f].module or "").split(".")[0] for f in n.fx}) > 1]
    assert linked and len(spread) <= len(linked) // 10, spread


def _safe_softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    pos = torch.arange(q.shape[-2])
    mask = torch.where(pos[None, :] <= pos[:, None], 0.0, float("-inf"))
    probabilities = torch.ops.aten._safe_softmax(q @ k.transpose(-1, -2) + mask, -1)
    return probabilities @ v


def test_the_zeros_a_safe_softmax_writes_are_computed_by_the_kernel_writing_it():
    # _safe_softmax is where(row fully masked, full(0), softmax): Inductor inlines the full as a constant in the
    # where's loop and, for the backward, writes the where out as the expand the bmm reads. The kernel writing
    # it computes the full (torch's records list it there too); it was left to no kernel.
    from tests.conformance.torch_records import non_lazy_backward, recorded

    q, k, v = (torch.randn(2, 4, 16, 16, requires_grad=True) for _ in range(3))
    with recorded() as records, non_lazy_backward():
        c = explorer.compile(_safe_softmax_attention, q, k, v, backward=True, cache=False)
    forward = c.graphs[0]
    fulls = [n for n in forward.post_grad.nodes if n.target == "aten.full.default"]
    assert len(fulls) == 3  # the mask's 0 and -inf, and the softmax's zeros
    for full in fulls:
        (where,) = full.users
        (writer,) = [kernel for kernel in forward.kernels if where in kernel.post_grad_nodes]
        assert [kernel.id for kernel in forward.kernels if full.name in kernel.post_grad_nodes] == [writer.id]
        (theirs,) = [nodes for key, nodes in records[0].kernel_nodes.items() if key.rpartition(":")[0] == writer.name]
        assert full.name in theirs
