"""Kernels and autotune tables (compiler/render/table_rows.py) and the terminal view that prints them."""

from __future__ import annotations

import io
import math

import pytest
from rich.console import Console

import explorer
from compiler.render import table_rows as tables
from compiler.model.stages import AutotuneRecord
from explorer.__main__ import main
from tests.paths import FIXTURES


def test_choices_split_into_name_and_config():
    assert tables.parse_choice("triton_mm_3 ACC_TYPE='tl.float32', BLOCK_K=32, BLOCK_M=64, num_warps=8") == (
        "triton_mm_3", {"ACC_TYPE": "tl.float32", "BLOCK_K": "32", "BLOCK_M": "64", "num_warps": "8"})
    assert tables.parse_choice("XBLOCK: 512, num_warps: 4, maxnreg: None") == (
        "", {"XBLOCK": "512", "num_warps": "4", "maxnreg": "None"})
    assert tables.parse_choice("mm") == ("mm", {})


def test_autotune_groups_compare_each_choice_with_the_best():
    records = [AutotuneRecord("mm", "mm", 0.04, False, "select_algorithm"),
               AutotuneRecord("mm", "triton_mm_0 BLOCK_M=32, BLOCK_N=32, GROUP_M=8, num_warps=2", 0.01, True,
                              "select_algorithm"),
               AutotuneRecord("mm", "triton_mm_1 BLOCK_M=64, BLOCK_N=32, GROUP_M=8, num_warps=4", math.inf, False,
                              "select_algorithm"),
               AutotuneRecord("triton_poi_0", "XBLOCK: 256, num_warps: 4", 0.002, False, "triton_heuristics")]
    mm, poi = tables.autotune_groups(records)
    assert (mm.kernel, poi.kernel) == ("mm", "triton_poi_0")
    assert [c.ratio for c in mm.choices] == [pytest.approx(4.0), 1.0, math.inf]
    assert [c.chosen for c in mm.choices] == [False, True, False]
    assert mm.config_keys == ["BLOCK_M", "num_warps"]  # what differs; GROUP_M is the same for all
    assert mm.shared_config == {"BLOCK_N": "32", "GROUP_M": "8"}
    assert poi.choices[0].ratio == 1.0 and poi.choices[0].name == ""


@pytest.fixture(scope="module")
def profiled():
    return explorer.load(FIXTURES / "gpu_profile.json")


def test_kernel_rows_carry_the_profiles_time_and_sort_by_it(profiled):
    graph = profiled.graphs[0]
    profile = profiled.profiles[-1]
    rows = tables.kernel_rows(graph, profile)
    assert [r.id for r in rows] == [k.id for k in graph.kernels]
    assert all(r.ms == pytest.approx(profile.ms(k)) for r, k in zip(rows, graph.kernels))
    assert sum(r.share for r in rows) == pytest.approx(profile.attributed_ms / profile.total_ms)
    by_time = tables.select(rows, "time")
    assert [r.ms for r in by_time] == sorted((r.ms for r in rows), reverse=True)
    assert [r.ms for r in tables.select(rows, "time", descending=False)] == sorted(r.ms for r in rows)
    triton = tables.select(rows, "lines", language="triton")
    assert triton and {r.language for r in triton} == {"triton"}
    assert [r.lines for r in triton] == sorted(r.lines for r in triton)
    assert [r.id for r in tables.select(rows, contains="GELU")] == ["triton_poi_fused_addmm_gelu_view_2"]
    with pytest.raises(ValueError, match="unknown sort 'speed': choose one of id, language"):
        tables.select(rows, "speed")


def test_kernel_rows_without_a_profile_have_no_time_and_sort_last(profiled):
    rows = tables.kernel_rows(profiled.graphs[0])
    assert all(r.ms is None and r.ok is None for r in rows)
    assert [r.id for r in tables.select(rows, "time")] == [r.id for r in rows]


def _show(argv: list[str], console: Console) -> str:
    from explorer import __main__ as cli

    args = cli.build_parser().parse_args(["show", *argv])
    cli._show(args, console)
    return console.file.getvalue()


def test_show_prints_the_kernels_table_sorted_and_filtered():
    out = _show([str(FIXTURES / "gpu_profile.json"), "--sort", "time", "--language", "extern"],
                Console(file=io.StringIO(), width=160))
    table = out.split("g0 kernels (5 of 9)")[1].split("autotune")[0]
    rows = [line.split() for line in table.splitlines() if line.strip().startswith(("extern_kernels", "torch.ops"))]
    assert rows[0][0].startswith("torch.ops.aten._scaled_dot_product")
    assert [row[0] for row in rows[1:]] == ["extern_kernels.mm:8", "extern_kernels.addmm", "extern_kernels.mm:6",
                                        "extern_kernels.mm:4"]  # slowest first
    assert [float(row[4]) for row in rows] == sorted((float(row[4]) for row in rows), reverse=True)
    assert "share" in table and "triton_" not in table


def test_show_lays_autotune_choices_out_by_config_key():
    out = _show([str(FIXTURES / "gpu_max_autotune.json")], Console(file=io.StringIO(), width=160))
    table = out.split("autotune mm (select_algorithm, 21 choices)")[1]
    header = next(line for line in table.splitlines() if "x best" in line)
    assert header.split() == ["choice", "x", "best", "ms", "BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"]
    rows = [line.split() for line in table.splitlines() if line.strip().startswith(("triton_mm", "mm "))]
    assert rows[0][:3] == ["triton_mm_2", "1.00", "✔"]  # fastest first, and the chosen one
    assert rows[-1][:2] == ["triton_mm_18", "failed"]
    assert "all choices: ACC_TYPE=tl.float32" in out


def test_show_pages_only_what_is_longer_than_the_terminal(monkeypatch):
    paged = []

    class Pager:
        def __init__(self, **kwargs):
            paged.append(kwargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    tall = Console(file=io.StringIO(), width=160, height=1000, force_terminal=True)
    monkeypatch.setattr(tall, "pager", Pager)
    _show([str(FIXTURES / "gpu_profile.json")], tall)
    assert paged == []
    short = Console(file=io.StringIO(), width=160, height=20, force_terminal=True)
    monkeypatch.setattr(short, "pager", Pager)
    _show([str(FIXTURES / "gpu_profile.json")], short)
    assert paged == [{"styles": True}]
    _show([str(FIXTURES / "gpu_profile.json"), "--no-pager"], short)
    assert len(paged) == 1


def test_show_rejects_an_unknown_sort(capsys):
    with pytest.raises(SystemExit):
        main(["show", str(FIXTURES / "gpu_profile.json"), "--sort", "speed"])
    assert "invalid choice: 'speed'" in capsys.readouterr().err
