"""A file that is no trace gets one line that names it and says what is wrong and what to open instead,
from ``explorer.load`` (the exception's message) and from ``python -m explorer show`` (stderr, exit 2)."""

from __future__ import annotations

import gzip

import pytest

import explorer
from explorer.__main__ import main
from tests.paths import FIXTURES

WHAT_TO_OPEN = "open a file saved by c.save(path)"


CUT_SHORT = '{\n "schema": "inductor-explorer/trace",\n "version": 2,\n "graphs": [{"id": "g0", "kind": "forw'


def _truncated(path):
    path.write_text(CUT_SHORT)


def _truncated_gzip(path):
    path.write_bytes(gzip.compress((FIXTURES / "trace_v1.json").read_bytes())[:500])


def _random_bytes(path):
    path.write_bytes(bytes([0x05, 0x86, 0xa3, 0xff, 0x10]) * 40)


# file name -> (what writes it, what the line must say)
BAD_FILES = {
    "f.json": (lambda p: p.write_text('{"a": 1}'),
               ['is not an inductor-explorer trace: its JSON object has no "schema" key', WHAT_TO_OPEN]),
    "list.json": (lambda p: p.write_text("[1, 2]"), ["is not an inductor-explorer trace: its JSON is a list"]),
    "other.json": (lambda p: p.write_text('{"schema": "someone/else"}'),
                   ["is not an inductor-explorer trace: its schema is 'someone/else'", WHAT_TO_OPEN]),
    "empty.json": (lambda p: p.write_text(""), ["is empty, not a JSON trace", WHAT_TO_OPEN]),
    "cut.json": (_truncated, ["is truncated: its JSON stops in the middle (Unterminated string starting at line 4, "
                              f"column 34, character 88 of {len(CUT_SHORT)})", "save it again"]),
    "cut.json.gz": (_truncated_gzip, ["is a damaged or truncated gzip file"]),
    "random.json.gz": (_random_bytes, ["is not a gzip-compressed trace", "first bytes are 05 86", WHAT_TO_OPEN]),
    "random.json": (_random_bytes, ["is not a JSON trace: byte 1 (0x86) is not UTF-8 text", WHAT_TO_OPEN]),
}


@pytest.fixture(params=sorted(BAD_FILES))
def bad_file(request, tmp_path):
    write, says = BAD_FILES[request.param]
    path = tmp_path / request.param
    write(path)
    return path, says


def test_load_says_in_one_line_which_file_is_wrong_and_how(bad_file):
    path, says = bad_file
    with pytest.raises(explorer.TraceFormatError) as raised:
        explorer.load(path)
    message = str(raised.value)
    assert message.startswith(f"{path} ") and "\n" not in message
    assert all(part in message for part in says), message
    assert raised.value.__cause__ is None or "codec" not in str(raised.value.__cause__)


def test_show_prints_that_line_and_exits_2(bad_file, capsys):
    path, says = bad_file
    assert main(["show", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"python -m explorer show: {path} ") and captured.err.count("\n") == 1
    assert all(part in captured.err for part in says), captured.err


def test_a_plain_trace_named_gz_still_opens(tmp_path):
    plain = tmp_path / "trace.json.gz"
    plain.write_bytes((FIXTURES / "trace_v1.json").read_bytes())
    assert explorer.load(plain).graphs
