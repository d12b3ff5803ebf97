"""The stages a capture produces, on real CPU compilations of small workloads."""

from __future__ import annotations

import sympy
import torch

import explorer
from compiler.model.provenance import is_view
from tests import workloads


def test_outputs_equal_eager(all_compilations, reduction_compilation, matmul_compilation, graph_break_compilation,
                             demo_compilation):
    c, (x,) = reduction_compilation
    torch.testing.assert_close(c.outputs, workloads.reduction_with_pointwise(x))
    c, args = matmul_compilation
    torch.testing.assert_close(c.outputs, workloads.matmul_epilogue(*args))
    c, (x,) = graph_break_compilation
    torch.testing.assert_close(c.outputs, workloads.with_graph_break(x))
    c, (model, x) = demo_compilation
    with torch.no_grad():
        torch.testing.assert_close(c.outputs, model(x))


def test_reduction_is_fused_with_its_pointwise_ops(reduction_compilation):
    c, _ = reduction_compilation
    (graph,) = c.graphs
    assert graph.kind == "inference"
    assert len(graph.kernels) == 1
    kernel = graph.kernels[0]
    assert kernel.language == "cpp"
    targets = {graph.post_grad.node(n).target for n in kernel.post_grad_nodes}
    assert {"aten.mul.Tensor", "aten.add.Tensor", "aten.relu.default", "aten.sum.dim_IntList"} <= targets
    reductions = [n for n in graph.loop_ir if n.kind == "reduction"]
    assert reductions and all(n.group == kernel.group for n in reductions)
    group = next(g for g in graph.fused if g.name == kernel.group)
    assert set(group.nodes) == {n.name for n in graph.loop_ir if not n.eliminated}


def test_loop_ir_keeps_sympy_ranges_and_indexing(reduction_compilation):
    graph = reduction_compilation[0].graphs[0]
    node = next(n for n in graph.loop_ir if n.kind == "reduction")
    assert all(isinstance(k, sympy.Symbol) for k in node.ranges)
    assert sorted(int(v) for v in node.ranges.values()) == [32, 64]
    assert node.indexing and all(isinstance(e, sympy.Expr) for e in node.indexing.values())
    assert any(e.free_symbols for e in node.indexing.values())
    assert node.reads and node.writes and node.body


def test_matmul_gives_extern_and_fused_epilogue(matmul_compilation):
    graph = matmul_compilation[0].graphs[0]
    languages = sorted(k.language for k in graph.kernels)
    assert languages == ["cpp", "extern"]
    extern = next(k for k in graph.kernels if k.language == "extern")
    assert "mm" in extern.name and extern.source.startswith("extern_kernels.")
    epilogue = next(k for k in graph.kernels if k.language == "cpp")
    assert "erf" in epilogue.post_grad_nodes  # the GELU epilogue (the bias add folds into addmm)
    assert extern.group != epilogue.group


def test_graph_break_gives_two_graphs(graph_break_compilation):
    c, _ = graph_break_compilation
    assert [g.dynamo_graph for g in c.graphs] == [0, 1]
    assert "sin" in c.graphs[0].kernels[0].source and "cos" in c.graphs[1].kernels[0].source


def test_training_step_captures_backward(training_compilation):
    c, (model, x) = training_compilation
    kinds = [g.kind for g in c.graphs]
    assert kinds == ["forward", "backward"]
    backward = c.graphs[1]
    assert backward.kernels and any(k.language == "extern" for k in backward.kernels)
    assert all(p.grad is not None for p in model.parameters())
    assert c.backward is True


def test_every_kernel_links_to_fx_nodes_and_user_lines(all_compilations):
    for c in all_compilations:
        for graph in c.graphs:
            for kernel in graph.kernels:
                assert kernel.post_grad_nodes, (c.function, kernel.id)
                assert kernel.fx_nodes, (c.function, graph.kind, kernel.id)
                assert kernel.user_lines, (c.function, kernel.id)
                for file, line in kernel.user_lines:
                    assert c.sources[file][line].strip(), (file, line)


def test_user_lines_point_at_the_users_code(matmul_compilation):
    c, _ = matmul_compilation
    extern = next(k for k in c.graphs[0].kernels if k.language == "extern")
    texts = [c.sources[file][line] for file, line in extern.user_lines]
    assert all(file.endswith("workloads.py") for file, _ in extern.user_lines)
    # addmm replaces mm + bias add; Inductor's pattern pass records the add as its origin
    assert any("y + b" in t for t in texts)
    assert "add" in extern.fx_nodes


