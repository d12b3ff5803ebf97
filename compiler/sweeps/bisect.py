"""``explorer.bisect(fn, *inputs, check=...)``: from "the compiled program differs from eager" to the culprit.

1. The program runs eagerly once and compiled once (Inductor, as configured); if the check passes, the
   result says so, with the tolerance and the measured error, and nothing is bisected.
2. torch's ``CompilerBisector`` (compiler/_torch/compiler_bisect.py) runs the program again and again: the first
   failing backend, its failing subsystem (pre/joint/post-grad passes, decompositions, lowerings, cudagraphs,
   or a config change such as fallback_random) and the n-th application of it that breaks the program.
3. A config that avoids it is tried once: a config change the bisector found, or ``disabled_passes`` naming
   the pass it blamed; it is reported only if that trial matches.
4. When the backend is Inductor, the program is captured (``explorer.compile``) and its fused groups (of
   several scheduler nodes) are kept apart, all at once first: if that does not make it match, no fusion is
   the culprit; if it does, halves are bisected (O(log n) compiles, compiler/_torch/fusion_edits.py, the
   machinery of ``c.what_if``) down to one group, which names the kernel and the user's lines.

With ``check="slower"`` and a baseline (a config or a saved trace) the question is a slowdown instead: the
baseline is timed, then the settings where it differs from the current config are halved down to the one that
brings the time back (compiler/sweeps/bisect_slower.py), else torch's bisector looks inside Inductor.

Trials run in this process by default, or in worker processes (``workers=``) or Ray tasks, where a crash or a
hang is a trial result (compiler/sweeps/bisect_pool.py); the check always runs here. Every trial runs on clones
of the inputs, under the same seed (eager too), with Inductor's caches off for the trial, compiling a private
copy of the entry function (compiler/sweeps/bisect_program.py); the user's other compiled functions are not
reset (no ``torch._dynamo.reset()``). Afterwards torch's config, the bisector's state, the RNG state, a
module's parameters and buffers, and ``sys.stdout`` / ``sys.stderr`` are as they were, also when something raised.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from typing import Any, Callable, Iterator, Mapping

import torch

from .._torch import compiler_bisect, inductor_config
from ..model import progress
from ..model.bisect import CHECK_RAISED, DIVERGES, MATCHES, UNAVAILABLE, BisectResult, FusionCulprit, Trial
from ..model.numerics import BufferCheck
from ..model.setting_changes import setting_changes
from ..model.what_if import FusionEdit, WhatIfError, unfuse_edit
from ..pipeline.capture import capture
from ..runs import numerics, replay
from . import bisect_pool, bisect_slower
from .bisect_program import Program, Timing, TrialOutput, TrialSpec

Check = Callable[[Any, Any], bool]
# subsystems whose blamed application is a named pass that ``disabled_passes`` turns off
_PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")


class _Stop(Exception):
    """The user's check raised: the search stops there (its text is all that is kept)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _name(target: Any) -> str:
    target = getattr(target, "_orig_mod", None) or target
    if isinstance(target, torch.nn.Module):
        return type(target).__name__
    return getattr(target, "__qualname__", None) or repr(target)


# ------------------------------------------------------------------------------------------ judging


def _tolerance_text() -> str:
    rows = [f"{str(dtype).removeprefix('torch.')} {rtol:g}/{atol:g}" for dtype, (rtol, atol) in numerics.TOLERANCES.items()]
    return "rtol/atol per dtype: " + ", ".join(rows) + "; integer and bool outputs equal"


def _matches_eager(rtol: float | None, atol: float | None) -> Callable[[Any, Any], tuple[bool, str]]:
    """The default check: every output tensor within the numerics tolerance of eager (c.check_numerics')."""

    def judge(compiled: Any, eager: Any) -> tuple[bool, str]:
        got, want = replay.flat_tensors(compiled), replay.flat_tensors(eager)
        if len(got) != len(want):
            return False, f"the compiled program returned {len(got)} tensors, eager {len(want)}"
        ok, worst_abs, worst_rel, worst = True, 0.0, 0.0, ""
        for i, (a, b) in enumerate(zip(got, want)):
            check = BufferCheck(f"output {i}", None, 0)
            numerics.compare(check, a, b, rtol, atol)
            if not check.compared:
                return False, f"output {i}: {check.note}"
            ok = ok and bool(check.ok)
            if (check.max_abs or 0.0) >= worst_abs:
                worst_abs, worst_rel = check.max_abs or 0.0, check.max_rel or 0.0
                worst = (f"output {i} ({check.dtype}): max abs error {worst_abs:.3g}, max rel {worst_rel:.3g}, "
                         f"{(check.mismatched or 0.0):.1%} of elements outside rtol {check.rtol:g} / atol "
                         f"{check.atol:g}")
        return ok, worst or "no tensor outputs"

    return judge


