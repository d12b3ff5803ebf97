"""Benchmark output as records: what docs/figures.md shows is what a script printed, not a copy by hand.

A script builds its tables as rows, prints them, and with ``--record`` also writes them to
``benchmarks/results/<script>-<device>-<date>.json`` (or the path given) together with the command
that produced them, the machine, the versions and the date. ``make figures`` (this module as a script)
writes docs/figures.md from benchmarks/figures.md, each ``<!-- figures: NAME -->`` line replaced by
record NAME's tables and a caption, so the page's numbers change only when a script is run again and
its record committed; a test checks that the committed page is the one the records make.

Record format (``VERSION`` 1): ``{"version", "script", "command", "date", "machine", "versions",
"tables": [{"title", "columns", "align", "rows"}], "notes"}``. Cells are strings as printed; ``align``
holds "left", "right" or "center" per column. Records made before ``--record`` existed were transcribed
from those runs' printed tables and carry ``"transcribed": true``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

VERSION = 1
RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parents[1]
TEMPLATE = RESULTS.parent / "figures.md"
PAGE = ROOT / "docs" / "figures.md"
MARKER = re.compile(r"^<!--\s*figures:\s*([\w.-]+)\s*-->$", re.M)  # alone on its line
_MARK = {"left": "---", "right": "---:", "center": ":---:"}


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    align: list[str] | None = None  # per column; numbers right, text left when None
    title: str = ""

    def add(self, *cells: Any) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns "
                             f"({self.columns})")
        self.rows.append([_cell(c) for c in cells])

    def alignment(self) -> list[str]:
        if self.align is not None:
            return self.align
        return ["right" if self.rows and all(_numeric(r[i]) for r in self.rows if r[i]) and any(r[i] for r in self.rows)
                else "left" for i in range(len(self.columns))]

    def text(self) -> str:
        """The table as a terminal prints it: columns padded to their widest cell."""
        widths = [max([len(c)] + [len(r[i]) for r in self.rows]) for i, c in enumerate(self.columns)]
        align = self.alignment()

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.rjust(w) if a == "right" else c.ljust(w)
                             for c, w, a in zip(cells, widths, align)).rstrip()

        head = [self.title] if self.title else []
        return "\n".join(head + [line(self.columns)] + [line(r) for r in self.rows])

    def markdown(self) -> str:
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        out = [line(self.columns), "| " + " | ".join(_MARK[a] for a in self.alignment()) + " |"]
        out += [line(r) for r in self.rows]
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "align": self.alignment(), "rows": self.rows}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Table":
        return cls(list(data["columns"]), [list(r) for r in data["rows"]], list(data["align"]), data.get("title", ""))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value)


def _numeric(text: str) -> bool:
    cleaned = text.strip("*").replace(",", "").rstrip("x%").split(" ")[0]
    try:
        float(cleaned)
        return True
    except ValueError:
        return False


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", nargs="?", const="", default=None, metavar="PATH",
                        help="also write the tables as a record for docs/figures.md "
                             "(default path: benchmarks/results/<script>-<device>-<date>.json)")


def machine(device: str = "cpu") -> str:
    """What ran it, in the words figures quote: the GPU's name, or the CPU's core count."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    return f"{os.cpu_count()}-core CPU ({platform.machine()})"


def versions() -> dict[str, str | None]:
    import torch

    try:
        import triton
        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    return {"torch": torch.__version__, "triton": triton_version, "python": platform.python_version()}


def command(argv: Sequence[str]) -> str:
    """``python benchmarks/<script> <args>`` as it was run, the script's path from the repository root."""
    script = Path(argv[0]).resolve()
    shown = str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else argv[0]
    return shlex.join(["python", shown, *argv[1:]])


def record(args: argparse.Namespace, tables: Iterable[Table], *, device: str = "cpu",
           notes: Iterable[str] = (), argv: Sequence[str] | None = None) -> Path | None:
    """Write the record when ``--record`` was given; returns its path (None otherwise)."""
    path_arg = getattr(args, "record", None)
    if path_arg is None:
        return None
    argv = list(sys.argv if argv is None else argv)
    data = {"version": VERSION, "script": Path(argv[0]).name, "command": command(_without_record(argv, path_arg)),
            "date": datetime.date.today().isoformat(), "machine": machine(device), "versions": versions(),
            "tables": [t.to_json() for t in tables], "notes": list(notes)}
    path = Path(path_arg) if path_arg else RESULTS / default_name(data["script"], device, data["date"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"record written to {path}")
    return path


def _without_record(argv: list[str], path_arg: str) -> list[str]:
    """argv less ``--record`` and its path (``nargs='?'``: the next argument is its path when one was given)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--record":
            skip = bool(path_arg)
        elif not arg.startswith("--record="):
            out.append(arg)
    return out


def default_name(script: str, device: str, date: str) -> str:
    return f"{Path(script).stem}-{'gpu' if device.startswith('cuda') else 'cpu'}-{date}.json"


def load(name: str, folder: Path = RESULTS) -> dict[str, Any]:
    path = folder / (name if name.endswith(".json") else name + ".json")
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise FileNotFoundError(f"no benchmark record {name!r} in {folder}; records: {known}")
    data = json.loads(path.read_text())
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: record version {data.get('version')!r}, this reader knows {VERSION}")
    return data


def caption(data: dict[str, Any]) -> str:
    v = data["versions"]
    stack = f"torch {v['torch']}" + (f", Triton {v['triton']}" if v.get("triton") else "")
    return f"`{data['command']}` · {data['machine']} · {stack} · {data['date']}"


def markdown(data: dict[str, Any]) -> str:
    """A record as docs/figures.md shows it: each table (its title in bold above it), the caption, notes."""
    parts = []
    for table in (Table.from_json(t) for t in data["tables"]):
        parts.append((f"**{table.title}**\n\n" if table.title else "") + table.markdown())
    parts.append(f"<small>{caption(data)}</small>")
    if data.get("notes"):
        parts.append("\n".join(f"- {note}" for note in data["notes"]))
    return "\n\n".join(parts)


def page(template: str, folder: Path = RESULTS) -> str:
    """The figures page: the template with each marker replaced by its record (a missing record raises)."""
    note = ("<!-- Made by `make figures` from benchmarks/figures.md and benchmarks/results/: "
            "edit those, not this file. -->\n")
    return note + MARKER.sub(lambda m: markdown(load(m.group(1), folder)), template)


def main() -> None:
    PAGE.write_text(page(TEMPLATE.read_text()))
    print(f"wrote {PAGE.relative_to(ROOT)} from {len(MARKER.findall(TEMPLATE.read_text()))} records")


if __name__ == "__main__":
    main()
