"""Tables that fit the terminal: every row one line where it can be, columns given up by priority.

A table laid out by rich alone wraps every cell of a row that is too wide, so on 80 to 100 columns a
row of six columns becomes four to seven lines. Here the widths are decided before rich sees the
table, in steps, until it fits: at step 0 the columns with a ``least`` width may be cut down to it; at
each later step one more thing is given up, in the order of the numbers the columns carry: a column
goes (``drop``) or may now be cut (``cut_from``). Cut columns give up width one cell at a time, the
widest first, those allowed at an earlier step down to their least before the others. What a cut column
shows: its text ended with an ellipsis, its beginning cut instead (``head``: ``…former.py:123`` keeps the
line number), wrapped at spaces (``fold``: a sentence that must be read whole), or, for identifiers people
copy, broken after a ``.`` / ``_`` / ``:`` / ``/`` onto the next line (``id``: a kernel id stays whole, on
two lines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.table import Table
from rich.text import Text

GAP = 3  # between two columns: their padding (0, 1) and the box's divider, a space in SIMPLE_HEAD
EDGES = 2  # the box's left and right edges (no padding there: pad_edge=False)
_BREAKS = "._:/-"  # where an identifier may go on to a second line: after one of these

Cut = Literal["ellipsis", "head", "fold", "id"]
Cell = str | Text


@dataclass
class Column:
    """One column: its header and one cell per row. ``least``: the fewest cells it may be cut to (None:
    always whole), from step ``cut_from``; ``drop``: the step at which it goes (0: never); ``cut``: how a
    cut cell shows (module docstring)."""

    header: str
    cells: list[Cell]
    justify: JustifyMethod = "left"
    least: int | None = None
    cut_from: int = 0
    drop: int = 0
    cut: Cut = "ellipsis"

    @property
    def width(self) -> int:
        return max([cell_len(self.header)] + [_cell_width(c) for c in self.cells])


def _cell_width(cell: Cell) -> int:
    text = cell.plain if isinstance(cell, Text) else cell
    return max((cell_len(line) for line in text.split("\n")), default=0)


def layout(columns: list[Column], width: int, edges: int = EDGES) -> list[tuple[Column, int]] | None:
    """The columns kept on a terminal ``width`` wide and the width of each, after the fewest steps that
    make the table fit; None when even the last step does not."""
    steps = sorted({0} | {c.drop for c in columns if c.drop} | {c.cut_from for c in columns if c.least is not None})
    for step in steps:
        kept = [c for c in columns if not (c.drop and c.drop <= step)]
        cuttable = [c.least is not None and c.cut_from <= step for c in kept]
        widths = _cut_to(kept, cuttable, width - edges - GAP * (len(kept) - 1))
        if widths is not None:
            return list(zip(kept, widths))
    return None


def _cut_to(columns: list[Column], cuttable: list[bool], room: int) -> list[int] | None:
    """The columns' widths cut to sum to at most ``room``: those cut from an earlier step down to their
    least first, and among those of one step one cell at a time from the widest; None when they cannot
    give up enough."""
    widths = [c.width for c in columns]
    floors = [min(c.least or 0, w) if can else w for c, w, can in zip(columns, widths, cuttable)]
    if sum(floors) > room:
        return None
    excess = sum(widths) - room
    for step in sorted({c.cut_from for c, can in zip(columns, cuttable) if can}):
        group = [i for i, (c, can) in enumerate(zip(columns, cuttable)) if can and c.cut_from == step]
        while excess > 0 and any(widths[i] > floors[i] for i in group):
            widest = max((i for i in group if widths[i] > floors[i]), key=lambda i: widths[i])
            widths[widest] -= 1
            excess -= 1
    return widths


def broken(cell: Cell, width: int) -> Cell:
    """An identifier longer than ``width`` on several lines, each broken after a separator where one falls
    in the line (else at ``width``): the whole id is still there, one line under the other."""
    text = cell if isinstance(cell, Text) else Text(cell)
    plain, cuts, start = text.plain, [], 0
    while len(plain) - start > width:
        window = plain[start:start + width]
        at = max(window.rfind(sep) for sep in _BREAKS)
        end = start + (at + 1 if at > 0 else width)
        cuts.append(end)
        start = end
    if not cuts:
        return cell
    lines = Text("\n").join(text.divide(cuts))
    return lines if isinstance(cell, Text) else lines.plain


def _shown(cell: Cell, column: Column, size: int) -> Cell:
    """A cell as its column shows it at ``size`` cells wide (rich cuts the ``ellipsis`` and ``fold`` ones)."""
    if _cell_width(cell) <= size:
        return cell
    if column.cut == "id":
        return broken(cell, size)
    if column.cut == "head":
        text = cell if isinstance(cell, Text) else Text(cell)
        kept = text[len(text.plain) - (size - 1):]
        return Text("…") + kept if isinstance(cell, Text) else "…" + kept.plain
    return cell


def fitted_table(columns: list[Column], width: int | None, title: str | None = None,
                 row_styles: list[str | None] | None = None, caption: str | None = None,
                 show_edge: bool = True) -> Table:
    """A rich table of ``columns`` laid out for a terminal ``width`` wide (None: every column whole);
    where nothing fits, every column at its least (rich then wraps what is left)."""
    edges = EDGES if show_edge else 0
    placed = None if width is None else layout(columns, width, edges)
    if placed is None:
        placed = [(c, c.width if width is None or c.least is None else min(c.least, c.width)) for c in columns]
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=show_edge)
    for column, size in placed:
        wraps = size < column.width and column.cut == "fold"
        table.add_column(column.header, justify=column.justify, no_wrap=not wraps, width=size,
                         overflow="fold" if wraps or column.cut == "id" else "ellipsis")
    for index in range(max((len(c.cells) for c, _ in placed), default=0)):
        table.add_row(*(_shown(column.cells[index], column, size) for column, size in placed),
                      style=row_styles[index] if row_styles else None)
    return table


@dataclass
class Fitted:
    """A table that lays itself out at the width it is printed at (a console, a notebook's text)."""

    columns: list[Column]
    title: str | None = None
    row_styles: list[str | None] | None = None
    caption: str | None = None
    show_edge: bool = True

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield fitted_table(self.columns, options.max_width, self.title, self.row_styles, self.caption, self.show_edge)