def test_loop_ir_nodes_are_fused_or_eliminated(all_compilations):
    for c in all_compilations:
        for graph in c.graphs:
            members = [m for g in graph.fused for m in g.nodes]
            assert len(members) == len(set(members))
            for node in graph.loop_ir:
                if node.eliminated:
                    assert node.group is None
                else:
                    assert members.count(node.name) == 1 and node.group is not None, node


def test_kernel_lines_name_their_nodes(reduction_compilation):
    kernel = reduction_compilation[0].graphs[0].kernels[0]
    assert kernel.line_nodes
    for line, names in kernel.line_nodes.items():
        assert 1 <= line <= len(kernel.lines)
        assert set(names) <= set(kernel.post_grad_nodes)
    # the line computing the relu is attributed to the relu node
    relu_lines = [i for i, text in enumerate(kernel.lines, 1) if "clamp_min" in text or "max_propagate_nan" in text]
    assert any("relu" in kernel.line_nodes.get(i, []) for i in relu_lines)


def test_provenance_is_stored_both_ways(matmul_compilation):
    graph = matmul_compilation[0].graphs[0]
    for kernel in graph.kernels:
        for name in kernel.post_grad_nodes:
            assert kernel.id in graph.post_grad.node(name).kernels
        for name in kernel.fx_nodes:
            assert kernel.id in graph.fx.node(name).kernels
        for name in kernel.loop_ir:
            assert kernel.id in graph.loop_ir_node(name).kernels
    for node in graph.post_grad:
        for name in node.fx:
            assert node.name in graph.fx.node(name).post_grad


def test_fx_stages_keep_modules_and_shapes(demo_compilation):
    c, (model, x) = demo_compilation
    graph = c.graphs[0]
    assert isinstance(graph.fx.module, torch.fx.GraphModule)
    assert isinstance(graph.post_grad.module, torch.fx.GraphModule)
    calls = [n for n in graph.fx if n.op == "call_module" or n.op == "call_function"]
    assert calls and all(n.shape is not None for n in calls)
    assert any(n.user_line and n.user_line[0].endswith("demo.py") for n in graph.fx)
    assert "aten.mm" in graph.post_grad.code or "aten.addmm" in graph.post_grad.code


def test_a_graphs_code_is_printed_when_first_read():
    c = explorer.compile(lambda x: x.sin() + 1, torch.randn(4), cache=False)
    for stage in (c.graphs[0].fx, c.graphs[0].post_grad):
        assert stage.code_pending is not None and object.__getattribute__(stage, "code") == ""
        assert stage.code == stage.module.print_readable(print_output=False) and stage.code_pending is None


def test_wrapper_calls_every_kernel(all_compilations):
    for c in all_compilations:
        for graph in c.graphs:
            called = set(graph.wrapper.kernel_lines.values())
            assert {k.id for k in graph.kernels} <= called
            lines = graph.wrapper.source.splitlines()
            for line, kernel_id in graph.wrapper.kernel_lines.items():
                assert graph.kernel(kernel_id).name in lines[line - 1]


def test_compilation_records_settings_and_timings(demo_compilation):
    c, _ = demo_compilation
    assert c.device == "cpu" and c.torch == torch.__version__
    assert c.timings["total"] > 0 and c.timings["codegen"] > 0 and c.timings["lowering"] > 0
    assert c.timings["total"] >= c.timings["codegen"]
    assert c.graphs[0].timings["scheduling"] > 0
    assert c.toggles == {} and "force_disable_caches" not in c.inductor_overrides


def test_kernels_map_to_exactly_the_nodes_codegen_emitted_them_for():
    """Residual layers give near-identical kernels whose nodes share origins: the links must come from
    codegen itself, not from matching origins and text."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(workloads.ResidualBlock() for _ in range(3))).eval()
    with torch.no_grad():
        c = explorer.compile(model, torch.randn(4, 8, 16))
    graph = c.graphs[0]
    claimed = [name for k in graph.kernels for name in k.loop_ir]
    assert len(claimed) == len(set(claimed))  # no loop-IR node is claimed by two kernels here
    for kernel in (k for k in graph.kernels if k.language == "cpp"):
        assert kernel.loop_ir, kernel
        for name in kernel.loop_ir:  # views go where ownership rule 3 places them: the reshape a matmul made, to it
            computed = {o for o in graph.loop_ir_node(name).origins if not is_view(graph.post_grad.node(o))}
            assert computed and computed <= set(kernel.post_grad_nodes), (kernel, name)
