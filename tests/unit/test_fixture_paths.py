"""Recorded fixtures hold no path of the machine that recorded them: every recorder passes what it saves
through tests/record_paths.py, which rewrites them to a neutral form (paths relative to the repository,
``<site-packages>/...``, ``<inductor-cache>/...``, ``<tmp>/...``, ``<bin>/...``)."""

from __future__ import annotations

import ast
import gzip
import hashlib
import re

from tests.paths import FIXTURES, TESTS
from tests.record_paths import ROOT, neutral_paths, neutralize_file

# An absolute path under a directory where machines keep checkouts, packages, caches or homes.
MACHINE_PATH = re.compile(r"(?:(?<![\w.~/<>-])|(?<=\\[nt]))/(?:tmp|root|home|opt|work|usr|var|mnt|data|private"
                          r"|Users|workspace|scratch|srv|nfs)/[^\s\"'<>:(),]+|(?<!<)site-packages/")
# widget_sample.json is written by hand, not recorded: its user file is a placeholder of no machine, shown
# as is by the views and asserted as such by tests/unit/test_widgets_payload.py and the browser tests.
PLACEHOLDERS = {"widget_sample.json": "/home/user/project/model.py"}


def _text(path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")


def test_no_fixture_holds_a_path_of_the_recording_machine():
    found = {}
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        text = _text(path).replace(PLACEHOLDERS.get(path.name, "\0"), "")
        hits = sorted({m.group(0) for m in MACHINE_PATH.finditer(text)})
        if hits:
            found[str(path.relative_to(FIXTURES))] = hits[:3]
    assert not found, f"machine paths in fixtures (re-record, or pass them through tests/record_paths.py): {found}"


def test_paths_are_rewritten_to_a_neutral_form():
    recorded = ('loc("/opt/x/.venv/lib/python3.12/site-packages/triton/language/standard.py":290:24) '
                '# kernel path: /tmp/torchinductor_root/tmpab12/x/cx.py "/tmp/tmpq1w2/scaled.pt2" '
                '"cpp.cxx": [null, "/opt/gcc/bin/g++"] "/checkout/tests/workloads.py"\\n/tmp/a.py')
    assert neutral_paths(recorded, ["/checkout"]) == (
        'loc("<site-packages>/triton/language/standard.py":290:24) '
        '# kernel path: <inductor-cache>/tmpab12/x/cx.py "<tmp>/tmpq1w2/scaled.pt2" '
        '"cpp.cxx": [null, "<bin>/g++"] "tests/workloads.py"\\n<tmp>/a.py')
    assert neutral_paths(f"{ROOT}/tests/workloads.py") == "tests/workloads.py"  # the recorder's own checkout


def test_a_rewritten_log_keeps_every_payload_matching_its_checksum(tmp_path):
    payload = "def forward(self):\n    # File: /checkout/model.py:3 in f\n    return 1"
    md5 = hashlib.md5(payload.encode("utf-8")).hexdigest()
    log = tmp_path / "dedicated_log_torch_trace_rank_0.log"
    log.write_text('V1127 10:00:00.000000 1 torch/_dynamo/utils.py:1] {"dynamo_output_graph": {}, "frame_id": 0, '
                   f'"frame_compile_id": 0, "attempt": 0, "has_payload": "{md5}"}}\n'
                   + "".join(f"\t{line}\n" for line in payload.split("\n")))
    neutralize_file(log, ["/checkout"])
    header, *lines = log.read_text().rstrip("\n").split("\n")
    body = "\n".join(line[1:] for line in lines)
    assert "# File: model.py:3 in f" in body
    assert f'"has_payload": "{hashlib.md5(body.encode("utf-8")).hexdigest()}"' in header


def test_every_recorder_saves_through_the_rewrite():
    recorders = sorted(p for p in TESTS.glob("record_*.py") if p.name != "record_paths.py")
    assert recorders
    for recorder in recorders:
        calls = {node.func.id for node in ast.walk(ast.parse(recorder.read_text()))
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert "neutralize_file" in calls, f"{recorder.name} saves fixtures without tests/record_paths.py"
