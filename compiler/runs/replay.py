"""Running a live compilation again exactly as it was captured, for the runs that measure it.

A run must execute the graphs the explorer captured, not new ones: Dynamo guards on grad mode, so the
call happens in the grad mode of the capture; a compilation captured with ``backward=True`` runs its
backward too, through ``torch.autograd.grad`` so no ``.grad`` of the user's tensors or parameters
changes. The capture holds Dynamo's cache entries of every frame it compiled, also through
``torch._dynamo.reset()`` for the frames only it runs (compiler/_torch/dynamo_codes.py), and a run
forbids Dynamo to compile anything (``captured_only``): a run that would need a new graph (other
inputs, or a frame of the user's code whose cache a reset cleared) fails with a clear error instead of
compiling one behind the user's back.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Mapping

import torch

from .._torch import dynamo_codes
from ..model import slots
from .cudagraph_runs import observed


class NotRunnableError(RuntimeError):
    """The compilation cannot be run again here (loaded from a file, or its inputs are gone)."""


def flat_tensors(value: Any) -> list[torch.Tensor]:
    """Every tensor in a (nested) list, tuple or mapping, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in flat_tensors(item)]
    return []


def check_runnable(c: Any, what: str) -> None:
    """Raise NotRunnableError, saying what to do, unless ``c`` can be run again in this process."""
    if not c.live:
        raise NotRunnableError(f"{what} needs the live compilation: this one was loaded from a file and has no "
                               "compiled function or inputs; compile it again with explorer.compile(...) and "
                               f"call {what} on that")
    if c.live.example_inputs is None:
        raise NotRunnableError(f"{what} needs the example inputs the compilation was captured with, and they were "
                               "released; compile again with explorer.compile(fn, *inputs)")
    for tensor in flat_tensors(c.live.example_inputs):
        if tensor.numel() and tensor.untyped_storage().nbytes() == 0:
            raise NotRunnableError(f"{what}: an input tensor of shape {list(tensor.shape)} has had its storage "
                                   "freed since the capture; compile again with live inputs")


def in_package(kernel: Any) -> bool:
    """Whether ``kernel`` is a kernel of an AOTInductor package: its wrapper is the package's C++, its
    launches happen inside the package's library."""
    c = kernel.graph.compilation if kernel.graph is not None else None
    return c is not None and c.export is not None


def check_python_wrapper(c: Any, what: str) -> None:
    """Raise NotRunnableError, naming what works instead, when ``c`` has a C++ wrapper: runs that watch or
    replace each kernel call do it in the Python wrapper's namespace, and a C++ wrapper (an AOTInductor
    package, a ``cpp_wrapper`` compile) calls its kernels inside a compiled library."""
    if not any(g.wrapper.language == "cpp" for g in c.graphs):
        return
    package = c.export is not None
    same = ("explorer.compile(model, *inputs) of the same model (explorer.diff(jit, aot) pairs its kernels with "
            "these by FX node)" if package else "the same compile without cpp_wrapper")
    works = "c.run() (outputs against eager), c.profile() (time per kernel and per line)"
    if package:
        works += ", c.check_numerics() (each kernel against eager)"
    raise NotRunnableError(
        f"{what} watches every kernel call in the Python wrapper, and {c.function} has a C++ wrapper that calls its "
        f"kernels inside a compiled library. What works here: {works}. For {what} use {same}.")


def grad_roots(outputs: Any) -> list[torch.Tensor]:
    return [t for t in flat_tensors(outputs) if t.requires_grad]


def _leaves(c: Any, inputs: tuple[Any, ...]) -> list[torch.Tensor]:
    leaves = [t for t in flat_tensors(inputs) if t.requires_grad and t.is_leaf]
    if isinstance(c.live.target, torch.nn.Module):
        leaves += [p for p in c.live.target.parameters() if p.requires_grad]
    return leaves


def grad_mode(c: Any) -> bool:
    """The grad mode of the capture: Dynamo guards on it, so a run in another one would recompile."""
    captured = c.live.grad_enabled if c.live else None
    return captured if captured is not None else torch.is_grad_enabled()


_RECOMPILE = "Detected recompile when torch.compile stance is 'fail_on_recompile'"


def input_differences(c: Any, inputs: tuple[Any, ...]) -> list[str]:
    """How the tensors of ``inputs`` differ from those the compilation was captured with (shape, dtype,
    device, requires_grad), one phrase each; [] when they agree."""
    captured = list(c.inputs or [])
    given = flat_tensors(inputs)
    if len(given) != len(captured):
        return [f"{len(given)} input tensors where the capture had {len(captured)}"]
    out = []
    for position, (tensor, spec) in enumerate(zip(given, captured)):
        now = {"shape": [int(s) for s in tensor.shape], "dtype": str(tensor.dtype), "device": str(tensor.device),
               "requires_grad": bool(tensor.requires_grad)}
        for key, value in now.items():
            if key in spec and spec[key] != value:
                out.append(f"input {position} has {key} {value} where the capture had {spec[key]}")
    return out


