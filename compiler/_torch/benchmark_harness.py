"""Inductor's benchmark harness for Triton kernels (``benchmark_kernel``), without what it costs a capture.

A GPU capture turns ``benchmark_kernel`` on: each kernel's module then carries ``get_args()`` and
``call()``, which ``k.bench()``, ``k.edit()`` and the memory measure run. Two side effects of the switch
are undone while a capture runs:

- **The import in compile workers.** The harness starts with ``from torch._dynamo.testing import
  rand_strided``. Inductor's compile workers load every kernel module to compile it, and a worker that
  has not imported Dynamo yet pays for it there, again whenever the pool restarts (it quiesces after a
  minute idle): with that import a capture took 1.3 to 1.6x as long as plain torch.compile on an H100
  (``benchmarks/capture_sessions.py``). The capture's kernels define ``rand_strided`` as a function that
  imports it when ``get_args()`` first runs.
- **The notice.** ``GraphLowering.compile_to_module`` prints ``Compiled module path: <file>`` to
  ``sys.stderr`` for every graph; plain torch.compile prints nothing, so in a notebook the capture would
  show a red line per graph. ``sys.stderr`` is a thin stream that drops exactly that line meanwhile.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, TextIO

NOTICE = "Compiled module path: "  # torch/_inductor/graph.py, under ``if config.benchmark_kernel``
EAGER_IMPORT = "from torch._dynamo.testing import rand_strided"
LAZY_IMPORT = '''def rand_strided(*args, **kwargs):  # Dynamo is imported when get_args() runs, not at load
    from torch._dynamo.testing import rand_strided as make
    return make(*args, **kwargs)'''


@contextlib.contextmanager
def side_effects_removed(active: bool = True) -> Iterator[None]:
    """Both undone while active (a capture with ``benchmark_kernel`` on); everything restored on exit."""
    if not active:
        yield
        return
    with lazy_harness_import(), quiet_module_path():
        yield


@contextlib.contextmanager
def lazy_harness_import() -> Iterator[None]:
    """Kernel classes whose ``imports_for_benchmark_kernel`` holds the eager import write the lazy one."""
    patched: list[tuple[type, Any]] = []
    for cls in _harness_classes():
        original = cls.__dict__["imports_for_benchmark_kernel"]

        def imports(self: Any, _original: Any = original) -> str:
            return _original(self).replace(EAGER_IMPORT, LAZY_IMPORT)

        cls.imports_for_benchmark_kernel = imports
        patched.append((cls, original))
    try:
        yield
    finally:
        for cls, original in patched:
            cls.imports_for_benchmark_kernel = original


def _harness_classes() -> list[type]:
    """Inductor's Triton kernel classes that define the harness imports themselves (torch 2.11 to 2.14:
    TritonKernel and ComboKernel; templates inherit TritonKernel's)."""
    classes: list[type] = []
    with contextlib.suppress(ImportError):
        from torch._inductor.codegen.triton import TritonKernel

        classes.append(TritonKernel)
    with contextlib.suppress(ImportError):
        from torch._inductor.codegen.triton_combo_kernel import ComboKernel

        classes.append(ComboKernel)
    return [cls for cls in classes if "imports_for_benchmark_kernel" in cls.__dict__]


class _WithoutNotice:
    """``stream`` minus Inductor's notice. ``print`` writes the text and its newline in two calls, so the
    newline that follows a dropped notice is dropped too."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream
        self._drop_newline = False

    def write(self, text: str) -> int:
        if text.startswith(NOTICE):
            self._drop_newline = "\n" not in text
            return len(text)
        if self._drop_newline and text == "\n":
            self._drop_newline = False
            return len(text)
        self._drop_newline = False
        return self.wrapped.write(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, encoding, isatty...: the wrapped stream's
        return getattr(self.wrapped, name)


@contextlib.contextmanager
def quiet_module_path() -> Iterator[None]:
    """Drop Inductor's module-path notice from ``sys.stderr``. The stream found on entry is put back on
    exit, unless someone else replaced ``sys.stderr`` meanwhile (theirs is left alone)."""
    found = sys.stderr
    filtered = _WithoutNotice(found)
    sys.stderr = filtered  # type: ignore[assignment]
    try:
        yield
    finally:
        if sys.stderr is filtered:
            sys.stderr = found
