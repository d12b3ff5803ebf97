"""k.ir on CPU: Triton's IR stages of a real Inductor kernel and their line maps, caps and bad input.

tests/fixtures/triton_ir_sm90.json is tests/fixtures/gpu_deterministic.json with its Triton kernel's
IR captured by tests/record_triton_ir_sample.py (Triton 3.6 compiling for sm_90 without a GPU).
"""

from __future__ import annotations

import io
import json
import os
import stat

import pytest
from rich.console import Console

import explorer
from compiler import from_json
from compiler.pipeline import ir_line_maps as kernel_ir, sass
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def traced():
    c = explorer.load(FIXTURES / "triton_ir_sm90.json")
    (kernel,) = [k for k in c.kernels if k.ir is not None]
    return c, kernel


def test_every_stage_is_kept_with_resources(traced):
    _, kernel = traced
    ir = kernel.ir
    assert list(ir.stages) == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert "tt.func" in ir.stages["ttir"] and "#ttg.blocked" in ir.stages["ttgir"]
    assert "define" in ir.stages["llir"] and ".entry" in ir.stages["ptx"] and "LDG" in ir.stages["sass"]
    assert ir.meta["num_warps"] == 8 and ir.meta["shared_memory"] >= 0 and ir.meta["target"] == "cuda:90"
    assert any("nvdisasm" in note for note in ir.notes)


def test_line_maps_point_at_the_kernel_lines_that_generated_them(traced):
    _, kernel = traced
    ir = kernel.ir
    lines = kernel.lines
    for stage, mapped in ir.line_map.items():
        assert len(mapped) == len(ir.lines(stage))
        targets = {line for line in mapped if line is not None}
        assert targets, stage
        assert all(lines[t - 1].strip() for t in targets), stage  # never a blank line
    load = next(i for i, line in enumerate(lines, 1) if "tl.load(" in line)
    store = next(i for i, line in enumerate(lines, 1) if "tl.store(" in line)
    ptx = ir.lines("ptx")
    assert any("ld.global" in ptx[i - 1] for i in ir.ir_lines(load)["ptx"])
    assert any("st.global" in ptx[i - 1] for i in ir.ir_lines(store)["ptx"])
    sass_lines = ir.lines("sass")
    assert any("LDG" in sass_lines[i - 1] for i in ir.ir_lines(load)["sass"])
    assert any("tt.load" in ir.lines("ttgir")[i - 1] for i in ir.ir_lines(load)["ttgir"])


def test_inlined_library_code_maps_to_its_call_site(traced):
    _, kernel = traced
    reduce_line = next(i for i, line in enumerate(kernel.lines, 1) if "tl.sum(" in line)
    ptx = kernel.ir.lines("ptx")
    # tl.sum is Triton's own jit function (standard.py): its instructions land on the kernel's tl.sum line
    assert any("shfl" in ptx[i - 1] or "add.f32" in ptx[i - 1] for i in kernel.ir.ir_lines(reduce_line)["ptx"])


def test_provenance_runs_from_user_line_to_ir_lines(traced):
    c, kernel = traced
    node = "relu"
    assert node in kernel.post_grad_nodes
    user_line = c.graphs[0].post_grad.node(node).user_line
    assert user_line and user_line in kernel.user_lines
    kernel_lines = [line for line, names in kernel.line_nodes.items() if node in names]
    reached = {stage: lines for line in kernel_lines for stage, lines in kernel.ir.ir_lines(line).items() if lines}
    assert {"ttgir", "ptx"} <= set(reached)


def test_ir_round_trips_and_renders(traced):
    c, kernel = traced
    again = from_json(json.loads(json.dumps(c.to_json())))
    assert again.to_json() == c.to_json()
    console = Console(file=io.StringIO(), width=140, color_system=None)
    console.print(kernel.ir)
    text = console.file.getvalue()
    assert "ttgir" in text and "num_warps" in text
    assert "<details><summary>ptx" in kernel.ir._repr_html_()
    assert "Triton IR" in kernel._repr_html_()


# ------------------------------------------------------------------------------- limits and bad input


def _raw(ptx: str) -> dict:
    source = "@triton.jit\ndef k(x):\n    pass"
    return {"texts": {"ptx": ptx}, "source_file": "/k.py", "source_text": source, "meta": {}}, source


