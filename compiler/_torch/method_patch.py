"""One method of a torch class replaced for the duration of a block, the original put back on exit.

The capture's adapters observe Inductor by wrapping one method each (GraphLowering.register_operation,
Kernel.set_current_node, ...); each wrapper calls the original and tells a callback. This is the part
they share: install the wrapper, and restore the original also when the block raises.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator


_INHERITED = object()


@contextlib.contextmanager
def replaced(owner: Any, name: str, replacement: Callable[..., Any]) -> Iterator[None]:
    """``owner.name`` is ``replacement`` inside the block; afterwards it is what it was (inherited again
    when ``owner``, a class, module or object, did not define it itself)."""
    own = owner.__dict__.get(name, _INHERITED)
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        if own is _INHERITED:
            delattr(owner, name)
        else:
            setattr(owner, name, own)
