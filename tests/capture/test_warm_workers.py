"""Sweep workers started ahead of a sweep: the sweep runs in them instead of starting its own."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.sweeps import local


def _count_starts(monkeypatch) -> list[int]:
    """Every worker process the sweep machinery starts, by pid."""
    started: list[int] = []
    original = local._Worker.__init__

    def counting(self, slot):
        original(self, slot)
        started.append(self.process.pid)

    monkeypatch.setattr(local._Worker, "__init__", counting)
    return started


def _add_one(x):
    return x + 1


def test_a_sweep_runs_in_the_workers_started_ahead_of_it(monkeypatch):
    started = _count_starts(monkeypatch)
    assert explorer.start_sweep_workers(gpu=False, workers=1) == ["w0"]  # returns at once
    # started a moment ago: the sweep waits for that worker rather than starting a second one
    result = explorer.sweep(_add_one, torch.ones(4), configs=[{}, {"inplace_buffers": False}], workers=1, runs=1,
                            check=False)
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert len(started) == 1 and local.idle_worker_pids() == started  # the same process, parked again
    assert explorer.start_sweep_workers(gpu=False, workers=1, wait=True) == ["w0"] and len(started) == 1  # one is idle


def test_closing_workers_includes_those_still_starting(monkeypatch):
    started = _count_starts(monkeypatch)
    explorer.start_sweep_workers(gpu=False, workers=2)
    assert explorer.close_sweep_workers() == 2
    assert len(started) == 2 and local.idle_worker_pids() == []


@pytest.mark.parametrize("keep", [0, -1, "long", True])
def test_start_sweep_workers_refuses_a_wait_that_is_not_positive_seconds(keep):
    with pytest.raises(ValueError, match="keep_workers is how many seconds"):
        explorer.start_sweep_workers(gpu=False, keep_workers=keep)
