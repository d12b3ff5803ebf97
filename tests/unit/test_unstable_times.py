"""Notes on kernel times that are not the kernels' own (compiler/model/unstable_times.py), on synthetic samples
(no compile): a kernel whose runs differ more than 2x, and a CPU run with more torch threads than cores."""

from __future__ import annotations

import os

import torch

from compiler.model.profile import Profile
from compiler.model.unstable_times import spread_note, thread_note
from compiler.runs import profile as profile_run

# a 2-core machine shared with other work: the GELU kernel reads 7-15 ms beside kernels of 0.03 ms
SAMPLES = {"cpp_fused_gelu_0": [7.1, 15.2, 0.012, 9.8], "cpp_fused_add_1": [0.030, 0.031, 0.029, 0.030]}


def test_a_kernel_whose_runs_differ_more_than_2x_gets_a_note_naming_cause_and_fix():
    note = spread_note(SAMPLES, "cpu")
    assert note is not None and note.startswith("1 kernel's time varied more than 2x between runs")
    assert "cpp_fused_gelu_0 0.012 to 15.200 ms" in note and "cpp_fused_add_1" not in note
    assert "thread oversubscription" in note and "OMP_NUM_THREADS=1" in note and "torch.set_num_threads" in note
    assert spread_note({"k": [1.0, 1.9, 1.5]}, "cpu") is None  # under 2x: steady enough
    assert spread_note({"k": [1.0]}, "cpu") is None  # one run says nothing about spread
    assert "other work sharing it" in spread_note({"k": [1.0, 2.5]}, "cuda:0")


def test_per_run_times_come_from_the_profiles_run_sums():
    assert profile_run.run_ms({"k": {1: 2000.0, 0: 1000.0}}) == {"k": [1.0, 2.0]}


def test_a_cpu_run_with_more_threads_than_cores_gets_a_note(monkeypatch):
    monkeypatch.setattr(torch, "get_num_threads", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    (note,) = profile_run.cpu_thread_notes("cpu")
    assert note.startswith("torch runs 8 CPU threads but this process may use 2 cores")
    assert "OMP_NUM_THREADS=2" in note and "torch.set_num_threads(2)" in note
    assert profile_run.cpu_thread_notes("cuda:0") == []  # GPU kernels do not wait for CPU threads
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert profile_run.cpu_thread_notes("cpu") == []
    assert thread_note(1, 1) is None


def test_a_profile_shows_its_notes():
    p = Profile(device="cpu", runs=4, warmup=1, total_ms=1.0, wall_ms=1.0, kernel_ms={}, kernel_calls={}, kernels={},
                post_grad_ms={}, fx_node_ms={}, line_ms={}, unattributed_ms=0.0, unattributed={},
                notes=[spread_note(SAMPLES, "cpu")])
    assert "note: 1 kernel's time varied more than 2x" in repr(p)


def test_a_profiles_notes_are_saved_and_shown_in_the_terminal_and_notebook_views():
    from rich.console import Console

    from compiler.io.reports import profile_from_json, profile_to_json
    from compiler.model.slots import html_of, rich_of

    p = Profile(device="cpu", runs=4, warmup=1, total_ms=1.0, wall_ms=1.0, kernel_ms={}, kernel_calls={}, kernels={},
                post_grad_ms={}, fx_node_ms={}, line_ms={}, unattributed_ms=0.0, unattributed={},
                notes=[spread_note(SAMPLES, "cpu")])
    assert profile_from_json(profile_to_json(p)).notes == p.notes
    console = Console(width=200, record=True)
    console.print(rich_of(p))
    assert "note: 1 kernel's time varied more than 2x" in console.export_text()
    assert "note: 1 kernel&#x27;s time varied more than 2x" in html_of(p)
