"""``explorer.watch()``: what torch.compile does over the steps of a loop; ``load_watch``: the same from a
run's TORCH_TRACE log.

Three sources, none of them per-step work for Python:

- Dynamo's structured trace records (compiler/_torch/structured_trace.py), emitted only while something
  compiles: each compile's start, guards, recompile reasons, graph breaks, metrics and cache hits and
  misses. They are read by the Dynamo stage's own reader (``dynamo_records.DynamoRecords``), so a watch
  and a capture say the same thing of the same compile.
- Each compiled graph's calls, counted by a wrapper Dynamo calls instead of the graph
  (compiler/_torch/watch_hooks.py): one integer per call, one call in ``sample_every`` timed.
- The steps, which the watch cannot guess: the user marks them, with ``w.step()`` at the end of each
  step, or by iterating ``w.steps_of(loader)``; ``explorer.watch(fn)`` makes each call of ``fn`` a step.
  Without marks the whole block is one step.

Listeners (``w.add_listener(fn)``) are how a live view follows the run without polling it: ``fn(w)`` is
called from the loop's own thread when a step ends, when a compile, recompile or graph break is recorded,
and once when the watch ends (``w.active`` is False then). The terminal's live summary
(compiler/pipeline/watch_live.py) is one of them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

from .._torch import structured_trace, watch_earlier, watch_hooks
from ..model.dynamo import DynamoStage, Guard
from ..model.errors import TraceLoadError
from ..model.trace_log import LogProblems, Record, read_records
from ..model.watch import STEP_MARK, BreakCount, CompileEvent, FrameStats, Step, WatchReport
from . import frames, watch_live
from .watch_cudagraphs import CudaGraphWatch
from .dynamo_records import PAYLOADS, READS, DynamoRecords

T = TypeVar("T")

# the cache artifacts torch logs per compile (FX graph cache, AOTAutograd cache): name -> (cache, state)
CACHE_RECORDS: dict[str, tuple[str, str]] = {
    f"{prefix}_{state}": (cache, state)
    for prefix, cache in (("fx_graph_cache", "fx_graph"), ("aotautograd_cache", "aotautograd"))
    for state in ("hit", "miss", "bypass")
}
WATCH_READS = READS | frozenset(CACHE_RECORDS)
# the records after which listeners are told (a compile began or ended, a recompile's reasons, a break)
NOTIFYING = frozenset({"dynamo_start", "recompile_reasons", "dynamo_graph_break_reason", "compilation_metrics"})

_REASON = re.compile(r"^(?P<cid>[!\d/_]+): (?P<text>.*)$", re.S)
_ACTUAL = re.compile(r"expected (?P<expected>.+?), actual (?P<actual>[^\s.,;]+(?:\.\d+)?)")
_TENSOR = re.compile(r"^tensor '(?P<name>[^']+)'")
_COMPARED = re.compile(r"^(?P<lhs>.+?) (?:==|!=|is not|is|<=|>=|<|>) (?P<rhs>.+)$")
_USER_STACK = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_SOURCE_NAME = re.compile(r"\b[LG]\['([^']+)'\]")


def _plain(code: str) -> str:
    """Dynamo's guard code with its sources written as its reasons write them (``L['self'].n`` -> ``self.n``)."""
    return " ".join(_SOURCE_NAME.sub(r"\1", code).split())


def _split_reason(reason: str) -> tuple[str | None, str]:
    """``"0/0: self.n == 1  # line  # file:7 in f\\nUser stack..."`` -> ("0/0", "self.n == 1")."""
    match = _REASON.match(reason.strip())
    cid, text = (match["cid"], match["text"]) if match else (None, reason.strip())
    return cid, text.splitlines()[0].split("  # ")[0].strip() if text else ""


def reason_value(reason: str, read: Callable[[str], str | None] = lambda _: None) -> str | None:
    """The value that broke the guard: Dynamo's own ``actual ...`` when it says it, else the guarded
    expression read by ``read`` (the frame being recompiled, live only)."""
    actual = _ACTUAL.search(reason)
    if actual:
        return actual["actual"]
    _, code = _split_reason(reason)
    compared = _COMPARED.match(code)
    return read(compared["lhs"]) if compared else None


