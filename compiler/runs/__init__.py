"""What we learn by running the compiled program: kernel timing against the device's limits (bench),
kernel edits checked in a worker process, and determinism.

These work on the live Compilation (the process that compiled it); each returns a report dataclass.
Reports that belong in the trace serialize into it like a stage (see compiler/SCHEMA.md).
"""
