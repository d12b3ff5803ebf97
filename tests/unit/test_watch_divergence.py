"""``watch_divergence``: which rank recompiled or broke a graph where the others did not, from each rank's
WatchReport. The reports are built by hand (the two-gloo-rank test in tests/capture/test_watch.py reads
real ones from a job's logs)."""

from __future__ import annotations

from compiler.model.watch import BreakCount, CompileEvent, WatchReport
from compiler.model.watch_divergence import watch_divergence

SIZE = "tensor 'x' size mismatch at index 0. expected 4, actual 6"


def _report(recompile_step=None, recompile_reason=SIZE, breaks=(), steps=True):
    compiles = [CompileEvent("0/0", "train_step", "train.py", 10, step=0 if steps else None)]
    if recompile_step is not None or not steps:
        compiles.append(CompileEvent("0/1", "train_step", "train.py", 10, step=recompile_step,
                                     reasons=[f"0/0: {recompile_reason}"], guard_line=("train.py", 12)))
    graph_breaks = [BreakCount(reason, "train.py", line, 1, "train_step", ["0/0"]) for line, reason in breaks]
    return WatchReport(compiles=compiles, graph_breaks=graph_breaks, source="log")


def test_the_one_rank_that_recompiled_is_named_with_its_step_and_reason():
    [d] = watch_divergence({"0": _report(), "1": _report(recompile_step=3), "2": _report()})
    assert (d.kind, d.had, d.step, d.reason, d.compile_id) == ("recompile", ("1",), 3, SIZE, "0/1")
    assert d.summary == f"rank 1 recompiled train_step at step 3 (train.py:12) where the others did not: {SIZE}"
    assert d.ranks == {"0": "did not recompile train_step at step 3", "1": f"recompiled at step 3 (0/1): {SIZE}",
                       "2": "did not recompile train_step at step 3"}


def test_ranks_that_recompiled_alike_do_not_diverge_but_another_step_or_reason_does():
    assert watch_divergence({"0": _report(recompile_step=3), "1": _report(recompile_step=3)}) == []
    later = watch_divergence({"0": _report(recompile_step=3), "1": _report(recompile_step=5)})
    assert sorted((d.had, d.step) for d in later) == [(("0",), 3), (("1",), 5)]
    other = "self.n == 1"
    reasons = watch_divergence({"0": _report(recompile_step=3), "1": _report(3, recompile_reason=other)})
    assert sorted(d.reason for d in reasons) == sorted([SIZE, other])


def test_a_log_without_step_marks_still_names_the_rank_and_reason():
    [d] = watch_divergence({"0": _report(steps=False), "1": WatchReport(compiles=[CompileEvent("0/0", "train_step")])})
    assert d.step is None and d.had == ("0",)
    assert d.summary.startswith("rank 0 recompiled train_step (train.py:12) where") and "at step" not in d.summary


def test_a_graph_break_only_some_ranks_hit_is_named_with_its_line():
    hit = (20, "Call to `torch._dynamo.graph_break()`")
    shared = (30, "Unsupported: print")
    [d] = watch_divergence({"0": _report(breaks=[shared]), "1": _report(breaks=[shared, hit]),
                            "2": _report(breaks=[shared, hit])})
    assert (d.kind, d.had, d.step, d.reason) == ("graph_break", ("1", "2"), 0, hit[1])
    assert d.summary.startswith("ranks 1, 2 broke the graph at train.py:20 at step 0 where the others did not")
    assert d.ranks["0"] == "no break there" and d.ranks["1"] == "broke at step 0 (0/0)"


def test_one_rank_has_nothing_to_diverge_from():
    assert watch_divergence({"0": _report(recompile_step=3)}) == []
