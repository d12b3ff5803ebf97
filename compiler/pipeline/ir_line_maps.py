"""k.ir: what Triton made of a kernel below its Python source, linked back to the source lines.

Triton lowers a kernel through TTIR, TTGIR (with the GPU layouts), LLVM IR and PTX to a cubin, whose
SASS is the real instruction stream. Every stage keeps Triton's location info: MLIR ``loc(...)``
attributes (TTIR/TTGIR), ``!dbg`` DILocations (LLVM IR), ``.loc`` directives (PTX) and the cubin's
line table (SASS through ``nvdisasm -g``). Each is resolved to a line of the kernel's source file; code
Triton inlined from its own library (``tl.sum`` in ``standard.py``) is followed to its call site in
the kernel where the stage records one. The file line is then shifted to the kernel's own source
(``Kernel.source``), so provenance runs user line -> FX node -> kernel line -> IR lines.

Stages are capped (``STAGE_LIMIT`` characters each, cut at a line): a huge PTX keeps its head, says so
in ``notes`` and ``truncated``, and its line map covers the lines kept.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable

from ..model.kernel_file import source_offset
from ..model.kernel_ir import STAGES, KernelIR

STAGE_LIMIT = 400_000  # characters kept per stage

_MLIR_DEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_TOKEN = re.compile(r'"([^"]+)":(\d+):\d+|(#loc\d*)\b')
_LL_DBG = re.compile(r"!dbg (![0-9]+)")
_LL_DEF = re.compile(r"^(![0-9]+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
_LL_FIELD = re.compile(r'(\w+): (?:"([^"]*)"|(![0-9]+)|(-?\d+))')
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*inlined_at\s+(\d+)\s+(\d+)\s+\d+)?(?:\s*//\s*(.*))?$")
_PTX_COMMENT_LOC = re.compile(r"([\w.\-]+\.py):(\d+):\d+")
_SASS_LOC = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')


# ------------------------------------------------------------------------------- location parsing


def _resolve_all(resolve: Callable[[str], list[tuple[str, int]]], tokens: Any) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for file, line, ref in tokens:
        out += [(file, int(line))] if file else resolve(ref)
    return out


def mlir_file_lines(text: str) -> list[list[tuple[str, int]]]:
    """Per line of a TTIR/TTGIR module: the (file, line) locations its ``loc(...)`` resolves to, in order
    (for a call site: the callee's location, then the caller's)."""
    lines = text.splitlines()
    defs = {m[1]: m[2] for line in lines if (m := _MLIR_DEF.match(line))}
    memo: dict[str, list[tuple[str, int]]] = {}

    def resolve(ref: str) -> list[tuple[str, int]]:
        if ref not in memo:
            memo[ref] = []  # guards against cycles
            memo[ref] = _resolve_all(resolve, _MLIR_TOKEN.findall(defs.get(ref, "")))
        return memo[ref]

    out = []
    for line in lines:
        at = line.rfind(" loc(")
        if _MLIR_DEF.match(line) or at < 0:
            out.append([])
        else:
            out.append(_resolve_all(resolve, _MLIR_TOKEN.findall(line[at:])))
    return out


def llir_file_lines(text: str) -> list[list[tuple[str, int]]]:
    """Per LLVM IR line: its ``!dbg`` location, then each ``inlinedAt`` caller, as (file, line)."""
    lines = text.splitlines()
    defs: dict[str, tuple[str, dict[str, str]]] = {}
    for line in lines:
        m = _LL_DEF.match(line)
        if m:
            fields = {f[0]: f[1] or f[2] or f[3] for f in _LL_FIELD.findall(m[3])}
            defs[m[1]] = (m[2], fields)

    def file_of(ref: str | None, depth: int = 0) -> str | None:
        if ref is None or ref not in defs or depth > 32:
            return None
        kind, fields = defs[ref]
        if kind == "DIFile":
            directory, name = fields.get("directory", ""), fields.get("filename", "")
            return name if name.startswith("/") or not directory else f"{directory}/{name}"
        return file_of(fields.get("file"), depth + 1) if "file" in fields else file_of(fields.get("scope"), depth + 1)

    def chain(ref: str) -> list[tuple[str, int]]:
        out = []
        seen = set()
        while ref in defs and ref not in seen and defs[ref][0] == "DILocation":
            seen.add(ref)
            fields = defs[ref][1]
            file = file_of(fields.get("scope"))
            if file and fields.get("line"):
                out.append((file, int(fields["line"])))
            ref = fields.get("inlinedAt", "")
        return out

    return [chain(m[1]) if (m := _LL_DBG.search(line)) and not _LL_DEF.match(line) else [] for line in lines]


def ptx_file_lines(text: str) -> list[list[tuple[str, int]]]:
    """Per PTX line: the ``.loc`` in force (its file, then the inlined-at site, then the comment chain)."""
    lines = text.splitlines()
    files = {m[1]: m[2] for line in lines if (m := _PTX_FILE.match(line))}
    out: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    for line in lines:
        m = _PTX_LOC.match(line)
        if m:
            current = [(files.get(m[1], m[1]), int(m[2]))]
            if m[3]:
                current.append((files.get(m[3], m[3]), int(m[4])))
            current += [(name, int(number)) for name, number in _PTX_COMMENT_LOC.findall(m[5] or "")[1:]]
            out.append(current)
        elif _PTX_FILE.match(line) or line.strip().startswith("}"):
            out.append([])
        else:
            out.append(current)
    return out


def sass_file_lines(text: str) -> list[list[tuple[str, int]]]:
    """Per line of ``nvdisasm -g`` output: the ``//## File "...", line N`` annotation in force."""
    out: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    for line in text.splitlines():
        m = _SASS_LOC.match(line)
        if m:
            current = [(m[1], int(m[2]))]
            out.append(current)
        elif line.strip().startswith((".section", "//--")) or not line.strip():
            out.append([])
        else:
            out.append(current)
    return out


