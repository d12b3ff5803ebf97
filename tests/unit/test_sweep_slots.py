"""GPU sweep workers on one host split the cores between them (Inductor's compile pool, CPU threads), the
same way whatever the sweep's width, and leave alone what the user set."""

from __future__ import annotations

import pytest

from compiler.sweeps import local

SHARED = local.SHARED_CORE_VARIABLES


@pytest.fixture
def two_gpus_32_cores(monkeypatch):
    monkeypatch.setattr(local, "gpu_ids", lambda: ["0", "1"])
    monkeypatch.setattr(local, "usable_cores", lambda: 32)
    for name in SHARED:
        monkeypatch.delenv(name, raising=False)


def test_each_gpu_worker_gets_its_share_of_the_cores(two_gpus_32_cores):
    chosen = local.slots(gpu=True, workers=None)
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in chosen] == ["0", "1"]
    assert all(s.env[name] == "16" for s in chosen for name in SHARED)


def test_a_one_gpu_sweep_reuses_the_workers_started_for_every_gpu(two_gpus_32_cores):
    started_ahead = local.slots(gpu=True, workers=None)  # what start_sweep_workers() starts
    one = local.slots(gpu=True, workers=1)
    assert local._key(one[0]) == local._key(started_ahead[0])


def test_more_workers_than_gpus_share_the_cores_among_all(two_gpus_32_cores):
    chosen = local.slots(gpu=True, workers=4)
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in chosen] == ["0", "1", "0", "1"]
    assert {s.env["TORCHINDUCTOR_COMPILE_THREADS"] for s in chosen} == {"8"}


def test_what_the_user_set_wins(two_gpus_32_cores, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "4")
    chosen = local.slots(gpu=True, workers=None)
    assert all("TORCHINDUCTOR_COMPILE_THREADS" not in s.env and s.env["OMP_NUM_THREADS"] == "16" for s in chosen)


def test_one_gpu_worker_alone_keeps_inductors_defaults(monkeypatch):
    monkeypatch.setattr(local, "gpu_ids", lambda: ["0"])
    chosen = local.slots(gpu=True, workers=None)
    assert [s.env for s in chosen] == [{"CUDA_VISIBLE_DEVICES": "0"}]
