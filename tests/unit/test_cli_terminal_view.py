"""The terminal views of a compilation (``c.show()``'s compact view and ``python -m explorer show``) on a
120-column terminal: every kernel id whole, so it can be copied into ``g.kernel(...)``, one row per kernel,
and a head line that says what its figures are."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

import explorer
from compiler.render.summary import compact_view
from compiler.render.table_rows import kernel_rows
from compiler.render.tables import kernels_table
from explorer import __main__ as cli
from tests.paths import FIXTURES

WIDTH = 120
# the recorded traces with the longest kernel ids (63 and 62 characters), one of them profiled
LONG_IDS = ["gpu_training", "gpu_profile"]


def _printed(renderable, width: int = WIDTH) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def _show(name: str, width: int = WIDTH) -> str:
    console = Console(width=width, file=io.StringIO())
    cli._show(cli.build_parser().parse_args(["show", str(FIXTURES / f"{name}.json"), "--no-pager"]), console)
    return console.file.getvalue()


def _table_rows(text: str, title: str) -> list[str]:
    """The lines of the table titled ``title``: from below its header's rule to the first blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if title in line)
    rule = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("─"))
    end = next((i for i in range(rule + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[rule + 1:end]


def _kernel_rows(text: str, kernel_ids: list[str]) -> dict[str, list[str]]:
    """Each id -> the printed lines that start with it (a cut id starts none)."""
    rows: dict[str, list[str]] = {k: [] for k in kernel_ids}
    for line in text.splitlines():
        first = line.split()[0] if line.split() else ""
        if first in rows:
            rows[first].append(line)
    return rows


@pytest.mark.parametrize("name", LONG_IDS)
def test_show_prints_every_kernel_id_whole_one_row_each(name):
    c = explorer.load(FIXTURES / f"{name}.json")
    text = _show(name)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    for graph in c.graphs:
        rows = _table_rows(text, f"{graph.id} kernels (")
        assert len(rows) == len(graph.kernels), rows  # no row wraps onto a second line
        found = _kernel_rows("\n".join(rows), [k.id for k in graph.kernels])
        assert all(len(lines) == 1 for lines in found.values()), found


@pytest.mark.parametrize("name", LONG_IDS)
def test_compact_view_prints_every_kernel_id_whole(name):
    c = explorer.load(FIXTURES / f"{name}.json")
    text = _printed(compact_view(c, kernels_shown=100))
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    found = _kernel_rows(text, [k.id for k in c.kernels])
    assert all(len(lines) >= 1 for lines in found.values()), [k for k, lines in found.items() if not lines]
    for group in (g for graph in c.graphs for g in graph.fused if len(g.nodes) > 1):
        assert all(f" {kernel}" in text for kernel in group.kernels)  # the fusion lines keep their ids too


def _rows_with_ids_joined(lines: list[str]) -> dict[str, list[str]]:
    """A table's rows as {kernel id: its other cells}: a line holding the id alone continues the id of the
    row above it (a long id goes on to a second line rather than be cut)."""
    rows: list[list[str]] = []
    for line in lines:
        cells = line.split()
        if rows and len(cells) == 1:
            rows[-1][0] += cells[0]
        elif cells:
            rows.append(cells)
    return {cells[0]: cells[1:] for cells in rows}


def _user_line(c, kernel_id: str) -> str:
    file, line = c.graphs[0].kernel(kernel_id).user_lines[0]
    return f"{Path(file).name}:{line}"


@pytest.mark.parametrize("width", [80, 100])
def test_show_below_120_columns_keeps_kind_time_and_first_user_line_with_every_id_whole(width):
    """docs/guide.md: below 120 columns the kernels table keeps kernel, kind, time, error and the first user
    line. The SDPA extern kernel's id (62 characters) goes on to a second line instead of taking them away."""
    c = explorer.load(FIXTURES / "gpu_profile.json")
    profile = c.profiles[-1]
    text = _show("gpu_profile", width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    rows = _rows_with_ids_joined(_table_rows(text, "g0 kernels ("))
    assert sorted(rows) == sorted(k.id for k in c.kernels)
    for kernel in c.kernels:
        kind, ms, share, line = rows[kernel.id]
        assert kind == kernel.language and float(ms) == pytest.approx(profile.ms(kernel), abs=5e-5)
        assert share.endswith("%") and line == _user_line(c, kernel.id)
    if width == 100:  # only the one id that does not fit takes two lines
        assert len(_table_rows(text, "g0 kernels (")) == len(c.kernels) + 1


def test_longer_user_lines_at_100_columns_keep_their_numbers_and_every_column():
    c = explorer.load(FIXTURES / "gpu_profile.json")
    graph = c.graphs[0]
    for kernel in graph.kernels:  # the same program kept in a file with a longer name
        kernel.user_lines = [(file.replace("workloads.py", "attention_transformer_block.py"), line)
                             for file, line in kernel.user_lines]
    table = kernels_table(kernel_rows(graph, c.profiles[-1]), "g0 kernels", width=100)
    text = _printed(table, width=100)
    assert max(len(line) for line in text.splitlines()) <= 100
    rows = _rows_with_ids_joined(_table_rows(text, "g0 kernels"))
    assert sorted(rows) == sorted(k.id for k in graph.kernels)
    for kernel in graph.kernels:
        kind, _ms, _share, line = rows[kernel.id]
        assert kind == kernel.language and line.endswith(f"py:{kernel.user_lines[0][1]}")


def test_the_compact_view_at_80_columns_keeps_each_kernels_kind_time_and_line():
    c = explorer.load(FIXTURES / "gpu_profile.json")
    text = _printed(compact_view(c, kernels_shown=100), width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    rows = _rows_with_ids_joined(_table_rows(text, "kernel "))
    assert sorted(rows) == sorted(k.id for k in c.kernels)
    assert all(cells[0] == c.graphs[0].kernel(kernel_id).language and cells[2].startswith(_user_line(c, kernel_id))
               for kernel_id, cells in rows.items())


def test_head_line_labels_the_compile_seconds_and_counts_are_singular_when_one():
    c = explorer.load(FIXTURES / "gpu_training.json")
    c.graphs[0].kernels = c.graphs[0].kernels[:1]
    text = _printed(compact_view(c))
    head = text.splitlines()[0]
    assert head.endswith(f"· compiled in {c.timings['total']:.1f} s"), head
    sizes = next(line for line in text.splitlines() if line.startswith("g0 forward:"))
    assert sizes.endswith("-> 4 fused -> 1 kernel"), sizes
    assert next(line for line in text.splitlines() if line.startswith("g1 backward:")).endswith("-> 7 kernels")
    assert "1 more kernel (g0.kernels)" in _printed(compact_view(explorer.load(FIXTURES / "gpu_training.json"),
                                                                  kernels_shown=3))


def test_head_line_breaks_between_phrases_never_inside_one():
    c = explorer.load(FIXTURES / "gpu_default.json")  # its head line is 82 characters long
    first, second = _printed(compact_view(c), width=80).splitlines()[:2]
    assert first == "matmul_epilogue on NVIDIA H100 80GB HBM3 · torch 2.11.0+cu130"
    assert second == f"  compiled in {c.timings['total']:.1f} s"
