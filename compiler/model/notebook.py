"""Whether this process is a Jupyter kernel: where views are widgets, not terminal drawings.

Asked by the compiler (the watch's live summary draws in a terminal only) and by explorer (progress bars,
``explorer.show``) alike, through ``compiler.api.in_notebook``: one answer, written once.
"""

from __future__ import annotations

import sys


def in_notebook() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel), False in a terminal or a plain script."""
    shell_module = sys.modules.get("IPython")
    get_shell = getattr(shell_module, "get_ipython", None)
    shell = get_shell() if callable(get_shell) else None
    return shell is not None and getattr(shell, "kernel", None) is not None
