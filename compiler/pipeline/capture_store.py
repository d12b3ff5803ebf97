"""The warm-capture store: what a capture built for each graph, kept beside Inductor's FX graph cache
under the key Inductor gave that graph.

A cold capture bypasses Inductor's caches, so a second ``explorer.compile`` of the same program paid a
whole compile where plain torch.compile loads its cache. A warm capture keeps Inductor's FX graph cache
on (``_torch/fx_graph_cache.py``), and AOTAutograd's around its compiles: a graph whose key this
store holds is loaded from Inductor's cache and its stages from here; any other graph misses, compiles
with every hook firing and is stored. The key is Inductor's own (the graph, its inputs, the Inductor
config, torch's and Triton's versions, the device) joined with what Inductor's key leaves out but the
stages show (``graph_digest``: the Dynamo graph's node names, the user's lines and modules), and the
store's folder is named after the explorer's sources (``stamp``), so a change of any of them makes a
capture cold again. What is measured (outputs, profiles, numerics) is always run anew.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import torch

from .._torch import fx_graph_cache, inductor_config, post_grad_replay
from ..model import slots
from ..model.compilation import Note
from ..model.stages import GraphCapture
from ..model.wrapper_fx import WrapperFx

_COMPILER_DIR = Path(__file__).resolve().parents[1]
_SUFFIX = ".json.gz"
# A served graph whose wrapper's FX form was never built before it was stored: why g.wrapper.fx is missing.
NO_WRAPPER_FX = ("served by a warm capture whose cold capture never built it; explorer.compile(..., cache=False) "
                 "captures cold and builds it")


@functools.cache
def stamp() -> str:
    """The explorer's sources as a name: a store written by other code is never read."""
    digest = hashlib.sha256()
    for path in sorted(_COMPILER_DIR.rglob("*.py")):
        digest.update(path.relative_to(_COMPILER_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def graph_digest(dynamo_module: torch.fx.GraphModule) -> str:
    """What of a Dynamo graph the stages show and Inductor's key does not see: two programs that compile
    to the same graph but name its values, or wrote it on lines or in modules, differently."""
    digest = hashlib.sha256()
    for _, module in dynamo_module.named_modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            modules = [(path, getattr(kind, "__qualname__", str(kind))) for path, kind in
                       (node.meta.get("nn_module_stack") or {}).values()]
            digest.update(repr((node.name, node.op, _target_name(node.target), node.meta.get("stack_trace"),
                                modules)).encode())
    return digest.hexdigest()[:16]


def _target_name(target: Any) -> str:
    """A node's target by name: a function's ``str`` carries its address, which the next process does not share."""
    if isinstance(target, str):
        return target
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return f"{getattr(target, '__module__', '')}.{name}" if name else type(target).__qualname__


class CaptureStore:
    """One capture's view of the store: it decides the capture's FX graph cache lookups
    (``fx_graph_cache.Store``) and remembers each lookup's key and outcome in order. ``graph`` is the
    digest of the Dynamo graph being compiled now (``graph_digest``), set before each inner compile."""

    def __init__(self) -> None:
        self.directory = fx_graph_cache.store_dir() / stamp()
        self.graph = ""
        # (entry, "hit" | "miss", Inductor's compiled graph on a hit), an entry named by ``entry``
        self.lookups: list[tuple[str, str, Any]] = []
        self._read: dict[str, dict[str, Any]] = {}  # entry -> its JSON, read by has_stored

    def entry(self, key: str) -> str:
        """The store's name for Inductor's ``key`` of the graph compiled now."""
        return f"{key}-{self.graph}"

    def has_stored(self, key: str) -> bool:
        """A graph is stored when its file reads back whole (a damaged one is as good as none: the graph
        compiles cold and is stored again)."""
        entry = self.entry(key)
        if entry not in self._read:
            try:
                with gzip.open(self._path(entry), "rt", encoding="utf-8") as file:
                    data = json.load(file)
            except (OSError, EOFError, ValueError):
                return False
            if not isinstance(data, dict):
                return False
            self._read[entry] = data
        return True

    def on_lookup(self, key: str, state: str, compiled: Any) -> None:
        self.lookups.append((self.entry(key), state, compiled))

    def stored(self, entry: str) -> tuple[dict[str, Any], list[Note]]:
        """The stored graph's JSON and the notes its compile made (torch's warnings, failed hooks)."""
        data = self._read[entry]
        return data.get("graph") or {}, [Note(*note) for note in data.get("notes") or []]

    def store(self, entry: str, graph: GraphCapture, notes: list[Note]) -> None:
        """Keep ``graph`` and ``notes`` as ``entry``; the graph is stored again once its wrapper's FX form
        is built."""
        self._write(entry, graph, notes)
        pending = graph.wrapper.fx_pending
        if pending is not None:
            graph.wrapper.fx_pending = functools.partial(self._built_and_stored, pending, entry, graph, notes)

    def _built_and_stored(self, build: Any, entry: str, graph: GraphCapture, notes: list[Note]) -> Any:
        built = build()
        graph.wrapper.fx_pending = None
        object.__setattr__(graph.wrapper, "fx", built)
        self._write(entry, graph, notes)
        return built

    def _write(self, entry: str, graph: GraphCapture, notes: list[Note]) -> None:
        """Written whole or not at all: a temporary file renamed into place."""
        data = {"graph": slots.stored_graph_json(graph), "notes": [[n.kind, n.source, n.message] for n in notes]}
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as file:
                file.write(json.dumps(data, separators=(",", ":")).encode("utf-8"))
            os.replace(temporary, self._path(entry))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _path(self, entry: str) -> Path:
        return self.directory / f"{entry}{_SUFFIX}"


def lookup_of(store: CaptureStore | None, since: int) -> tuple[str, str] | None:
    """The first lookup made after the store had ``since`` of them, (entry, outcome): an inner compile's own
    (the lookup comes before anything it compiles inside)."""
    if store is None or len(store.lookups) <= since:
        return None
    entry, state, _ = store.lookups[since]
    return entry, state


def rebuilt_post_grad(module: torch.fx.GraphModule, inputs: list[Any], is_inference: bool,
                      settings: dict[str, Any]) -> torch.fx.GraphModule | None:
    """The post-grad GraphModule of a graph the FX graph cache served: ``module`` (what Inductor was given)
    rewritten by its post-grad passes under the capture's toggles; None when they could not run."""
    with inductor_config.patched(settings):
        return module if post_grad_replay.replay(module, inputs, is_inference) else None


def _with_stage_nodes(rebuild: Callable[[], torch.fx.GraphModule | None], names: set[str]
                      ) -> torch.fx.GraphModule | None:
    """What ``rebuild`` made, if it has the stored post-grad stage's nodes (not when the config changed
    since the capture, or the rebuild failed)."""
    module = rebuild()
    if module is None:
        return None
    made = {node.name for node in module.graph.nodes if node.op == "call_function"}
    return module if made == names else None


def served_graph(data: dict[str, Any], dynamo_module: Any, rebuild_post_grad: Callable[[], Any],
                 compiled_fn: Any) -> GraphCapture:
    """The stored graph with this process's live parts: the Dynamo GraphModule, the post-grad one (made by
    ``rebuild_post_grad`` when first read) and Inductor's compiled callable."""
    graph = slots.stored_graph(data)
    graph.fx.module = dynamo_module
    names = {node.name for node in graph.post_grad.nodes if node.op == "call_function"}
    graph.post_grad.module_pending = functools.partial(_with_stage_nodes, rebuild_post_grad, names)
    graph.compiled_fn = compiled_fn
    if graph.wrapper.fx is None and graph.wrapper.language == "python":
        graph.wrapper.fx = WrapperFx(status="unsupported", reason=NO_WRAPPER_FX)
    graph.cache = "served"
    return graph