class RunRecords:
    """Every record of a run that a watch reads, and the step each compile began in."""

    def __init__(self) -> None:
        self.dynamo = DynamoRecords(structured_trace.interned_filenames())
        self.order: list[str] = []  # compile ids, in the order they began
        self.steps: dict[str, int | None] = {}
        self.cache: dict[str, dict[str, str]] = {}
        self.values: dict[str, str | None] = {}
        self.changed = False

    def add(self, record: Record, step: int | None, read_value: Callable[[str], str | None] | None = None) -> None:
        cid = record.compile_id
        if cid is not None and cid not in self.steps:
            self.steps[cid] = step
            self.order.append(cid)
        if record.name == STEP_MARK:
            self._place(record.payload)
            return
        cached = CACHE_RECORDS.get(record.name)
        if cached is not None and cid is not None:
            self.cache.setdefault(cid, {})[cached[0]] = cached[1]
        if record.name in READS:
            self.dynamo.add(record)
            if record.name == "recompile_reasons" and cid is not None and read_value is not None:
                reasons = self.dynamo.frames[cid].recompile_reasons if cid in self.dynamo.frames else []
                self.values[cid] = next((v for v in (reason_value(r, read_value) for r in reasons) if v), None)
        self.changed = True

    def _place(self, payload: str | None) -> None:
        """A step mark read back from a log (watch_hooks.log_step_mark): the step its compiles began in."""
        try:
            mark = json.loads(payload or "")
            step, compile_ids = int(mark["step"]), [str(c) for c in mark["compile_ids"]]
        except (ValueError, KeyError, TypeError):
            return
        for cid in compile_ids:
            if cid not in self.steps:
                self.order.append(cid)
            self.steps[cid] = step
        self.changed = True

    # --- the report's parts ------------------------------------------------------------------
    def compiles(self, stage: DynamoStage) -> list[CompileEvent]:
        metrics = {m.compile_id: m for m in stage.compile_metrics if m.kind == "frame"}
        recompiles = {r.compile_id: r.reasons for r in stage.recompiles}
        frames = {f.compile_id: f for f in stage.frames}
        events: list[CompileEvent] = []
        for cid in self.order:
            frame = frames.get(cid)
            if frame is None:
                continue
            reasons = recompiles.get(cid, [])
            failed = _failed_guard(reasons, stage.guards) if reasons else None
            guard_line = _user_line(failed, reasons, frame) if reasons else None
            value = self.values.get(cid)
            if value is None and reasons:
                value = reason_value(reasons[0])
            events.append(CompileEvent(
                compile_id=cid, function=frame.function, filename=frame.filename, function_line=frame.line,
                step=self.steps.get(cid), seconds=metrics[cid].seconds if cid in metrics else 0.0,
                reasons=list(reasons), guard=failed, guard_line=guard_line, value=value,
                cache=dict(self.cache.get(cid, {})),
                graph_breaks=[b for b in stage.graph_breaks if b.compile_id == cid], skipped=frame.skipped))
        return events


def _failed_guard(reasons: list[str], guards: list[Guard]) -> Guard | None:
    """The guard of the earlier compile that the first reason names."""
    for reason in reasons:
        cid, code = _split_reason(reason)
        earlier = [g for g in guards if cid is None or g.compile_id == cid]
        tensor = _TENSOR.match(code)
        if tensor:
            match = next((g for g in earlier if g.kind == "TENSOR_MATCH" and g.source
                          and _plain(g.source) == tensor["name"]), None)
        else:
            match = next((g for g in earlier if _plain(g.code) == _plain(code)), None)
        if match is not None:
            return match
    return None


def _user_line(failed: Guard | None, reasons: list[str], frame: Any) -> tuple[str, int] | None:
    """Where the failed guard came from, in the user's code: the guard's own line when it is the user's;
    when it is a library's (a tensor first used inside ``nn.Linear.forward``), the innermost user frame of
    the reason's ``User stack trace``, else the recompiled function itself (frames.best_line's rule)."""
    stack: list[tuple[str, int, str]] = []
    if frame.filename and frame.line:
        stack.append((frame.filename, frame.line, frame.function))
    for reason in reasons[:1]:
        stack += [(file, int(line), "") for file, line in _USER_STACK.findall(reason)]
    if failed is not None and failed.user_line:
        stack.append((failed.user_line[0], failed.user_line[1], ""))
    return frames.best_line(stack)