def _user_check(check: Check) -> Callable[[Any, Any], tuple[bool, str]]:
    name = getattr(check, "__qualname__", None) or repr(check)

    def judge(compiled: Any, eager: Any) -> tuple[bool, str]:
        text = ""
        try:
            verdict = check(compiled, eager)
        except Exception as error:  # noqa: BLE001 - the user's check: reported, never blamed on the compiler
            text = f"{name} raised {type(error).__name__}: {error}\n" + "".join(traceback.format_exc(limit=-3))
        if text:
            raise _Stop(text)
        return bool(verdict), f"{name} returned {verdict!r}"

    return judge


class _Search:
    """The trials of one bisect, numbered, kept and shown as progress; where they run is ``runner``'s
    (compiler/sweeps/bisect_pool.py). ``judge`` says whether a trial's output is good."""

    def __init__(self, runner: Any, judge: Callable[[TrialOutput], tuple[bool, str]],
                 timing: Timing | None = None) -> None:
        self.runner, self.judge, self.timing = runner, judge, timing
        self.trials: list[Trial] = []

    @property
    def parallel(self) -> int:
        return self.runner.parallel

    def _spec(self, settings: Mapping[str, Any] | None, edits: tuple[FusionEdit, ...], bisector: bool) -> TrialSpec:
        return TrialSpec(dict(settings or {}), edits, bisector, self.timing)

    def _record(self, level: str, what: str, outcome: str, detail: str, started: float) -> None:
        self.trials.append(Trial(len(self.trials) + 1, level, what, outcome, detail, time.perf_counter() - started))

    def measure(self, level: str, what: str, settings: Mapping[str, Any] | None = None) -> TrialOutput:
        """A run that is not judged (the baseline of a slowdown): kept as a trial with outcome ``measured``."""
        started = time.perf_counter()
        progress.step(level, len(self.trials) + 1, None, what)
        out = self.runner.run([self._spec(settings, (), False)])[0]
        detail = out.crash or (f"{out.ms:.3g} ms per call" if out.ms is not None else "")
        self._record(level, what, "crashed" if out.crash else "measured", detail, started)
        return out

    def trial(self, level: str, what: str, settings: Mapping[str, Any] | None = None,
              edits: tuple[FusionEdit, ...] = (), bisector: bool = False) -> bool:
        """One compile and run; True when the check passes. A compile or run error counts as a failure."""
        return self.side_by_side([(level, what, settings, edits, bisector)])[0]

    def side_by_side(self, asked: list[tuple[str, str, Mapping[str, Any] | None, tuple[FusionEdit, ...], bool]]
                     ) -> list[bool]:
        """Several trials at once (as many as the runner runs in parallel), each judged and kept in order."""
        started = time.perf_counter()
        progress.step(asked[0][0], len(self.trials) + 1, None, " | ".join(what for _, what, *_ in asked))
        outs = self.runner.run([self._spec(settings, edits, bisector) for _, _, settings, edits, bisector in asked])
        verdicts = []
        for (level, what, *_), out in zip(asked, outs):
            if out.crash:
                self._record(level, what, "crashed", out.crash, started)
                verdicts.append(False)
                continue
            try:
                ok, detail = self.judge(out)
            except _Stop as stop:
                self._record(level, what, "check raised", stop.text.splitlines()[0], started)
                raise
            self._record(level, what, "good" if ok else "bad", detail, started)
            verdicts.append(ok)
        return verdicts


def _step_text(step: compiler_bisect.Step) -> str:
    if not step.subsystem:
        return f"backend {step.backend}"
    what = {"test_disable": "disabled", "find_max_bounds": "counting its applications"}.get(step.run_state or "", "")
    if step.run_state == "bisect" and step.low is not None and step.high is not None:
        what = f"applications 0..{(step.low + step.high) // 2} of {step.low}..{step.high}"
    return f"{step.backend} / {step.subsystem}" + (f": {what}" if what else "")


# ------------------------------------------------------------------------------------------ the levels


