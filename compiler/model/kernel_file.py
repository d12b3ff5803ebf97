"""Where a kernel's captured source sits in the file Python or Triton read it from.

The captured source and the file it was loaded from can differ above its first line: Inductor's own
file of a kernel starts with the newline that opens the string in its wrapper, and PyCodeCache, which
names a file by the hash of the stripped source, loads a later copy of the source from that file. Line
numbers from the file (Triton's IR locations, Nsight Compute's source page) are the source's plus the
lines above it.
"""

from __future__ import annotations

import re


def source_offset(file_text: str | None, kernel_source: str, kernel_name: str) -> int | None:
    """How many lines of the file come before the kernel's own first line: where the source appears in it,
    else where its ``def`` does (None: neither is found)."""
    if not file_text:
        return None
    at = file_text.find(kernel_source)
    if at >= 0:
        return file_text[:at].count("\n")
    def_line = re.compile(rf"^\s*def {re.escape(kernel_name)}\(")
    in_file = next((i for i, line in enumerate(file_text.splitlines()) if def_line.match(line)), None)
    in_kernel = next((i for i, line in enumerate(kernel_source.splitlines()) if def_line.match(line)), None)
    return None if in_file is None or in_kernel is None else in_file - in_kernel
