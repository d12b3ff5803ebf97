"""Where ``explorer.bisect``'s trials run: in this process, in local worker processes, or as Ray tasks.

In this process (the default) a trial costs its compile and run only. In a worker
(compiler/sweeps/bisect_worker.py, one per GPU or ``workers`` of them on the CPU, as compiler/sweeps/local.py
places sweep workers) a trial that crashes the process (a segfault, ``os._exit``) or runs past ``timeout``
is a trial result, its exit code or the timeout, and a new worker takes the next trial. Starting a worker
is importing torch again, and its first compile pays Inductor's imports again (10 to 20 s on a CPU), which is
why the default stays in this process. The program travels once per worker (compiler/sweeps/payload.py);
each trial sends its settings, the fused groups to keep apart and, under torch's bisector, the bisector's
state (compiler/_torch/compiler_bisect.py), and gets back outputs, run time and what the trial counted.
Several workers try the fusion level's two halves side by side; torch's bisector decides each trial from the
last, so its trials run one at a time whatever the count.
"""

from __future__ import annotations

import io
import os
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from .._torch import compiler_bisect, inductor_config
from . import channel, payload
from .bisect_program import Program, TrialOutput, TrialSpec, crash_text
from .local import Slot, slots
from .points import SweepError
from .worker_process import WorkerProcess, import_paths

ENGINES = ("local", "ray")
_START_S = 300.0  # how long a worker may take to import torch and the compiler
TIMEOUT_S = 600.0  # a trial in a worker, by default: a CPU compile of a large program takes minutes


def _current_config() -> dict[str, Any]:
    """The Inductor settings of this process that differ from torch's defaults, custom passes included: a
    worker starts from the defaults, and a trial there must run "as configured" here."""
    out = {}
    for key, value in inductor_config.snapshot().items():
        try:
            if value != inductor_config.default(key):
                out[key] = value
        except Exception:  # noqa: BLE001 - a default that refuses comparison is not a setting the user made
            continue
    return out


def _packed(program: Program) -> tuple[bytes, list[str]]:
    """The program and the current config as one payload; settings that cannot travel are left out, named."""
    config, notes = _current_config(), []
    try:
        return payload.pack(program.target, [(program.inputs, program.kwargs, config)]), notes
    except SweepError:
        plain = inductor_config.overrides()
        notes.append("these settings of the current Inductor config cannot be sent to the workers, whose trials run "
                     "without them: " + ", ".join(sorted(set(config) - set(plain))))
        return payload.pack(program.target, [(program.inputs, program.kwargs, plain)]), notes


class InProcess:
    """Trials one after another in this process (torch's bisector state is live here)."""

    name, parallel = "in-process", 1

    def __init__(self, program: Program) -> None:
        self.program = program
        self.notes: list[str] = []

    def run(self, specs: list[TrialSpec]) -> list[TrialOutput]:
        outputs = []
        for spec in specs:
            try:
                outputs.append(TrialOutput(*self.program.compiled(spec)))
            except Exception as error:  # noqa: BLE001 - a trial that crashes is a trial result
                outputs.append(TrialOutput(crash=crash_text(error)))
        return outputs

    def close(self) -> None:
        """Nothing to stop."""


def _loaded(data: bytes | None, device: str) -> Any:
    """A worker's outputs, on the device the program's inputs are on here."""
    if data is None:
        return None
    return torch.load(io.BytesIO(data), map_location={"cuda:0": device} if device.startswith("cuda") else "cpu",
                      weights_only=False)


class _Worker(WorkerProcess):
    """One bisect worker process, handed the program once it is ready; its replies are read by a thread."""

    TAIL_LINES = 4

    def __init__(self, slot: Slot, data: bytes, seed: int) -> None:
        super().__init__("compiler.sweeps.bisect_worker", f"bisect-{slot.name}", slot.env)
        self.replies: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self.ready = self._reply(_START_S) is not None
        except TimeoutError:
            self.process.kill()
            self.ready = False
        if self.ready:
            self.send(("program", data, seed))

    def _read(self) -> None:
        while True:
            message = channel.receive(self.process.stdout)
            self.replies.put(message)
            if message is None:
                return

    def _reply(self, timeout: float | None) -> Any:
        """The next message; None when the process ended; TimeoutError past ``timeout``."""
        try:
            return self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def trial(self, spec: TrialSpec, files: dict[str, Any] | None, timeout: float | None) -> dict[str, Any]:
        if not self.ready:
            return {"crash": f"the worker did not start: {self.exit_note()}"}
        try:
            reply = self._reply(timeout) if self.send(("trial", spec, files)) else None
        except TimeoutError:
            self.close(kill=True)
            return {"crash": f"timed out after {timeout:g} s (the worker was stopped)"}
        if reply is None:
            return {"crash": self.exit_note()}
        return reply[1]


