"""The one guard of every capture hook: what a hook's own code raises never changes what torch compiles.

Each adapter of this folder runs code of its own inside torch (reading Inductor's objects, calling the
capture's listener). A bug there, or an Inductor object laid out otherwise than this torch's, must not
break the user's compile; it must not vanish either, or a missing stage would have no explanation. So
every adapter runs that code under ``never_breaking(__name__)``, which swallows the exception and tells
the capture which adapter failed and how (``hooks.CaptureListener.on_hook_failed``): the compilation
keeps it among its notes (``c.notes``).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Callable, Iterator

# (adapter, exception type name, message): how a swallowed failure is reported
Reporter = Callable[[str, str, str], None]

_reporters: list[Reporter] = []  # the capture blocks entered, innermost last


@contextlib.contextmanager
def reporting_to(report: Reporter) -> Iterator[None]:
    """Failures the guard swallows inside this block go to ``report`` (the innermost block's, when nested)."""
    _reporters.append(report)
    try:
        yield
    finally:
        _reporters.remove(report)


_HOOK_CONSEQUENCE = "the compile went on without what it records"


@contextlib.contextmanager
def never_breaking(adapter: str, work: str = "hook", consequence: str = _HOOK_CONSEQUENCE) -> Iterator[None]:
    """Run the block; an ``Exception`` it raises is swallowed and reported as ``adapter``'s (a module's
    ``__name__``: the note names the module's last part, ``kernel_lines``). An interrupt still stops it.
    Outside a capture the failure is a warning naming the ``work`` that failed and its ``consequence``
    (an adapter that runs after the compile, when something is first read, says what is left out)."""
    try:
        yield
    except Exception as error:
        _report(adapter.rsplit(".", 1)[-1], error, work, consequence)


def _report(adapter: str, error: Exception, work: str = "hook", consequence: str = _HOOK_CONSEQUENCE) -> None:
    text = str(error).strip()
    message = text.splitlines()[0][:300] if text else ""
    if _reporters:
        try:
            _reporters[-1](adapter, type(error).__name__, message)
            return
        except Exception:  # the report itself failed: say it the plain way below
            pass
    warnings.warn(f"inductor-explorer's {adapter} {work} failed ({type(error).__name__}: {message}); "
                  f"{consequence}", stacklevel=4)
