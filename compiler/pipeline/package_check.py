"""Whether a package just built can be loaded in this process, asked before it is.

A package's library that carries its own copy of the C++ runtime (libstdc++ linked statically: some GCC
builds do that by default, such as one installed under /opt and named by CXX) can crash torch's loader:
AOTInductor parses the device string with a ``std::regex`` inside the library, and with a second copy
of the runtime in the process it dies with signal 11 in the model container's constructor. Loading such
a package in the notebook's process would end the notebook, and every compilation in it. So when the
library names no C++ runtime among the libraries it needs, it is first loaded in a child process
(compiler/runs/package_worker.py); if it dies there, the capture raises ``CompileError`` naming the
compiler and what to change, and this process never loads it. A library that links the runtime
dynamically (the usual g++ and clang++) is loaded directly, at no cost.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import BinaryIO, Callable

import torch

from ..model.child_env import worker_env

_CPP_RUNTIMES = ("libstdc++", "libc++")
_SHT_DYNAMIC, _DT_NEEDED = 6, 1


def needed_libraries(elf: BinaryIO) -> list[str] | None:
    """The shared libraries an ELF64 little-endian file needs (its ``DT_NEEDED`` entries, as ``ldd`` and
    ``objdump -p`` list them); None for any other file. Reads only the headers and the dynamic section."""
    header = elf.read(64)
    if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        return None
    section_offset = struct.unpack_from("<Q", header, 0x28)[0]
    entry_size, count = struct.unpack_from("<HH", header, 0x3A)
    elf.seek(section_offset)
    table = elf.read(entry_size * count)
    sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * entry_size) for i in range(count)]
    needed: list[str] = []
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != _SHT_DYNAMIC:
            continue
        elf.seek(sections[link][4])
        strings = elf.read(sections[link][5])
        elf.seek(offset)
        dynamic = elf.read(size)
        for position in range(0, len(dynamic) - 15, 16):
            tag, value = struct.unpack_from("<qQ", dynamic, position)
            if tag == 0:
                break
            if tag == _DT_NEEDED:
                needed.append(strings[value:strings.index(b"\0", value)].decode())
    return needed


def own_cpp_runtime(package_path: str) -> list[str]:
    """The libraries of the package that carry their own C++ runtime (need no shared one)."""
    found = []
    with zipfile.ZipFile(package_path) as package:
        for name in package.namelist():
            if name.endswith(".so"):
                with package.open(name) as library:
                    needed = needed_libraries(library)
                if needed is not None and not any(lib.startswith(_CPP_RUNTIMES) for lib in needed):
                    found.append(name)
    return found


def loads_in_a_child(package_path: str, timeout_s: float = 600.0) -> str | None:
    """Load the package in a child process; None when it loads, else how the child ended."""
    with tempfile.TemporaryDirectory(prefix="explorer-package-load-") as folder:
        job = Path(folder) / "job.pt"
        torch.save({"package": package_path, "args": None, "kwargs": None}, job)
        done = subprocess.run([sys.executable, "-m", "compiler.runs.package_worker", str(job), folder],
                              env=worker_env(), capture_output=True, text=True, timeout=timeout_s)
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return f"died with signal {-done.returncode}"
    tail = " | ".join(line for line in done.stderr.strip().splitlines()[-3:] if line.strip())
    return f"failed (exit code {done.returncode}): {tail}"


def refusal(package_path: str, compiler: Callable[[], str]) -> str | None:
    """Why this process must not load the package (None: it may). Only a package whose libraries carry
    their own C++ runtime is tried in a child first; ``compiler()`` names the C++ compiler for the message
    (asked only then: finding it runs the compiler)."""
    carrying = own_cpp_runtime(package_path)
    if not carrying:
        return None
    outcome = loads_in_a_child(package_path)
    if outcome is None:
        return None
    return (f"loading the package {outcome} in a child process (this process is unaffected). Its library "
            f"{os.path.basename(carrying[0])} carries its own copy of the C++ runtime (libstdc++ linked statically "
            f"by the compiler {compiler()}), which torch's package loader cannot run beside its own. Build with a "
            "compiler that links libstdc++ dynamically: set CXX (e.g. CXX=/usr/bin/g++) before starting Python, "
            "or pass config={'cpp.cxx': ('/usr/bin/g++',)}")