PARSERS: dict[str, Callable[[str], list[list[tuple[str, int]]]]] = {
    "ttir": mlir_file_lines, "ttgir": mlir_file_lines, "llir": llir_file_lines, "ptx": ptx_file_lines,
    "sass": sass_file_lines,
}


def _same_file(a: str, b: str) -> bool:
    """Full paths compare equal; a bare name (PTX comments) matches a path's basename."""
    return a == b or ("/" not in a and b.rsplit("/", 1)[-1] == a) or ("/" not in b and a.rsplit("/", 1)[-1] == b)


def main_file(text: str) -> str | None:
    """The file most TTIR locations point at: the kernel's own."""
    counts = Counter(file for locs in mlir_file_lines(text) for file, _ in locs)
    return counts.most_common(1)[0][0] if counts else None


def line_map(stage: str, text: str, source_file: str, offset: int, source_lines: int) -> list[int | None]:
    """Per IR line of ``stage``: the kernel source line (file line - offset), or None."""
    out: list[int | None] = []
    for locs in PARSERS[stage](text):
        line = next((number - offset for file, number in locs if _same_file(file, source_file)), None)
        out.append(line if line is not None and 0 < line <= source_lines else None)
    return out


# ---------------------------------------------------------------------------------------- building


def _capped(stage: str, text: str, notes: list[str], truncated: dict[str, int]) -> str:
    if len(text) <= STAGE_LIMIT:
        return text
    cut = text.rfind("\n", 0, STAGE_LIMIT)
    kept = text[: cut if cut > 0 else STAGE_LIMIT]
    truncated[stage] = len(text)
    notes.append(f"{stage} is {len(text):,} characters ({text.count(chr(10)) + 1:,} lines): kept the first "
                 f"{len(kept):,} ({kept.count(chr(10)) + 1:,} lines)")
    return kept


def _compiled_from(module_file: str | None, texts: dict[str, str]) -> str | None:
    """The source file the IR's locations name. It is the kernel's module file, unless the binary was
    found in the Triton cache entry of an earlier compile of the same kernel (same hash, same source
    text, another fresh directory): then the IR names that compile's file, and line maps must follow it."""
    if "ttir" not in texts or (module_file and module_file in texts["ttir"]):
        return module_file
    return main_file(texts["ttir"]) or module_file


def kernel_ir(raw: dict[str, Any], kernel_source: str, kernel_name: str) -> KernelIR:
    """A KernelIR from the live capture's record (``compiler/_torch/triton_ir.py``) and the SASS text.

    Line maps are computed on the full texts (PTX lists its ``.file`` table at the end), then cut to
    the lines each capped stage keeps."""
    notes = list(raw.get("notes", []))
    texts = {s: raw["texts"][s] for s in STAGES if raw.get("texts", {}).get(s)}
    source_file = _compiled_from(raw.get("source_file"), texts)
    offset = source_offset(raw.get("source_text"), kernel_source, kernel_name)
    maps: dict[str, list[int | None]] = {}
    if source_file is None or offset is None:
        if texts:
            notes.append("Triton's source file could not be matched to the kernel source: no line maps")
    else:
        count = len(kernel_source.splitlines())
        maps = {stage: line_map(stage, text, source_file, offset, count) for stage, text in texts.items()}
    truncated: dict[str, int] = {}
    stages = {s: _capped(s, text, notes, truncated) for s, text in texts.items()}
    maps = {s: mapped[: len(stages[s].splitlines())] for s, mapped in maps.items()}
    return KernelIR(stages=stages, line_map=maps, meta=dict(raw.get("meta", {})), notes=notes, truncated=truncated,
                    source_file=source_file)
