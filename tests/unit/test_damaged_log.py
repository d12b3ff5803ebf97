"""A rank's log whose payloads are damaged after its first compilation (a bad copy, a disk error): the
index still lists every compilation from the headers, the first opens as before, and opening a damaged
one fails with an error that names it, in Python and in the TraceSet view. Made from the recorded NCCL
job's rank 1 (compiles 0/0, 1/0 and 0/1)."""

from __future__ import annotations

import re
import shutil

import pytest

import explorer
from tests.paths import FIXTURES
from widgets import TraceSetWidget

LOG = FIXTURES / "torch_trace_nccl" / "dedicated_log_torch_trace_rank_1.log"
_IDS = re.compile(rb'"frame_id": (\d+), "frame_compile_id": (\d+)')


def _damaged_after_first_compile(data: bytes) -> tuple[bytes, int]:
    """Every payload line after the first record of another compile than 0/0 scrambled (same length,
    tab and newline kept); and how many lines were scrambled."""
    out, later, scrambled = [], False, 0
    for line in data.splitlines(keepends=True):
        ids = _IDS.search(line) if not line.startswith(b"\t") else None
        later = later or (ids is not None and ids.groups() != (b"0", b"0"))
        if later and line.startswith(b"\t") and len(line) > 2:
            line, scrambled = b"\t" + bytes(reversed(line[1:-1])) + b"\n", scrambled + (line[1:-1] != line[-2:0:-1])
        out.append(line)
    return b"".join(out), scrambled


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    good, bad = tmp_path_factory.mktemp("good"), tmp_path_factory.mktemp("bad")
    shutil.copy(LOG, good / LOG.name)
    data, scrambled = _damaged_after_first_compile(LOG.read_bytes())
    assert scrambled > 100
    (bad / LOG.name).write_bytes(data)
    return explorer.load_trace(good)[1], explorer.load_trace(bad)[1]


def test_the_damaged_log_lists_every_compilation(logs):
    good, bad = logs
    assert bad.compile_ids == good.compile_ids == ["0/0", "1/0", "0/1"]
    assert [(c.function, c.graph) for c in bad.summary.compiles] == [(c.function, c.graph) for c in good.summary.compiles]
    assert any("do not match their checksum" in p for p in bad.summary.problems)  # the recompile reasons'


def test_the_first_compilation_opens_as_before(logs):
    good, bad = logs
    assert [g.id for g in bad["0/0"].graphs] == [g.id for g in good["0/0"].graphs]
    assert [k.id for g in bad["0/0"].graphs for k in g.kernels] == [k.id for g in good["0/0"].graphs for k in g.kernels]


@pytest.mark.parametrize("compile_id", ["1/0", "0/1"])
def test_opening_a_damaged_compilation_says_which_and_why(logs, compile_id):
    _, bad = logs
    with pytest.raises(explorer.TraceLoadError, match=rf"compile {compile_id} \(rank 1, .*{LOG.name}\) cannot be "
                                                       r"read: \d+ of its records, its graphs and code among them, .*md5 mismatch at lines \[\d+"):
        bad[compile_id]
    assert bad["0/0"].graphs  # still there


def test_the_traceset_view_reports_the_damaged_compilation_and_keeps_its_view(logs, tmp_path):
    _, bad = logs
    w = TraceSetWidget(explorer.load_trace(bad.summary.log), rank=1, compile_id="0/0")
    revision = w.revision
    w.show_compile(1, "1/0")
    assert w.status["state"] == "error" and "rank 1 compile 1/0" in w.status["message"]
    assert "cannot be read" in w.status["message"] and w.revision == revision