class LocalWorkers:
    """Trials in worker processes on this machine; a worker whose trial crashed or timed out is replaced."""

    name = "local"

    def __init__(self, program: Program, workers: int, timeout: float | None) -> None:
        self.device = program.device
        self.slots = slots(self.device.startswith("cuda"), workers)
        self.parallel = len(self.slots)
        self.data, self.notes = _packed(program)
        self.seed, self.timeout = program.seed, timeout
        self.workers: dict[str, _Worker] = {}
        self.lock = threading.Lock()

    def _one(self, slot: Slot, spec: TrialSpec) -> TrialOutput:
        with self.lock:
            worker = self.workers.pop(slot.name, None)
        if worker is None:
            worker = _Worker(slot, self.data, self.seed)
        files = compiler_bisect.state_files() if spec.bisector else None
        reply = worker.trial(spec, files, self.timeout)
        if reply.get("crash") and worker.process.poll() is not None:
            worker.close(kill=True)
        else:
            with self.lock:
                self.workers[slot.name] = worker
        if reply.get("changed"):
            compiler_bisect.take_back(reply["changed"])
        if reply.get("crash"):
            return TrialOutput(crash=reply["crash"])
        return TrialOutput(_loaded(reply["outputs"], self.device), reply.get("ms"))

    def run(self, specs: list[TrialSpec]) -> list[TrialOutput]:
        if len(specs) == 1:
            return [self._one(self.slots[0], specs[0])]
        with ThreadPoolExecutor(len(self.slots)) as pool:
            return list(pool.map(self._one, self.slots, specs))

    def close(self) -> None:
        with self.lock:
            workers, self.workers = list(self.workers.values()), {}
        for worker in workers:
            worker.close()


def _ray_trial(data: bytes, seed: int, spec: TrialSpec, files: dict[str, Any] | None,
               paths: list[str]) -> dict[str, Any]:
    """The Ray task: the driver's import path behind the worker's own (a local cluster needs no install)."""
    sys.path.extend(p for p in paths if p not in sys.path and os.path.isdir(p))
    from compiler.sweeps.bisect_worker import load_program, run_trial

    return run_trial(load_program(data, seed), spec, files)


class RayTrials:
    """Trials as Ray tasks on whatever cluster ``ray.init`` reaches (a local one by default)."""

    name = "ray"

    def __init__(self, program: Program, workers: int | None, timeout: float | None, address: str | None) -> None:
        try:
            import ray
        except ImportError as error:
            raise ValueError('engine="ray" needs Ray: pip install "inductor-explorer[ray]" (or pip install ray), '
                             'or leave engine="local"') from error
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        self.ray, self.device, self.timeout = ray, program.device, timeout
        self.parallel = workers or 2
        data, self.notes = _packed(program)
        self.data = ray.put(data)
        self.seed = program.seed
        self.task = ray.remote(num_gpus=1 if self.device.startswith("cuda") else 0, max_retries=0)(_ray_trial)
        self.paths = import_paths()

    def _reply(self, ref: Any) -> dict[str, Any]:
        done, _ = self.ray.wait([ref], timeout=self.timeout)
        if not done:
            self.ray.cancel(ref, force=True)
            return {"crash": f"timed out after {self.timeout:g} s (the task was cancelled)"}
        try:
            return self.ray.get(ref)
        except Exception as error:  # noqa: BLE001 - the task's worker died, or Ray could not run it
            return {"crash": crash_text(error)}

    def run(self, specs: list[TrialSpec]) -> list[TrialOutput]:
        files = [compiler_bisect.state_files() if spec.bisector else None for spec in specs]
        refs = [self.task.remote(self.data, self.seed, spec, f, self.paths) for spec, f in zip(specs, files)]
        outputs = []
        for ref in refs:
            reply = self._reply(ref)
            if reply.get("changed"):
                compiler_bisect.take_back(reply["changed"])
            outputs.append(TrialOutput(crash=reply["crash"]) if reply.get("crash") else
                           TrialOutput(_loaded(reply["outputs"], self.device), reply.get("ms")))
        return outputs

    def close(self) -> None:
        """Ray keeps its workers; nothing of this bisect is left running."""


def runner(program: Program, engine: str, workers: int | None, timeout: float | None, address: str | None) -> Any:
    """Where the trials run: in this process when neither ``workers``, ``engine="ray"`` nor ``address`` asks
    for workers."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use 'local' (worker processes on this machine) or 'ray'")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive int (trials in that many worker processes) or None "
                         f"(in this process), got {workers!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ValueError(f"timeout is the seconds a trial may take in a worker (> 0), got {timeout!r}")
    if engine == "ray" or address is not None:
        return RayTrials(program, workers, timeout or TIMEOUT_S, address)
    if workers is None:
        if timeout is not None:
            raise ValueError("a timeout needs the trials in workers (workers=1 or more): a trial in this process "
                             "cannot be stopped")
        return InProcess(program)
    return LocalWorkers(program, workers, timeout or TIMEOUT_S)
