"""explorer.bisect with its trials in worker processes (compiler/sweeps/bisect_pool.py): a trial that kills its
worker or hangs is a trial result, and the bisect goes on in a new worker; torch's bisector state travels to a
worker and back; bad arguments are refused before anything runs.

The program misbehaves only outside the test's process (``_misbehave``, run eagerly between two Dynamo
graphs): in the first trial it ends its worker with ``os._exit(3)``, in the second it sleeps past the timeout.
Two trials, two worker starts and one timeout: about 15 s on two cores. A whole bisect in workers, compared with
one in this process, is benchmarks/bisect_workers.py (a minute and more).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import torch
from torch._inductor import compiler_bisector
from torch._inductor import config as inductor_config

import explorer
from compiler._torch import compiler_bisect


@torch.compiler.disable
def _misbehave() -> None:
    if str(os.getpid()) == os.environ.get("BISECT_TEST_PARENT"):
        return
    trials = Path(os.environ["BISECT_TEST_TRIALS"])
    count = len(list(trials.iterdir()))
    (trials / str(count)).touch()
    if count == 0:
        os._exit(3)
    time.sleep(120)


def erratic(x):
    _misbehave()
    return x * 2


def _children() -> list[int]:
    """Processes whose parent is this one, running a bisect worker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"compiler.sweeps.bisect_worker" in command:
            found.append(int(entry.name))
    return found


def test_a_crash_and_a_hang_in_workers_are_trial_results(tmp_path, monkeypatch):
    monkeypatch.setenv("BISECT_TEST_PARENT", str(os.getpid()))
    monkeypatch.setenv("BISECT_TEST_TRIALS", str(tmp_path))
    config = inductor_config.save_config()
    steps = []
    r = explorer.bisect(erratic, torch.ones(3), workers=1, timeout=4, progress_display=steps.append)
    assert r.engine == "local"
    shown = [(step.stage, step.done, step.detail) for step in steps if not step.finished]
    assert shown == [("first run", 1, "Inductor as configured"), ("torch bisector", 2, "backend eager")]
    assert steps[-1].finished and steps[-1].task == "bisect erratic"
    outcomes = [(t.level, t.what, t.outcome) for t in r.trials]
    assert outcomes[:2] == [("first run", "Inductor as configured", "crashed"),
                            ("torch bisector", "backend eager", "crashed")]
    assert "the worker process exited with code 3" in r.trials[0].detail
    assert r.trials[1].detail.startswith("timed out after 4 s")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1"]  # each trial ran once, in a worker
    assert r.status == "diverges" and r.backend == "eager"  # every backend "fails": the first one is blamed
    assert inductor_config.save_config() == config
    assert _children() == []  # the hung worker was stopped, the others closed


def test_bisector_state_travels_to_a_trial_and_back():
    """What a trial in a worker counts under torch's bisector (the lowered nodes it names) comes back into the
    bisecting process's state; the worker's bisector is off again afterwards. No compile: the counting calls
    are made as Inductor's lowering makes them."""
    bisector = compiler_bisector.CompilerBisector
    files = {"bisect_status.txt": "backend=inductor\nsubsystem=lowerings\n",
             "inductor/lowerings_run_state.txt": "bisect",
             "inductor/lowerings_bisect_range.txt": "low=0\nhigh=2\n"}
    with compiler_bisect.following(files) as changed:
        decisions = [bisector.disable_subsystem("inductor", "lowerings", lambda i=i: f"node{i}") for i in range(3)]
    assert decisions == [False, False, True]  # applications after the midpoint (1) are disabled
    assert changed and "node2" in repr(changed)  # the names torch keeps for the last applications
    assert not bisector.bisection_enabled and bisector.in_process_cache is None

    seen = []

    def trial() -> bool:
        compiler_bisect.take_back(changed)
        seen.append(repr(compiler_bisect.state_files()))
        return True  # every backend good: do_bisect ends after the backends

    outcome, _ = compiler_bisect.bisected(trial)
    assert outcome is None and "node2" in seen[0]
    assert not bisector.bisection_enabled and bisector.in_process_cache is None


def test_bad_worker_arguments_are_refused_before_anything_runs(monkeypatch):
    with pytest.raises(ValueError, match="workers must be a positive int"):
        explorer.bisect(erratic, torch.ones(3), workers=0)
    with pytest.raises(ValueError, match="a timeout needs the trials in workers"):
        explorer.bisect(erratic, torch.ones(3), timeout=5)
    with pytest.raises(ValueError, match="unknown engine"):
        explorer.bisect(erratic, torch.ones(3), engine="threads")
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    with pytest.raises(ValueError, match='engine="ray" needs Ray'):
        explorer.bisect(erratic, torch.ones(3), engine="ray")


def noisy(x):
    return x + torch.rand(x.shape)


@pytest.mark.heavy  # minutes of compiling: `make test-heavy`
def test_trials_as_ray_tasks_find_what_the_bisect_in_this_process_finds():
    """tests/capture/test_bisect.py's first culprit (``torch.rand`` under Inductor: fallback_random), each trial
    a Ray task on a local two-CPU cluster."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        r = explorer.bisect(noisy, torch.ones(4, 4), engine="ray")
    finally:
        ray.shutdown()
    assert r.engine == "ray" and r.status == "diverges"
    assert (r.backend, r.subsystem, r.subsystem_kind) == ("inductor", "inductor_fallback_random", "config")
    assert r.avoided_by == {"fallback_random": True} and r.avoided_by_checked
    assert not [t for t in r.trials if t.outcome == "crashed"], [(t.what, t.detail) for t in r.trials]
