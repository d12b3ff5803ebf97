"""The pipeline: drive torch.compile / Inductor, capture every stage as Python objects, save/load traces.

This is the top of compiler/ (see ARCHITECTURE.md) and its public face: the names in ``__all__``, each
imported from its room on first use (PEP 562). Importing ``compiler`` or one of its modules (say
``compiler.model.stages``) therefore costs nothing: no torch, no rooms, until a name that needs them is
used. The model's slots (compiler/model/slots.py) import the room that fills them on first call, so no
room has to be imported here for ``c.save()`` or ``c.profile()`` to work. What a front end needs beyond
these names (progress steps, toggle settings, tables, giving the model its views) is ``compiler.api``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model.lazy_names import lazy_names

# public name -> the module that defines it (``capture`` is also ``explorer.compile``)
_NAMES: dict[str, str] = {
    "capture": "compiler.pipeline.capture_entry",
    "capture_export": "compiler.pipeline.export_capture",
    "load": "compiler.io.files",
    "from_json": "compiler.io.trace",
    "load_trace": "compiler.pipeline.traceset_load",
    "watch": "compiler.pipeline.watch",
    "load_watch": "compiler.pipeline.watch_log",
    "WatchReport": "compiler.model.watch",
    "bisect": "compiler.sweeps.bisect",
    "BisectResult": "compiler.model.bisect",
    "trace_env": "compiler.pipeline.trace_import",
    "fx_wrapper_backend": "compiler._torch.fx_backend",
    "TOGGLES": "compiler.pipeline.toggles",
    "Toggle": "compiler.pipeline.toggles",
    "ToggleError": "compiler.pipeline.toggles",
    "ToggleWarning": "compiler.pipeline.toggles",
    "Compilation": "compiler.model.compilation",
    "GraphCapture": "compiler.model.stages",
    "FxStage": "compiler.model.stages",
    "FxNode": "compiler.model.stages",
    "LoopIRNode": "compiler.model.stages",
    "FusedGroup": "compiler.model.stages",
    "NotFused": "compiler.model.stages",
    "Kernel": "compiler.model.stages",
    "Wrapper": "compiler.model.stages",
    "AutotuneRecord": "compiler.model.stages",
    "DynamoStage": "compiler.model.dynamo",
    "Guard": "compiler.model.dynamo",
    "GraphBreak": "compiler.model.dynamo",
    "ShapeSymbol": "compiler.model.dynamo",
    "Recompile": "compiler.model.dynamo",
    "FrameMetrics": "compiler.model.dynamo",
    "ExportStage": "compiler.model.export",
    "TraceSet": "compiler.model.traceset",
    "RankTrace": "compiler.model.traceset",
    "Divergence": "compiler.model.traceset",
    "CompileError": "compiler.model.errors",
    "CountersUnavailable": "compiler.model.errors",
    "ExportError": "compiler.model.errors",
    "TraceFormatError": "compiler.model.errors",
    "TraceLoadError": "compiler.model.errors",
    "sweep": "compiler.sweeps",
    "Sweep": "compiler.sweeps",
    "SweepRow": "compiler.sweeps",
    "SweepError": "compiler.sweeps",
    "close_sweep_workers": "compiler.sweeps",
    "start_sweep_workers": "compiler.sweeps",
    "diff": "compiler.model.diff_pairing",
    "Diff": "compiler.model.diff",
    "WhatIfError": "compiler.model.what_if",
    "CudaGraphFixError": "compiler.model.cudagraph_what_if",
}

__all__ = [  # every key of _NAMES (tests/unit/test_compiler_face.py)
    "capture", "capture_export", "load", "from_json", "load_trace", "trace_env", "fx_wrapper_backend",
    "TOGGLES", "Toggle", "ToggleError", "ToggleWarning", "Compilation", "GraphCapture", "FxStage", "FxNode",
    "LoopIRNode", "FusedGroup", "NotFused", "Kernel", "Wrapper", "AutotuneRecord", "DynamoStage", "Guard",
    "GraphBreak", "ShapeSymbol", "Recompile", "FrameMetrics", "ExportStage", "TraceSet", "RankTrace",
    "Divergence", "CompileError", "CountersUnavailable", "ExportError", "TraceFormatError", "TraceLoadError",
    "sweep", "Sweep", "SweepRow", "SweepError", "close_sweep_workers", "start_sweep_workers", "diff", "Diff",
    "watch", "load_watch", "WatchReport", "bisect", "BisectResult", "WhatIfError", "CudaGraphFixError",
]


__getattr__, __dir__ = lazy_names("compiler", {name: (module, name) for name, module in _NAMES.items()}, globals(),
                                  __all__)


if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from ._torch.fx_backend import fx_wrapper_backend
    from .io.files import load
    from .io.trace import from_json
    from .model.compilation import Compilation
    from .model.diff import Diff
    from .model.dynamo import DynamoStage, FrameMetrics, GraphBreak, Guard, Recompile, ShapeSymbol
    from .model.diff_pairing import diff
    from .model.errors import CompileError, CountersUnavailable, ExportError, TraceFormatError, TraceLoadError
    from .model.export import ExportStage
    from .model.stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode,
                               NotFused, Wrapper)
    from .model.traceset import Divergence, RankTrace, TraceSet
    from .model.what_if import WhatIfError
    from .model.cudagraph_what_if import CudaGraphFixError
    from .pipeline.capture_entry import capture
    from .pipeline.export_capture import capture_export
    from .pipeline.toggles import TOGGLES, Toggle, ToggleError, ToggleWarning
    from .pipeline.trace_import import trace_env
    from .pipeline.traceset_load import load_trace
    from .pipeline.watch import watch
    from .pipeline.watch_log import load_watch
    from .model.watch import WatchReport
    from .model.bisect import BisectResult
    from .sweeps.bisect import bisect
    from .sweeps import Sweep, SweepError, SweepRow, close_sweep_workers, start_sweep_workers, sweep
