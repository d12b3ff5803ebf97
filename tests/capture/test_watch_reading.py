"""Reading a watch changes nothing it reports: a recompile's guard, file and line are the same whether or not
a listener (or the terminal's live view) reads the report while the loop runs.

What made them differ: the first watch of a process reads Dynamo's guards before the file a guard names in
short (``nn/modules/linear.py``) has been named in full by any record, and a recompile's reasons before its
start names the recompiled code. So the test runs the loop as the first watch of a fresh interpreter, with
a listener reading ``[(r.file, r.line) for r in report.recompiles]`` at every event and the live view drawing,
and compares everything either saw with the user's own lines, where the changed batch enters each frame.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.paths import ROOT

TRAIN = '''\
import io, json, sys
import torch
from rich.console import Console
import explorer

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):                 # FORWARD
        y = self.a(x)
        s = y.sum().item()                # ITEM
        return self.b(y) * s

model = torch.compile(Net(), backend="eager")
seen = set()
screen = Console(file=io.StringIO(), force_terminal=True, width=250, color_system=None)
with explorer.watch(live=screen) as w:
    w.add_listener(lambda report: seen.update((r.compile_id, r.file, r.line) for r in report.recompiles), every=0)
    for batch in w.steps_of([16] * 6 + [24] * 4):
        model(torch.randn(batch, 8))
drawn = screen.file.getvalue()
json.dump({"seen": sorted(seen),
           "final": [[r.compile_id, r.function, r.step, r.file, r.line, r.reason] for r in w.recompiles],
           "live": drawn[drawn.rindex("watching:"):], "shown": str(w)}, sys.stdout)
'''


def _line(marker: str) -> int:
    return next(i for i, line in enumerate(TRAIN.splitlines(), 1) if marker in line)


def test_a_listener_and_the_live_view_reading_the_first_watch_of_a_process_see_the_users_lines(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "COLUMNS": "250"}  # print(w) as wide as the live view: a narrower one (80 under xdist) wraps file:line
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    forward, item = _line("# FORWARD"), _line("# ITEM")
    train = str(script)
    size_recompiles = [r for r in result["final"] if "size mismatch" in r[5]]
    # the forward frame recompiles for x (its first line: x enters there) and the function resuming after
    # .item() for y (it starts at the .item() line), both at step 6, where the batch grew
    assert [(function.split("_at_")[0], step, file, line) for _, function, step, file, line, _ in size_recompiles] == [
        ("forward", 6, train, forward), ("torch_dynamo_resume_in_forward", 6, train, item)]
    # what the listener saw at every event while the loop ran is what the report says after it
    assert {(cid, file, line) for cid, _, _, file, line, _ in result["final"]} == {tuple(s) for s in result["seen"]}
    assert "linear.py" not in result["live"] and "linear.py" not in result["shown"]
    for where in (f"train.py:{forward}", f"train.py:{item}"):
        assert where in result["live"] and where in result["shown"]
