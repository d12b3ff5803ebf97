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

Every trial runs in this process, one after another, on clones of the inputs, under the same seed (eager
too), with Inductor's caches off for the trial. Each trial compiles a private copy of the entry function,
whose Dynamo cache entries are dropped after it; the user's other compiled functions are not reset (no
``torch._dynamo.reset()``). Afterwards torch's config, the bisector's state, the RNG state and a module's
parameters and buffers are as they were, also when something raised.
"""

from __future__ import annotations

import contextlib
import time
import traceback
import types
from typing import Any, Callable, Iterator, Mapping

import torch

from .._torch import compiler_bisect, dynamo_codes, fusion_edits, hooks, inductor_config
from ..model.bisect import CHECK_RAISED, DIVERGES, MATCHES, UNAVAILABLE, BisectResult, FusionCulprit, Trial
from ..model.numerics import BufferCheck
from ..model.what_if import FusionEdit, WhatIfError, unfuse_edit
from ..pipeline.capture import capture
from ..runs import numerics, replay

Check = Callable[[Any, Any], bool]
_NO_CACHES = {"force_disable_caches": True}  # a trial's edits are not in Inductor's cache keys
# subsystems whose blamed application is a named pass that ``disabled_passes`` turns off
_PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")


class _Stop(Exception):
    """The user's check raised: the search stops there (its text is all that is kept)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


# ------------------------------------------------------------------------------------------ running


def _clone_function(fn: types.FunctionType) -> types.FunctionType:
    clone = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__qualname__ = fn.__qualname__
    return clone


def _private_entry(target: Any) -> Callable[..., Any]:
    """A function with its own code object that calls ``target``: Dynamo's cache for it is the trial's alone."""
    target = getattr(target, "_orig_mod", None) or getattr(target, "_torchdynamo_orig_callable", None) or target
    if isinstance(target, types.FunctionType):
        return _clone_function(target)
    if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
        return types.MethodType(_clone_function(target.__func__), target.__self__)
    module = target

    def entry(*args: Any, **kwargs: Any) -> Any:
        return module(*args, **kwargs)

    return _clone_function(entry)


def _name(target: Any) -> str:
    target = getattr(target, "_orig_mod", None) or target
    if isinstance(target, torch.nn.Module):
        return type(target).__name__
    return getattr(target, "__qualname__", None) or repr(target)


class _Program:
    """The user's program, run eagerly or compiled, always on clones of the inputs under one seed."""

    def __init__(self, target: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any], seed: int) -> None:
        self.target, self.inputs, self.kwargs, self.seed = target, inputs, kwargs, seed

    def eager(self) -> Any:
        torch.manual_seed(self.seed)
        return self.target(*(replay.clone_input(x) for x in self.inputs), **self.kwargs)

    def compiled(self, settings: Mapping[str, Any] | None = None, edit: Any = None) -> Any:
        codes: dict[types.CodeType, bool] = {}
        entry = _private_entry(self.target)
        with contextlib.ExitStack() as stack:
            stack.enter_context(dynamo_codes.converted_frames(lambda code, fresh: codes.setdefault(code, fresh)))
            stack.enter_context(dynamo_codes.forgotten_unless_held(codes, set()))
            stack.enter_context(inductor_config.patched({**_NO_CACHES, **dict(settings or {})}))
            stack.enter_context(hooks.own_warnings_silenced())
            if edit is not None:
                stack.enter_context(edit)
            torch.manual_seed(self.seed)
            return torch.compile(entry)(*(replay.clone_input(x) for x in self.inputs), **self.kwargs)


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
            numerics.compare(check, a, b, None, rtol, atol)
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
    """The trials of one bisect, numbered and kept."""

    def __init__(self, program: _Program, judge: Callable[[Any, Any], tuple[bool, str]], reference: Any) -> None:
        self.program, self.judge, self.reference = program, judge, reference
        self.trials: list[Trial] = []

    def trial(self, level: str, what: str, settings: Mapping[str, Any] | None = None, edit: Any = None) -> bool:
        """One compile and run; True when the check passes. A compile or run error counts as a failure."""
        started = time.perf_counter()
        crash = ""
        try:
            out = self.program.compiled(settings, edit)
        except Exception as error:  # noqa: BLE001 - a trial that crashes is a trial result
            crash = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        if crash:
            self.trials.append(Trial(len(self.trials) + 1, level, what, "crashed", crash,
                                     time.perf_counter() - started))
            return False
        try:
            ok, detail = self.judge(out, self.reference)
        except _Stop as stop:
            self.trials.append(Trial(len(self.trials) + 1, level, what, "check raised", stop.text.splitlines()[0],
                                     time.perf_counter() - started))
            raise
        self.trials.append(Trial(len(self.trials) + 1, level, what, "good" if ok else "bad", detail,
                                 time.perf_counter() - started))
        return ok


