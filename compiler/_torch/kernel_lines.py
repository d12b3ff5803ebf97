"""Which scheduler node generated which kernel source line.

Inductor generates a fused kernel node by node inside ``Kernel.set_current_node(node)``. Wrapping that
context manager lets us diff the kernel's line buffers (loads, compute, stores, reduction suffixes...)
before and after each node, so every generated line is attributed to the node that wrote it. The
lines are matched back to the final kernel source by text.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from torch._inductor.codegen import common as _common
from torch._inductor.utils import IndentedBuffer

from . import guard, method_patch


def _line_text(line: Any) -> str | None:
    text = getattr(line, "line", line)
    return text.strip() if isinstance(text, str) else None


def _buffers(kernel: Any) -> dict[str, IndentedBuffer]:
    return {name: value for name, value in vars(kernel).items() if isinstance(value, IndentedBuffer)}


@contextlib.contextmanager
def on_node_lines(callback: Callable[[str, list[str]], None]) -> Iterator[None]:
    """Call ``callback(scheduler_node_name, new_lines)`` after each node's codegen in any kernel."""
    original = _common.Kernel.set_current_node

    @contextlib.contextmanager
    def set_current_node(self: Any, node: Any) -> Iterator[None]:
        before = {name: len(buf._lines) for name, buf in _buffers(self).items()}
        with original(self, node):
            yield
        with guard.never_breaking(__name__):
            lines: list[str] = []
            for name, buf in _buffers(self).items():
                start = before.get(name, 0)
                for line in buf._lines[start if len(buf._lines) >= start else 0:]:
                    text = _line_text(line)
                    if text:
                        lines.append(text)
            callback(node.get_name(), lines)

    with method_patch.replaced(_common.Kernel, "set_current_node", set_current_node):
        yield