def test_huge_ptx_is_capped_with_a_note(monkeypatch):
    monkeypatch.setattr(kernel_ir, "STAGE_LIMIT", 1000)
    body = "".join(f"\t.loc\t1 3 4\n\tadd.s32 %r{i}, %r{i}, 1;\n" for i in range(200))
    raw, source = _raw(body + '\t.file\t1 "/k.py"\n')  # PTX lists its files after the code
    ir = kernel_ir.kernel_ir(raw, source, "k")
    assert len(ir.stages["ptx"]) <= 1000 and raw["texts"]["ptx"].startswith(ir.stages["ptx"] + "\n")
    assert ir.truncated["ptx"] == len(raw["texts"]["ptx"])
    assert any("kept the first" in note for note in ir.notes)
    assert len(ir.line_map["ptx"]) == len(ir.lines("ptx"))
    assert ir.line_map["ptx"][-1] == 3


def test_missing_stages_and_unknown_source_are_explained():
    ir = kernel_ir.kernel_ir({"notes": ["ttir, ttgir not found"], "texts": {}}, "def k(): pass", "k")
    assert ir.stages == {} and ir.line_map == {} and ir.notes == ["ttir, ttgir not found"]
    raw, source = _raw("\t.loc\t1 3 4\n\tret;")
    raw["source_text"] = "something else entirely"
    ir = kernel_ir.kernel_ir(raw, source, "k")
    assert ir.line_map == {} and any("could not be matched" in note for note in ir.notes)


def test_sass_without_tools_says_so(monkeypatch):
    monkeypatch.setattr(sass, "tool", lambda name: None)
    text, note = sass.disassemble(b"\x7fELF")
    assert text is None and "no nvdisasm or cuobjdump" in note


def test_disassembler_gets_an_argument_list_not_a_shell_line(tmp_path, monkeypatch):
    fake = tmp_path / "nv disasm; echo pwned"  # a name a shell would split and run
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sass, "tool", lambda name: str(fake) if name == "nvdisasm" else None)
    text, note = sass.disassemble(b"cubin bytes")
    args = [line[4:] for line in text.splitlines()]
    assert args[:2] == ["-c", "-g"] and args[2].endswith(".cubin") and len(args) == 3
    assert "pwned" not in text and not os.path.exists(args[2])  # the temporary cubin is removed


def test_partial_cache_entry_and_other_gpu_are_explained(tmp_path, monkeypatch):
    """A Triton cache entry holding only the binary, compiled for another GPU than this one."""
    import types

    from compiler.pipeline import assemble
    from compiler._torch import triton_ir
    from compiler.model.stages import Kernel

    entry = tmp_path / "HASHKEY"
    entry.mkdir()
    meta = {"num_warps": 4, "num_stages": 2, "shared": 0, "hash": "abc",
            "target": {"backend": "cuda", "arch": 80, "warp_size": 32}}
    (entry / "k.json").write_text(json.dumps(meta))
    (entry / "k.cubin").write_bytes(b"not really a cubin")
    (entry / "__grp__k.json").write_text(json.dumps({"child_paths": {
        "k.json": str(entry / "k.json"), "k.cubin": str(entry / "k.cubin")}}))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(triton_ir, "device_arch", lambda: 90)
    launcher = types.SimpleNamespace(config=object(), cache_hash="HASHKEY", n_regs=40, n_spills=2, shared=0)
    live = {"k": types.SimpleNamespace(launchers=[launcher], compile_results=[], triton_meta={"device": 0})}
    kernel = Kernel(id="k", name="k", language="triton", source="@triton.jit\ndef k(x):\n    pass")
    seconds = assemble._kernel_irs([kernel], live)
    ir = kernel.ir
    assert seconds >= 0 and ir.stages.keys() <= {"sass"}
    assert ir.meta["registers"] == 40 and ir.meta["spills"] == 2 and ir.meta["target"] == "cuda:80"
    notes = " | ".join(ir.notes)
    assert "ttir, ttgir, llir, ptx not found in the Triton cache" in notes
    assert "compiled for sm_80, but this GPU is sm_90" in notes
    assert "SASS" in notes  # disassembly failed or no tool: either way it says so


