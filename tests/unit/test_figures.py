"""docs/figures.md is made from benchmark records (``make figures``): each marker names a record a script
wrote, none is left unused, the committed page is current, and ``--record`` writes what the page shows."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from benchmarks import recording


def test_every_marker_names_a_record_and_every_record_is_shown():
    markers = recording.MARKER.findall(recording.TEMPLATE.read_text())
    records = sorted(p.stem for p in recording.RESULTS.glob("*.json"))
    assert len(markers) == len(set(markers)), "a record is shown twice"
    assert sorted(markers) == records


def test_the_committed_page_is_the_one_the_records_make():
    made = recording.page(recording.TEMPLATE.read_text())
    assert recording.PAGE.read_text() == made, "docs/figures.md is stale: run `make figures`"
    assert not recording.MARKER.search(made)
    for name in recording.MARKER.findall(recording.TEMPLATE.read_text()):
        data = recording.load(name)
        assert f"`{data['command']}` · {data['machine']}" in made
        for table in data["tables"]:
            assert "| " + " | ".join(table["columns"]) + " |" in made
            assert "| " + " | ".join(table["rows"][-1]) + " |" in made


def test_a_marker_without_a_record_names_the_records_and_prose_is_left_alone(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no benchmark record 'scale-gpu-1999-01-01'.*records: \["):
        recording.page("text\n<!-- figures: scale-gpu-1999-01-01 -->\n")
    assert recording.page("see `<!-- figures: NAME -->`", tmp_path).endswith("see `<!-- figures: NAME -->`")


def test_a_record_holds_the_printed_table_and_the_command_without_record(tmp_path):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int)
    recording.add_argument(parser)
    target = tmp_path / "out.json"
    argv = [str(recording.RESULTS.parent / "toggle.py"), "--rounds", "2", "--record", str(target)]
    args = parser.parse_args(argv[1:])
    table = recording.Table(["workload", "plain s", "ratio"])
    table.add("MLP", "1.11", 1.048)
    table.add("median", "", "1.091")
    with pytest.raises(ValueError, match="a row of 2 cells in a table of 3 columns"):
        table.add("short", "row")
    assert recording.record(args, [table], argv=argv) == target
    data = recording.load("out", tmp_path)
    assert data["command"] == "python benchmarks/toggle.py --rounds 2"
    assert data["tables"][0]["align"] == ["left", "right", "right"]
    assert data["tables"][0]["rows"] == [["MLP", "1.11", "1.048"], ["median", "", "1.091"]]
    assert data["versions"]["torch"] and re.fullmatch(r"\d{4}-\d\d-\d\d", data["date"])
    shown = recording.markdown(data)
    assert "| MLP | 1.11 | 1.048 |" in shown and "`python benchmarks/toggle.py --rounds 2`" in shown
    # without --record nothing is written; with a bare --record the default name says script, device, date
    assert recording.record(parser.parse_args(["--rounds", "1"]), [table]) is None
    assert parser.parse_args(["--record"]).record == ""
    assert recording.default_name("toggle.py", "cuda:0", "2026-11-25") == "toggle-gpu-2026-11-25.json"
    target.write_text(json.dumps(dict(data, version=99)))
    with pytest.raises(ValueError, match="record version 99"):
        recording.load("out", tmp_path)