def _torch_level(search: _Search, result: BisectResult, only_backends: tuple[str, ...] | None = None) -> None:
    def trial() -> bool:
        return search.trial("torch bisector", _step_text(compiler_bisect.current_step()), bisector=True)

    outcome, log = compiler_bisect.bisected(trial, only_backends)
    result.log = log
    if outcome is None:
        result.notes.append("torch's bisector found every backend good this time: the failure did not repeat")
        return
    result.backend, result.subsystem = outcome.backend, outcome.subsystem
    kinds = {(s.backend, s.name): s for s in compiler_bisect.subsystems()}
    found = kinds.get((outcome.backend, outcome.subsystem or ""))
    result.subsystem_kind = found.kind if found is not None else None
    if found is not None and found.kind == "bisect":
        result.application, result.applied = outcome.bisect_number, outcome.debug_info
    if outcome.subsystem is None and outcome.backend == "inductor":
        result.notes.append("torch's bisector blames Inductor but no subsystem it can switch off")


def _avoiding_config(search: _Search, result: BisectResult) -> None:
    """Try the config that should avoid the culprit; keep it only if the program then matches."""
    found = {(s.backend, s.name): s for s in compiler_bisect.subsystems()}.get((result.backend or "", result.subsystem or ""))
    settings: dict[str, Any] = {}
    if found is not None and found.kind == "config" and found.config is not None:
        config_name, key, value = found.config
        if config_name == "inductor" and inductor_config.has_key(key):
            settings = {key: value}
        else:
            result.notes.append(f"the bisector's config change {config_name}: {key}={value!r} is not an Inductor "
                                "setting; it was not tried on its own")
    elif result.subsystem in _PASS_SUBSYSTEMS and result.applied and inductor_config.has_key("disabled_passes"):
        settings = {"disabled_passes": result.applied}
    if not settings:
        return
    label = ", ".join(f"{k}={v!r}" for k, v in settings.items())
    if search.trial("config", f"Inductor with {label}", settings):
        result.avoided_by, result.avoided_by_checked = settings, True
    else:
        result.notes.append(f"Inductor with {label} still differs from eager: no config found that avoids it")


def _fusion_level(search: _Search, result: BisectResult, c: Any) -> None:
    groups = [(g, f) for g in c.graphs for f in g.fused if len(f.nodes) > 1]
    if not groups:
        result.fusion_note = "nothing was fused (no group of several scheduler nodes), so no fusion is to blame"
        return
    edits: list[tuple[Any, Any, FusionEdit]] = []
    for g, f in groups:
        try:
            edits.append((g, f, unfuse_edit(c, f, g.index)))
        except WhatIfError as error:
            result.notes.append(f"fused group {g.id} {f.name} cannot be kept apart: {error}")
    if not edits:
        result.fusion_note = "no fused group can be kept apart"
        return

    def label(chosen: list[tuple[Any, Any, FusionEdit]]) -> str:
        names = ", ".join(f"{g.id} {f.name}" for g, f, _ in chosen[:4]) + (" ..." if len(chosen) > 4 else "")
        return f"{len(chosen)} fused group{'s' if len(chosen) != 1 else ''} kept apart: {names}"

    def asked(chosen: list[tuple[Any, Any, FusionEdit]]) -> tuple[str, str, None, tuple[FusionEdit, ...], bool]:
        return ("fusion", label(chosen), None, tuple(e for _, _, e in chosen), False)

    def good(chosen: list[tuple[Any, Any, FusionEdit]]) -> bool:
        return search.side_by_side([asked(chosen)])[0]

    if not good(edits):
        result.fusion_note = (f"keeping all {len(edits)} fused groups apart does not make it match: the culprit "
                              "is not a fusion")
        return
    candidates, tested = edits, True
    while len(candidates) > 1:
        half, rest = candidates[: len(candidates) // 2], candidates[len(candidates) // 2:]
        if search.parallel > 1:  # both halves at once, each in its worker
            verdicts = search.side_by_side([asked(half), asked(rest)])
            if not any(verdicts):
                candidates, tested = [], False
                break
            candidates, tested = (half if verdicts[0] else rest), True
        elif good(half):
            candidates, tested = half, True
        else:
            candidates, tested = rest, False
    if not candidates or (not tested and not good(candidates)):
        result.fusion_note = ("keeping all fused groups apart makes it match, but no single group does: several "
                              "fusions are needed to make it differ")
        return
    g, f, _ = candidates[0]
    kernels = [k for k in g.kernels if k.id in set(f.kernels) or k.group == f.name]
    lines = sorted({(str(line[0]), int(line[1])) for k in kernels for line in k.user_lines})
    result.fusion = FusionCulprit(g.id, f.name, list(f.origins), [k.id for k in kernels], lines)
    result.kernels, result.user_lines = [k.id for k in kernels], lines


def _named_node(result: BisectResult, c: Any) -> None:
    """A lowering culprit names a post-grad node: its kernels and lines."""
    if result.subsystem != "lowerings" or not result.applied:
        return
    name = result.applied.strip()
    for g in c.graphs:
        node = next((n for n in g.post_grad.nodes if n.name == name), None)
        if node is None:
            continue
        kernels = [k for k in g.kernels if k.id in set(node.kernels)]
        result.kernels = [k.id for k in kernels]
        result.user_lines = sorted({(str(line[0]), int(line[1])) for k in kernels for line in k.user_lines})
        return


def _setting_level(result: BisectResult, program: Program, c: Any) -> None:
    """Where the setting that avoids the culprit acts: the program captured with it too, the two compared
    kernel by kernel (compiler/model/setting_changes.py). Its kernels and lines are the result's unless a
    deeper level (a lowered node, a fused group) names its own."""
    if not (result.avoided_by and result.avoided_by_checked):
        return
    try:
        fixed = capture(program.target, *program.inputs, kwargs=program.kwargs, config=result.avoided_by)
    except Exception as error:  # noqa: BLE001 - the levels above stand without it
        result.notes.append(f"the program could not be captured with {result.avoided_by}, so the kernels it "
                            f"changes are not named: {type(error).__name__}: {error}")
        return
    result.setting = setting_changes(c, fixed, result.avoided_by)
    result.notes += result.setting.notes
    if not result.kernels and result.setting.kernels:
        result.kernels = [k.kernel for k in result.setting.kernels]
        result.user_lines = result.setting.user_lines


# ------------------------------------------------------------------------------------------ the face


@contextlib.contextmanager
def _streams_kept() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as they were: a terminal's progress bar swaps them while it is drawn
    and puts back what it found when it started, which need not be what the caller had."""
    stdout, stderr = sys.stdout, sys.stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


@contextlib.contextmanager
def _kept(target: Any) -> Iterator[None]:
    """Torch's config, the RNG, the module's state and the standard streams as they were, whatever happens
    inside."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with (_streams_kept(), compiler_bisect.inductor_config_kept(), torch.random.fork_rng(devices=devices),
          replay.module_state_kept(target)):
        yield


