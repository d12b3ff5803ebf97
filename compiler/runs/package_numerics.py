"""What each kernel of an AOTInductor package wrote, for c.check_numerics() on the package.

A package's C++ wrapper calls its kernels inside a compiled library, where no call can be watched.
AOTInductor itself can save every kernel's tensor arguments around each launch
(compiler/_torch/aot_saves.py) in a package built for it. So the first check builds that copy from the
same exported program with the capture's settings (the package's C++ is compiled again: about as long as
the capture's own AOT compile) and keeps it for later checks; each check runs it on the capture's inputs
in a child process (compiler/runs/package_worker.py), loaded the way a deployment loads a package, and
reads what every kernel left in the buffers it computes. A package that dies there (an illegal memory
access) leaves the notebook intact, and the error names the kernel that was running.

The copy is built from the same program and settings, so its kernels are the captured package's; a
kernel the copy calls that the capture does not have (autotuning choosing differently) is named in the
report's notes and not compared.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import torch

from .._torch import aot_compile, aot_saves
from ..model import kernel_io, progress
from ..model.child_env import worker_env
from . import reference
from .replay import NotRunnableError

_SAVING_PACKAGE = "package saving every kernel's tensors"


class PackageRunError(RuntimeError):
    """The package died or failed while running in its child process."""


@dataclass
class PackageWrites:
    """One run of the saving copy: the graph's inputs and, per kernel call, the buffers it computed."""

    inputs: list[Any]
    writes: list[tuple[str, int, dict[str, torch.Tensor]]] = field(default_factory=list)  # kernel id, call, buffers
    notes: list[str] = field(default_factory=list)


def observe(c: Any, timeout_s: float = 1800.0) -> PackageWrites:
    """Run the saving copy of ``c``'s package on its example inputs; what each kernel wrote."""
    with saving_run(c, "check numerics", timeout_s) as (graph, inputs, saved, unknown):
        progress.step("compare", detail="each kernel's buffers against eager")
        return _writes(graph, saved, unknown, inputs)


@contextlib.contextmanager
def saving_run(c: Any, what: str, timeout_s: float = 1800.0) -> Iterator[tuple[Any, list[Any], list[aot_saves.SavedTensor], list[str]]]:
    """Run the saving copy of ``c``'s package once on its example inputs. Inside the block (while the saved
    files exist): the package's graph, its inputs (one per placeholder, non-tensors too), the saves in
    order, and saved names that no kernel of the graph has."""
    if len(c.graphs) != 1:
        raise NotRunnableError(f"{what} reads one package graph; {c.function} has {len(c.graphs)}")
    graph = c.graphs[0]
    names = [k.name for k in graph.kernels]
    args, kwargs = tuple(c.live.example_inputs or ()), dict(c.live.call_kwargs or {})
    with progress.task(f"{what} {c.function}"), tempfile.TemporaryDirectory(prefix="explorer-package-run-") as folder:
        package = _saving_package(c)
        progress.step("run", detail="the saving copy of the package, in a child process")
        output = _run(package, args, kwargs, Path(folder), names, timeout_s)
        saved, unknown = aot_saves.saves(output, names)
        yield graph, aot_compile.graph_inputs(c.live.compiled, args, kwargs), saved, unknown


def _saving_package(c: Any) -> str:
    """The copy of the package that saves every kernel's tensors: built on the first check, then kept
    (removed with the compilation's live handles)."""
    live = c.live
    kept = live.derived.get(_SAVING_PACKAGE)
    if kept is not None and Path(kept).exists():
        return kept
    if live.build_package is None:
        raise NotRunnableError(f"check_numerics() on {c.function} needs the exported program to build a copy of its "
                               "package that saves each kernel's outputs; export again with explorer.export(...)")
    folder = tempfile.mkdtemp(prefix="explorer-numerics-")
    weakref.finalize(live, shutil.rmtree, folder, True)
    progress.step("build", detail="the package again, saving every kernel's tensors (its C++ is compiled again)")
    path = live.build_package(dict(aot_saves.SAVE_EVERY_KERNEL), str(Path(folder) / "saving.pt2"))
    live.derived[_SAVING_PACKAGE] = path
    return path


def _run(package: str, args: tuple[Any, ...], kwargs: dict[str, Any], folder: Path, kernel_names: list[str],
         timeout_s: float) -> str:
    """Run ``package`` once in a child process working in ``folder`` (where the saves go); what it printed."""
    job = folder / "job.pt"
    torch.save({"package": package, "args": args, "kwargs": kwargs}, job)
    try:
        done = subprocess.run([sys.executable, "-m", "compiler.runs.package_worker", str(job), str(folder)],
                              env=worker_env(), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as error:
        printed = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        raise PackageRunError(f"the package ran for more than {timeout_s:.0f} s in its child process; "
                              f"{_last_launch(printed, kernel_names)}") from None
    if done.returncode != 0:
        how = f"died with signal {-done.returncode}" if done.returncode < 0 else f"failed (exit code {done.returncode})"
        tail = " | ".join(line for line in (done.stderr or "").strip().splitlines()[-4:] if line.strip())
        raise PackageRunError(f"the package {how} in its child process (this process is unaffected); "
                              f"{_last_launch(done.stdout or '', kernel_names)}{': ' + tail if tail else ''}")
    return done.stdout


def _last_launch(output: str, kernel_names: list[str]) -> str:
    """Which kernel was running when the output stopped: the last one saved before its launch and not after."""
    started: dict[str, int] = {}
    for saved in aot_saves.saves(output, kernel_names)[0]:
        if saved.after:
            started.pop(saved.kernel, None)
        else:
            started.setdefault(saved.kernel, saved.order)
    if not started:
        return "no kernel had been launched"
    return f"the last kernel launched and not finished: {max(started, key=started.__getitem__)}"


def _writes(graph: Any, saved: list[aot_saves.SavedTensor], unknown: list[str], inputs: list[Any]) -> PackageWrites:
    kernels_named: dict[str, list[Any]] = {}
    for kernel in graph.kernels:
        kernels_named.setdefault(kernel.name, []).append(kernel)
    result = PackageWrites(inputs)
    extra = sorted(set(unknown))
    if extra:
        result.notes.append(f"the saving copy of the package saved tensors the capture has no kernel for ({extra[:5]}): "
                            "its build chose other kernels there; they were not compared")
    updates = reference.input_updates(graph.post_grad.module) if graph.post_grad.module is not None else {}
    defined = {k.id: kernel_io.defined_buffers(k, graph) for k in graph.kernels}
    seen: dict[str, dict[str, torch.Tensor]] = {}
    for item in saved:
        if not item.after:
            continue
        kernel = next((k for k in kernels_named[item.kernel]
                       if item.argument in defined[k.id]
                       or updates.get(item.argument) in k.post_grad_nodes), None)
        if kernel is None:  # an argument the kernel only reads
            continue
        seen.setdefault(kernel.id, {})[item.argument] = aot_saves.load(item)
    result.writes = [(kernel_id, 0, buffers) for kernel_id, buffers in seen.items()]
    return result
