"""Builds g.memory (compiler/model/memory.py) from Inductor's planned Wrapper IR lines and the wrapper text."""

from __future__ import annotations

import re
from typing import Any

from ..model.memory import MemoryBuffer, MemoryStep, MemoryTimeline

_CALL_DEF = re.compile(r"^\s*def call\(")
_ASSIGN = re.compile(r"^\s*(?P<name>\w+) = (?P<value>.*)$")
_DEL = re.compile(r"^\s*del (?P<names>[\w ,]+)$")
_ALLOC_CALL = re.compile(r"(tracked_)?empty_strided\w*\(")
_REUSE = re.compile(r"^\s*(?P<new>\w+) = (?:reinterpret_tensor\()?(?P<old>\w+)\b.*#\s*reuse\s*$")


# ------------------------------------------------------------------------------------- wrapper text


class _WrapperText:
    """The call function's lines, searched forward in the order the events were planned."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.cursor = next((i for i, line in enumerate(self.lines) if _CALL_DEF.match(line)), 0)

    def find(self, matches: Any) -> int | None:
        """1-based number of the first line at or after the cursor that ``matches``; moves past it."""
        for i in range(self.cursor, len(self.lines)):
            if matches(self.lines[i]):
                self.cursor = i + 1
                return i + 1
        return None

    def line_for(self, event: dict[str, Any]) -> int | None:
        op, name = event["op"], event.get("buffer")

        def assigns(line: str, check: Any = None) -> bool:
            m = _ASSIGN.match(line)
            return bool(m and m["name"] == name and (check is None or check(m["value"])))

        if op == "alloc":
            return self.find(lambda line: assigns(line, lambda v: "# reuse" not in v and "# alias" not in v))
        if op == "reuse":
            return self.find(lambda line: assigns(line, lambda v: v.rstrip().endswith("reuse")))
        if op == "alias":
            return self.find(lambda line: assigns(line))
        if op == "multi_output":
            return self.find(lambda line: assigns(line, lambda v: v.startswith(f"{event['from']}[")))
        if op == "free":
            return self.find(lambda line: bool((m := _DEL.match(line)) and name in _names(m["names"])))
        if op == "call":
            kernel = event["kernel"]
            return self.find(lambda line: f"{kernel}(" in line or f"{kernel}.run(" in line)
        return None


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def text_marks(text: str) -> dict[str, set]:
    """What the call function's text says: its ``# reuse`` pairs, fresh allocations and ``del`` names."""
    reuses, allocs, frees = set(), set(), set()
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CALL_DEF.match(line)), 0)
    for line in lines[start:]:
        if (m := _REUSE.match(line)) is not None:
            reuses.add((m["new"], m["old"]))
        elif (m := _ASSIGN.match(line)) is not None and _ALLOC_CALL.match(m["value"]):
            allocs.add(m["name"])
        elif (m := _DEL.match(line)) is not None:
            frees.update(_names(m["names"]))
    return {"reuse": reuses, "alloc": allocs, "free": frees}


# ---------------------------------------------------------------------------------------- building


