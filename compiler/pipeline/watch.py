"""``explorer.watch()``: what torch.compile does over the steps of a running loop.

Its sources:

- Dynamo's structured trace records (compiler/_torch/structured_trace.py), emitted only while something
  compiles, read into a ``RunRecords`` (watch_records.py) with the step each compile began in;
- each compiled graph's calls, counted by a wrapper Dynamo calls instead of the graph
  (compiler/_torch/watch_hooks.py): one integer per call, one call in ``sample_every`` timed;
- the steps (watch_steps.py): marked by the loop (``w.step()``, ``w.steps_of(loader)``), made by
  ``explorer.watch(fn)`` (each call), else one per optimizer ``step()``, else one per call of the
  outermost compiled frame; ``w.step_rule`` says which;
- under CUDA graphs (``mode="reduce-overhead"``), the CUDA graph tree's warm-ups, recordings, re-records,
  skips and replays (watch_cudagraphs.py), each kept in the step open when it happened, replays counted.

``w.report()`` is the report as it stands: a ``WatchReport`` snapshot that the loop going on does not change
(made again only when something changed). ``w.steps``, ``w.recompiles``... read the latest one. Listeners
(``w.add_listener(fn)``, watch_listeners.py) are how a view follows the run without polling it: ``fn`` gets
the snapshot from the loop's own thread, at most every ``every`` seconds, and once when the watch ends.
The terminal's live summary (watch_live.py) and the notebook widget are such listeners.

Torch's logged warnings while the watch runs (a ``.item()`` graph break's 12 lines) are kept in
``w.notes``, as a capture keeps them in ``c.notes``.
"""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Any, Callable, Iterable, Iterator, TypeVar

from .._torch import compile_warnings, optimizer_steps, structured_trace, watch_earlier, watch_hooks
from ..model import slots
from ..model.dynamo import DynamoStage
from ..model.watch import BreakCount, CompileEvent, FrameStats, Step, StepRule, WatchReport
from ..model.watch_cudagraphs import CudaGraphStepEvent
from . import watch_live
from .dynamo_records import PAYLOADS
from .watch_cudagraphs import CudaGraphWatch
from .watch_graphs import KeptGraphs
from .watch_listeners import VIEW_INTERVAL, Listener, Listeners
from .watch_records import (NOTIFYING, WATCH_READS, RunRecords, break_counts, earlier_breaks,
                            frame_stats)
from .watch_steps import StepClock

T = TypeVar("T")


