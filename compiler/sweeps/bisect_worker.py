"""A bisect trial worker: ``python -m compiler.sweeps.bisect_worker``, started by compiler/sweeps/bisect_pool.py.

A trial that segfaults, calls ``os._exit`` or hangs takes only this process with it: the bisect sees a trial
result (its exit code, or the timeout) and goes on in a new worker. Like the sweep worker
(compiler/sweeps/worker.py), it answers on what was stdout, pointed at stderr first so that whatever the
user's code or torch prints cannot break the channel. Requests: ``("program", bytes, seed)`` (the function,
inputs and kwargs, packed by compiler/sweeps/payload.py), ``("trial", spec, bisector_files)`` answered by
``("done", result)``, ``("stop",)``. ``run_trial`` is also the body of a Ray task.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any


def load_program(data: bytes, seed: int) -> Any:
    """The program a bisect sent: its function, inputs and kwargs, tensors on this worker's device, and the
    Inductor settings of the bisecting process, which every trial here starts from."""
    import torch

    from .bisect_program import Program
    from .payload import unpack

    target, ((inputs, kwargs, config),) = unpack(data, "cuda:0" if torch.cuda.is_available() else "cpu")
    return Program(target, tuple(inputs), dict(kwargs), seed, config)


def run_trial(program: Any, spec: Any, files: dict[str, Any] | None) -> dict[str, Any]:
    """One trial: ``{"outputs": bytes (torch.save) or None, "ms", "crash", "changed"}`` (``changed``: what the
    trial wrote into torch's bisector state, which runs as ``files`` hold when the spec asks for it)."""
    import torch

    from .._torch import compiler_bisect
    from .bisect_program import crash_text
    from .payload import pickler

    result: dict[str, Any] = {"outputs": None, "ms": None, "crash": "", "changed": {}}
    following = compiler_bisect.following(files) if spec.bisector and files is not None else contextlib.nullcontext({})
    try:
        with following as changed:
            result["changed"] = changed
            outputs, result["ms"] = program.compiled(spec)
        buffer = io.BytesIO()
        torch.save(outputs, buffer, pickle_module=pickler())
        result["outputs"] = buffer.getvalue()
    except Exception as error:  # noqa: BLE001 - a trial that fails is a trial result
        result["crash"] = crash_text(error)
    return result


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = sys.stdin.buffer

    from . import bisect_program  # noqa: F401 - torch and the compiler imported before "ready"
    from . import channel

    channel.send(replies, ("ready", os.getpid()))
    program = None
    while True:
        message = channel.receive(requests)
        if message is None or message[0] == "stop":
            return
        if message[0] == "program":
            program = load_program(message[1], message[2])
            continue
        _, spec, files = message
        channel.send(replies, ("done", run_trial(program, spec, files)))


if __name__ == "__main__":
    main()