def _break_counts(stage: DynamoStage, calls: dict[str, int]) -> list[BreakCount]:
    """Each distinct break (user line and reason), fired once per call of the graph before it (or, when
    nothing was compiled before it, of the graph that resumes after it)."""
    merged: dict[tuple[Any, str], BreakCount] = {}
    for graph_break in stage.graph_breaks:
        cid = graph_break.compile_id or ""
        fired = calls.get(cid, 0) or (calls.get(graph_break.resume, 0) if graph_break.resume else 0)
        key = (graph_break.user_line, graph_break.reason)
        entry = merged.get(key)
        if entry is None:
            file, line = graph_break.user_line if graph_break.user_line else (None, None)
            function = graph_break.stack[-1][2] if graph_break.stack else ""
            entry = merged[key] = BreakCount(graph_break.reason, file, line, 0, function, [], graph_break)
        entry.count += fired
        if cid not in entry.compile_ids:
            entry.compile_ids.append(cid)
    return list(merged.values())


EARLIER_REASON = "(compiled before the watch began: Dynamo gave its reason then)"


def _earlier_breaks(found: list[BreakCount], earlier: list[watch_earlier.EarlierGraph],
                    calls: dict[str, int]) -> list[BreakCount]:
    """``found`` with the breaks after graphs compiled before the watch began that fired during it: added
    to the break the watch saw at the same line, else one entry each, whose reason is unknown (Dynamo
    logged it before the watch listened)."""
    at_line = {(b.filename, b.line): b for b in found}
    for graph in earlier:
        if graph.resume is None:
            continue
        _, filename, line = graph.resume
        fired = calls.get(graph.compile_id, 0) if graph.graph else sum(calls.get(c, 0) for c in graph.resume_ids)
        entry = at_line.get((filename, line))
        if entry is None:
            if not fired:
                continue
            entry = at_line[(filename, line)] = BreakCount(EARLIER_REASON, filename, line, 0, graph.function)
            found.append(entry)
        entry.count += fired
        if graph.compile_id not in entry.compile_ids:
            entry.compile_ids.append(graph.compile_id)
    return found


def _frames(events: list[CompileEvent], graphs: dict[str, watch_hooks.GraphCalls],
            breaks: list[BreakCount]) -> list[FrameStats]:
    frames: dict[str, FrameStats] = {}

    def frame_of(cid: str, function: str, filename: str | None, line: int | None) -> FrameStats:
        frame_id = cid.split("/")[0]
        stats = frames.get(frame_id)
        if stats is None:
            stats = frames[frame_id] = FrameStats(frame_id, function, filename, line)
        if cid not in stats.compile_ids:
            stats.compile_ids.append(cid)
        return stats

    for event in events:
        stats = frame_of(event.compile_id, event.function, event.filename, event.function_line)
        stats.recompiles += event.is_recompile
    for cid, graph in graphs.items():
        stats = frame_of(cid, graph.function, graph.filename, graph.line)
        stats.calls += graph.calls
        stats.timed_calls += graph.timed
        stats.timed_seconds += graph.seconds
    for entry in breaks:
        for cid in entry.compile_ids:
            frame = frames.get(cid.split("/")[0])
            if frame is not None:
                frame.graph_breaks += 1
                break
    return list(frames.values())


# ------------------------------------------------------------------------------------------ live


