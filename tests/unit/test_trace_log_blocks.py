"""read_records reads a TORCH_TRACE log a block at a time: the records, their byte ranges, line numbers
and payloads must not depend on where the blocks fall, payloads must match the md5 torch wrote in each
header, and what is wrong in a log is reported at the same lines. Read on the recorded NCCL job's logs."""

from __future__ import annotations

import dataclasses
import io

import pytest

from compiler.model.trace_log import LogProblems, read_records
from tests.paths import FIXTURES

LOGS = sorted((FIXTURES / "torch_trace_nccl").glob("*.log"))
BLOCKS = (7, 64, 1000, 1 << 30)  # smaller than a line, a few lines, many, the whole file


def _read(data: bytes, block: int, **options) -> tuple[list, dict]:
    problems = LogProblems()
    out = [(dataclasses.asdict(r), (s.start, s.end, s.line))
           for r, s in read_records(io.BytesIO(data), problems, block=block, **options)]
    return out, problems.to_json()


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_records_do_not_depend_on_the_block_size_and_match_their_checksums(log):
    data = log.read_bytes()
    whole = _read(data, 1 << 30)
    assert all(_read(data, block) == whole for block in BLOCKS)
    records, problems = whole
    assert problems["malformed"] == 0 and not problems["truncated"] and not problems["checksum_mismatches"]
    with_payload = [r for r, _ in records if r["checksum"]]
    assert with_payload and all(r["payload"] is not None for r in with_payload)
    for record, _ in read_records(io.BytesIO(data), LogProblems(), block=64):
        assert record.payload_intact(), f"line {record.line}: the payload read is not the one torch wrote"
    spans = [span for _, span in records]
    assert spans[0][0] == 0 and spans[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # records tile the log
    assert all(data.count(b"\n", 0, start) + 1 == line for start, _, line in spans)


def test_damaged_lines_are_reported_at_their_lines_whatever_the_block():
    lines = LOGS[0].read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if i > 3 and not line.startswith(b"\t"))  # a header
    damaged = b"".join([b"\tan orphan payload line\n"] + lines[:at] + [b"garbage\n", b"\n", b"\tafter a blank line\n"]
                       + lines[at:]) + b'V1122 16:52:19.957000 1 x.py:1] {"cut'
    expected = {"malformed": 3, "malformed_examples": [[1, "\tan orphan payload line"], [at + 2, "garbage"],
                                                       [at + 4, "\tafter a blank line"]],
                "unknown": {}, "checksum_mismatches": [],
                "truncated": f"the log ends in the middle of a line (line {len(lines) + 5}): the job was killed "
                             "while writing it, or is still running; everything before it was read",
                "notes": []}
    whole = _read(damaged, 1 << 30)
    assert whole[1] == expected
    assert all(_read(damaged, block) == whole for block in BLOCKS)
    assert len(whole[0]) == len(_read(LOGS[0].read_bytes(), 1 << 30)[0])  # every record still read


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_timer_runs_cover_the_timer_events_they_stand_for(log):
    data = log.read_bytes()
    each, _ = _read(data, 1 << 30, wants_payload=lambda r: r.kind != "chromium_event")
    for block in BLOCKS:
        runs, _ = _read(data, block, wants_payload=lambda r: r.kind != "chromium_event", timer_runs=True)
        assert [r for r in runs if r[0]["kind"] != "chromium_event"] == [r for r in each if r[0]["kind"] != "chromium_event"]
        timers = [(r["compile_id"], r["rank"], span) for r, span in each if r["kind"] == "chromium_event"]
        covered = []
        for record, (start, end, line) in (r for r in runs if r[0]["kind"] == "chromium_event"):
            inside = [t for t in timers if start <= t[2][0] and t[2][1] <= end]
            assert inside and inside[0][2][0] == start and inside[-1][2][1] == end and inside[0][2][2] == line
            assert {(cid, rank) for cid, rank, _ in inside} == {(record["compile_id"], record["rank"])}
            covered += inside
        assert covered == timers  # every timer event in exactly one run, in order
    assert len(runs) < len(each)


def test_header_values_are_parsed_only_for_the_kinds_asked_for():
    data = LOGS[1].read_bytes()
    every, _ = _read(data, 1 << 30)
    some, _ = _read(data, 1 << 30, wants_data=lambda kind: kind == "dynamo_start")
    assert len(every) == len(some)
    for (full, span), (light, same_span) in zip(every, some):
        assert span == same_span and {**full, "data": None} == {**light, "data": None}
        if full["kind"] in ("dynamo_start", "artifact"):  # asked for, and an artifact's name
            assert light["data"] == full["data"]
        else:
            assert light["data"] is None
