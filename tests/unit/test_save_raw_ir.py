"""c.save leaves a kernel IR nobody opened as the capture copied it; it is built where the trace is read."""

from __future__ import annotations

import base64
import json
import zlib

import explorer
from compiler.io import trace
from compiler.model.kernel_ir import KernelIR, RawKernelIR
from tests.paths import FIXTURES

PTX = "\t.loc\t1 3 4\n\tadd.s32 %r1, %r1, 1;\n\t.loc\t1 4 4\n\tst.global.b32 [%rd1], %r1;\n\t.file\t1 \"/k.py\"\n"


def _kernels_json(path) -> list[dict]:
    return [k for g in json.loads(path.read_text())["graphs"] for k in g["kernels"]]


def test_an_unopened_ir_is_saved_raw_and_built_when_the_loaded_kernel_is_opened(tmp_path, monkeypatch):
    c = explorer.load(FIXTURES / "gpu_default.json")
    kernel = next(k for k in c.kernels if k.language == "triton")
    raw = {"texts": {"ptx": PTX}, "source_file": "/k.py", "source_text": kernel.source, "meta": {}, "cubin": None,
           "notes": []}
    kernel.ir = KernelIR(pending=RawKernelIR(raw, kernel.source, kernel.name, 90))
    built = []
    monkeypatch.setattr(trace, "complete_kernel_irs", lambda *cs: built.append(cs))  # save must not build IRs

    saved = _kernels_json(c.save(tmp_path / "a.json"))
    entry = next(k for k in saved if k["id"] == kernel.id)
    assert set(entry["ir"]) == {"raw"} and not built
    packed = json.loads(zlib.decompress(base64.b64decode(entry["ir"]["raw"])))
    assert packed["texts"]["ptx"] == PTX and packed["arch"] == 90
    assert all("raw" not in k["ir"] for k in saved if k["id"] != kernel.id and k.get("ir"))  # built IRs stay built

    loaded = explorer.load(tmp_path / "a.json")
    again = _kernels_json(loaded.save(tmp_path / "b.json"))  # still unopened: written back as it came
    assert next(k for k in again if k["id"] == kernel.id)["ir"] == entry["ir"]
    opened = next(k for k in loaded.kernels if k.id == kernel.id).ir
    assert opened.stages["ptx"] == PTX and {3, 4} <= set(opened.line_map["ptx"])
