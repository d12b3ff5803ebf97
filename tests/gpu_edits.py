"""Source edits of a Triton kernel used by the GPU tests and notebooks: right, wrong, broken, faulting."""

from __future__ import annotations

import re

_STORE = re.compile(r"tl\.store\((?P<ptr>\w+) \+ \((?P<index>[^)]*)\), (?P<value>\w+), (?P<mask>[^)]*)\)")


def _rewrite_store(source: str, rewrite) -> str:
    match = _STORE.search(source)
    if match is None:
        raise ValueError("no tl.store line to edit in this kernel")
    return source[: match.start()] + rewrite(match) + source[match.end():]


def equivalent(source: str) -> str:
    """Multiply the stored value by 1.0: same results."""
    return _rewrite_store(source, lambda m: f"tl.store({m['ptr']} + ({m['index']}), {m['value']} * 1.0, {m['mask']})")


def wrong(source: str) -> str:
    """Scale the stored value: a mismatch the check must report."""
    return _rewrite_store(source, lambda m: f"tl.store({m['ptr']} + ({m['index']}), {m['value']} * 1.5, {m['mask']})")


def syntax_error(source: str) -> str:
    return source.replace("@triton.jit", "@triton.jit\ndef broken(:\n    pass\n@triton.jit", 1)


def out_of_bounds(source: str) -> str:
    """Store far past the end of the buffer, unmasked: faults on the device."""
    return _rewrite_store(source, lambda m: f"tl.store({m['ptr']} + ({m['index']}) + 4000000000, {m['value']}, None)")
