"""Keep the frames of torch.nn modules in the stack traces Dynamo records.

Dynamo leaves every frame of a file under ``torch/nn/modules`` out of an FX node's ``stack_trace``
(``InstructionTranslatorBase.is_co_filename_from_nn_modules``). A model built from torch.nn layers, or
passed as a module, then traces back to nothing but the call of the model. For the capture the filter
is switched off, so each node's stack reaches down into ``Conv2d.forward``; the frames are marked as
library frames afterwards (``compiler.pipeline.frames``). Only the recorded text changes, not what compiles.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from torch._dynamo import symbolic_convert as _symbolic_convert

_NAME = "is_co_filename_from_nn_modules"


def _never_skip(self: object) -> bool:
    return False


@contextlib.contextmanager
def keep_nn_module_frames() -> Iterator[None]:
    translator = getattr(_symbolic_convert, "InstructionTranslatorBase", None)
    owner = next((cls for cls in getattr(translator, "__mro__", ()) if _NAME in vars(cls)), None)
    if owner is None:  # a torch that keeps these frames anyway (or filters them elsewhere)
        yield
        return
    original = vars(owner)[_NAME]
    setattr(owner, _NAME, _never_skip)
    try:
        yield
    finally:
        setattr(owner, _NAME, original)
