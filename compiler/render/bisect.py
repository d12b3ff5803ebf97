"""Terminal (rich) and notebook (HTML) renderings of a ``BisectResult``: the verdict line, the culprit at each
level reached, why the fusion level found nothing (when it did not), the notes, then every trial with its
outcome."""

from __future__ import annotations

import html
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..model.bisect import DIVERGES, BisectResult
from ..model.formatting import shorten
from ..model.slots import html_of, rich_of
from .core import table_html

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


@rich_of.register
def _(result: BisectResult) -> Any:
    parts: list[Any] = [Text(headline(result), style="bold")]
    rows = result.culprit_lines()
    if rows:
        culprits = Table(title="culprit, level by level")
        for column in CULPRIT_COLUMNS:
            culprits.add_column(column)
        for row in rows:
            culprits.add_row(*row)
        parts.append(culprits)
    parts += [Text(note) for note in _notes(result)]
    trials = Table(title=f"{len(result.trials)} trials")
    for column in TRIAL_COLUMNS:
        trials.add_column(column)
    for row in trial_rows(result):
        trials.add_row(*row[:3], Text(row[3], style=_STYLES.get(row[3], "")), *row[4:])
    parts.append(trials)
    return Group(*parts)


@html_of.register
def _(result: BisectResult) -> str:
    rows = [list(row) for row in result.culprit_lines()]
    notes = "".join(f"<p>{html.escape(note)}</p>" for note in _notes(result))
    return (f"<div><p><strong>{html.escape(headline(result))}</strong></p>"
            f"{table_html(CULPRIT_COLUMNS, rows) if rows else ''}{notes}"
            f"<details><summary>{len(result.trials)} trials</summary>{table_html(TRIAL_COLUMNS, trial_rows(result))}"
            "</details></div>")