class Watch(WatchReport):
    """A live watch: ``with explorer.watch() as w:`` around a loop. See the module's docstring for steps."""

    def __init__(self, sample_every: int = 8, keep_graphs: bool = True, live: Any = False) -> None:
        super().__init__(source="live", sample_every=max(1, int(sample_every)))
        self._live = live
        self._run = RunRecords()
        self._sink = watch_hooks.Sink(self.sample_every)
        self._keep_graphs = keep_graphs
        self._graphs_kept: dict[str, tuple[Any, list[Any]]] = {}
        self._hooks: contextlib.ExitStack | None = None
        self._step = 0
        self._step_start: float | None = None
        self._seen: dict[str, int] = {}  # compile id -> its calls when the open step began
        self._ended = 0.0
        self._raw_steps: list[tuple[int, float, dict[str, int]]] = []
        self._stale = False
        self._tail = False  # the open step was begun by w.step(): it may be the empty one after the last
        self._started: float | None = None
        self._listeners: tuple[Callable[[Watch], None], ...] = ()  # a tuple: replaced, never mutated
        self._running = False
        self._marked = 0  # compiles already written as step marks into a TORCH_TRACE log
        self._earlier: list[watch_earlier.EarlierGraph] | None = None  # graphs compiled before the watch began
        self._cudagraph_watch = CudaGraphWatch(lambda: self._step)  # the CUDA graph tree's events, per step

    # --- listeners ---------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """True while the watch is running (between ``__enter__`` and ``__exit__``, or inside a watched call)."""
        return self._running

    def add_listener(self, fn: Callable[[Watch], None]) -> None:
        """Call ``fn(watch)`` from the loop's thread after each step ends, after each compile, recompile
        and graph-break record, and once when the watch ends (``watch.active`` is False then). A listener
        that raises is removed and its error kept in ``notes``; the loop goes on."""
        if fn not in self._listeners:
            self._listeners = (*self._listeners, fn)

    def remove_listener(self, fn: Callable[[Watch], None]) -> None:
        """Stop calling ``fn`` (nothing happens when it was not added)."""
        self._listeners = tuple(f for f in self._listeners if f is not fn and f != fn)

    def _notify(self) -> None:
        for fn in self._listeners:
            try:
                fn(self)
            except Exception as error:  # a view's fault never stops the user's loop
                self.remove_listener(fn)
                name = getattr(fn, "__qualname__", None) or type(fn).__name__
                self.notes.append(f"listener {name} raised {type(error).__name__}: {error}; it was removed")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """A notebook shows the live watch widget (widgets/watch_widget.py, a listener: displayed inside the loop
        it follows it), else the HTML report. The widgets room sits above: it is named, never imported here."""
        import importlib

        from ..model import slots

        bundle = slots.widget_bundle(lambda view: importlib.import_module("widgets.watch_widget").WatchWidget(view()),
                                     lambda: self, include, exclude, "text/html", lambda: slots.html_of(self))
        return bundle if bundle is not None else {"text/plain": repr(self), "text/html": slots.html_of(self)}

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
            stack.enter_context(self._cudagraph_watch.observing())
            self._sink.on_first_call = self._keep if self._keep_graphs else None
            stack.enter_context(structured_trace.on_trace_records(self._on_record, reads=WATCH_READS,
                                                                  payloads=PAYLOADS))
        except BaseException:
            stack.close()
            raise
        self._hooks = stack
        self._running = True

    def _deactivate(self) -> None:
        self._running = False
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            hooks.close()

    def _on_record(self, record: Record) -> None:
        self._run.add(record, self._step, watch_hooks.failed_value)
        if self._listeners and record.name in NOTIFYING:
            self._notify()

    def _keep(self, compile_id: str, graph_module: Any, args: tuple[Any, ...]) -> None:
        if compile_id not in self._graphs_kept and graph_module is not None:
            self._graphs_kept[compile_id] = (graph_module, [_spec_of(a) for a in args])

    # --- steps -------------------------------------------------------------------------------
    def __enter__(self) -> "Watch":
        self._activate()
        display = watch_live.display(self._live)
        if display is not None and self._hooks is not None:
            self.add_listener(display)
            self._hooks.callback(self.remove_listener, display)
            self._hooks.callback(display.close)
        self._started = time.perf_counter()
        self._begin_step()
        return self

    def __exit__(self, kind: Any, error: BaseException | None, _tb: Any) -> bool:
        try:
            if error is not None:
                self.error = f"{type(error).__name__}: {error}"
                self.notes.append(f"the loop raised {self.error} in step {self._step}; what ran before is kept")
            self._end_step(final=True)
            if self._started is not None:
                self.seconds += time.perf_counter() - self._started
            self._running = False
            if self._listeners:
                self._notify()  # the end: listeners see ``active`` False
        finally:
            self._deactivate()
        return False

    def step(self) -> None:
        """End the current step and begin the next (call it once per step, at its end). The step begun
        by the last call is dropped at the watch's end when nothing ran in it."""
        if self._step_start is None:
            raise RuntimeError("w.step() marks steps inside `with explorer.watch() as w:`; this watch has ended")
        self._next_step()
        self._tail = True

    def steps_of(self, iterable: Iterable[T]) -> Iterator[T]:
        """``for batch in w.steps_of(loader)``: each item is one step (its fetch included)."""
        for number, item in enumerate(iterable):
            if number:
                self._next_step()
            yield item

    def _next_step(self) -> None:
        self._end_step()
        self._step += 1
        self._step_start = self._ended  # the next step begins where this one ended: one clock read
        self._tail = False

    def _begin_step(self) -> None:
        self._seen = {cid: g.calls for cid, g in self._sink.graphs.items()}
        self._step_start = time.perf_counter()

    def _end_step(self, final: bool = False) -> None:
        """Close the open step: its time and each graph's calls in it, kept raw (Step objects and the
        report are made when read: a step mark costs a few dict reads, benchmarks/watch_cost.py)."""
        if self._step_start is None:
            return
        self._ended = time.perf_counter()
        seconds = self._ended - self._step_start
        self._step_start = None
        seen, now, calls = self._seen, {}, {}
        for cid, graph in self._sink.graphs.items():
            total = now[cid] = graph.calls
            ran = total - seen.get(cid, 0)
            if ran:
                calls[cid] = ran
        self._seen = now
        if (final and self._tail and not calls and self.error is None
                and self._step not in self._run.steps.values()):
            return  # the empty step begun by the last w.step()
        self._raw_steps.append((self._step, seconds, calls))
        self._stale = True
        if len(self._run.order) > self._marked:
            self._mark_compiles()
        if self._listeners and not final:
            self._notify()

    def _mark_compiles(self) -> None:
        """Write which step the new compiles began in into the run's TORCH_TRACE log, if one is written,
        so that ``load_watch`` and ``load_trace(...).watch()`` place them (a step without compiles writes nothing)."""
        marks: dict[int, list[str]] = {}
        for cid in self._run.order[self._marked:]:
            step = self._run.steps.get(cid)
            if step is not None:
                marks.setdefault(step, []).append(cid)
        self._marked = len(self._run.order)
        for step, compile_ids in marks.items():
            watch_hooks.log_step_mark(step, compile_ids)

    # --- the report, brought up to date when read ----------------------------------------------
    def refresh(self) -> None:
        """Bring ``steps``, ``compiles``, ``graph_breaks`` and ``frames`` up to date (done when read)."""
        self._stale = False
        graphs = self._sink.graphs
        if self._run.changed:
            self._run.changed = False
            self._stage = self._run.dynamo.stage({})
            compiles = self._run.compiles(self._stage)
            for event in compiles:
                if event.compile_id in self._graphs_kept:
                    event._capture = functools.partial(_capture_kept, self._graphs_kept, event.compile_id)
            self.__dict__["_compiles"] = compiles
        steps = self.__dict__["_steps"]
        by_step: dict[Any, list[str]] = {}
        for cid in self._run.order:
            by_step.setdefault(self._run.steps.get(cid), []).append(cid)
        for index, seconds, calls in self._raw_steps[len(steps):]:
            means = {cid: graphs[cid].seconds / graphs[cid].timed if graphs[cid].timed else 0.0 for cid in calls}
            steps.append(Step(index, seconds, calls, {cid: means[cid] * n for cid, n in calls.items()},
                              by_step.get(index, [])))
        stage = getattr(self, "_stage", None)
        calls = {c: g.calls for c, g in graphs.items()}
        found = _break_counts(stage, calls) if stage is not None else []
        self.__dict__["_graph_breaks"] = _earlier_breaks(found, self._earlier or [], calls)
        self.__dict__["_frames"] = _frames(self.__dict__["_compiles"], graphs, self.__dict__["_graph_breaks"])
        self._cudagraph_watch.annotate(self.__dict__["_frames"])
        self.__dict__["_cudagraph_events"] = list(self._cudagraph_watch.events)


