"""Builds model objects from torch or from its logs: the live capture (``capture.py`` and ``assemble.py``),
TORCH_TRACE import (``trace_import.py``, ``traceset_load.py``), and the builder halves of the loop IR,
memory plan, kernel IR line maps, wrapper FX links and features."""
