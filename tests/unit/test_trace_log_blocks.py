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


RUNS = frozenset({"chromium_event", "describe_tensor", "describe_storage", "describe_source", "artifact"})
KEPT = frozenset({"recompile_reasons", "dynamo_graph_break_reason", "torch_version"})  # artifacts read on their own


def _in_runs(record: dict) -> bool:
    if record["kind"] == "artifact":  # a compile's artifacts, but those kept
        return record["compile_id"] is not None and record["data"]["name"] not in KEPT
    return record["kind"] in RUNS


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_runs_cover_the_records_they_stand_for(log):
    data = log.read_bytes()
    each, _ = _read(data, 1 << 30)
    plain = [(r["kind"], r["compile_id"], r["rank"], span) for r, span in each if _in_runs(r)]
    alone = [(r, span) for r, span in each if not _in_runs(r)]
    assert {r["data"]["name"] for r, _ in alone if r["kind"] == "artifact"} == KEPT & {
        r["data"]["name"] for r, _ in each if r["kind"] == "artifact"}
    for block in BLOCKS:
        runs, _ = _read(data, block, runs_of=RUNS, artifacts_kept=KEPT)
        assert [(r, span) for r, span in runs if r["data"] is not None or r["kind"] not in RUNS] == alone
        covered = []
        for record, (start, end, line) in (r for r in runs if r[0]["kind"] in RUNS and r[0]["data"] is None):
            inside = [r for r in plain if start <= r[3][0] and r[3][1] <= end]
            assert inside and inside[0][3][0] == start and inside[-1][3][1] == end and inside[0][3][2] == line
            assert inside[0][0] == record["kind"] and record["payload"] is None
            assert {(cid, rank) for _, cid, rank, _ in inside} == {(record["compile_id"], record["rank"])}
            covered += inside
        assert covered == plain  # every record of those kinds in exactly one run, in order
    assert len(runs) - len(alone) < len(plain) / 3


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


def test_a_header_with_keys_after_its_value_is_read_as_its_json_says(tmp_path):
    """torch adds the caller's ``stack`` to a record logged outside a compile (a watch's step mark)."""
    import json

    import torch._logging

    from compiler._torch import structured_trace
    from compiler.model.trace_log import record_of

    with structured_trace.on_trace_records(lambda r: None, log_dir=tmp_path):
        torch._logging.trace_structured("artifact", metadata_fn=lambda: {"name": "mark", "encoding": "json"},
                                        payload_fn=lambda: json.dumps({"step": 3}))
    data = b"".join(p.read_bytes() for p in tmp_path.glob("*.log"))
    header = next(line for line in data.split(b"\n") if b'"name": "mark"' in line)
    parsed = json.loads(header[header.index(b"] ") + 2:])
    assert list(parsed)[0] == "artifact" and "stack" in parsed
    problems = LogProblems()
    records = [r for r, _ in read_records(io.BytesIO(data), problems, wants_data=lambda kind: False)]
    assert problems.malformed == 0
    (mark,) = [r for r in records if r.name == "mark"]
    expected = record_of(parsed, '{"step": 3}', mark.line)
    assert mark == expected and mark.payload_intact()
