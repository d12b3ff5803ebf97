"""SASS of a cubin: NVIDIA's disassemblers, run on a private temporary file.

``nvdisasm -c -g`` prints the code with the cubin's line table (``//## File ..., line N``), which maps
SASS back to source; ``cuobjdump -sass`` is the fallback (no line info). The tools are the ones Triton
ships and configures (``triton.knobs.nvidia``), else the ones on PATH. Arguments are passed as a list
(no shell), and the only path given is a temporary file this module creates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

TIMEOUT_S = 60


def tool(name: str) -> str | None:
    """Path of an executable NVIDIA tool (``nvdisasm``, ``cuobjdump``), or None."""
    candidates = []
    try:
        from triton import knobs

        candidates.append(getattr(knobs.nvidia, name).path)
    except Exception:  # no Triton, or a Triton without this knob
        pass
    candidates.append(shutil.which(name))
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def disassemble(cubin: bytes) -> tuple[str | None, str]:
    """(SASS text or None, a note saying which tool produced it or why there is none)."""
    commands = []
    if (nvdisasm := tool("nvdisasm")) is not None:
        commands.append(("nvdisasm -c -g", [nvdisasm, "-c", "-g"]))
    if (cuobjdump := tool("cuobjdump")) is not None:
        commands.append(("cuobjdump -sass (no line info)", [cuobjdump, "-sass"]))
    if not commands:
        return None, "no nvdisasm or cuobjdump on this machine: no SASS"
    handle, path = tempfile.mkstemp(suffix=".cubin")
    errors = []
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(cubin)
        for label, argv in commands:
            try:
                result = subprocess.run([*argv, path], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as error:
                errors.append(f"{label}: {error}")
                continue
            if result.returncode == 0 and result.stdout.strip():
                return result.stdout, f"SASS from {label}"
            errors.append(f"{label} exited {result.returncode}: {result.stderr.strip()[:200]}")
    finally:
        os.remove(path)
    return None, "SASS disassembly failed: " + "; ".join(errors)
