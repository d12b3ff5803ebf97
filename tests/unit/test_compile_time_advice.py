"""The compile-time report's cache suggestion on synthetic torch timer events (no compile): a capture bypasses
Inductor's caches itself, so the suggestion says what the user's program would see, never that its caches were
cold; a TORCH_TRACE log of the user's own program is told its caches were cold."""

from __future__ import annotations

from compiler.model.compile_time import CompileCall
from compiler.model.compile_time_build import build


def _call(kind: str, build_s: float) -> CompileCall:
    """A frame whose one Inductor compile spends ``build_s`` of its 2 s building kernels; the FX graph
    cache is bypassed, as in every capture."""
    def us(seconds: float) -> float:
        return seconds * 1e6

    events = [
        {"name": "dynamo", "ph": "B", "ts": us(0), "args": {"compile_id": "0/0"}},
        {"name": "inductor_compile", "ph": "B", "ts": us(0.5), "args": {"compile_id": "0/0"}},
        {"name": "fx_graph_cache_bypass", "ph": "i", "ts": us(0.5), "args": {"compile_id": "0/0"}},
        {"name": "compile_file", "ph": "B", "ts": us(2.5 - build_s), "args": {"compile_id": "0/0"}},
        {"name": "compile_file", "ph": "E", "ts": us(2.5), "args": {"compile_id": "0/0"}},
        {"name": "inductor_compile", "ph": "E", "ts": us(2.5), "args": {"compile_id": "0/0"}},
        {"name": "dynamo", "ph": "E", "ts": us(3), "args": {"compile_id": "0/0"}},
    ]
    return CompileCall(kind, 0, int(3e9), events)


def _cold_cache(kind: str, build_s: float):
    report = build([_call(kind, build_s)], [])
    return next((s for s in report.suggestions if s.kind == "cold_cache"), None), report


def test_a_capture_says_what_the_users_program_would_see_not_that_its_caches_were_cold():
    suggestion, report = _cold_cache("capture", build_s=1.5)  # half the compile builds kernels
    assert suggestion is not None
    assert "cold caches" not in suggestion.message
    assert "The capture compiles every graph it has not captured before in full, to see every stage" in suggestion.message
    inductor = report.root.find("inductor_compile")[0].seconds
    assert f"(~{inductor:.1f} s here)" in suggestion.message and inductor == 2.0
    assert "graphs compiled in full by the capture (a cold capture, or one not captured before)" in suggestion.evidence
    assert not any(e.endswith("_bypass") for e in suggestion.evidence)  # the capture's own bypass is no evidence


def test_a_captures_own_cache_bypass_alone_suggests_nothing():
    suggestion, _ = _cold_cache("capture", build_s=0.1)
    assert suggestion is None


def test_a_users_log_with_missed_caches_is_told_they_were_cold():
    suggestion, _ = _cold_cache("log", build_s=0.1)
    assert suggestion is not None and "this compile ran with cold caches" in suggestion.message
    assert "fx_graph_cache_bypass" in suggestion.evidence