def _checked(check: Check | str | None, rtol: float | None, atol: float | None, slower_than: Any,
             threshold: float) -> tuple[Any, str, str]:
    """The judge of the check asked for, how the result names it, and its tolerance."""
    if check == "slower" or (check is None and slower_than is not None):
        if slower_than is None:
            raise ValueError('check="slower" needs a baseline: slower_than={...} (a config dict: toggle names or '
                             'Inductor keys) or slower_than="trace.json" (a trace saved by c.save())')
        slower = bisect_slower.Slower(threshold)
        return slower, f"no slower than {slower.threshold:g}x the baseline", ""
    if isinstance(check, str):
        raise ValueError(f"check must be a callable check(compiled_output, eager_output) -> bool, \"slower\" or "
                         f"None (matches eager), got {check!r}")
    if check is not None:
        return _user_check(check), f"custom check {getattr(check, '__qualname__', repr(check))}", ""
    tolerance = _tolerance_text() if rtol is None and atol is None else f"rtol {rtol}, atol {atol}"
    return _matches_eager(rtol, atol), "matches eager", tolerance


def bisect(fn: Any, *inputs: Any, check: Check | str | None = None, rtol: float | None = None,
           atol: float | None = None, kwargs: Mapping[str, Any] | None = None, fusion: bool = True, seed: int = 0,
           slower_than: Any = None, threshold: float = bisect_slower.THRESHOLD, timing: Timing | None = None,
           workers: int | None = None, engine: str = "local", timeout: float | None = None,
           address: str | None = None, progress_display: progress.Display | bool | None = None) -> BisectResult:
    """Why ``fn(*inputs, **kwargs)`` compiled differs from eager, or is slower than a baseline: the culprit at
    each level (docs/bisect.md).

    ``check(compiled_output, eager_output) -> bool`` (True: good) replaces the default, which is "every output
    tensor within the numerics tolerance of eager" (``rtol`` / ``atol``, per dtype by default).
    ``check="slower"`` with ``slower_than=`` a config dict or a saved trace: a trial is bad when its run time
    (``timing``: the median of several loops of calls; the other checks time nothing) is above ``threshold``
    times the baseline's.
    ``fusion=False`` stops after torch's bisector. Eager and every compiled trial run under
    ``torch.manual_seed(seed)``. Trials run in this process, or with ``workers=n`` in n worker processes
    (``engine="ray"`` or ``address=``: Ray tasks), where a crash or a trial past ``timeout`` seconds is a
    trial result."""
    name = _name(fn)
    judge, check_text, tolerance = _checked(check, rtol, atol, slower_than, threshold)
    slower = judge if isinstance(judge, bisect_slower.Slower) else None
    baseline, baseline_label = bisect_slower.baseline_settings(slower_than) if slower else ({}, "")
    result = BisectResult(name, DIVERGES, "", check_text, tolerance)
    why_not = compiler_bisect.available()
    if why_not:
        result.status, result.message = UNAVAILABLE, why_not
        return result
    program = Program(fn, inputs, dict(kwargs or {}), seed)
    runner = bisect_pool.runner(program, engine, workers, timeout, address)
    try:
        with _kept(fn), progress.task(f"bisect {name}", display=progress_display):
            if slower is not None:
                search = _Search(runner, slower, timing or Timing())
                _search_slower(search, result, slower, baseline, baseline_label)
            else:
                reference = program.eager()
                search = _Search(runner, lambda out: judge(out.outputs, reference))
                try:
                    _search(search, result, program, fusion)
                except _Stop as stop:
                    result.status = CHECK_RAISED
                    result.message = f"the check raised, so nothing is blamed: {stop.text.splitlines()[0]}"
                    result.notes.append(stop.text)
            result.trials = search.trials
    finally:
        runner.close()
    result.engine = runner.name
    result.notes += runner.notes
    return result


