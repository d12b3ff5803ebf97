"""What FX and Dynamo print, read without importing torch: the frames of a ``stack_trace`` and the short
dtype names of graph code (``f32[8, 3]``).

A TORCH_TRACE log is text: its graphs, stacks and guards are parsed here and in compiler/pipeline/
without running torch, and importing torch (seconds, and a few hundred MB) just to read a log would cost
more than reading it. torch 2.13 builds its dtype abbreviations in C (``dtype.abbr``), so the table
below copies them; an abbreviation it does not know (a dtype newer than it) is looked up in the installed
torch's own table, importing torch then. tests/unit/test_fx_print.py checks the copy against torch's.
"""

from __future__ import annotations

import re
from functools import lru_cache

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')

# FX's short dtype names (torch.utils._dtype_abbrs) -> str(dtype)
DTYPE_NAMES: dict[str, str] = {
    "b8": "torch.bool", "u8": "torch.uint8", "i8": "torch.int8", "i16": "torch.int16", "i32": "torch.int32",
    "i64": "torch.int64", "u16": "torch.uint16", "u32": "torch.uint32", "u64": "torch.uint64",
    "f16": "torch.float16", "bf16": "torch.bfloat16", "f32": "torch.float32", "f64": "torch.float64",
    "c32": "torch.complex32", "c64": "torch.complex64", "c128": "torch.complex128",
    "f8e5m2": "torch.float8_e5m2", "f8e4m3fn": "torch.float8_e4m3fn", "f8e5m2fnuz": "torch.float8_e5m2fnuz",
    "f8e4m3fnuz": "torch.float8_e4m3fnuz",
}


def frames_of(stack_trace: str) -> list[tuple[str, int, str]]:
    """The (file, line, function) frames of a stack trace as Python and FX print it."""
    return list(_parsed(stack_trace or ""))


@lru_cache(maxsize=65536)
def _parsed(stack_trace: str) -> tuple[tuple[str, int, str], ...]:
    """A stack trace's frames, parsed once: the nodes of one layer share their traces, and a library model's
    are long (parsing each node's afresh took 1.5 s of a 32-layer Llama's capture)."""
    return tuple((m["file"], int(m["line"]), m["fn"]) for m in _FRAME.finditer(stack_trace))


def dtype_name(abbreviation: str) -> str:
    """``f32`` -> ``torch.float32``; an abbreviation neither table knows comes back as it is."""
    known = DTYPE_NAMES.get(abbreviation)
    return known if known is not None else torch_dtype_names().get(abbreviation, abbreviation)


@lru_cache(maxsize=1)
def torch_dtype_names() -> dict[str, str]:
    """The installed torch's own table (imports torch)."""
    try:
        from torch.utils._dtype_abbrs import dtype_abbrs
    except ImportError:
        import torch.fx.graph

        dtype_abbrs = getattr(torch.fx.graph, "dtype_abbrs", {})
    return {abbr: str(dtype) for dtype, abbr in dict(dtype_abbrs).items()}
