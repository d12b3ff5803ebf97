"""The pipeline: drive torch.compile / Inductor, capture every stage as Python objects, save/load traces."""

from ._torch.fx_backend import fx_wrapper_backend
from .capture import capture
from .compilation import Compilation
from .dynamo import DynamoStage, FrameMetrics, Guard, GraphBreak, Recompile, ShapeSymbol
from .errors import CompileError, TraceFormatError, TraceLoadError
from .serialize import from_json, load
from .stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                     Wrapper)
from .toggles import TOGGLES, Toggle, ToggleError, ToggleWarning
from .trace_import import trace_env
from .traceset import Divergence, RankTrace, TraceSet, load_trace
from .sweeps import Sweep, SweepError, SweepRow, sweep

__all__ = [
    "capture", "load", "from_json", "Compilation", "GraphCapture", "FxStage", "FxNode", "LoopIRNode",
    "FusedGroup", "NotFused", "Kernel", "Wrapper", "AutotuneRecord", "CompileError", "TraceFormatError",
    "ToggleError", "ToggleWarning", "TOGGLES", "Toggle", "DynamoStage", "Guard", "GraphBreak", "ShapeSymbol", "Recompile",
    "FrameMetrics", "TraceSet", "RankTrace", "Divergence", "load_trace", "trace_env", "TraceLoadError",
    "fx_wrapper_backend", "sweep", "Sweep", "SweepRow", "SweepError",
]
