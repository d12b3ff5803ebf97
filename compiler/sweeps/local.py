"""The local engine: worker processes on this machine, one per GPU (pinned with CUDA_VISIBLE_DEVICES, each
with its share of the cores) or a few on CPU, fed points one at a time. No dependency beyond the standard library.

A worker runs point after point (torch and the compiler are imported once), resetting Dynamo between
them. A worker that dies (a segfault, a CUDA error that kills the process, os._exit) fails only the point
it was running: the row says the exit code and the end of its stderr, and a new worker takes the next
point. After any failed point the worker is replaced too, so nothing a failure left behind (a poisoned
CUDA context, half-patched state) reaches the next point.

A worker whose last point ran stays up after its sweep for ``keep_workers`` seconds, idle: it drops the
sweep's function and inputs, empties its GPU cache and waits for the next sweep on the same GPU (same
environment, import path and working directory), which then starts at once. Starting a worker is
importing torch and Inductor and a first compile in a fresh process: 10 to 20 s on a GPU machine,
more than the points of a small sweep. Idle workers exit after that time, at interpreter exit, or on
``close_sweep_workers()``. ``start_sweep_workers()`` starts them ahead of a first sweep, in the
background; every worker initialises its device and Inductor before it says it is ready, so no point
pays for its process.
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

from ..model.unstable_times import usable_cores
from . import channel, timing_lock
from .worker_process import WorkerProcess, import_paths
from .points import Point


@dataclass
class Slot:
    name: str  # "w0", shown in the table's worker column
    env: dict[str, str]  # what this worker's environment adds (CUDA_VISIBLE_DEVICES, thread counts)


def gpu_ids() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES names them for a child."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    names = [v.strip() for v in visible.split(",") if v.strip()] if visible else [str(i) for i in range(count)]
    return names[:count]


SHARED_CORE_VARIABLES = ("TORCHINDUCTOR_COMPILE_THREADS", "OMP_NUM_THREADS")


def _core_share(workers: int) -> dict[str, str]:
    """GPU workers on one host each get their share of the cores for Inductor's compile pool and CPU
    threads: left at Inductor's default, every worker starts a compile process per core, and two workers
    compiling at once each ran their compiles about 1.4x slower (benchmarks/two_gpus.py, 8 points on 2 x
    H200: two GPUs took 0.67x one GPU's time; with the cores split, 0.54). ``workers`` is at least the
    GPU count whatever the sweep's width, so a one-GPU sweep finds the workers ``start_sweep_workers()``
    started for every GPU. A value the user set in the environment wins."""
    if workers < 2:
        return {}
    share = str(max(1, usable_cores() // workers))
    return {name: share for name in SHARED_CORE_VARIABLES if name not in os.environ}


def slots(gpu: bool, workers: int | None) -> list[Slot]:
    """One worker per GPU (``workers`` of them, spread over the GPUs, when given), each with its share of
    the cores, or ``workers`` (default 2) on CPU sharing the cores."""
    if gpu:
        ids = gpu_ids()
        if not ids:
            raise RuntimeError("the sweep's inputs are on a GPU, and this process sees none")
        count = workers or len(ids)
        share = _core_share(max(count, len(ids)))
        return [Slot(f"w{i}", {"CUDA_VISIBLE_DEVICES": ids[i % len(ids)], **share}) for i in range(count)]
    count = workers or 2
    threads = str(max(1, usable_cores() // count))
    lock = {timing_lock.ENV: timing_lock.path_for(os.getpid())} if count > 1 else {}
    return [Slot(f"w{i}", {"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": threads, **lock}) for i in range(count)]


KEEP_WORKERS_S = 300.0  # how long a worker waits idle for the next sweep, by default


def _key(slot: Slot) -> tuple[Any, ...]:
    """What a worker was started with: an idle worker serves a later sweep only when all of it matches."""
    env = {**os.environ, **slot.env}  # a variable set since (TORCHINDUCTOR_*, CUDA_*) needs a new worker
    return (slot.name, tuple(sorted(env.items())), tuple(import_paths()), os.getcwd(), sys.executable)


class _Worker(WorkerProcess):
    """One sweep worker process, ready once it has imported torch and warmed up."""

    def __init__(self, slot: Slot) -> None:
        self.key = _key(slot)
        super().__init__("compiler.sweeps.worker", f"sweep-{slot.name}", slot.env)
        self.ready = channel.receive(self.process.stdout) is not None

    def load(self, data: bytes) -> None:
        """Give the worker this sweep's function and input sets."""
        if self.ready:
            self.ready = self.send(("payload", data))


class _IdleWorkers:
    """Workers left running between sweeps, one per key, each closed when its time is up."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parked: dict[tuple[Any, ...], tuple[_Worker, float]] = {}  # key -> (worker, when it is closed)
        self.starting: dict[tuple[Any, ...], threading.Event] = {}  # key -> set once its worker is parked
        self.reaper: threading.Thread | None = None

    def start(self, slot: Slot, keep_s: float) -> bool:
        """Start a worker for ``slot`` in the background and park it; False if one is parked or starting."""
        key = _key(slot)
        with self.lock:
            if key in self.parked or key in self.starting:
                return False
            started = self.starting[key] = threading.Event()

        def start_and_park() -> None:
            try:
                worker = _Worker(slot)
                if worker.ready:
                    self.park(worker, keep_s)
                else:
                    worker.close(kill=True)
            finally:
                with self.lock:
                    self.starting.pop(key, None)
                started.set()

        threading.Thread(target=start_and_park, name=f"sweep-start-{slot.name}", daemon=True).start()
        return True

    def wait_started(self, slots: list[Slot]) -> None:
        """Until no worker for ``slots`` is still starting."""
        for slot in slots:
            with self.lock:
                started = self.starting.get(_key(slot))
            if started is not None:
                started.wait()

    def park(self, worker: _Worker, keep_s: float) -> None:
        try:
            channel.send(worker.process.stdin, ("idle",))  # drop the sweep's tensors, empty the GPU cache
        except OSError:
            worker.close(kill=True)
            return
        with self.lock:
            previous = self.parked.pop(worker.key, None)
            self.parked[worker.key] = (worker, time.monotonic() + keep_s)
            if self.reaper is None:
                self.reaper = threading.Thread(target=self._reap, name="sweep-idle-workers", daemon=True)
                self.reaper.start()
        if previous is not None:
            previous[0].close()

    def take(self, slot: Slot) -> _Worker | None:
        """The idle worker started as ``slot`` would start one, if it is still alive (one still starting
        ahead of the sweep is waited for: it is further along than a new one)."""
        self.wait_started([slot])
        with self.lock:
            found = self.parked.pop(_key(slot), None)
        if found is None:
            return None
        worker = found[0]
        if worker.process.poll() is not None:
            worker.close(kill=True)
            return None
        return worker

    def close(self, expired_only: bool = False) -> int:
        if not expired_only:
            with self.lock:
                starting = list(self.starting.values())
            for started in starting:  # closing all of them includes those about to be parked
                started.wait()
        now = time.monotonic()
        with self.lock:
            keys = [k for k, (_, until) in self.parked.items() if not expired_only or until <= now]
            closing = [self.parked.pop(k)[0] for k in keys]
        for worker in closing:
            worker.close()
        return len(closing)

    def pids(self) -> list[int]:
        with self.lock:
            return [worker.process.pid for worker, _ in self.parked.values()]

    def _reap(self) -> None:
        while True:
            time.sleep(0.5)
            self.close(expired_only=True)


_IDLE = _IdleWorkers()
atexit.register(_IDLE.close)


def start_sweep_workers(gpu: bool | None = None, workers: int | None = None, keep_workers: float = KEEP_WORKERS_S,
                        wait: bool = False) -> list[str]:
    """Start the workers a sweep would start (one per GPU, or ``workers``; 2 on CPU) in the background, so
    that the next sweeps find them ready: torch imported, the device and Inductor initialised. Returns
    their names at once (``wait=True``: once they are ready). ``gpu``: by default, whether this process
    sees a GPU. They wait ``keep_workers`` seconds idle, like the workers a sweep leaves."""
    if isinstance(keep_workers, bool) or not isinstance(keep_workers, (int, float)) or not keep_workers > 0:
        raise ValueError(f"keep_workers is how many seconds the workers wait idle for a sweep (> 0), got {keep_workers!r}")
    if gpu is None:
        import torch

        gpu = torch.cuda.is_available()
    chosen = slots(gpu, workers)
    for slot in chosen:
        _IDLE.start(slot, float(keep_workers))
    if wait:
        _IDLE.wait_started(chosen)
    return [slot.name for slot in chosen]


def close_sweep_workers() -> int:
    """Stop every sweep worker left idle for a next sweep (they free their GPU); returns how many."""
    return _IDLE.close()


def idle_worker_pids() -> list[int]:
    """Process ids of the sweep workers waiting idle for a next sweep."""
    return _IDLE.pids()


class LocalEngine:
    name = "local"

    def __init__(self, slots: list[Slot], keep_workers: float = KEEP_WORKERS_S) -> None:
        self.slots = slots
        self.keep_workers = keep_workers
        self.stopping = threading.Event()
        self.workers: dict[str, _Worker] = {}
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    @property
    def worker_names(self) -> list[str]:
        return [s.name + (f" (GPU {s.env['CUDA_VISIBLE_DEVICES']})" if s.env.get("CUDA_VISIBLE_DEVICES") else "")
                for s in self.slots]

    def run(self, data: bytes, points: list[Point], options: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
        """Events as they happen: ("start", worker, index), ("stage", worker, index, stage),
        ("done", worker, result); ends when every point is done."""
        todo: queue.Queue[Point] = queue.Queue()
        for point in points:
            todo.put(point)
        events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.threads = [threading.Thread(target=self._serve, args=(slot, data, todo, options, events), daemon=True)
                        for slot in self.slots[:len(points)]]
        for thread in self.threads:
            thread.start()
        running = len(self.threads)
        while running:
            try:
                event = events.get(timeout=0.2)
            except queue.Empty:
                yield ("tick",)
                continue
            if event[0] == "exit":
                running -= 1
            else:
                yield event

    def _serve(self, slot: Slot, data: bytes, todo: queue.Queue, options: dict[str, Any], events: queue.Queue) -> None:
        worker: _Worker | None = None
        last_ok = False
        try:
            while not self.stopping.is_set():
                try:
                    point = todo.get_nowait()
                except queue.Empty:
                    break
                events.put(("start", slot.name, point.index))
                if worker is None:
                    worker = self._start(slot, data)
                result = self._run_point(worker, slot, point, options, events) if worker.ready else None
                if self.stopping.is_set():
                    break
                if result is None:  # the worker died (or never started): this point failed, a new worker goes on
                    result = {"row": {"index": point.index, "status": "failed", "stage": "worker",
                                      "error": worker.exit_note(), "worker": slot.name}, "trace": None}
                    self._drop(slot, worker)
                    worker = None
                elif result["row"]["status"] != "ok":
                    self._drop(slot, worker)
                    worker = None
                last_ok = worker is not None
                events.put(("done", slot.name, result))
        finally:
            if worker is not None and last_ok and self.keep_workers > 0 and not self.stopping.is_set():
                with self.lock:
                    self.workers.pop(slot.name, None)
                _IDLE.park(worker, self.keep_workers)  # parked before the sweep returns: the next one finds it
                worker = None
            # Every row of this worker is in: the sweep need not wait for the process to exit (tearing
            # down CUDA and Inductor's compile workers takes seconds), which this thread still reaps.
            events.put(("exit", slot.name))
            if worker is not None:
                self._drop(slot, worker, kill=self.stopping.is_set())

    def _start(self, slot: Slot, data: bytes) -> _Worker:
        worker = _IDLE.take(slot) or _Worker(slot)
        worker.load(data)
        with self.lock:
            self.workers[slot.name] = worker
        return worker

    def _drop(self, slot: Slot, worker: _Worker, kill: bool = False) -> None:
        with self.lock:
            self.workers.pop(slot.name, None)
        worker.close(kill=kill)

    @staticmethod
    def _run_point(worker: _Worker, slot: Slot, point: Point, options: dict[str, Any],
                   events: queue.Queue) -> dict[str, Any] | None:
        try:
            channel.send(worker.process.stdin, ("point", {"index": point.index, "config": point.config,
                                                          "input_set": point.input_set}, {**options, "worker": slot.name}))
        except OSError:
            return None
        while True:
            message = channel.receive(worker.process.stdout)
            if message is None:
                return None
            if message[0] == "stage":
                events.put(("stage", slot.name, message[1], message[2]))
            elif message[0] == "done":
                return message[1]

    def cancel(self) -> None:
        """Stop now: kill every worker (the points they were running are lost, finished rows stay)."""
        self.stopping.set()
        with self.lock:
            workers = list(self.workers.values())
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.kill()
        for thread in self.threads:
            thread.join(timeout=30)
