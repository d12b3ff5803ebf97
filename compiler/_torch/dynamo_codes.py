"""Keep Dynamo's per-code caches as they were.

Dynamo stores compiled frames on the code object. A capture compiles a private copy of the user's
entry function (its own code object, so its cache entries live and die with the Compilation). Frames
Dynamo converts beyond that copy (a module's ``forward`` after a graph break inside it, say) would keep
entries on shared code objects: every such code object that had no cache entry before the capture is
reset on exit, so repeated captures never pile up entries or hit the recompile limit, and caches of
other functions are never touched.
"""

from __future__ import annotations

import contextlib
import types
from typing import Callable, Iterator

from torch._dynamo import convert_frame as _convert_frame
from torch._dynamo import eval_frame as _eval_frame


def _cache_entries(code: types.CodeType) -> int:
    lister = getattr(_eval_frame, "_debug_get_cache_entry_list", None)
    if lister is None:
        return 0
    try:
        return len(lister(code))
    except Exception:
        return 0


@contextlib.contextmanager
def forget_converted_frames(keep: Callable[[types.CodeType], bool]) -> Iterator[list[types.CodeType]]:
    """Yield a list that fills with the code objects Dynamo converts; on exit reset the ones that had
    no entries before, except those ``keep`` accepts."""
    converted: list[types.CodeType] = []
    fresh: list[types.CodeType] = []

    def hook(code: types.CodeType, new_code: types.CodeType) -> None:
        if code not in converted:
            converted.append(code)
            if not keep(code) and _cache_entries(code) == 0:
                fresh.append(code)
        return None

    handle = _convert_frame.register_bytecode_hook(hook)
    try:
        yield converted
    finally:
        handle.remove()
        reset = getattr(_eval_frame, "reset_code", None)
        if reset is not None:
            for code in fresh:
                reset(code)
