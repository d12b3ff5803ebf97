"""Walking a job's compilations one after another keeps a few in memory, not all: a TraceSet keeps the
last KEEP_OPENED it read and those someone holds; one dropped is read from its log again, the same.
On a log of many compiles made from copies of the recorded NCCL job (new compile ids per copy)."""

from __future__ import annotations

import gc

import pytest

import explorer
from benchmarks.load_trace import synthetic_log
from compiler.model.traceset import KEEP_OPENED
from tests.paths import FIXTURES
from widgets import TraceSetParts
from widgets.traceset import KEEP_PARTS

NCCL = sorted((FIXTURES / "torch_trace_nccl").glob("*.log"))


@pytest.fixture(scope="module")
def rank(tmp_path_factory):
    log = tmp_path_factory.mktemp("many") / "dedicated_log_torch_trace_rank_0_many.log"
    synthetic_log(NCCL, 3_000_000, log)
    return explorer.load_trace(log.parent)[0]


def _kernels(c) -> list[str]:
    return [k.id for g in c.graphs for k in g.kernels]


def test_a_walk_over_every_compilation_keeps_a_few(rank):
    assert len(rank.compile_ids) > 4 * KEEP_OPENED
    held = rank[rank.compile_ids[0]]
    seen = {compile_id: _kernels(rank[compile_id]) for compile_id in rank.compile_ids}
    assert all(seen.values())
    gc.collect()
    assert set(rank._compilations) == {rank.compile_ids[0], *rank.compile_ids[-KEEP_OPENED:]}
    assert rank[rank.compile_ids[0]] is held  # what the user holds is the one they get back
    second = rank.compile_ids[1]
    assert second not in rank._compilations and _kernels(rank[second]) == seen[second]  # read again, the same


def test_the_traceset_view_keeps_the_parts_of_the_last_compilations_only(rank):
    ts = explorer.load_trace(rank.summary.log)
    parts = TraceSetParts(ts)
    keys = [parts.key(0, cid) for cid in rank.compile_ids]
    for key in keys:
        assert parts.get(key)["graphs"]
    assert list(parts._parts) == keys[-KEEP_PARTS:]
    assert sum(1 for key in parts.keys() if "/" not in key) == len(keys)  # the export still walks them all
