"""``explorer.compile`` / ``compiler.capture``: the call's start taken before torch's compiler is imported.

Importing the capture (compiler/pipeline/capture.py) imports torch._dynamo and torch._inductor: seconds, paid by
the first capture of a process. ``explorer.compile`` is resolved on first use, so that import runs inside the
user's first call; this entry imports nothing heavy itself, notes when the call began, then imports the capture
and hands it that time, so ``c.compile_time`` counts the import (its ``startup`` phase) and its total is the
call's wall time, as the user measures it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from ..model import progress
    from ..model.compilation import Compilation


def capture(
    target: Any,
    *inputs: Any,
    config: Mapping[str, Any] | None = None,
    backward: bool = False,
    dynamic: bool | None = False,
    kwargs: Mapping[str, Any] | None = None,
    trace_dir: str | Path | None = None,
    progress_display: progress.Display | bool | None = None,
    cache: bool = True,
    mode: str | None = None,
) -> Compilation:
    """Compile ``target(*inputs, **kwargs)`` with torch.compile + Inductor and capture every stage.

    ``config`` takes toggle names (see ``compiler.TOGGLES``) or raw Inductor keys; it is
    validated before anything compiles. ``backward=True`` also runs a backward pass through the
    outputs that require grad, so the backward graphs are compiled and captured. Shapes are static
    unless ``dynamic`` says otherwise, so a capture never depends on what was compiled before it.
    ``trace_dir`` also writes the compile's structured trace there as a TORCH_TRACE log (one file per
    process, rank-named under torch.distributed), which ``explorer.load_trace`` and tlparse read.
    ``progress_display`` receives the compile's progress steps (compiler/model/progress.py; None: the display
    explorer registered, False: none). An interrupt (Ctrl-C) raises ``progress.Cancelled`` with the
    stage it stopped in; torch's config and hooks are restored before it leaves.

    ``cache=True`` makes the capture warm: a graph this program compiled to before, in a capture of the same
    explorer, torch, Triton and config, is loaded from Inductor's FX graph cache and its stages from the
    explorer's store beside it (``g.cache == "served"``), and a graph compiled cold is stored for the next
    one. Outputs and every later run are always fresh. ``cache=False`` captures cold, every cache bypassed
    and nothing stored; so does a capture with ``trace_dir`` (its log must hold every stage) and a torch whose
    FX graph cache the user turned off.

    ``mode``: torch.compile's (``"reduce-overhead"``, ``"max-autotune"``...): the Inductor settings it turns on,
    under ``config`` (a key given in both takes ``config``'s value). With CUDA graphs (``"reduce-overhead"``,
    ``"max-autotune"``, the ``cudagraphs`` toggle) each graph keeps what they made of it: ``g.cudagraphs``,
    ``c.cudagraphs``. On the CPU the compile is torch.compile's there, and the compilation notes that CUDA
    graphs need a GPU.
    """
    began = time.time_ns()
    from .capture import captured  # torch's compiler stack, on the first capture of a process

    return captured(began, target, inputs, config=config, backward=backward, dynamic=dynamic, kwargs=kwargs,
                    trace_dir=trace_dir, progress_display=progress_display, cache=cache, mode=mode)
