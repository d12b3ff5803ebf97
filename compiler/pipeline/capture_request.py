"""What a capture was asked for, resolved once where the public call enters, and the Compilation it becomes.

``capture()`` and ``capture_export()`` check their arguments, resolve the toggles and find the device, then
hand one frozen ``CaptureRequest`` down: every step reads the same resolved values instead of each one
taking and passing on a dozen parameters. Both end in ``compilation_from_capture``, which fills what every capture
fills alike around the parts each one collected its own way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .._torch import environment
from ..model.compilation import Compilation, LiveHandles, Note
from ..model.dynamo import DynamoStage
from ..model.export import ExportStage
from ..model.stages import GraphCapture
from . import toggles
from .specs import tensor_specs


@dataclass(frozen=True)
class CaptureRequest:
    target: Any  # what the user passed (a function or nn.Module): the eager reference, whose state runs keep
    entry: Callable[..., Any]  # what the capture calls: a private copy of the function, or the module
    name: str  # how the compilation names it
    inputs: tuple[Any, ...]
    kwargs: dict[str, Any]
    config: Mapping[str, Any] | None  # as given: the compilation lists toggles only when some were asked for
    settings: dict[str, Any]  # ``config`` resolved to Inductor's keys (compiler/pipeline/toggles.py)
    device: str
    backward: bool = False  # also compile and capture the backward graphs
    dynamic: bool | None = False  # torch.compile's dynamic=, applied while compiling only
    trace_dir: str | Path | None = None  # where the compile's TORCH_TRACE log goes, if anywhere
    cache: bool = False  # a warm capture: graphs captured before served from the store (capture_store.py)
    began_ns: int | None = None  # when the caller's call began (time.time_ns): c.compile_time's window starts there
    mode: str | None = None  # torch.compile's mode, its settings already in ``settings``


def compilation_from_capture(request: CaptureRequest, live: LiveHandles, *, graphs: list[GraphCapture],
                             timings: dict[str, float], sources: dict[str, dict[int, str]], dynamo: DynamoStage,
                             log_path: Path | None, overrides: dict[str, Any] | None = None,
                             library_files: dict[str, str] | None = None, export: ExportStage | None = None,
                             notes: list[Note] | None = None) -> Compilation:
    """The Compilation of ``request``: the toggles asked for, the specs of the inputs and of what the capture's
    call returned, when, where the log went and the environment, around what the capture collected. ``notes``
    is kept as given (not copied): the capture's recorder adds what a recompile notes to the same list."""
    return Compilation(
        function=request.name,
        toggles=toggles.toggle_names_for(request.settings) if request.config or request.mode else {},
        inductor_overrides=overrides or {},
        backward=request.backward,
        timings=timings,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        inputs=tensor_specs(request.inputs),
        output_specs=tensor_specs(live.outputs),
        graphs=graphs,
        sources=sources,
        library_files=library_files or {},
        dynamo=dynamo,
        origin={"log": str(log_path)} if log_path else {},
        export=export,
        notes=notes if notes is not None else [],
        live=live,
        **environment.describe(request.device),
    )
