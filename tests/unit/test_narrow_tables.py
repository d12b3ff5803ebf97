"""Tables on 80- and 100-column terminals (compiler/render/fit.py): a bisect's trials and a numerics report
keep each row on one line (a long kernel id on two, whole), giving columns up in their order instead of
letting rich wrap every cell of a row over four to seven lines."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from compiler.model.bisect import BisectResult, Trial
from compiler.model.numerics import BufferCheck, KernelNumerics, NumericsReport
from compiler.render.fit import Column, layout

# what explorer.bisect's default check says of a trial (compiler/sweeps/bisect.py)
DETAIL = ("output 0 (torch.float32): max abs error 0.98, max rel 0.327, 100.0% of elements outside rtol 0.0001 / "
          "atol 1e-05")
TRIED = [("first run", "Inductor as configured"), ("torch bisector", "backend eager"),
         ("torch bisector", "backend aot_eager_decomp_partition"), ("torch bisector", "backend inductor"),
         ("torch bisector", "inductor / joint_graph_passes: disabled"),
         ("torch bisector", "inductor / inductor_fallback_random: disabled"),
         ("config", "Inductor with fallback_random=True"),
         ("fusion", "2 fused groups kept apart: g0 op0_op1, g0 op2_op3")]
SDPA = "torch.ops.aten._scaled_dot_product_efficient_attention.default"


def _printed(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def _table(lines: list[str], title: str) -> list[str]:
    """The body of the table titled ``title``: below its header's rule, up to the first blank line."""
    start = next(i for i, line in enumerate(lines) if title in line)
    rule = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("─"))
    end = next((i for i in range(rule + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[rule + 1:end]


def _bisect_result() -> BisectResult:
    r = BisectResult("fn", "diverges", f"fn compiled differs from eager: {DETAIL}", "matches eager")
    r.backend, r.subsystem, r.subsystem_kind = "inductor", "inductor_fallback_random", "config"
    r.avoided_by, r.avoided_by_checked = {"fallback_random": True}, True
    r.kernels, r.user_lines = ["cpp_fused_add_mul_rand_like_0"], [("/home/me/project/train.py", 4)]
    r.trials = [Trial(i, level, what, "bad" if i % 2 else "good", DETAIL, 1.25) for i, (level, what)
                in enumerate(TRIED, 1)]
    return r


@pytest.mark.parametrize("width", [80, 100])
def test_a_bisects_trials_are_one_line_each(width):
    r = _bisect_result()
    lines = _printed(r, width)
    assert max(len(line) for line in lines) <= width
    trials = _table(lines, f"{len(r.trials)} trials")
    assert len(trials) == len(r.trials)
    for line, trial in zip(trials, r.trials):
        cells = line.split()
        assert cells[0] == str(trial.number) and trial.outcome in cells
        assert line.split(trial.outcome)[0].strip().removeprefix(str(trial.number)).strip()  # what was tried, cut or not
    culprits = _table(lines, "culprit, level by level")
    for level, value in r.culprit_lines():
        assert any(line.split()[:len(level.split())] == level.split() and value.split()[0] in line for line in culprits)
    if width == 100:  # room for the level; the seconds went first
        assert all(trial.level.split()[0] in line for line, trial in zip(trials, r.trials))


def _numerics_report() -> NumericsReport:
    kernels = {}
    for i, (name, language) in enumerate([("cpp_fused_add_mul_sub_sum_0", "cpp"),
                                          ("triton_per_fused_add_addmm_native_layer_norm_view_1", "triton"),
                                          (SDPA, "extern"), ("extern_kernels.mm:4", "extern")]):
        check = BufferCheck(f"buf{i}", "add", 0, "torch.float32", [8, 8], compared=True, ok=i != 1,
                            max_abs=0.00125 * (i + 1), max_rel=0.0625 * (i + 1), mismatched=0.25, rtol=1e-4,
                            atol=1e-5, compiled_vs_float64=1.5e-7, eager_vs_float64=3.5e-7)
        kernels[f"g0/{name}"] = KernelNumerics(f"g0/{name}", "g0", name, language, 1, [check])
    divergent = next(key for key, k in kernels.items() if not k.ok)
    return NumericsReport("eager", "cpu", None, None, kernels, divergent)


@pytest.mark.parametrize("width", [80, 100])
def test_a_numerics_table_keeps_state_and_error_on_each_kernels_first_line(width):
    r = _numerics_report()
    lines = _printed(r, width)
    assert max(len(line) for line in lines) <= width
    body = _table(lines, "kernels against eager")
    rows: list[list[str]] = []
    for line in body:  # a line holding one word continues the kernel id above it
        cells = line.split()
        if rows and len(cells) == 1:
            rows[-1][0] += cells[0]
        else:
            rows.append(cells)
    assert [cells[0] for cells in rows] == list(r.kernels)  # every id whole, in execution order
    for cells, row in zip(rows, r.kernels.values()):
        assert cells[1] == {True: "ok", False: "DIVERGES"}[row.ok] and f"{row.max_rel:.3g}" in cells
    assert len(body) <= len(r.kernels) + (3 if width == 80 else 1)  # only the longest ids take a second line


def test_layout_gives_columns_up_in_their_order():
    cells = ["x" * 30]
    kernel = Column("kernel", cells, least=10, cut_from=2, cut="id")
    notes = Column("notes", ["n" * 20], least=5)
    extra = Column("extra", ["e" * 8], drop=1)
    columns = [kernel, notes, extra]
    natural = 30 + 20 + 8 + 2 * 3 + 2
    assert layout(columns, natural) == [(kernel, 30), (notes, 20), (extra, 8)]
    # step 0 cuts the notes; the kernel, cut only from step 2, keeps its width
    assert layout(columns, natural - 10) == [(kernel, 30), (notes, 10), (extra, 8)]
    # the notes at their least and still too wide: the extra column goes (step 1) before the kernel is cut
    assert layout(columns, natural - 16) == [(kernel, 30), (notes, 15)]
    assert layout(columns, 30 + 5 + 3 + 2 - 4) == [(kernel, 26), (notes, 5)]
    assert layout(columns, 10 + 5 + 3 + 2 - 1) is None
