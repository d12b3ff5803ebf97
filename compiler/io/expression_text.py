"""What an index expression in a trace file may hold, checked without sympy.

A trace may come from anyone, and a loop-IR node's expressions are strings that sympy_text.py turns into
sympy objects (without ``eval``) only when someone looks at them. Loading a trace checks every one of
them first, here: a file holding anything else is refused when it is opened, and opening one needs no
sympy (importing it takes a third of a second).
"""

from __future__ import annotations

import re


class ExpressionError(ValueError):
    pass


_CHARACTERS = re.compile(r"[\w\s+\-*/%().,]*")
_ATTRIBUTE = re.compile(r"[A-Za-z_]\w*\s*\.")


def check_text(text: str) -> None:
    """Raise ExpressionError unless ``text`` is made only of what index expressions use: names, numbers,
    arithmetic, calls and parentheses (no strings, attributes, subscripts or keywords). A cheap check at
    load time; ``from_text`` checks the syntax again when the expression is built."""
    if not isinstance(text, str) or not _CHARACTERS.fullmatch(text) or _ATTRIBUTE.search(text):
        raise ExpressionError(f"unsupported syntax in index expression {text!r}")