class _Builder:
    def __init__(self, records: dict[str, Any], text: str, kernel_lines: dict[int, str]) -> None:
        self.text = _WrapperText(text)
        self.kernel_lines = kernel_lines
        self.outputs = set(records.get("outputs", []))
        self.buffers: dict[str, MemoryBuffer] = {}
        self.holder: dict[str, str] = {}  # live name -> storage (the name that allocated it)
        self.storage_bytes: dict[str, int] = {}
        self.storage_names: dict[str, set[str]] = {}
        self.steps: list[MemoryStep] = []
        self.pending: list[str] = []
        self.live = 0
        self.peak, self.peak_step, self.at_peak = 0, None, []
        self.running: set[str] = set()  # names live while the last call ran (outputs of extern ops included)
        self.notes: list[str] = []
        self.mismatches: list[str] = []
        self.depth = 0  # inside a subgraph (conditional branches): not on the main path

    # --- storage -----------------------------------------------------------------------------
    def _hold(self, name: str, storage: str) -> None:
        self.holder[name] = storage
        self.storage_names.setdefault(storage, set()).add(name)

    def _new_storage(self, name: str, nbytes: int) -> None:
        self.storage_bytes[name] = nbytes
        self._hold(name, name)
        self.live += nbytes

    def _drop(self, name: str, step: int, how: str, line: int | None) -> None:
        storage = self.holder.pop(name, None)
        buffer = self.buffers.get(name)
        if buffer is not None:
            buffer.free_step, buffer.freed_by, buffer.free_line = step, how, line
        if storage is None:
            return
        names = self.storage_names[storage]
        names.discard(name)
        if not names:
            self.live -= self.storage_bytes.get(storage, 0)

    def _step_index(self) -> int:
        return len(self.steps)

    def _current(self) -> int:
        return max(len(self.steps) - 1, 0)

    def _record_peak(self, step: MemoryStep) -> None:
        step.live_bytes = self.live
        if step.peak_bytes > self.peak or self.peak_step is None:
            self.peak, self.peak_step = step.peak_bytes, step.index
            self.at_peak = sorted(self.running, key=_natural)

    # --- events ------------------------------------------------------------------------------
    def add(self, event: dict[str, Any]) -> None:
        op = event["op"]
        if op == "subgraph":
            self.depth += 1 if event["enter"] else -1
            self.notes.append("subgraphs (conditional branches) run only sometimes: their buffers are left out")
            return
        if self.depth > 0:
            return
        if op == "unknown":
            self.notes.append(f"{event['line']} (pooled memory planning, config.memory_planning) is not modelled")
            return
        line = self.text.line_for(event)
        if line is None and op not in ("free", "alias"):  # an alias of a removed buffer is never written
            self.mismatches.append(f"{op} {event.get('buffer') or event.get('kernel')}: not found in the wrapper text")
        getattr(self, f"_{op}")(event, line)

    def _buffer(self, event: dict[str, Any], kind: str, step: int, storage: str, nbytes: int, line: int | None,
                reuses: str | None = None) -> MemoryBuffer:
        name = event["buffer"]
        buffer = MemoryBuffer(name=name, bytes=nbytes, dtype=event.get("dtype"), shape=list(event.get("shape") or []),
                              kind=kind, alloc_step=step, free_step=None, storage=storage, reuses=reuses,
                              output=name in self.outputs, wrapper_line=line)
        self.buffers[name] = buffer
        return buffer

    def _size(self, event: dict[str, Any]) -> int:
        if event.get("bytes") is None:
            self.notes.append(f"{event.get('buffer')}: size unknown (symbolic without a hint), counted as 0 bytes")
        return int(event.get("bytes") or 0)

    def _alloc(self, event: dict[str, Any], line: int | None) -> None:
        nbytes = self._size(event)
        self._buffer(event, "alloc", self._step_index(), event["buffer"], nbytes, line)
        self._new_storage(event["buffer"], nbytes)
        self.pending.append(event["buffer"])

    def _reuse(self, event: dict[str, Any], line: int | None) -> None:
        old, new = event["from"], event["buffer"]
        storage = self.holder.get(old, old)
        step = self._step_index()
        self._buffer(event, "inplace" if event.get("inplace") else "reuse", step, storage, 0, line, reuses=old)
        if old in self.buffers:
            self.buffers[old].reused_by = new
        self._hold(new, storage)
        if event.get("delete_old", True) and old not in self.outputs:
            self._drop(old, step, "reuse", line)
        self.pending.append(new)

    def _alias(self, event: dict[str, Any], line: int | None) -> None:
        storage = self.holder.get(event["from"])
        self._buffer(event, "alias", self._step_index(), storage or event["from"], 0, line, reuses=event["from"])
        if storage is not None:
            self._hold(event["buffer"], storage)

    def _call(self, event: dict[str, Any], line: int | None) -> None:
        kernel = self.kernel_lines.get(line) if line is not None else None
        step = MemoryStep(index=len(self.steps), call=event["kernel"], kernel=kernel, wrapper_line=line,
                          allocated=self.pending)
        self.pending = []
        self.steps.append(step)
        allocated = event.get("allocates")
        if allocated is not None:
            nbytes = self._size({**allocated, "buffer": event["buffer"]})
            self._buffer({**allocated, "buffer": event["buffer"]}, "extern", step.index, event["buffer"], nbytes, line)
            self._new_storage(event["buffer"], nbytes)
            step.allocated.append(event["buffer"])
        step.peak_bytes = self.live
        self.running = set(self.holder)
        self._record_peak(step)

    def _multi_output(self, event: dict[str, Any], line: int | None) -> None:
        """One output of a multi-output extern op: allocated by the op while it ran, so it counts at the
        call even when the wrapper names it only after freeing the op's inputs."""
        if not self.steps:
            return
        step = self.steps[-1]
        nbytes = self._size(event)
        self._buffer(event, "extern", step.index, event["buffer"], nbytes, line)
        self._new_storage(event["buffer"], nbytes)
        step.allocated.append(event["buffer"])
        step.peak_bytes += nbytes
        self.running.add(event["buffer"])
        self._record_peak(step)

    def _free(self, event: dict[str, Any], line: int | None) -> None:
        name = event["buffer"]
        if line is None and not event.get("input"):
            self.mismatches.append(f"free {name}: not found in the wrapper text")
        if name not in self.holder:
            return  # graph inputs belong to the caller
        step = self._current()
        self._drop(name, step, "del", line)
        if self.steps:
            self.steps[-1].freed.append(name)
            self.steps[-1].live_bytes = self.live

    # --- result ------------------------------------------------------------------------------
    def finish(self, records: dict[str, Any], text: str) -> MemoryTimeline:
        if self.pending:  # allocations after the last call (views of outputs): one closing step
            step = MemoryStep(index=len(self.steps), call="return", kernel=None, wrapper_line=None,
                              allocated=self.pending, peak_bytes=self.live)
            self.steps.append(step)
            self.running = set(self.holder)
            self._record_peak(step)
        last = self._current()
        for name in sorted(self.holder, key=_natural):
            if name not in self.outputs:  # names the call function never deletes die when it returns
                self._drop(name, last, "return", None)
                if self.steps:
                    self.steps[-1].freed.append(name)
                    self.steps[-1].live_bytes = self.live
        self._check_text(text)
        output_storages = {self.holder[n] for n in self.outputs if n in self.holder}
        return MemoryTimeline(
            steps=self.steps, buffers=list(self.buffers.values()), peak_bytes=self.peak, peak_step=self.peak_step,
            at_peak=self.at_peak, input_bytes=sum(int(b or 0) for b in records.get("inputs", {}).values()),
            output_bytes=sum(self.storage_bytes.get(s, 0) for s in output_storages),
            estimate=records.get("estimate"), mismatches=self.mismatches, notes=_unique(self.notes),
        )

    def _check_text(self, text: str) -> None:
        marks = text_marks(text)
        planned = {(b.name, b.reuses) for b in self.buffers.values() if b.kind in ("reuse", "inplace")}
        for new, old in sorted(marks["reuse"] - planned):
            self.mismatches.append(f"wrapper text reuses {old} as {new}, the plan does not")
        for new, old in sorted(planned - marks["reuse"]):
            self.mismatches.append(f"the plan reuses {old} as {new}, the wrapper text does not")
        fresh = {b.name for b in self.buffers.values() if b.kind == "alloc"}
        for name in sorted(marks["alloc"] ^ fresh):
            where = "wrapper text" if name in marks["alloc"] else "plan"
            self.mismatches.append(f"only the {where} allocates {name}")
        deleted = {b.name for b in self.buffers.values() if b.freed_by == "del"}
        for name in sorted(deleted - marks["free"]):
            self.mismatches.append(f"the plan frees {name}, the wrapper text does not")


def _natural(name: str) -> tuple[str, int]:
    m = re.match(r"(\D*)(\d*)", name)
    return (m.group(1), int(m.group(2) or 0)) if m else (name, 0)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def build_timeline(records: dict[str, Any], wrapper_text: str, kernel_lines: dict[int, str]) -> MemoryTimeline:
    """The timeline of one graph from its planned-line records (wrapper_ir.events) and wrapper text."""
    builder = _Builder(records, wrapper_text, kernel_lines)
    if re.search(r"^\s*def partition_\d+\(", wrapper_text, re.MULTILINE):
        builder.notes.append("kernels run in graph partitions (for CUDA graphs): each partition plans its own "
                             "buffers, and only the calls between partitions are shown")
    for event in records.get("events", []):
        builder.add(event)
    return builder.finish(records, wrapper_text)