def test_stages_are_read_from_the_fresh_cache_the_kernel_was_compiled_in(tmp_path, monkeypatch):
    """Caches off: Inductor compiled into <dir>/ (module in <dir>/ab/k.py, Triton files in <dir>/triton/)."""
    import types

    from compiler._torch import triton_ir

    module = tmp_path / "ab" / "k.py"
    module.parent.mkdir()
    module.write_text("@triton.jit\ndef k(x):\n    pass\n")
    entry = tmp_path / "triton" / "HASHKEY"
    entry.mkdir(parents=True)
    for stage in triton_ir.TEXT_STAGES:
        (entry / f"k.{stage}").write_text(f"{stage} text")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "elsewhere"))  # the default place holds nothing
    code = compile(module.read_text().replace("@triton.jit\n", ""), str(module), "exec")
    namespace: dict = {}
    exec(code, namespace)
    launcher = types.SimpleNamespace(config=object(), cache_hash="HASHKEY", shared=0)
    kernel_object = types.SimpleNamespace(launchers=[launcher], compile_results=[], triton_meta={"device": 0},
                                          fn=types.SimpleNamespace(fn=namespace["k"]))
    raw = triton_ir.capture(kernel_object, "k")
    assert raw["texts"] == {stage: f"{stage} text" for stage in triton_ir.TEXT_STAGES} and not raw["notes"]
    assert raw["source_file"] == str(module)
    # compile workers started by an earlier compile write into that compile's fresh directory
    (tmp_path / "triton").rename(tmp_path.parent / f"{tmp_path.name}-workers-triton")
    earlier = tmp_path / "tmp_earlier"
    earlier.mkdir()
    (tmp_path.parent / f"{tmp_path.name}-workers-triton").rename(earlier / "triton")
    fresh = tmp_path / "tmp_this"
    (fresh / "ab").mkdir(parents=True)
    module.rename(fresh / "ab" / "k.py")
    namespace["k"].__code__ = namespace["k"].__code__.replace(co_filename=str(fresh / "ab" / "k.py"))
    raw = triton_ir.capture(kernel_object, "k")
    assert raw["texts"]["ptx"] == "ptx text" and not raw["notes"]
    # a kernel compiled in a compile worker comes back without its Python function, with its filename
    worker_compiled = types.SimpleNamespace(launchers=[launcher], compile_results=[], triton_meta={"device": 0},
                                            fn=types.SimpleNamespace(fn=None), filename=str(fresh / "ab" / "k.py"))
    raw = triton_ir.capture(worker_compiled, "k")
    assert raw["texts"]["ptx"] == "ptx text" and raw["source_file"] == str(fresh / "ab" / "k.py")
    # a max-autotune template: module in the cache root, binary in the autotuning compile's fresh directory
    template = tmp_path / "cd" / "t.py"
    template.parent.mkdir()
    template.write_text("def k(x):\n    pass\n")
    chosen = types.SimpleNamespace(launchers=[launcher], compile_results=[], triton_meta={"device": 0},
                                   fn=types.SimpleNamespace(fn=None), filename=str(template))
    raw = triton_ir.capture(chosen, "k")
    assert raw["texts"]["ttgir"] == "ttgir text" and not raw["notes"]


def test_a_kernel_that_never_ran_has_no_ir_and_says_why():
    import types

    from compiler._torch import triton_ir

    raw = triton_ir.capture(types.SimpleNamespace(launchers=[]), "k")
    ir = kernel_ir.kernel_ir(raw, "def k(): pass", "k")
    assert ir.stages == {} and "has not run" in ir.notes[0]


def test_a_pending_kernel_ir_is_built_once_when_first_read():
    from compiler.io.trace import kernel_ir_to_json
    from compiler.model.kernel_ir import KernelIR

    built = []

    def build() -> KernelIR:
        built.append(1)
        return KernelIR(stages={"ptx": ".version 8.0\nld.global"}, line_map={"ptx": [None, 3]}, meta={"registers": 32})

    ir = KernelIR(pending=build)
    assert ir.pending is not None and built == []  # asking whether it is pending builds nothing
    assert ir.stages["ptx"].endswith("ld.global") and ir.source_line("ptx", 2) == 3
    assert ir.meta["registers"] == 32 and built == [1] and ir.pending is None
    data = kernel_ir_to_json(ir)
    assert "pending" not in data and data["line_map"] == {"ptx": [None, 3]} and built == [1]


def test_the_terminal_kernel_view_shows_launch_facts_and_html_folds_the_rest():
    from compiler.model.kernel_facts import launch_facts

    c = explorer.load(FIXTURES / "gpu_transformer.json")
    kernel = next(k for k in c.kernels if k.language == "triton")
    facts = dict(launch_facts(kernel.meta))
    assert facts["num_warps"] == str(kernel.meta["num_warps"]) and "stack_traces" not in facts
    assert all(facts[name] == str(size) for name, size in kernel.meta["config"].items())
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(kernel)
    text = console.file.getvalue()
    assert "num_warps" in text and facts["grid"] in text and "registers" in text
    page = kernel._repr_html_()
    assert "<details><summary>raw meta</summary>" in page and "stack_traces" in page.split("raw meta")[1]


