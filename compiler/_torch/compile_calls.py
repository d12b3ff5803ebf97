"""Seeing the torch.compile'd calls a piece of ordinary code makes (``%%compile --trace``).

Code that already wraps its model in ``torch.compile`` should be explorable without editing it. Two
ways a compiled callable reaches such code, and one adapter for each:

- it existed before: ``original_of`` unwraps it. Dynamo marks its wrappers with attributes
  (``_torchdynamo_orig_callable`` on a compiled function, ``_orig_mod`` on an OptimizedModule);
  probed with ``getattr``, never by type, so a renamed class does not break it.
- the code calls ``torch.compile`` itself: ``compile_redirected`` swaps ``torch.compile`` for the
  duration of one block, so the wrapper it returns is ours. This is a patch of a public symbol, kept
  here because it changes torch's global state; the original is restored on exit, also on errors.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch

_ORIGINAL_ATTRS = ("_torchdynamo_orig_callable", "_orig_mod")


def original_of(obj: Any) -> Any | None:
    """What a torch.compile wrapper wraps, or None when ``obj`` is not one."""
    for attr in _ORIGINAL_ATTRS:
        try:
            inner = getattr(obj, attr, None)
        except Exception:  # exotic objects whose __getattr__ raises something else
            continue
        if inner is not None and callable(inner):
            return inner
    return None


class Redirect:
    """The active redirect: ``original`` is the real torch.compile; ``paused()`` restores it for a block
    (a capture calls torch.compile itself and must get the real one)."""

    def __init__(self, original: Callable[..., Any], redirected: Callable[..., Any]) -> None:
        self.original = original
        self.redirected = redirected

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        if torch.compile is not self.redirected:  # the redirect already ended: nothing to pause
            yield
            return
        torch.compile = self.original  # type: ignore[assignment]
        try:
            yield
        finally:
            torch.compile = self.redirected  # type: ignore[assignment]


@contextlib.contextmanager
def compile_redirected(make: Callable[[Any, dict[str, Any]], Any]) -> Iterator[Redirect]:
    """While active, ``torch.compile(model, **options)`` returns ``make(model, options)``.

    The decorator forms (``@torch.compile`` and ``@torch.compile(mode=...)``) are handled too.
    """
    original = torch.compile

    def redirected(model: Any = None, **options: Any) -> Any:
        if model is None:
            return lambda fn: make(fn, options)
        return make(model, options)

    redirected.__doc__ = original.__doc__
    torch.compile = redirected  # type: ignore[assignment]
    try:
        yield Redirect(original, redirected)
    finally:
        torch.compile = original  # type: ignore[assignment]
