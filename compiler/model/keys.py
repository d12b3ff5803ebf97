"""How run reports name kernels: by id, qualified with the graph only where ids repeat.

Kernel ids are unique inside one graph; a compilation's forward and backward graphs may both define
``cpp_fused_0``. Reports (profiles, numerics) key kernels by id, and where an id occurs in several graphs
of the compilation, every occurrence is qualified as ``g1/cpp_fused_0``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def kernel_keys(c: Any) -> dict[tuple[str, str], str]:
    """(graph id, kernel id) -> the key reports use for that kernel."""
    counts = Counter(k.id for g in c.graphs for k in g.kernels)
    return {(g.id, k.id): (k.id if counts[k.id] == 1 else f"{g.id}/{k.id}") for g in c.graphs for k in g.kernels}
