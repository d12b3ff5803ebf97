"""The full name of a file Dynamo printed shortened, as in a guard's ``# x = self.a(x)  # nn/modules/linear.py:134``.

Dynamo writes a guard's location through ``torch.utils._traceback.shorten_filename``: the path after its
common prefix with torch's own directory, so ``<torch>/nn/modules/linear.py`` reads ``nn/modules/linear.py``
and ``/tmp/train.py`` (sharing only ``/``) reads ``mp/train.py``. The Dynamo stage resolves such a name
against the files the records name in full (compiler/pipeline/dynamo_records.py); when none of them does,
``full_name`` looks where the shortening came from: torch's directory (found without importing torch: a
log is read without it), then the files of the modules this process has loaded (the guarded code was
traced, so its module is loaded). The answer does not depend on which records have arrived yet, so a
Dynamo stage read early says what one read later says.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import lru_cache

_found: dict[str, str] = {}  # short name -> full name, once found (a file found stays where it is)


def full_name(short: str) -> str | None:
    """The file ``short`` (a name Dynamo shortened) stands for in this process, or None when no file of
    torch's directory or of a loaded module ends with it."""
    if short in _found:
        return _found[short]
    if os.path.isabs(short):
        return None
    under_torch = os.path.join(torch_dir, short) if (torch_dir := _torch_dir()) else None
    if under_torch and os.path.isfile(under_torch):
        _found[short] = under_torch
        return under_torch
    # the prefix shared with torch's directory, and the separator after it, were cut: for a prefix of "/"
    # alone that separator is the name's first letter
    candidates = {file for module in list(sys.modules.values())
                  if isinstance(file := getattr(module, "__file__", None), str)
                  and (file.endswith(os.sep + short) or file[2:] == short)}
    if not candidates:
        return None
    _found[short] = min(candidates, key=len)
    return _found[short]


@lru_cache(maxsize=1)
def _torch_dir() -> str | None:
    """torch's directory, found without importing torch (a TORCH_TRACE log is read without it); None
    where torch is not installed."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    return os.path.dirname(os.path.abspath(spec.origin)) if spec is not None and spec.origin else None
