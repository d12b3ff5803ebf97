"""The warm-capture store's names: the same program gets the same entry in every process, and a program that
differs where its stages show it gets another (no compile)."""

from __future__ import annotations

import torch

from compiler.pipeline.capture_store import graph_digest


def _traced(scale_name: str = "scaled"):
    """A graph calling a function made anew each time: its ``str`` differs (an address), its name does not."""

    def scale(x):
        return x * 2

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    out = graph.call_function(scale, (x,))
    out.name = scale_name
    out.meta["stack_trace"] = '  File "model.py", line 3, in forward\n    y = scale(x)\n'
    graph.output(out)
    return torch.fx.GraphModule(torch.nn.Module(), graph), scale


def test_a_graph_is_named_the_same_whatever_addresses_its_functions_have():
    (first, one), (second, other) = _traced(), _traced()
    assert str(one) != str(other)
    assert graph_digest(first) == graph_digest(second)


def test_names_and_lines_the_stages_show_change_the_name():
    module, _ = _traced()
    renamed, _ = _traced("doubled")
    moved, _ = _traced()
    next(n for n in moved.graph.nodes if n.op == "call_function").meta["stack_trace"] = (
        '  File "model.py", line 4, in forward\n    y = scale(x)\n')
    assert len({graph_digest(module), graph_digest(renamed), graph_digest(moved)}) == 3


def test_a_warm_capture_that_asks_for_autotuning_times_every_choice():
    from compiler._torch import fx_graph_cache

    assert fx_graph_cache.settings({})["fx_graph_cache"] is True
    assert "autotune_local_cache" not in fx_graph_cache.settings({"triton.cudagraphs": False})
    assert fx_graph_cache.settings({"max_autotune": True})["autotune_local_cache"] is False
    assert fx_graph_cache.settings({"coordinate_descent_tuning": True})["autotune_local_cache"] is False