def _current(name: str) -> property:
    """A report field of the live watch: stored as ``_<name>``, brought up to date when read."""

    def get(self: Watch) -> Any:
        if self.__dict__.get("_stale") or (self.__dict__.get("_run") is not None and self._run.changed):
            self.refresh()
        return self.__dict__["_" + name]

    def set(self: Watch, value: Any) -> None:
        self.__dict__["_" + name] = value

    return property(get, set)


for _name in ("steps", "compiles", "graph_breaks", "frames", "cudagraph_events"):
    setattr(Watch, _name, _current(_name))


def _spec_of(value: Any) -> Any:
    """What a graph input looked like (a tensor's layout, not its data), to make one like it later."""
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), value.dtype, str(value.device),
                value.requires_grad)
    return ("value", value)


def _made(spec: Any) -> Any:
    import torch

    if spec[0] != "tensor":
        return spec[1]
    _, shape, stride, dtype, device, grad = spec
    tensor = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    if dtype.is_floating_point or dtype.is_complex:
        tensor.normal_()
    elif dtype == torch.bool:
        tensor.random_(0, 2)
    else:
        tensor.random_(0, 8)
    return tensor.requires_grad_(grad) if grad and (dtype.is_floating_point or dtype.is_complex) else tensor


def _capture_kept(kept: dict[str, tuple[Any, list[Any]]], compile_id: str) -> Any:
    """A full capture of the graph Dynamo compiled for ``compile_id``, on inputs laid out like its first call's."""
    from .capture import capture

    graph_module, specs = kept[compile_id]
    return capture(graph_module, *[_made(s) for s in specs])


