"""Seeing each kernel call the compiled program makes, by swapping the wrapper's kernel globals.

Inductor's wrapper calls every generated kernel through a global of its loaded module
(``cpp_fused_add_0(...)`` for C++, ``triton_poi_fused_add_0.run(...)`` for Triton), and every
``extern_kernels.mm(..., out=buf)`` call through the module's ``extern_kernels`` global; all are looked
up at call time. For the duration of a run (a profile, a numerics check) they are swapped for thin
stand-ins that hand each call to an observer, and the graph's ``current_callable`` (what
``CompiledFxGraph.__call__`` runs with the graph's inputs) is wrapped the same way. Everything is put
back on exit, also when a run raises. Under CUDA graphs (``mode="reduce-overhead"``) a replay runs none of
the wrapper's Python, so while kernel globals are swapped each function runs without its CUDA graph.

An observer is ``observe(label, invoke, args, kwargs) -> result`` and must return ``invoke()``'s result.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from . import cudagraph_tree

Observer = Callable[[str, Callable[[], Any], tuple[Any, ...], dict[str, Any]], Any]


class _ObservedLaunch:
    """Stands in for a Triton kernel object: ``.run`` goes through the observer; the rest forwards."""

    def __init__(self, kernel: Any, label: str, observe: Observer) -> None:
        self._kernel = kernel
        self._label = label
        self._observe = observe

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._observe(self._label, lambda: self._kernel.run(*args, **kwargs), args, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kernel, name)


class _ObservedExterns:
    """Stands in for the wrapper's ``extern_kernels`` namespace: ``extern_kernels.mm(...)`` is observed
    under the label ``prefix + "mm"``."""

    def __init__(self, namespace: Any, prefix: str, observe: Observer) -> None:
        self._namespace = namespace
        self._prefix = prefix
        self._observe = observe

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._namespace, name)
        if not callable(fn):
            return fn

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._observe(self._prefix + name, lambda: fn(*args, **kwargs), args, kwargs)

        return call


def _observed(kernel: Any, label: str, observe: Observer) -> Any:
    if callable(getattr(kernel, "run", None)):
        return _ObservedLaunch(kernel, label, observe)

    def call(*args: Any, **kwargs: Any) -> Any:
        return observe(label, lambda: kernel(*args, **kwargs), args, kwargs)

    return call


@contextlib.contextmanager
def observed_kernels(namespaces: list[tuple[dict[str, Any], dict[str, str]]], observe: Observer,
                     extern_prefixes: dict[int, str] | None = None) -> Iterator[int]:
    """Route calls of the named kernel globals through ``observe``: ``[(wrapper globals, {name: label})]``.

    ``extern_prefixes`` maps ``id(namespace)`` to a label prefix: that namespace's ``extern_kernels``
    calls are observed too. Yields how many globals were swapped.
    """
    swapped: list[tuple[dict[str, Any], str, Any]] = []
    prefixes = extern_prefixes or {}
    try:
        for namespace, labels in namespaces:
            for name, label in labels.items():
                original = namespace.get(name)
                if original is None or not callable(getattr(original, "run", original)):
                    continue
                namespace[name] = _observed(original, label, observe)
                swapped.append((namespace, name, original))
            prefix = prefixes.get(id(namespace))
            if prefix is not None and namespace.get("extern_kernels") is not None:
                original = namespace["extern_kernels"]
                namespace["extern_kernels"] = _ObservedExterns(original, prefix, observe)
                swapped.append((namespace, "extern_kernels", original))
        # a CUDA graph's replay runs no Python: the kernels observed must launch one by one (mode="reduce-overhead")
        with cudagraph_tree.without_cuda_graphs() if swapped else contextlib.nullcontext():
            yield len(swapped)
    finally:
        for namespace, name, original in reversed(swapped):
            namespace[name] = original


@contextlib.contextmanager
def observed_graph_calls(graphs: list[tuple[Any, str]], observe: Observer) -> Iterator[int]:
    """Route each compiled graph's calls (``current_callable(inputs)``) through ``observe`` under its label:
    ``[(CompiledFxGraph, label)]``. Yields how many graphs could be observed."""
    swapped: list[tuple[Any, Any]] = []
    try:
        for compiled, label in graphs:
            original = getattr(compiled, "current_callable", None)
            if original is None:
                continue

            def call(inputs: Any, _original: Any = original, _label: str = label) -> Any:
                return observe(_label, lambda: _original(inputs), (inputs,), {})

            compiled.current_callable = call
            swapped.append((compiled, original))
        yield len(swapped)
    finally:
        for compiled, original in reversed(swapped):
            compiled.current_callable = original