def _step_text(step: compiler_bisect.Step) -> str:
    if not step.subsystem:
        return f"backend {step.backend}"
    what = {"test_disable": "disabled", "find_max_bounds": "counting its applications"}.get(step.run_state or "", "")
    if step.run_state == "bisect" and step.low is not None and step.high is not None:
        what = f"applications 0..{(step.low + step.high) // 2} of {step.low}..{step.high}"
    return f"{step.backend} / {step.subsystem}" + (f": {what}" if what else "")


# ------------------------------------------------------------------------------------------ the levels


def _torch_level(search: _Search, result: BisectResult) -> None:
    def trial() -> bool:
        return search.trial("torch bisector", _step_text(compiler_bisect.current_step()))

    outcome, log = compiler_bisect.bisected(trial)
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


def _combined(edits: list[FusionEdit]) -> Any:
    """One scheduler edit keeping every group of ``edits`` apart."""

    def decide(graph_nodes: frozenset[str], members1: Any, members2: Any) -> str | None:
        answers = [e.decide(graph_nodes, members1, members2) for e in edits]
        return "refuse" if "refuse" in answers else None

    def ends_kernel(graph_nodes: frozenset[str], members: Any) -> bool:
        return any(e.ends_kernel(graph_nodes, members) for e in edits)

    return fusion_edits.fusion_decided(decide, ends_kernel=ends_kernel)


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

    def good(chosen: list[tuple[Any, Any, FusionEdit]]) -> bool:
        return search.trial("fusion", label(chosen), edit=_combined([e for _, _, e in chosen]))

    if not good(edits):
        result.fusion_note = (f"keeping all {len(edits)} fused groups apart does not make it match: the culprit "
                              "is not a fusion")
        return
    candidates, tested = edits, True
    while len(candidates) > 1:
        half = candidates[: len(candidates) // 2]
        if good(half):
            candidates, tested = half, True
        else:
            candidates, tested = candidates[len(candidates) // 2:], False
    if not tested and not good(candidates):
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


# ------------------------------------------------------------------------------------------ the face


@contextlib.contextmanager
def _kept(target: Any) -> Iterator[None]:
    """Torch's config, the RNG and the module's state as they were, whatever happens inside."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with (compiler_bisect.inductor_config_kept(), torch.random.fork_rng(devices=devices),
          replay.module_state_kept(target)):
        yield


def bisect(fn: Any, *inputs: Any, check: Check | None = None, rtol: float | None = None, atol: float | None = None,
           kwargs: Mapping[str, Any] | None = None, fusion: bool = True, seed: int = 0) -> BisectResult:
    """Why ``fn(*inputs, **kwargs)`` compiled differs from eager: the culprit at each level (docs/bisect.md).

    ``check(compiled_output, eager_output) -> bool`` (True: good) replaces the default, which is "every output
    tensor within the numerics tolerance of eager" (``rtol`` / ``atol``, per dtype by default). ``fusion=False``
    stops after torch's bisector. Eager and every compiled trial run under ``torch.manual_seed(seed)``."""
    name = _name(fn)
    judge = _user_check(check) if check is not None else _matches_eager(rtol, atol)
    check_text = (f"custom check {getattr(check, '__qualname__', repr(check))}" if check is not None else
                  "matches eager")
    tolerance = ("" if check is not None else
                 _tolerance_text() if rtol is None and atol is None else f"rtol {rtol}, atol {atol}")
    result = BisectResult(name, DIVERGES, "", check_text, tolerance)
    why_not = compiler_bisect.available()
    if why_not:
        result.status, result.message = UNAVAILABLE, why_not
        return result
    with _kept(fn):
        program = _Program(fn, inputs, dict(kwargs or {}), seed)
        search = _Search(program, judge, None)
        search.reference = program.eager()
        try:
            _search(search, result, fusion)
        except _Stop as stop:
            result.status = CHECK_RAISED
            result.message = f"the check raised, so nothing is blamed: {stop.text.splitlines()[0]}"
            result.notes.append(stop.text)
        result.trials = search.trials
    return result


def _search(search: _Search, result: BisectResult, fusion: bool) -> None:
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
        c = capture(search.program.target, *search.program.inputs, kwargs=search.program.kwargs)
    except Exception as error:  # noqa: BLE001 - the levels above stand without the capture
        result.fusion_note = f"the program could not be captured for the fusion level: {type(error).__name__}: {error}"
        return
    result.compilation = c
    _named_node(result, c)
    if fusion:
        _fusion_level(search, result, c)
    else:
        result.fusion_note = "not searched (fusion=False)"
