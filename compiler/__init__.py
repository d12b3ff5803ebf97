"""The pipeline: drive torch.compile / Inductor, capture every stage as Python objects, save/load traces."""

from ._torch.fx_backend import fx_wrapper_backend
from .capture import capture
from .compilation import Compilation
from .errors import CompileError, TraceFormatError
from .serialize import from_json, load
from .stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                     Wrapper)
from .toggles import TOGGLES, Toggle, ToggleError

__all__ = [
    "capture", "load", "from_json", "Compilation", "GraphCapture", "FxStage", "FxNode", "LoopIRNode",
    "FusedGroup", "NotFused", "Kernel", "Wrapper", "AutotuneRecord", "CompileError", "TraceFormatError",
    "ToggleError", "TOGGLES", "Toggle", "fx_wrapper_backend",
]
