"""The steps of a live watch: which rule makes them, where each begins and ends, and each compiled graph's
calls in it.

The rules (``model.watch.StepRule``), strongest first:

- ``MARKED``: the loop marks its steps, ``w.step()`` at each step's end or ``for b in w.steps_of(it)``;
  ``CALL``: ``explorer.watch(fn)`` makes each call of ``fn`` one step;
- ``OPTIMIZER``: one step per ``step()`` of the first torch optimizer that steps, ended by torch.optim's
  post hook (compiler/_torch/optimizer_steps.py);
- ``COMPILED_CALL``: one step per call of the outermost compiled frame, taken to be the frame whose graph
  ran first in the watch (a graph-break's resume function is a frame of its own, called from inside it).
  Its call begins a step: the graph's counter tells as the call begins (``watch_hooks.Sink.on_call``); when
  the frame's guards fail, the compile runs before the graph, so the compile's start begins the step and
  that compile's first call begins none.

A loop watched without marks starts under ``COMPILED_CALL``. A stronger rule takes over at its first sign
(the first optimizer step, the first mark) and folds the steps the weaker rule made until then into one:
everything before the first optimizer step, or before the first mark, is step 0.

Steps are kept raw (index, seconds, each graph's calls in it): the report makes ``Step`` objects when it is
read, and ending a step costs a few dict reads (benchmarks/watch_cost.py).
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Callable

from .._torch.watch_hooks import GraphCalls
from ..model.watch import StepRule

RawStep = tuple[int, float, dict[str, int]]  # (index, wall seconds, compile id -> calls of its graph in the step)

_STRENGTH = {StepRule.COMPILED_CALL: 0, StepRule.OPTIMIZER: 1, StepRule.MARKED: 2, StepRule.CALL: 2}


class StepClock:
    """The open step and the closed ones, under one rule at a time; ``graphs`` are the watch's call counts."""

    def __init__(self, graphs: dict[str, GraphCalls], rule: StepRule,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.graphs = graphs
        self.rule = rule
        self.anchor_name = ""  # what the rule counts, in words: the optimizer's class, the frame's function
        self.index = 0  # the open step's number (the next one's, between a watched function's calls)
        self.raw: list[RawStep] = []
        self.tail = False  # the open step was begun by an end mark: it may be the empty one after the last
        self._clock = clock
        self._open_since: float | None = None  # when the open step began; None when none is open
        self._ended_at = 0.0
        self._seen: dict[str, int] = {}  # each graph's calls when the open step began
        self._first: tuple[float, dict[str, int]] | None = None  # where step 0 began: when, and the calls then
        self._frame: str | None = None  # COMPILED_CALL: the outermost compiled frame's id
        self._compiling: str | None = None  # COMPILED_CALL: its compile that began the open step
        self._optimizer: Any = None  # OPTIMIZER: a weak reference to the optimizer whose steps count

    @property
    def is_open(self) -> bool:
        return self._open_since is not None

    # --- opening and closing ----------------------------------------------------------------------
    def begin(self) -> None:
        """Open a step now (the watch's start, or a watched function's call)."""
        self._seen = {cid: g.calls for cid, g in self.graphs.items()}
        self._open_since = self._clock()
        if self._first is None:
            self._first = (self._open_since, dict(self._seen))

    def end(self, drop_if_empty: bool = False) -> bool:
        """Close the open step, keeping it raw; False when none was open, or when ``drop_if_empty`` and it is
        the empty step an end mark began after the last step (nothing ran in it)."""
        if self._open_since is None:
            return False
        self._ended_at = self._clock()
        seconds = self._ended_at - self._open_since
        self._open_since = None
        seen, now, calls = self._seen, {}, {}
        for cid, graph in self.graphs.items():
            total = now[cid] = graph.calls
            ran = total - seen.get(cid, 0)
            if ran:
                calls[cid] = ran
        self._seen = now
        if drop_if_empty and self.tail and not calls:
            return False
        self.raw.append((self.index, seconds, calls))
        return True

    def reopen(self) -> None:
        """Open the next step where the last one ended (one clock read per step)."""
        self.index += 1
        self._open_since = self._ended_at
        self.tail = False

    # --- the rules ----------------------------------------------------------------------------------
    def takes_over(self, rule: StepRule) -> bool:
        """Whether ``rule`` is stronger than the one making the steps now; if so it makes them from now on,
        and every step so far is folded into the open one, step 0 again, begun where the first began."""
        if _STRENGTH[rule] <= _STRENGTH[self.rule]:
            return False
        self.rule, self.anchor_name = rule, ""
        self.raw.clear()
        self.index, self.tail = 0, False
        if self._first is not None and self._open_since is not None:
            self._open_since, seen = self._first
            self._seen = dict(seen)
        return True

    def counts_call(self, frame_id: str, compile_id: str) -> bool:
        """COMPILED_CALL: whether this call of a graph begins a step (a call of the outermost frame, other
        than its first, and other than the first call of the compile that already began the step)."""
        if self.rule is not StepRule.COMPILED_CALL:
            return False
        if self._frame is None:
            graph = self.graphs.get(compile_id)
            self._frame, self.anchor_name = frame_id, graph.function if graph is not None else ""
            return False
        if frame_id != self._frame:
            return False
        began, self._compiling = self._compiling, None
        return began != compile_id

    def counts_compile(self, compile_id: str) -> bool:
        """COMPILED_CALL: whether a compile starting now begins a step (a compile of the outermost frame)."""
        if self.rule is not StepRule.COMPILED_CALL or self._frame is None or compile_id.split("/")[0] != self._frame:
            return False
        self._compiling = compile_id
        return True

    def counts_optimizer(self, optimizer: Any) -> bool:
        """OPTIMIZER: whether this optimizer's step ends a step (it is the first optimizer that stepped)."""
        if self.rule is not StepRule.OPTIMIZER:
            return False
        if self._optimizer is None:
            self._optimizer = weakref.ref(optimizer)
            self.anchor_name = type(optimizer).__name__
        return self._optimizer() is optimizer
