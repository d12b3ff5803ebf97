"""A TORCH_TRACE directory is indexed, listed and its compilations opened and viewed without importing
torch (seconds and a few hundred MB a log reader need not pay): run in a fresh interpreter where importing
torch fails."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import explorer
from tests.paths import FIXTURES, ROOT

NCCL = FIXTURES / "torch_trace_nccl"


def digest(c) -> str:
    return hashlib.md5(json.dumps(c.to_json(), sort_keys=True, default=str).encode()).hexdigest()

_WITHOUT_TORCH = """
import importlib.abc, importlib.util, sys

INSTALLED = importlib.util.find_spec("torch").origin  # torch is installed (where it is may be looked up)

class Refuse(importlib.abc.Loader):
    def create_module(self, spec):
        raise ImportError(f"{spec.name} imported while reading a log")

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, Refuse(), origin=INSTALLED if name == "torch" else None)

sys.meta_path.insert(0, NoTorch())
import explorer
from tests.unit.test_log_without_torch import digest
ts = explorer.load_trace(sys.argv[1])
listed = [(rank.rank, s.compile_id, s.function) for rank in ts for s in rank.summary.compiles]
for rank, compile_id, _ in listed:
    c = ts[rank][compile_id]
    c.trace_view()
    print(rank, compile_id, digest(c))
print("torch" in sys.modules)
"""


def test_a_log_is_read_and_viewed_without_torch():
    """The same compilations as in this process, which has torch imported."""
    out = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, str(NCCL)], cwd=ROOT,
                         capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    assert lines[-2] == "False"
    import torch  # noqa: F401  (what the same reading gives with torch at hand)

    ts = explorer.load_trace(NCCL)
    assert [line.split() for line in lines[:-2]] == [[rank.rank, cid, digest(rank[cid])] for rank in ts
                                                     for cid in rank.compile_ids]