@contextlib.contextmanager
def captured_only(c: Any, inputs: tuple[Any, ...] | None = None) -> Iterator[None]:
    """Run only what ``c`` captured: Dynamo may not compile a frame (``set_stance("fail_on_recompile")``);
    if it would have to, NotRunnableError says why, naming how ``inputs`` differ from the capture's."""
    dynamo_codes.restore_code_map()
    try:
        with torch.compiler.set_stance("fail_on_recompile"):
            yield
    except RuntimeError as error:
        if _RECOMPILE not in str(error):
            raise
        reason = str(error).split(_RECOMPILE + ". ", 1)[-1].splitlines()[0]
        differs = input_differences(c, inputs) if inputs is not None else []
        cause = ("; ".join(differs) if differs else "no input tensor differs from the capture's: a guard on "
                 "something else failed (a Python value, a global), or its compiled code was freed "
                 "(torch._dynamo.reset() clears the frames of your own functions)")
        raise NotRunnableError(
            f"running {c.function} would compile a new graph ({reason}): {cause}. Nothing was compiled. "
            f"To explore that program, capture it: c.recompile(...) with those inputs adds its graphs to this "
            "compilation, explorer.compile(...) makes a new one") from None


@slots.run_compiled.fill
def run_again(c: Any, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``c.run(*inputs, **kwargs)``: the captured program, in the capture's grad mode, never compiling."""
    if not c.live:
        raise NotRunnableError("run() needs the live compilation: this one was loaded from a file and has no "
                               "compiled function; compile it again with explorer.compile(...)")
    args = inputs or c.live.example_inputs
    if args is None:
        raise NotRunnableError("run() without inputs needs the example inputs the compilation was captured with, "
                               "and they were released; pass inputs: c.run(x)")
    with torch.set_grad_enabled(grad_mode(c)), captured_only(c, args), observed(c, "run"):
        return c.live.compiled(*args, **(kwargs if inputs else (c.live.call_kwargs or {})))


def runner(c: Any, inputs: tuple[Any, ...] | None = None) -> Callable[[], Any]:
    """A function that runs ``c`` once as captured (forward, and backward when captured) and returns the
    outputs; on ``inputs`` (e.g. clones) instead of the example inputs when given."""
    step = _step(c, inputs)

    def run() -> Any:
        with as_captured(c, inputs):
            return step()

    return run


def step(c: Any) -> Callable[[], Any]:
    """One call of the captured program on the example inputs with nothing around it: for loops that enter
    ``as_captured(c)`` once (timing back-to-back calls)."""
    return _step(c, None)


@contextlib.contextmanager
def as_captured(c: Any, inputs: tuple[Any, ...] | None = None) -> Iterator[None]:
    """The capture's grad mode, and only what it captured may run (``captured_only``)."""
    with torch.set_grad_enabled(grad_mode(c)), captured_only(c, c.live.example_inputs if inputs is None else inputs):
        yield


def _step(c: Any, inputs: tuple[Any, ...] | None) -> Callable[[], Any]:
    args = c.live.example_inputs if inputs is None else inputs
    leaves = _leaves(c, args) if c.backward else []
    kwargs = c.live.call_kwargs or {}

    def call() -> Any:
        outputs = c.live.compiled(*args, **kwargs)
        roots = grad_roots(outputs) if c.backward else []
        if roots and leaves:
            torch.autograd.grad(roots, leaves, [torch.ones_like(r) for r in roots], allow_unused=True)
        return outputs

    return call


def clone_input(value: Any) -> Any:
    """A copy the compiled function accepts under the same guards (requires_grad kept): a run on clones
    leaves the user's inputs as they were."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


@contextlib.contextmanager
def module_state_kept(target: Any) -> Iterator[None]:
    """Put every parameter and buffer of a module target back as it was when the block exits (a run
    updates running statistics, and may update weights in place)."""
    tensors = list(target.parameters()) + list(target.buffers()) if isinstance(target, torch.nn.Module) else []
    saved = [(t, t.detach().clone()) for t in tensors]
    try:
        yield
    finally:
        with torch.no_grad():
            for tensor, copy in saved:
                tensor.copy_(copy)


def run_on_copies(c: Any, *watchers: contextlib.AbstractContextManager[Any]) -> None:
    """Run ``c`` once as captured on copies of its example inputs, inside ``watchers`` (context managers
    that observe the run: kernel or graph calls), and wait for the device; the user's inputs and the
    module's parameters and buffers are as they were afterwards."""
    inputs = tuple(clone_input(x) for x in c.live.example_inputs)
    with module_state_kept(c.live.target), contextlib.ExitStack() as stack:
        for watcher in watchers:
            stack.enter_context(watcher)
        runner(c, inputs)()
        synchronize(c.device)


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