class Watch:
    """A live watch: ``with explorer.watch() as w:`` around a loop. See the module's docstring for steps."""

    def __init__(self, sample_every: int = 8, keep_graphs: bool = True, live: Any = False, *,
                 source: str = "a loop", rule: StepRule = StepRule.COMPILED_CALL) -> None:
        self.sample_every = max(1, int(sample_every))
        self.source = source  # what is watched, in words: "a loop", "calls of train_step"
        self.error: str | None = None  # the exception that ended the loop, if one did
        self.notes: list[str] = []  # torch's warnings, listeners removed, ...
        self._live = live
        self._run = RunRecords.live()
        self._sink = watch_hooks.Sink(self.sample_every)
        self._clock = StepClock(self._sink.graphs, rule)
        self._kept = KeptGraphs() if keep_graphs else None
        self._listeners = Listeners()
        self._hooks: contextlib.ExitStack | None = None
        self._running = False
        self._started: float | None = None
        self._seconds = 0.0
        self._marked = 0  # compiles already written as step marks into a TORCH_TRACE log
        self._earlier: list[watch_earlier.EarlierGraph] | None = None  # graphs compiled before the watch began
        # the CUDA graph tree's events (mode="reduce-overhead"), each in the step open when it happened
        self._cudagraphs = CudaGraphWatch(lambda: self._clock.index, self._changed)
        # the report: its parts made so far, and the last snapshot with the state it was made at
        self._stage: DynamoStage | None = None
        self._compiles: list[CompileEvent] = []
        self._steps: list[Step] = []
        self._changes = 0
        self._snapshot: tuple[int, WatchReport] | None = None

    # --- the report ----------------------------------------------------------------------------
    def report(self) -> WatchReport:
        """The report as it stands now: a snapshot, which the loop going on does not change. Made again
        only when something changed since the last one (a record, a step, a note, the end)."""
        if self._snapshot is not None and self._snapshot[0] == self._changes:
            return self._snapshot[1]
        graphs = self._sink.graphs
        if self._run.changed:
            self._run.changed = False
            self._stage = self._run.dynamo.stage({})
            self._compiles = self._run.compiles(self._stage)
            if self._kept is not None:
                for event in self._compiles:
                    event.capture_from = self._kept.capture_of(event.compile_id)
        self._steps += self._made_steps(self._clock.raw[len(self._steps):])
        calls = {c: g.calls for c, g in graphs.items()}
        found = break_counts(self._stage, calls) if self._stage is not None else []
        breaks = earlier_breaks(found, self._earlier or [], calls)
        running = time.perf_counter() - self._started if self._running and self._started is not None else 0.0
        cudagraph_events = self._cudagraphs.events
        snapshot = WatchReport(
            steps=list(self._steps), compiles=list(self._compiles), graph_breaks=breaks,
            frames=frame_stats(self._compiles, graphs, breaks, cudagraph_events), source=self.source,
            seconds=self._seconds + running, sample_every=self.sample_every, error=self.error,
            notes=list(self.notes), step_rule=self._clock.rule, step_anchor=self._clock.anchor_name,
            active=self._running, cudagraph_events=cudagraph_events)
        self._snapshot = (self._changes, snapshot)
        return snapshot

    def _made_steps(self, raw: list[tuple[int, float, dict[str, int]]]) -> list[Step]:
        graphs = self._sink.graphs
        by_step: dict[Any, list[str]] = {}
        for cid in self._run.order:
            by_step.setdefault(self._run.steps.get(cid), []).append(cid)
        made = []
        for index, seconds, calls in raw:
            means = {cid: graphs[cid].seconds / graphs[cid].timed if graphs[cid].timed else 0.0 for cid in calls}
            made.append(Step(index, seconds, calls, {cid: means[cid] * n for cid, n in calls.items()},
                             by_step.get(index, [])))
        return made

    def _changed(self) -> None:
        self._changes += 1

    # the latest report's parts, for reading a watch after (or during) its loop
    @property
    def steps(self) -> list[Step]:
        return self.report().steps

    @property
    def compiles(self) -> list[CompileEvent]:
        return self.report().compiles

    @property
    def recompiles(self) -> list[CompileEvent]:
        return self.report().recompiles

    @property
    def graph_breaks(self) -> list[BreakCount]:
        return self.report().graph_breaks

    @property
    def frames(self) -> list[FrameStats]:
        return self.report().frames

    @property
    def cache(self) -> dict[str, dict[str, int]]:
        return self.report().cache

    @property
    def cudagraph_events(self) -> list[CudaGraphStepEvent]:
        return self.report().cudagraph_events

    @property
    def seconds(self) -> float:
        return self.report().seconds

    @property
    def step_rule(self) -> StepRule:
        """What makes the steps (watch_steps.py): the loop's marks, the watched function's calls, the
        optimizer's steps or the outermost compiled frame's calls."""
        return self._clock.rule

    def summary(self) -> str:
        return self.report().summary()

    def compile(self, compile_id: str) -> CompileEvent:
        return self.report().compile(compile_id)

    # --- listeners ---------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """True while the watch is running (between ``__enter__`` and ``__exit__``, or inside a watched call)."""
        return self._running

    @property
    def listeners(self) -> tuple[Listener, ...]:
        return self._listeners.functions

    def add_listener(self, fn: Listener, every: float = VIEW_INTERVAL) -> None:
        """Call ``fn(report)`` from the loop's thread with the report as it stands (``report.active`` False
        at the end), at most once per ``every`` seconds while the loop runs: after a step ends, after a
        compile, recompile or graph-break record; and always once when the watch ends. ``every=0``: after
        each of those events. A listener that raises is removed and its error kept in ``notes``."""
        self._listeners.add(fn, every)

    def remove_listener(self, fn: Listener) -> None:
        """Stop calling ``fn`` (nothing happens when it was not added)."""
        self._listeners.remove(fn)

    def _notify(self) -> None:
        removed = self._listeners.tell(self.report, self._running)
        if removed:
            self.notes += removed
            self._changed()

    # --- renderings ----------------------------------------------------------------------------
    def __rich__(self) -> Any:
        return slots.rich_of(self.report())

    def _repr_html_(self) -> str:
        return slots.html_of(self.report())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """A notebook shows the live watch widget (a view explorer fills the ``watch_widget`` slot with: a
        listener, so displayed inside the loop it follows it), else the HTML report."""
        bundle = slots.widget_bundle(slots.watch_widget, lambda: self, include, exclude, "text/html",
                                     self._repr_html_)
        return bundle if bundle is not None else {"text/plain": repr(self), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        return repr(self.report())

    def __str__(self) -> str:
        return str(self.report())

    # --- the hooks ---------------------------------------------------------------------------
    def _activate(self) -> None:
        if watch_hooks.active() is not None:
            raise RuntimeError("explorer.watch: a watch is already active; watches do not nest (end the outer "
                               "one first, or mark steps of the outer one with w.step())")
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(watch_hooks.counting_graphs(self._sink))
            if self._earlier is None:
                self._earlier = watch_earlier.earlier_graphs()
            stack.enter_context(watch_earlier.counting_earlier(self._earlier))
            self._sink.on_first_call = self._kept.keep if self._kept is not None else None
            if self._clock.rule is StepRule.COMPILED_CALL:
                self._sink.on_call = self._on_graph_call
            if self._clock.rule in (StepRule.COMPILED_CALL, StepRule.OPTIMIZER):
                stack.enter_context(optimizer_steps.on_optimizer_steps(self._on_optimizer_step))
            stack.enter_context(compile_warnings.logged_kept(self._on_torch_warning))
            stack.enter_context(self._cudagraphs.observing())
            stack.enter_context(structured_trace.on_trace_records(self._on_record, reads=WATCH_READS,
                                                                  payloads=PAYLOADS))
        except BaseException:
            stack.close()
            raise
        self._hooks = stack
        self._running = True

    def _deactivate(self) -> None:
        was_running, self._running = self._running, False
        self._sink.on_call = None
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            hooks.close()
        if was_running:
            self._changed()

    def _on_record(self, record: Any) -> None:
        if record.name not in WATCH_READS:  # with a TORCH_TRACE log written, every record comes: ours too
            return
        cid = record.compile_id
        if cid and not self._run.knows(cid) and self._clock.counts_compile(cid):
            self._next_step()  # the outermost frame recompiles: its call begins a step before its graph runs
        self._run.add(record, self._clock.index, watch_hooks.failed_value)
        self._changed()
        if self._listeners and record.name in NOTIFYING:
            self._notify()

    def _on_graph_call(self, frame_id: str, compile_id: str) -> None:
        if self._clock.counts_call(frame_id, compile_id):
            self._next_step()

    def _on_optimizer_step(self, optimizer: Any) -> None:
        self._take(StepRule.OPTIMIZER)
        if self._clock.counts_optimizer(optimizer):
            self._next_step()
            self._clock.tail = True

    def _on_torch_warning(self, kind: str, where: str, message: str) -> None:
        note = f"{kind} from {where}: {message}"
        if note not in self.notes:  # a warning may repeat at each recompile
            self.notes.append(note)
            self._changed()

    # --- steps -------------------------------------------------------------------------------
    def __enter__(self) -> "Watch":
        self._activate()
        display = watch_live.display(self._live)
        if display is not None and self._hooks is not None:
            self.add_listener(display)
            self._hooks.callback(self.remove_listener, display)
            self._hooks.callback(display.close)
        self._started = time.perf_counter()
        self._clock.begin()
        return self

    def __exit__(self, kind: Any, error: BaseException | None, _tb: Any) -> bool:
        try:
            if error is not None:
                self.error = f"{type(error).__name__}: {error}"
                self.notes.append(f"the loop raised {self.error} in step {self._clock.index}; what ran before is kept")
            self._close_step(final=True)
            if self._started is not None:
                self._seconds += time.perf_counter() - self._started
            self._running = False
            self._changed()
            if self._listeners:
                self._notify()  # the end: listeners see ``active`` False
        finally:
            self._deactivate()
        return False

    def step(self) -> None:
        """End the current step and begin the next (call it once per step, at its end). The step begun
        by the last call is dropped at the watch's end when nothing ran in it."""
        if not self._clock.is_open:
            raise RuntimeError("w.step() marks steps inside `with explorer.watch() as w:`; this watch has ended")
        self._take(StepRule.MARKED)
        self._next_step()
        self._clock.tail = True

    def steps_of(self, iterable: Iterable[T]) -> Iterator[T]:
        """``for batch in w.steps_of(loader)``: each item is one step (its fetch included)."""
        for number, item in enumerate(iterable):
            if not self._clock.is_open:
                raise RuntimeError("w.steps_of() marks steps inside `with explorer.watch() as w:`; this watch "
                                   "has ended")
            if number:
                self._next_step()
            else:
                self._take(StepRule.MARKED)
            yield item

    @contextlib.contextmanager
    def calling(self) -> Iterator[None]:
        """One call of a watched function (``explorer.watch(fn)``): the hooks active during it, and the call
        one step."""
        self._activate()
        started = time.perf_counter()
        self._clock.begin()
        try:
            yield
        except BaseException as error:
            self.error = f"{type(error).__name__}: {error}"
            raise
        finally:
            self._close_step()
            self._clock.index += 1
            self._seconds += time.perf_counter() - started
            self._deactivate()

    def _take(self, rule: StepRule) -> None:
        """``rule`` makes the steps from now on if it is stronger than the one that made them so far; those
        steps are folded into step 0, and so are the compiles in them (written again into a log)."""
        if not self._clock.takes_over(rule):
            return
        if rule is not StepRule.COMPILED_CALL:
            self._sink.on_call = None
        self._run.all_began_in(0)
        self._cudagraphs.all_in(0)
        self._steps.clear()
        self._marked = 0
        self._changed()

    def _next_step(self) -> None:
        self._close_step()
        self._clock.reopen()

    def _close_step(self, final: bool = False) -> None:
        """Close the open step (the empty one after the last end mark is dropped at the end), write the step
        of the compiles it began into a TORCH_TRACE log being written, and tell the listeners."""
        drop = final and self.error is None and self._clock.index not in self._run.steps.values()
        if not self._clock.end(drop_if_empty=drop):
            return
        self._changed()
        if len(self._run.order) > self._marked:
            self._mark_compiles()
        if self._listeners and not final:
            self._notify()

    def _mark_compiles(self) -> None:
        """Write which step the new compiles began in into the run's TORCH_TRACE log, if one is written,
        so that ``load_watch`` and ``load_trace(...).watch()`` place them (a step without compiles writes
        nothing; a mark read later wins over an earlier one for the same compile)."""
        marks: dict[int, list[str]] = {}
        for cid in self._run.order[self._marked:]:
            step = self._run.steps.get(cid)
            if step is not None:
                marks.setdefault(step, []).append(cid)
        self._marked = len(self._run.order)
        for step, compile_ids in marks.items():
            watch_hooks.log_step_mark(step, compile_ids, self._clock.rule.value)


class WatchedFunction:
    """``explorer.watch(fn)``: ``fn`` whose every call is one step of ``.watch`` (hooks active only during calls)."""

    def __init__(self, fn: Callable[..., Any], watch: Watch) -> None:
        self.fn = fn
        self.watch = watch
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.watch.calling():
            return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"watched {getattr(self.fn, '__name__', 'function')}: {self.watch!r}"


def watch(fn: Callable[..., Any] | None = None, *, sample_every: int = 8, keep_graphs: bool = True,
          live: Any = None) -> Any:
    """``with explorer.watch() as w:`` around a loop, or ``explorer.watch(fn)``: ``fn`` with each call a
    step, its report at ``.watch``. In a loop, steps are what the loop marks (``w.step()`` at each step's
    end, or ``for b in w.steps_of(loader)``), else one per optimizer ``step()``, else one per call of the
    outermost compiled frame (``w.step_rule`` says which).

    ``sample_every``: one call in this many of each compiled graph is timed (all are counted).
    ``keep_graphs``: keep each compiled graph and its first inputs' layout, so that
    ``w.compiles[i].compilation()`` can capture it in full when asked.
    ``live``: draw a summary in the terminal while the loop runs (compiler/pipeline/watch_live.py): None
    (the default) when stdout is a terminal outside a notebook, True, False, or the rich Console to draw
    on. A watched function never ends, so it draws none: ``live`` must stay None or False there."""
    if fn is not None:
        if live:
            raise ValueError("explorer.watch(fn) draws no live summary (its watch never ends); use "
                             "`with explorer.watch(live=True) as w:` around the loop")
        name = getattr(fn, "__name__", "a function")
        return WatchedFunction(fn, Watch(sample_every, keep_graphs, False, source=f"calls of {name}",
                                         rule=StepRule.CALL))
    return Watch(sample_every, keep_graphs, live)
