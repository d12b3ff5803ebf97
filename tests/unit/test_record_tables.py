"""TORCH_TRACE records are read through tables, {record kind: handler}: the kinds read are the tables' keys,
a kind added to a table is read with no other edit, and kinds no table knows are counted where a user
sees them (``ts[rank].index.records_not_read``). The two Compilation builders say which origin each reads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from compiler.pipeline import dynamo_records, trace_import
from compiler.pipeline.traceset_load import load_trace


def _record(kind: str, data: object, *, compile_id: tuple[int, int] | None = (0, 0), payload: str | None = None) -> str:
    header: dict[str, object] = {kind: data}
    if compile_id is not None:
        header.update(frame_id=compile_id[0], frame_compile_id=compile_id[1], attempt=0)
    if payload is not None:
        header["has_payload"] = hashlib.md5(payload.encode("utf-8")).hexdigest()
    lines = [f"V1127 10:00:00.000000 1 torch/_logging/structured.py:28] {json.dumps(header)}"]
    lines += [f"\t{line}" for line in (payload or "").splitlines()]
    return "\n".join(lines) + "\n"


def _log(tmp_path: Path, *records: str) -> Path:
    path = tmp_path / "dedicated_log_torch_trace_rank_0_x.log"
    path.write_text(
        _record("dynamo_start", {"stack": [{"line": 3, "name": "f", "filename": "/src/model.py"}]})
        + "".join(records)
        + _record("compilation_metrics", {"co_name": "f", "co_filename": "/src/model.py", "co_firstlineno": 1}))
    return tmp_path


def test_the_kinds_read_are_the_keys_of_the_tables():
    assert dynamo_records.READS == frozenset(dynamo_records.RECORD_READERS)
    assert dynamo_records.PAYLOADS == {"dynamo_cpp_guards_str", "dynamo_graph_break_reason", "recompile_reasons"}
    assert trace_import.GRAPH_KINDS == frozenset(trace_import.COMPILE_READERS)
    tables = (trace_import.INDEX_NOTES, trace_import.AOT_COMPILE_READERS, dynamo_records.RECORD_READERS)
    assert trace_import.KNOWN_KINDS == frozenset().union(*tables) | trace_import.SKIPPED_KINDS


def test_records_of_kinds_no_table_knows_are_counted_on_the_loaded_rank(tmp_path):
    ts = load_trace(_log(tmp_path, _record("brand_new_record", {}), _record("brand_new_record", {}),
                         _record("another_new_one", {}, compile_id=None)))
    rank = ts["0"]
    assert rank.index.records_not_read == {"brand_new_record": 2, "another_new_one": 1}
    assert any("brand_new_record x2" in problem for problem in rank.summary.problems)


def test_a_kind_added_to_the_compile_table_is_read_with_no_other_edit(tmp_path, monkeypatch):
    seen: list[str] = []
    monkeypatch.setitem(trace_import.COMPILE_READERS, "new_graph_text",
                        lambda parts, record: seen.append(record.payload))
    ts = load_trace(_log(tmp_path, _record("artifact", {"name": "new_graph_text", "encoding": "string"},
                                           payload="graph text")))
    compilation = ts["0"]["0/0"]
    assert seen == ["graph text"] and compilation.function == "f"
    assert ts["0"].index.records_not_read == {}


def test_each_compilation_builder_is_named_after_its_origin():
    from compiler.pipeline import capture_request

    assert trace_import.compilation_from_log.__doc__ and capture_request.compilation_from_capture.__doc__
    assert not hasattr(trace_import, "build_compilation") and not hasattr(capture_request, "build_compilation")