def _search(search: _Search, result: BisectResult, program: Program, fusion: bool) -> None:
    if search.trial("first run", "Inductor as configured"):
        result.status = MATCHES
        result.error = search.trials[-1].detail
        result.message = (f"{result.function} compiled matches eager ({result.check}"
                          f"{'; ' + result.tolerance if result.tolerance else ''}): {result.error}; nothing to bisect")
        return
    result.error = search.trials[-1].detail
    _torch_level(search, result)
    if result.backend is None:
        result.message = f"{result.function} compiled differs from eager ({result.error}), but the bisect found no culprit"
        return
    _avoiding_config(search, result)
    result.message = f"{result.function} compiled differs from eager: {result.error}"
    if result.backend != "inductor":
        result.fusion_note = f"the {result.backend} backend already fails: it makes no fusions"
        return
    try:
        c = capture(program.target, *program.inputs, kwargs=program.kwargs)
    except Exception as error:  # noqa: BLE001 - the levels above stand without the capture
        result.fusion_note = f"the program could not be captured for the fusion level: {type(error).__name__}: {error}"
        return
    result.compilation = c
    _named_node(result, c)
    _setting_level(result, program, c)
    if fusion:
        _fusion_level(search, result, c)
    else:
        result.fusion_note = "not searched (fusion=False)"


def _search_slower(search: _Search, result: BisectResult, slower: bisect_slower.Slower, baseline: dict[str, Any],
                   label: str) -> None:
    """A slowdown: the baseline measured, the program as configured against it, then the setting of the
    baseline that brings the time back, or else the pass inside Inductor (compiler/sweeps/bisect_slower.py)."""
    result.fusion_note = "not searched for a slowdown"
    measured = search.measure("baseline", label, baseline)
    if measured.crash or not measured.ms:
        result.status = UNAVAILABLE
        result.message = f"the baseline ({label}) could not be measured: {measured.crash or 'no time'}"
        return
    slower.baseline_ms = result.baseline_ms = measured.ms
    ok = search.trial("first run", "Inductor as configured")
    result.error = search.trials[-1].detail
    if ok:
        result.status = MATCHES
        result.message = f"{result.function} compiled is not slower than {label}: {result.error}; nothing to bisect"
        return
    if search.trials[-1].outcome == "crashed":
        result.message = f"{result.function} compiled crashed: {result.error}"
        return
    result.message = f"{result.function} compiled is slower than {label}: {result.error}"
    slower.slow_ms = slower.last_ms
    if bisect_slower.toggle_level(search, result, baseline):
        return
    _torch_level(search, result, only_backends=("inductor",))
    if result.backend is None:
        result.message += "; the bisect found no culprit"
