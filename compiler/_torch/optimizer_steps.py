"""Each eager ``step()`` of any torch optimizer, told to a callback: a watch without step marks makes one
step per optimizer step (compiler/pipeline/watch_steps.py).

torch.optim calls its global step hooks around every ``Optimizer.step`` (``register_optimizer_step_post_hook``
in ``torch.optim.optimizer``): the post hook is told after the parameters were updated, which is where a
training step ends. A ``step()`` that runs compiled (inside a ``torch.compile``d function) is not told: while
Dynamo traces the hook, ``torch.compiler.is_compiling()`` is True and the hook returns at once, so Dynamo
traces nothing of it (no graph break, no side effect in the user's graph). Probed by feature: a torch
without the hook tells nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from . import guard


def _is_compiling() -> Callable[[], bool]:
    import torch

    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return compiling if callable(compiling) else (lambda: False)


@contextlib.contextmanager
def on_optimizer_steps(callback: Callable[[Any], None]) -> Iterator[bool]:
    """Inside the block, ``callback(optimizer)`` after each eager ``step()`` of any optimizer; yields whether
    this torch has the hook. The hook is removed on exit."""
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:
        yield False
        return
    compiling = _is_compiling()

    def stepped(optimizer: Any, _args: Any, _kwargs: Any) -> None:
        if compiling():
            return
        with guard.never_breaking(__name__):
            callback(optimizer)

    handle = register_optimizer_step_post_hook(stepped)
    try:
        yield True
    finally:
        handle.remove()


def global_hooks() -> list[Any]:
    """The global post hooks registered now (tests compare them before and after a watch)."""
    import torch.optim.optimizer as optimizer

    return list(getattr(optimizer, "_global_optimizer_post_hooks", {}).values())
