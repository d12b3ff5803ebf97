"""The loops call_ms keeps: none from the GPU's first ``ramp_ms`` of calls (compiler/runs/call_time.timed_loops)."""

from __future__ import annotations

import statistics

from compiler.runs.call_time import timed_loops


class RampingDevice:
    """A program whose call takes ``slow`` ms for the first ``ramp`` ms of load, then ``fast`` ms (seen on an
    H200 right after a compile: 0.10 ms a call for ~150 ms, then 0.07 ms), on a simulated clock."""

    def __init__(self, slow: float = 0.10, fast: float = 0.07, ramp: float = 150.0):
        self.slow, self.fast, self.ramp, self.now_ms = slow, fast, ramp, 0.0
        self.counts: list[int] = []

    def loop(self, count: int) -> float:
        self.counts.append(count)
        per_call = self.slow if self.now_ms < self.ramp else self.fast
        self.now_ms += per_call * count
        return per_call

    def clock(self) -> float:
        return self.now_ms / 1e3


def test_loops_run_while_the_clocks_rise_are_not_kept():
    device = RampingDevice()
    times = timed_loops(device.loop, calls=20, loops=3, min_loop_ms=50.0, ramp_ms=200.0, began=0.0, clock=device.clock)
    assert times == [0.07, 0.07, 0.07]
    assert device.counts[0] == 20 and set(device.counts[1:]) == {500}  # 50 ms loops at the first loop's pace
    assert device.now_ms >= 200.0 + 3 * 0.07 * 500 - 1e-9


def test_without_the_ramp_a_point_timed_straight_after_its_compile_is_slow():
    device = RampingDevice()
    times = timed_loops(device.loop, calls=20, loops=3, min_loop_ms=50.0, ramp_ms=0.0, began=0.0, clock=device.clock)
    assert statistics.median(times) == 0.10  # the three 50 ms loops fall inside the first 150 ms


def test_a_ramp_already_past_keeps_the_first_loops():
    device = RampingDevice(ramp=0.0)
    device.now_ms = 500.0  # the warm-up calls took longer than the ramp
    times = timed_loops(device.loop, calls=1000, loops=2, min_loop_ms=50.0, ramp_ms=200.0, began=0.0, clock=device.clock)
    assert times == [0.07, 0.07] and device.counts == [1000, 1000]
