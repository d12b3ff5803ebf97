"""The CUDA graph tree's events while the explorer runs a live compilation (``c.run()``, a profile's warm-up,
``c.cudagraphs.measure()``), told to each graph's ``g.cudagraphs.events``."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .._torch import cudagraph_tree
from ..model.cudagraph_events import EventRecorder


@contextlib.contextmanager
def observed(c: Any, run: str) -> Iterator[None]:
    """Inside the block, what the tree does with ``c``'s graphs joins their events, marked ``run``; nothing
    is watched for a compilation without CUDA graphs."""
    graphs = [g for g in c.graphs if g.cudagraphs is not None and g.compiled_fn is not None]
    if not graphs or not cudagraph_tree.available():
        yield
        return
    recorder = EventRecorder(run, cudagraph_tree.place)
    for graph in graphs:
        recorder.add(graph.compiled_fn, graph.cudagraphs, graph)
    with cudagraph_tree.observed(recorder):
        yield
