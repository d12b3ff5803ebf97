"""The terminal views of a compilation (``c.show()``'s compact view and ``python -m explorer show``) on a
120-column terminal: every kernel id whole, so it can be copied into ``g.kernel(...)``, one row per kernel,
and a head line that says what its figures are."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import explorer
from compiler.render.summary import compact_view
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


def test_show_on_80_columns_keeps_the_ids_and_drops_columns_instead():
    c = explorer.load(FIXTURES / "gpu_profile.json")
    text = _show("gpu_profile", width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    found = _kernel_rows(text, [k.id for k in c.kernels])
    assert all(len(lines) == 1 for lines in found.values()), found
    row = found["torch.ops.aten._scaled_dot_product_efficient_attention.default"][0]
    assert row.split()[1:] == ["0.0148", "21.9%"]  # the time whole, not cut to fit


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
