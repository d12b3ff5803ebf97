"""A local sweep worker: ``python -m compiler.sweeps.worker``, one per GPU (or a few on CPU).

It initialises its device and Inductor first (``point.warm_up``), then reads requests on stdin and
answers on what was stdout; stdout itself is pointed at stderr first, so whatever the user's code or
torch prints cannot break the channel. Requests: ``("payload", bytes)`` (the function and input sets),
``("point", point, options)`` (answered by ``("stage", index, stage)`` messages while it runs, then
``("done", result)``; a point whose options name the task ``fusion_trial`` is a fusion report's trial,
compiler/sweeps/fusion_trial.py), ``("idle",)`` (the sweep is over and the worker is kept for a later one: it lets
go of the sweep's objects), ``("stop",)``.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = sys.stdin.buffer

    from . import channel
    from .fusion_trial import run_trial
    from .point import release, run_point, warm_up

    warm_up()  # "ready" means ready to compile: the first point does not pay for the process
    channel.send(replies, ("ready", os.getpid()))
    data = b""
    while True:
        message = channel.receive(requests)
        if message is None or message[0] == "stop":
            return
        if message[0] == "payload":
            data = message[1]
            continue
        if message[0] == "idle":  # kept for a later sweep: hold nothing of this one
            data = b""
            release()
            continue
        _, point, options = message
        index = point["index"]
        run = run_trial if options.get("task") == "fusion_trial" else run_point  # a fusion report's trial
        result = run(data, point, options,
                     on_stage=lambda stage, index=index: channel.send(replies, ("stage", index, stage)))
        channel.send(replies, ("done", result))


if __name__ == "__main__":
    main()
