"""``torch.compile(dynamic=...)`` as a Dynamo config patch around the calls that may compile, only.

``torch.compile(fn, dynamic=False)`` patches Dynamo's shape config around every call of the compiled
function (a closure patcher among its enter/exit hooks): about 10 us a call on the CPU, which a
launch-bound GPU program pays on every run (a 12 us-of-kernels program ran 1.1x plain torch.compile's
time per call). The capture compiles without ``dynamic`` and patches the same settings around the
calls that compile (the capture and ``c.recompile``), so a run of the captured program costs what one of
plain torch.compile costs; runs cannot compile anyway (``runs/replay.captured_only``).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch


def settings(dynamic: bool | None) -> dict[str, bool]:
    """What ``torch.compile(dynamic=...)`` patches (torch/_dynamo/eval_frame.py, make_set_enable_dynamic)."""
    if dynamic is None:
        return {}
    if dynamic:
        return {"assume_static_by_default": False}
    return {"automatic_dynamic_shapes": False, "assume_static_by_default": True}


@contextlib.contextmanager
def compiling_with(dynamic: bool | None) -> Iterator[None]:
    with torch._dynamo.config.patch(settings(dynamic)):
        yield