class WatchedFunction:
    """``explorer.watch(fn)``: ``fn`` whose every call is one step of ``.watch`` (hooks active only during calls)."""

    def __init__(self, fn: Callable[..., Any], watch: Watch) -> None:
        self.fn = fn
        self.watch = watch
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        w = self.watch
        w._activate()
        started = time.perf_counter()
        w._begin_step()
        try:
            return self.fn(*args, **kwargs)
        except BaseException as error:
            w.error = f"{type(error).__name__}: {error}"
            raise
        finally:
            w._end_step()
            w._step += 1
            w.seconds += time.perf_counter() - started
            w._deactivate()

    def __repr__(self) -> str:
        return f"watched {getattr(self.fn, '__name__', 'function')}: {self.watch!r}"


def watch(fn: Callable[..., Any] | None = None, *, sample_every: int = 8, keep_graphs: bool = True,
          live: Any = None) -> Any:
    """``with explorer.watch() as w:`` around a loop (mark steps with ``w.step()`` or ``w.steps_of(it)``),
    or ``explorer.watch(fn)``: ``fn`` with each call a step, its report at ``.watch``.

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
        return WatchedFunction(fn, Watch(sample_every, keep_graphs, False))
    return Watch(sample_every, keep_graphs, live)


# ------------------------------------------------------------------------------------------ logs


def load_watch(path: str | Path, rank: int | None = None) -> WatchReport:
    """The watch report of a run's TORCH_TRACE log (a directory with one log per rank, or one log):
    compiles, recompiles with their reasons and failed guards, graph breaks, cache hits and misses. A log
    has no call counts (``steps`` is empty, breaks count the compiles that hit them); a compile's ``step``
    is known when the run was watched (the watch marks steps in the log), else None."""
    from .trace_import import find_logs, rank_in_name

    logs = find_logs(path)
    if len(logs) > 1:
        ranks = {rank_in_name(log): log for log in logs}
        if rank is None or rank not in ranks:
            raise TraceLoadError(f"{path} holds {len(logs)} logs (ranks {sorted(ranks, key=str)}): pick one with "
                                 "load_watch(path, rank=N)")
        log = ranks[rank]
    else:
        log = logs[0]
    return watch_of_log(log)


def watch_of_log(log: str | Path, index: Any = None) -> WatchReport:
    """The watch report of one TORCH_TRACE log; ``index``: its LogIndex when already read (a TraceSet's),
    else it is read when a compile's ``compilation()`` is first asked for."""
    from .trace_import import compilation_from_log, index_log

    run = RunRecords()
    run.dynamo = DynamoRecords()
    problems = LogProblems()
    reads, payloads = WATCH_READS | {STEP_MARK}, PAYLOADS | {STEP_MARK}
    with open(log, "rb") as stream:
        for record, _ in read_records(stream, problems, wants_payload=lambda r: r.name in payloads):
            if record.name in reads:
                run.add(record, None)
    stage = run.dynamo.stage({})
    report = WatchReport(source=str(log))
    report.compiles = run.compiles(stage)
    indexes: list[Any] = [index] if index is not None else []

    def from_log(compile_id: str) -> Any:
        if not indexes:
            indexes.append(index_log(Path(log)))
        return compilation_from_log(indexes[0], compile_id)

    for event in report.compiles:
        event._capture = functools.partial(from_log, event.compile_id)
    report.graph_breaks = _break_counts(stage, {e.compile_id: 1 for e in report.compiles})
    report.frames = _frames(report.compiles, {}, report.graph_breaks)
    report.notes += problems.messages()
    return report
