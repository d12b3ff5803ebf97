"""Whether a profile saw the kernels inside CUDA graph replays (compiler/runs/cudagraph_attribution.py).

On some CUDA versions CUPTI reports a ``cudaGraphLaunch`` and none of the kernels it ran; c.profile() then
records the runs again with the same kernels launched one by one. These are the event shapes it decides on.
"""

from __future__ import annotations

from compiler._torch.profiling import RawEvent
from compiler.runs.cudagraph_attribution import graph_launches, replays_unseen


def _launch(correlation: int, start: int) -> RawEvent:
    return RawEvent("cudaGraphLaunch", False, 1, start, start + 5, correlation, 7)


def _kernel(name: str, correlation: int, start: int) -> RawEvent:
    return RawEvent(name, True, 0, start, start + 3, correlation, 0)


def test_launches_with_no_device_activity_are_unseen_replays():
    events = [_launch(11, 100), _launch(12, 200), _kernel("copy_inputs", 99, 90)]
    assert replays_unseen(events)


def test_a_replay_that_reported_its_kernels_is_seen_and_grouped_in_the_order_they_ran():
    events = [_launch(11, 100), _kernel("triton_b", 11, 130), _kernel("triton_a", 11, 110)]
    assert not replays_unseen(events)
    launches, groups = graph_launches(events)
    assert list(launches) == [11] and [e.name for e in groups[11]] == ["triton_a", "triton_b"]


def test_no_graph_launch_is_no_replay_to_miss():
    assert not replays_unseen([_kernel("triton_a", 5, 10)])
    assert not replays_unseen([])
