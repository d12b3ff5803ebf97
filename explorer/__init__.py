"""inductor-explorer: every stage of torch.compile / TorchInductor as live, inspectable objects.

    import explorer
    c = explorer.compile(fn_or_module, *example_inputs, config={"deterministic": True})
    c.graphs[0].kernels[0].source
"""

from compiler import (TOGGLES, Compilation, CompileError, GraphCapture, Kernel, ToggleError, TraceFormatError,
                      load)
from compiler import capture as compile

__version__ = "0.1.0"

__all__ = ["compile", "load", "Compilation", "GraphCapture", "Kernel", "CompileError", "ToggleError",
           "TraceFormatError", "TOGGLES", "__version__"]
