"""What we learn by running the compiled program: kernel timing against the device's limits (bench),
time in place (profile), each kernel against eager (numerics), determinism, measured memory, hardware
counters per kernel line (Nsight Compute, in a worker), kernel edits checked in a worker process and
run inside the whole program (substitution), and one kernel or one graph written out as a standalone
reproducer script.

These work on the live Compilation (the process that compiled it); each returns a report. Each module
fills its action slot of the model (compiler/model/slots.py) when imported here, so ``c.profile()``
and friends reach it without the model importing this room.
"""

from . import (  # noqa: F401 - each fills its slots
    bench, counters, determinism, diff, edit, graph_repro, memory_measure, numerics, profile, replay, repro, substitution,
)
