"""The pipeline: drive torch.compile / Inductor, capture every stage as Python objects, save/load traces.

This is the top of compiler/ (see ARCHITECTURE.md): it imports every room, which fills the model's
slots (renderings, runs, JSON), and exports the public names.
"""

from . import io, render, runs  # noqa: F401 - fill the model's slots
from ._torch.fx_backend import fx_wrapper_backend
from .pipeline.capture import capture
from .pipeline.export_capture import capture_export
from .pipeline.toggles import TOGGLES, Toggle, ToggleError, ToggleWarning
from .pipeline.trace_import import trace_env
from .pipeline.traceset_load import load_trace
from .io.files import load
from .io.trace import from_json
from .model.compilation import Compilation
from .model.dynamo import DynamoStage, FrameMetrics, Guard, GraphBreak, Recompile, ShapeSymbol
from .model.errors import CompileError, CountersUnavailable, ExportError, TraceFormatError, TraceLoadError
from .model.export import ExportStage
from .model.stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                           Wrapper)
from .model.traceset import Divergence, RankTrace, TraceSet
from .sweeps import Sweep, SweepError, SweepRow, close_sweep_workers, start_sweep_workers, sweep

__all__ = [
    "capture", "load", "from_json", "Compilation", "GraphCapture", "FxStage", "FxNode", "LoopIRNode",
    "FusedGroup", "NotFused", "Kernel", "Wrapper", "AutotuneRecord", "CompileError", "TraceFormatError",
    "ToggleError", "ToggleWarning", "TOGGLES", "Toggle", "DynamoStage", "Guard", "GraphBreak", "ShapeSymbol", "Recompile",
    "FrameMetrics", "TraceSet", "RankTrace", "Divergence", "load_trace", "trace_env", "TraceLoadError",
    "fx_wrapper_backend", "CountersUnavailable", "sweep", "Sweep", "SweepRow", "SweepError", "close_sweep_workers",
    "start_sweep_workers", "capture_export", "ExportError", "ExportStage",
]
