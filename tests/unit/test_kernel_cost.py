"""Each kernel's bytes and FLOPs are computed once, by compiler/model/cost.py, and written into the trace as
its ``cost``; the roofline (widgets/roofline.py) reads them from there. A trace saved before kernels carried
a cost is placed by the same rule, derived from its JSON in one place."""

from __future__ import annotations

import copy
import json

import pytest

from compiler.io.trace import from_json, to_json
from compiler.model import cost
from tests.paths import FIXTURES
from widgets.roofline import roofline


@pytest.fixture(scope="module")
def profiled():
    """A GPU compilation with a profile (kernel times): extern matmuls and Triton kernels with Inductor's
    byte estimates, read back from its trace."""
    return from_json(json.loads((FIXTURES / "gpu_profile.json").read_text()))


def _costs(trace: dict) -> dict[tuple[str, str], dict]:
    return {(g["id"], k["id"]): k["cost"] for g in trace["graphs"] for k in g["kernels"]}


def test_every_kernel_carries_the_cost_the_compiler_computes(profiled):
    expected = {(g.id, k.id): {"bytes": cost.kernel_bytes(k, g), "flops": cost.kernel_flops(k, g)}
                for g in profiled.graphs for k in g.kernels}
    assert _costs(to_json(profiled)) == expected
    assert _costs(to_json(profiled, packed_parts=True)) == expected  # what a saved file holds
    lazy = to_json(profiled, lazy=True)  # what a live view is given
    assert {(g["id"], k["id"]): k["cost"] for g in lazy["graphs"] for k in g["kernels"]} == expected
    languages = {k.language for g in profiled.graphs for k in g.kernels if expected[(g.id, k.id)]["bytes"]}
    assert {"extern", "triton"} <= languages  # both halves of the rule are exercised


def test_the_roofline_places_kernels_by_the_cost_in_the_trace(profiled):
    trace = to_json(profiled)
    graph = trace["graphs"][0]
    for kernel in graph["kernels"]:
        kernel["cost"] = {"bytes": 1.0e6, "flops": 3.0e9}
    points = roofline(trace, graph)["points"]
    assert points and all(p["flops"] == 3.0e9 for p in points)
    assert all(p["bytes"] == 1.0e6 for p in points if p["bytes_source"] == "Inductor's estimate")


def test_a_trace_saved_before_kernels_carried_a_cost_is_placed_alike(profiled):
    trace = to_json(profiled)
    old = copy.deepcopy(trace)
    for graph in old["graphs"]:
        for kernel in graph["kernels"]:
            del kernel["cost"]
    new_points, old_points = roofline(trace, trace["graphs"][0])["points"], roofline(old, old["graphs"][0])["points"]
    assert new_points and [(p["kernel"], p["bytes"], p["flops"]) for p in old_points] == [
        (p["kernel"], p["bytes"], p["flops"]) for p in new_points]


def test_a_matmul_of_symbolic_size_has_unknown_flops_instead_of_failing_the_save():
    """A dynamic-shape graph's matmul can have a symbol for K: the writer must still write the trace."""
    c = from_json(json.loads((FIXTURES / "gpu_profile.json").read_text()))
    graph = c.graphs[0]
    matmul = next(k for k in graph.kernels if k.language == "extern" and k.post_grad_nodes)
    node = graph.post_grad.node(matmul.post_grad_nodes[0])
    for name in node.inputs:
        graph.post_grad.node(name).shape = ["s0", "s1"]
    assert cost.kernel_costs(graph)[matmul.id]["flops"] is None
    assert next(k for k in to_json(c)["graphs"][0]["kernels"] if k["id"] == matmul.id)["cost"]["flops"] is None
