""""What if" from the fused view without a browser: the comparison payload (widgets/what_if_payload.py) of a
WhatIf, and the widget's round trip (an "unfuse" message in, the comparison or the refusal out, the
compilation shown unchanged)."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

from compiler.model.diff import GraphDiff, KernelChange
from compiler.model.what_if import KernelSide, Side, WhatIf, WhatIfError
from compiler.model.what_if_edits import UnfuseEdit
from widgets.what_if_payload import what_if_payload
from widgets.widget import ExplorerWidget
from tests.paths import FIXTURES

GROUP = "op1_op2_op3_op4"


def unfused_softmax() -> WhatIf:
    """softmax_like unfused: one kernel before, two after (the second moves the sum's result again)."""
    edit = UnfuseEdit(0, (("op0",), ("op1",)), (frozenset(), frozenset()), frozenset(), f"unfusing {GROUP} (sum, div)",
                      "Its nodes may still fuse with nodes outside the group.")
    kernels = [KernelChange("changed", "cpp_fused_div_sum_0", "cpp_fused_sum_0", "cpp", "cpp", ["s", "truediv"]),
               KernelChange("added", None, "cpp_fused_div_1", None, "cpp", ["truediv"])]
    diff = SimpleNamespace(graphs=[GraphDiff("g0", "forward", [], [], [], kernels)])
    before = Side([KernelSide("cpp_fused_div_sum_0", "cpp", ["s", "truediv"], 2048.0)], 1024)
    after = Side([KernelSide("cpp_fused_sum_0", "cpp", ["s", "truediv"], 1024.0),
                  KernelSide("cpp_fused_div_1", "cpp", ["truediv"], 2048.0)], 1024)
    return WhatIf(edit, None, None, diff, (before, after))


def test_payload_pairs_kernels_and_keeps_the_verdict():
    payload = what_if_payload(unfused_softmax(), GROUP)
    assert payload["group"] == GROUP and payload["graph"] == "g0" and not payload["measured"]
    assert payload["verdict"].startswith(f"unfusing {GROUP} (sum, div) costs 1.0 KiB more traffic")
    assert "(1 -> 2 kernels)" in payload["verdict"]
    assert [(r["status"], r["before"], r["after"]) for r in payload["kernels"]] == [
        ("changed", "cpp_fused_div_sum_0", "cpp_fused_sum_0"), ("added", "", "cpp_fused_div_1")]
    assert payload["kernels"][0]["before_bytes"] == 2048.0 and payload["kernels"][1]["before_bytes"] is None
    totals = payload["totals"]
    assert (totals["before"]["kernels"], totals["after"]["kernels"]) == (1, 2)
    assert (totals["before"]["bytes"], totals["after"]["bytes"]) == (2048.0, 3072.0)
    assert totals["after"]["ms"] is None  # not measured
    json.dumps(payload)  # plain JSON, as the comm sends it


@pytest.fixture()
def sample() -> dict:
    return json.loads((FIXTURES / "widget_sample.json").read_text())


def _ask(widget: ExplorerWidget, monkeypatch: pytest.MonkeyPatch, group: str) -> dict:
    sent: list[dict] = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append(content))
    widget._on_message(widget, {"type": "what_if", "group": group, "graph": "g0", "measure": True, "id": "w0"}, [])
    [reply] = sent
    return reply


def test_unfuse_message_round_trip(sample, monkeypatch):
    asked = []

    def what_if(group, graph, measure):
        asked.append((group, graph, measure))
        return unfused_softmax()

    widget = ExplorerWidget(sample, stage="fused", what_if=what_if)
    assert widget.what_if_ready
    reply = _ask(widget, monkeypatch, GROUP)
    assert asked == [(GROUP, "g0", True)]
    assert (reply["type"], reply["id"], reply["group"]) == ("what_if", "w0", GROUP)
    assert reply["totals"]["after"]["kernels"] == 2 and "error" not in reply


def test_a_refused_edit_is_a_message_and_the_view_is_unchanged(sample, monkeypatch):
    def refuse(group, graph, measure):
        raise WhatIfError(f"{group} (add) is one scheduler node: there is no fusion to undo")

    widget = ExplorerWidget(sample, stage="fused", what_if=refuse)
    before = (copy.deepcopy(widget.summary), widget.revision, widget.stage)
    reply = _ask(widget, monkeypatch, "op0")
    assert reply["error"] == "op0 (add) is one scheduler node: there is no fusion to undo"
    assert (widget.summary, widget.revision, widget.stage) == before


def test_a_trace_without_its_compilation_offers_no_unfuse(sample, monkeypatch):
    widget = ExplorerWidget(sample)
    assert not widget.what_if_ready
    assert "live compilation" in _ask(widget, monkeypatch, GROUP)["error"]
    widget.show_payload(sample, what_if=lambda group, graph, measure: unfused_softmax())
    assert widget.what_if_ready


def test_the_fused_part_counts_each_groups_user_lines_for_the_box(sample):
    """The box offers "cut at lines" for one loop of several lines: it reads each group's count of user lines."""
    from widgets.parts import TraceParts

    part = TraceParts(sample).get("g0/fused")
    lines = {k["group"]: {tuple(line) for line in k["user_lines"]} for k in sample["graphs"][0]["kernels"]}
    assert part["user_lines"] == {group: len(found) for group, found in lines.items()} == {"op0": 1, "op1_op2_op3_op4": 2}
