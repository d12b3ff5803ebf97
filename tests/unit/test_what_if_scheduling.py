"""The what_if adapters' decisions without compiling: the order pass's move (compiler/_torch/node_order.py) on
stand-in scheduler nodes, the split count of a reduction turned on (compiler/_torch/reduction_splits.py), and the
questions an order or split edit answers for the scheduler (compiler/model/what_if.py), and a fusion report's
trial as its worker sends it back (compiler/sweeps/fusion_report.py)."""

from __future__ import annotations

from types import SimpleNamespace

from compiler._torch import node_order, reduction_splits
from compiler.model.stages import FusedGroup
from compiler.model.what_if import FusionWorth
from compiler.model.what_if_edits import MaterializeEdit, OrderEdit, SplitEdit
from compiler.sweeps.fusion_report import worth_of


def _node(name: str, reads: tuple[str, ...] = (), ancestors: tuple[str, ...] = ()) -> SimpleNamespace:
    """A scheduler node ``opN`` writing ``bufN`` and reading ``reads``."""
    return SimpleNamespace(
        get_name=lambda: name, get_operation_names=lambda: {name}, get_buffer_names=lambda: {name.replace("op", "buf")},
        read_writes=SimpleNamespace(reads=[SimpleNamespace(name=r) for r in reads]), unmet_dependencies=[],
        ancestors=set(ancestors))


def _names(nodes: list[SimpleNamespace]) -> list[str]:
    return [n.get_name() for n in nodes]


def test_a_node_moves_before_another_with_what_it_needs_in_between():
    # op0 | op1 (asked to run after) | op2 (independent) | op3 (needs op2's buf2) | op4 (asked to run first, needs buf3)
    nodes = [_node("op0"), _node("op1", ("buf0",), ("op0",)), _node("op2"), _node("op3", ("buf2",), ("op2",)),
             _node("op4", ("buf3",), ("op2", "op3"))]
    outcome = node_order.Outcome()
    order = node_order.moved(nodes, [4], [1], outcome)
    assert _names(order) == ["op0", "op2", "op3", "op4", "op1"]
    assert outcome.moved and not outcome.blocked


def test_a_move_the_data_forbids_is_not_made_and_says_which_buffer():
    nodes = [_node("op0"), _node("op1", ("buf0",), ("op0",)), _node("op2", ("buf1",), ("op0", "op1"))]
    outcome = node_order.Outcome()
    order = node_order.moved(nodes, [2], [1], outcome)
    assert order is nodes and not outcome.moved
    assert outcome.blocked == ["op2 needs buf1 from op1"]
    through = [_node("op0"), _node("op1"), _node("op2", ("buf1",), ("op1",)), _node("op3", ("buf2",), ("op1", "op2"))]
    outcome = node_order.Outcome()
    assert node_order.moved(through, [3], [1], outcome) is through
    assert outcome.blocked == ["op3 needs op2, which needs buf1 from op1"]


def test_nodes_already_in_the_order_asked_stay_as_they_are():
    nodes = [_node("op0"), _node("op1")]
    outcome = node_order.Outcome()
    assert node_order.moved(nodes, [0], [1], outcome) is nodes and not outcome.moved


def test_a_reduction_turned_on_gets_partials_worth_a_second_reduction():
    assert reduction_splits.split_count(1024) == 32
    assert reduction_splits.split_count(1 << 20) == 64
    assert reduction_splits.split_count(512) == 16
    assert reduction_splits.split_count(64) == 1  # 2 partials of 32: Inductor would unroll their sum


def test_order_and_split_edits_answer_only_their_own_questions():
    mul, mm, absolute, add = (frozenset({n}) for n in ("mul", "mm", "abs_1", "add"))
    graph = frozenset({"mul", "mm", "abs_1", "add", "output"})
    order = OrderEdit(0, (("op2",), ("op0",)), (frozenset({absolute | add}), frozenset({mul})), graph,
                      "running k2 before k0", kernel_keys=(frozenset({mul}), frozenset({mm}), frozenset({absolute | add})))
    assert order.pick(graph, [[mul], [mm], [absolute | add]]) == ([2], [0])
    assert order.pick(graph | {"other"}, [[mul], [mm], [absolute | add]]) is None
    assert order.same_kernel([absolute | add], [absolute | add]) and not order.same_kernel([mul], [absolute | add])
    split = SplitEdit(0, (("op0",),), (frozenset({frozenset({"sum_1"})}),), graph, "splitting sum_1",
                      split_nodes=frozenset({"sum_1"}))
    assert split.turn_split(graph, "sum_1") == "on" and split.turn_split(graph, "mul") is None
    assert split.turn_split(graph | {"other"}, "sum_1") is None


def test_a_materialize_edit_keeps_each_stored_value_apart_from_the_rest_of_its_loop():
    """``a = x.sin(); b = a * 2 + 1; return b.cos()`` with a and b stored: after the lowering the loop is three
    scheduler nodes ({sin}, {mul, add}, {cos}); a node outside the loop ({relu}) fuses as Inductor decides."""
    graph = frozenset({"arg0_1", "sin", "mul", "add", "cos", "relu", "output"})
    sin, mul_add, cos, relu = frozenset({"sin"}), frozenset({"mul", "add"}), frozenset({"cos"}), frozenset({"relu"})
    edit = MaterializeEdit(0, (("op0",),), (frozenset({sin | mul_add | cos}),), graph, "storing sin (a), add (b)",
                           nodes=frozenset({"sin", "add"}), region=sin | mul_add | cos)
    assert edit.realize(graph, "sin") and edit.realize(graph, "add") and not edit.realize(graph, "mul")
    assert not edit.realize(graph | {"other"}, "sin")  # another graph of the program
    assert (edit.cut(sin), edit.cut(mul_add), edit.cut(cos), edit.cut(relu)) == (sin, frozenset({"add"}), frozenset(), None)
    assert edit.decide(graph, [sin], [mul_add]) == "refuse" and edit.decide(graph, [mul_add], [cos]) == "refuse"
    assert edit.decide(graph, [cos], [relu]) is None  # the loop's last node may still fuse with its user
    assert edit.decide(graph, [sin, relu], [cos]) == "refuse"  # a fused node holding one cut
    assert edit.decide(graph | {"other"}, [sin], [cos]) is None
    assert edit.ends_kernel(graph, [cos]) and not edit.ends_kernel(graph, [relu])


def test_a_trial_that_failed_in_its_worker_is_a_row_with_the_reason():
    group = FusedGroup("op0_op1", "pointwise", ["op0", "op1"], origins=["add", "mul"])
    died = {"index": 0, "status": "failed", "stage": "worker", "error": "the worker process killed by signal 9"}
    assert worth_of(died, group) == FusionWorth("op0_op1", ["add", "mul"], (1, 0), None, None, "",
                                                "the trial failed in its worker: the worker process killed by signal 9")
    sent = FusionWorth("op0_op1", ["add", "mul"], (1, 3), 1024.0, None, "unfusing op0_op1 ...", None)
    ok = {"index": 0, "status": "ok", "worth": {**sent.__dict__, "kernels": [1, 3]}}
    assert worth_of(ok, group) == sent
