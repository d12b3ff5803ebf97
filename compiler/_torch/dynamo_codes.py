"""Dynamo's per-code caches: the codes a Compilation runs stay cached while it lives.

Dynamo stores compiled frames on the code object. A capture compiles a private copy of the user's
entry function (its own code object); frames Dynamo converts beyond it (a module's ``forward`` after a
graph break inside it, the resume functions after a break) keep entries on their code objects too.
Those entries are the compiled program the explorer shows, so runs of the Compilation (profile,
numerics, bench...) must execute them:

- ``converted_frames`` records every code object Dynamo converts during a capture;
- ``hold`` keeps their entries while the Compilation lives (a run of a module whose graph breaks
  inside a submodule no longer converts that submodule's frame again), and when the last Compilation
  holding a code is freed, resets the codes that had no entry before a capture, so caches of other
  functions are never touched and repeated captures do not pile entries up;
- the capture's *private* codes (its copy of the entry function and the resume functions Dynamo made
  from it: nobody else ever runs them) are also kept out of ``torch._dynamo.reset()``'s reach (reset
  clears the cache of every code Dynamo's trackers list). Shared codes (the user's ``forward``) are
  left to reset, which the user asked for: a run that needs one again fails with a clear error.
"""

from __future__ import annotations

import atexit
import contextlib
import types
import weakref
from typing import Any, Callable, Iterator

from torch._dynamo import config as _dynamo_config
from torch._dynamo import convert_frame as _convert_frame
from torch._dynamo import eval_frame as _eval_frame
from torch._dynamo import resume_execution as _resume_execution
from torch._dynamo import utils as _dynamo_utils

from . import guard

# A capture's entries stay on shared code objects while its Compilation lives: captures of the same
# model in one session must not hit Dynamo's per-code recompile limit (8) and silently run eagerly.
CAPTURE_RECOMPILE_LIMIT = 1 << 16

_holders: dict[types.CodeType, int] = {}  # code -> live Compilations holding it
_fresh: set[types.CodeType] = set()  # held codes that had no cache entry before the capture converted them
_private: set[types.CodeType] = set()  # held codes only a capture runs (kept through reset)


def _cache_entries(code: types.CodeType) -> int:
    lister = getattr(_eval_frame, "_debug_get_cache_entry_list", None)
    if lister is None:
        return 0
    try:
        return len(lister(code))
    except Exception:
        return 0


@contextlib.contextmanager
def converted_frames(on_code: Callable[[types.CodeType, bool], None]) -> Iterator[None]:
    """Call ``on_code(code, fresh)`` for each code object Dynamo converts (``fresh``: it had no cache entry
    before), with the recompile limit raised for the capture."""
    seen: set[types.CodeType] = set()

    def hook(code: types.CodeType, new_code: types.CodeType) -> None:
        if code not in seen:
            seen.add(code)
            with guard.never_breaking(__name__):
                on_code(code, _cache_entries(code) == 0)
        return None

    limits = {key: CAPTURE_RECOMPILE_LIMIT for key in ("recompile_limit", "accumulated_recompile_limit")
              if hasattr(_dynamo_config, key)}
    handle = _convert_frame.register_bytecode_hook(hook)
    try:
        with _dynamo_config.patch(limits):
            yield
    finally:
        handle.remove()


def _untrack(code: types.CodeType) -> None:
    """Drop ``code`` from the trackers ``torch._dynamo.reset()`` walks to clear caches."""
    for tracker in (getattr(_convert_frame, "input_codes", None), getattr(_convert_frame, "output_codes", None)):
        if tracker is None or id(code) not in getattr(tracker, "seen_ids", ()):
            continue
        tracker.seen = [ref for ref in tracker.seen if ref() is not code]
        tracker.seen_ids.discard(id(code))


def private_codes(entry: types.CodeType) -> set[types.CodeType]:
    """``entry`` and every resume function Dynamo generated from it (and from those, after later breaks)."""
    resumes = getattr(getattr(_resume_execution, "ContinueExecutionCache", None), "cache", None)
    found, todo = set(), [entry]
    while todo:
        code = todo.pop()
        if code in found:
            continue
        found.add(code)
        generated = resumes.get(code) if resumes is not None else None
        todo.extend((generated or {}).values())
    return found


def hold(owner: Any, codes: dict[types.CodeType, bool], private: set[types.CodeType]) -> None:
    """Keep the cache entries of ``codes`` (code -> fresh) while ``owner`` lives, the ``private`` ones also
    through ``torch._dynamo.reset()``; afterwards reset the fresh ones no other live owner holds."""
    _release_at_exit()
    for code, fresh in codes.items():
        if code in private:
            _untrack(code)
            _private.add(code)
        _holders[code] = _holders.get(code, 0) + 1
        if fresh:
            _fresh.add(code)
    weakref.finalize(owner, _release, list(codes))


@contextlib.contextmanager
def forgotten_unless_held(codes: dict[types.CodeType, bool], held: set[types.CodeType]) -> Iterator[None]:
    """A capture that ends without a Compilation (interrupted) resets the fresh codes it converted."""
    try:
        yield
    finally:
        reset = getattr(_eval_frame, "reset_code", None)
        for code, fresh in codes.items():
            if fresh and code not in held and code not in _holders and reset is not None:
                reset(code)


def _release(codes: list[types.CodeType]) -> None:
    reset = getattr(_eval_frame, "reset_code", None)
    for code in codes:
        if code not in _holders:  # already reset at exit
            continue
        _holders[code] -= 1
        if _holders[code]:
            continue
        del _holders[code]
        _private.discard(code)
        if code in _fresh:
            _fresh.discard(code)
            if reset is not None:
                reset(code)


def restore_code_map() -> None:
    """Map the compiled code of every held private frame back to its frame code in Dynamo's
    ``orig_code_map``, which ``reset()`` empties: Dynamo reads it when a guard of such a frame fails."""
    code_map = getattr(_dynamo_utils, "orig_code_map", None)
    lister = getattr(_eval_frame, "_debug_get_cache_entry_list", None)
    if code_map is None or lister is None:
        return
    for code in _private:
        for entry in lister(code):
            if entry.code not in code_map:
                code_map[entry.code] = code


def _release_at_exit() -> None:
    """Reset every held code before the interpreter exits.

    Dynamo put names (``__builtins_dict___N``) into the globals of the functions it compiled and
    deletes them when their compiled code is freed. A notebook's namespace is cleared at exit before
    that code is freed, so each deletion failed with a printed KeyError. atexit runs the last
    registered handler first: registered again at every hold, this one runs before the shell's own
    (made before the capture), and frees the code while the namespace still holds the names."""
    atexit.unregister(_reset_all_held)
    atexit.register(_reset_all_held)


def _reset_all_held() -> None:
    reset = getattr(_eval_frame, "reset_code", None)
    held = list(_holders)
    _holders.clear()
    _private.clear()
    _fresh.clear()
    if reset is not None:
        for code in held:
            reset(code)
