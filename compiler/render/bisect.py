"""Terminal (rich) and notebook (HTML) renderings of a ``BisectResult``: the verdict line, the culprit at each
level reached, why the fusion level found nothing (when it did not), the notes, then every trial with its
outcome."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.text import Text

from ..model.bisect import DIVERGES, BisectResult
from ..model.formatting import shorten
from ..model.slots import html_of, rich_of
from .core import table_html
from .fit import Column, Fitted

TRIAL_COLUMNS = ["#", "level", "tried", "outcome", "detail", "s"]
CULPRIT_COLUMNS = ["level", "culprit"]
_DETAIL_WIDTH = 90
_STYLES = {"good": "green", "bad": "red", "crashed": "magenta", "check raised": "yellow", "measured": "cyan"}


def headline(result: BisectResult) -> str:
    if result.status == DIVERGES:
        return f"{result.function}: {result.message}"
    return f"{result.function}: {result.status}: {result.message}"


def trial_rows(result: BisectResult) -> list[list[str]]:
    return [[str(t.number), t.level, t.what, t.outcome, shorten(t.detail, _DETAIL_WIDTH, squash=True),
             f"{t.seconds:.2f}"] for t in result.trials]


def _notes(result: BisectResult) -> list[str]:
    notes = [f"check: {result.check}" + (f" ({result.tolerance})" if result.tolerance else "")]
    if result.fusion_note:
        notes.append(f"fusion level: {result.fusion_note}")
    if result.engine != "in-process":
        notes.append(f"trials ran in {'worker processes' if result.engine == 'local' else 'Ray tasks'}")
    return notes + [note.splitlines()[0] if i else note for i, note in enumerate(result.notes)]


def _culprit_table(rows: list[tuple[str, str]]) -> Fitted:
    """Level and what it names; a long culprit (several kernels or lines) wraps, never cut: it is the answer."""
    return Fitted([Column("level", [level for level, _ in rows]),
                   Column("culprit", [value for _, value in rows], least=24, cut="fold")],
                  title="culprit, level by level")


def _trials_table(result: BisectResult) -> Fitted:
    """One line per trial on a narrow terminal too: what was tried and the detail are cut (the widest first),
    then the seconds and the level go."""
    rows = trial_rows(result)
    cells = list(zip(*rows)) if rows else [()] * len(TRIAL_COLUMNS)
    number, level, tried, outcome, detail, seconds = (list(c) for c in cells)
    return Fitted([Column("#", number, "right"), Column("level", level, drop=2),
                   Column("tried", tried, least=24), Column("outcome", [Text(o, style=_STYLES.get(o, "")) for o in outcome]),
                   Column("detail", detail, least=20), Column("s", seconds, "right", drop=1)],
                  title=f"{len(result.trials)} trials")


@rich_of.register
def _(result: BisectResult) -> Any:
    parts: list[Any] = [Text(headline(result), style="bold")]
    rows = result.culprit_lines()
    if rows:
        parts.append(_culprit_table(rows))
    parts += [Text(note) for note in _notes(result)]
    parts.append(_trials_table(result))
    return Group(*parts)


@html_of.register
def _(result: BisectResult) -> str:
    rows = [list(row) for row in result.culprit_lines()]
    notes = "".join(f"<p>{html.escape(note)}</p>" for note in _notes(result))
    return (f"<div><p><strong>{html.escape(headline(result))}</strong></p>"
            f"{table_html(CULPRIT_COLUMNS, rows) if rows else ''}{notes}"
            f"<details><summary>{len(result.trials)} trials</summary>{table_html(TRIAL_COLUMNS, trial_rows(result))}"
            "</details></div>")