def test_ir_found_in_an_earlier_compiles_cache_entry_maps_to_the_file_it_names(traced):
    """With caches off every compile writes its kernels to a fresh directory, and a binary of the same
    hash may be found in the entry of an earlier compile, whose IR names that compile's file: the line
    maps follow the file the IR names, not the module file of this compile."""
    _, kernel = traced
    ir = kernel.ir
    load = next(i for i, line in enumerate(kernel.lines, 1) if "tl.load(" in line)
    ttir_line = ir.ir_lines(load)["ttir"][0]
    named = kernel_ir.main_file(ir.stages["ttir"])  # the path the IR's locations carry
    file_line = next(n for f, n in kernel_ir.mlir_file_lines(ir.stages["ttir"])[ttir_line - 1] if f == named)
    source_text = "\n" * (file_line - load) + kernel.source
    raw = {"texts": dict(ir.stages), "source_file": "/tmp/fresh/ab/this_compile.py", "source_text": source_text,
           "meta": dict(ir.meta)}
    rebuilt = kernel_ir.kernel_ir(raw, kernel.source, kernel.name)
    assert rebuilt.source_file == named
    assert rebuilt.line_map == ir.line_map


# --------------------------------------------------------------- raw IR: built where and when it is read


@pytest.fixture
def unbuilt(monkeypatch):
    """The fixture's Triton kernel, freshly loaded, with its IR as a capture leaves it (texts and a cubin,
    unbuilt) for a GPU of another arch; the disassembler gives back the fixture's SASS and counts its calls."""
    from compiler.model.kernel_ir import KernelIR, RawKernelIR

    c = explorer.load(FIXTURES / "triton_ir_sm90.json")
    (kernel,) = [k for k in c.kernels if k.ir is not None]
    built = kernel.ir
    raw = {"texts": {s: t for s, t in built.stages.items() if s != "sass"}, "cubin": b"\x7fELF cubin bytes",
           "meta": dict(built.meta), "source_file": built.source_file, "source_text": kernel.source, "notes": []}
    calls = []

    def disassemble(cubin):
        calls.append(cubin)
        return built.stages["sass"], "SASS from nvdisasm -c -g"

    monkeypatch.setattr(sass, "disassemble", disassemble)
    kernel.ir = KernelIR(pending=RawKernelIR(raw, kernel.source, kernel.name, 80))
    return c, kernel, built, raw, calls


def test_a_raw_kernel_ir_travels_unbuilt_and_is_built_where_it_is_first_read(unbuilt):
    from compiler.io.trace import kernel_ir_from_json, kernel_ir_to_json

    c, kernel, built, raw, calls = unbuilt
    data = json.loads(json.dumps(kernel_ir_to_json(kernel.ir, packed_texts=True, raw=True)))
    assert list(data) == ["raw"] and calls == []  # nothing disassembled to send it
    loaded = kernel_ir_from_json(data, kernel.source, kernel.name)
    assert loaded.pending is not None and calls == []  # nor to load it
    assert loaded.stages == built.stages and loaded.line_map == built.line_map
    assert calls == [raw["cubin"]]  # the cubin came through whole, and was disassembled once
    assert "compiled for sm_90, but this GPU is sm_80" in " | ".join(loaded.notes)
    assert raw["notes"] == [] and "sass" not in raw["texts"]  # building leaves the copied record as it was
    assert kernel_ir_to_json(built, raw=True)["stages"] == built.stages  # a built IR is written built


def test_a_sweep_points_trace_keeps_raw_ir_and_saving_the_sweep_builds_it(unbuilt, tmp_path):
    from compiler.io.trace import to_json
    from compiler.sweeps.result import Sweep, SweepRow

    c, kernel, built, raw, calls = unbuilt
    text = json.dumps(to_json(c, packed_parts=True, raw_irs=True))
    assert calls == [] and kernel.ir.pending is not None  # what a sweep worker sends builds nothing
    sweep = Sweep(function="f", device="cuda", engine="local", rows=[SweepRow(index=0, config={}, status="ok")],
                  traces=[text])
    assert sweep[0].kernels[0].ir.stages["sass"] == built.stages["sass"] and len(calls) == 1  # opened, read: built
    path = sweep.save(tmp_path / "sweep.json")
    assert len(calls) == 2 and '"raw"' not in path.read_text()  # the file holds the built IR
    again = explorer.load(path)[0].kernels[0].ir
    assert again.stages == built.stages and again.line_map == built.line_map and len(calls) == 2


def test_the_kernel_table_builds_no_ir_and_a_kernel_part_builds_its_own(unbuilt):
    import widgets

    c, kernel, built, raw, calls = unbuilt
    parts = widgets.TraceParts(c.trace_view())
    rows = parts.get("g0/kernels")
    assert kernel.id in [r["id"] for r in rows] and calls == [] and kernel.ir.pending is not None
    part = parts.get(f"g0/kernel/{kernel.id}")
    assert part["ir"]["stages"]["sass"] == built.stages["sass"] and len(calls) == 1
