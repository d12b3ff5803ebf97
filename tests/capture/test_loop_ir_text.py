"""The loop IR's texts are made at capture time, cheaply: each body's text must still be exactly what
Inductor's own ``LoopBody.debug_str()`` says at that moment, on the installed torch."""

from __future__ import annotations

import pytest
import sympy
import torch
from torch._inductor import loop_body

import explorer
from compiler._torch import scheduler_ir
from tests import workloads


def _padded(x: torch.Tensor) -> torch.Tensor:
    """A pad reads through a masked load: the body gets a ``masked_subblock``."""
    return torch.nn.functional.pad(x, (1, 2)) * 2


@pytest.fixture
def compared(monkeypatch):
    """Every body text made during the captures below, next to ``debug_str()`` of the same body."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    made = scheduler_ir.loop_body_text

    def both(body, text=str):
        ours = made(body, text)
        pairs.setdefault(ours, []).append((ours, body.debug_str()))
        return ours

    monkeypatch.setattr(scheduler_ir, "loop_body_text", both)
    return pairs


CASES = {
    "training step of a transformer block": lambda: explorer.compile(
        workloads.TransformerBlock(dim=16, heads=2), torch.randn(2, 4, 16, requires_grad=True), backward=True),
    "indirect indexing": lambda: explorer.compile(
        workloads.embedding_lookup, torch.tensor([[0, 3], [2, 1]]), torch.randn(5, 8)),
    "masked load": lambda: explorer.compile(_padded, torch.randn(4, 6)),
    "loop ordering after fusion": lambda: explorer.compile(
        workloads.transposed_add, torch.randn(16, 32), torch.randn(32, 16), config={"loop_ordering_after_fusion": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_body_text_is_what_inductor_prints(case, compared):
    torch.manual_seed(0)
    c = CASES[case]()
    pairs = [pair for made in compared.values() for pair in made]
    assert pairs, "no loop body was printed"
    for ours, inductors in pairs:
        assert ours == inductors
    bodies = {n.body for g in c.graphs for n in g.loop_ir}
    assert set(compared) <= bodies  # the nodes keep the texts made in the hook
    if case == "masked load":
        assert any("def masked_subblock" in text for text in compared)


def test_capture_builds_no_graph_module_per_block(monkeypatch):
    """``LoopBody.debug_str`` (a GraphModule per block) is left alone while the capture still has bodies."""
    calls = []
    original = loop_body.LoopBody.debug_str
    monkeypatch.setattr(loop_body.LoopBody, "debug_str", lambda self: calls.append(self) or original(self))
    c = explorer.compile(workloads.reduction_with_pointwise, torch.randn(8, 16))
    assert calls == []
    assert all("def body(self, ops)" in n.body for n in c.graphs[0].loop_ir if n.kind != "extern" and not n.eliminated)


class _Expr:
    """Hashable like a sympy expression, counting how often it is printed."""

    printed = 0

    def __init__(self, key: str) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Expr) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __str__(self) -> str:
        _Expr.printed += 1
        return self.key


def test_expression_texts_print_each_expression_once():
    text = scheduler_ir.expression_texts()
    _Expr.printed = 0
    assert [text(_Expr("64*p0 + p1")) for _ in range(3)] == ["64*p0 + p1"] * 3
    assert text(_Expr("p0")) == "p0"
    assert _Expr.printed == 2
    assert text(["unhashable"]) == "['unhashable']"
    x = sympy.Symbol("x", integer=True)
    assert text(sympy.Float(2.0) * x) == str(sympy.Float(2.0) * x) != text(sympy.Integer(2) * x)
    assert scheduler_ir.expression_texts()(_Expr("p0")) == "p0" and _Expr.printed == 3  # a new graph, a new memo
