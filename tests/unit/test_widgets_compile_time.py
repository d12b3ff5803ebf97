"""The Compile time stage's parts (widgets/compile_time_parts.py) and the Kernels stage's roofline part
(widgets/roofline.py): what the browser receives, checked against the report and the compiler's own
readings of the same trace."""

from __future__ import annotations

import gzip
import json
import statistics

import pytest

from compiler.io import compile_time as compile_time_io
from compiler.io.trace import from_json as load_trace
from compiler.model import cost, datasheet
from tests.paths import EXAMPLES, FIXTURES
from widgets.compile_time_parts import CHART_KEY, CHARGES_SHOWN, CHROME_KEY, chart, chrome_trace
from widgets.parts import PartError, TraceParts
from widgets.roofline import HOW_TO, roofline


def phase(pid, name, seconds, start=0.0, children=(), **links):
    return {"id": pid, "name": name, "seconds": seconds, "start_s": start, **links,
            **({"children": list(children)} if children else {})}


# A frame of two graphs (the second's autotuning charged to a kernel), the explorer's row, and the rest.
REPORT = {
    "source": "capture", "seconds": 10.0, "explorer_s": 0.5, "categories": {"dynamo": 2.0},
    "root": phase("p0", "compile", 10.0, children=[
        phase("p1", "capture", 10.0, children=[
            phase("p2", "dynamo", 8.0, 0.1, compile_id="0/0", category="dynamo", args={"co_name": "f"}, children=[
                phase("p3", "inductor_compile", 3.0, 1.0, graph="g0", category="inductor"),
                phase("p4", "inductor_compile", 4.0, 4.0, graph="g1", category="inductor", children=[
                    phase("p5", "mm_template_autotuning", 2.5, 4.5, graph="g1", kernel="triton_tem_0", category="autotune"),
                    phase("p6", "other", 1.5, 7.0, category="inductor")]),
                phase("p7", "other", 1.0, 8.0, category="dynamo")]),
            phase("p8", "explorer", 0.5, 8.1, category="explorer"),
            phase("p9", "other", 1.5, 8.6, category="other")])]),
    "kernels": [{"kernel": "a", "graph": "g0", "seconds": 0.1}, {"kernel": "b", "graph": "g1", "seconds": 2.5}],
    "lines": [{"key": f"m.py:{i}", "line": ["m.py", i], "seconds": 100.0 - i} for i in range(CHARGES_SHOWN + 5)],
    "nodes": [{"key": "g1/mm", "seconds": 2.5}], "modules": [], "recompiles": [], "suggestions": [], "notes": ["n"],
}


def test_chart_blocks_start_where_their_previous_sibling_ends_so_widths_are_seconds():
    blocks = {b["id"]: b for b in chart(REPORT)["blocks"]}
    assert [b["id"] for b in chart(REPORT)["blocks"]] == [f"p{i}" for i in range(10)]  # depth first, in order
    assert {k: (b["depth"], b["x_s"], b["seconds"]) for k, b in blocks.items()} == {
        "p0": (0, 0.0, 10.0), "p1": (1, 0.0, 10.0), "p2": (2, 0.0, 8.0), "p3": (3, 0.0, 3.0), "p4": (3, 3.0, 4.0),
        "p5": (4, 3.0, 2.5), "p6": (4, 5.5, 1.5), "p7": (3, 7.0, 1.0), "p8": (2, 8.0, 0.5), "p9": (2, 8.5, 1.5)}
    assert blocks["p4"]["share"] == pytest.approx(0.4)
    assert (blocks["p5"]["graph"], blocks["p5"]["kernel"], blocks["p5"]["category"]) == ("g1", "triton_tem_0", "autotune")
    assert blocks["p2"]["compile_id"] == "0/0" and "graph" not in blocks["p2"]


def test_chart_sends_the_costliest_charges_and_the_advice():
    data = chart(REPORT)
    assert [k["kernel"] for k in data["kernels"]] == ["b", "a"]
    assert data["lines"] == REPORT["lines"][:CHARGES_SHOWN] and data["nodes"] == REPORT["nodes"]
    assert (data["seconds"], data["explorer_s"], data["notes"]) == (10.0, 0.5, ["n"])


def test_chrome_trace_is_what_the_report_writes():
    report = compile_time_io.from_json(REPORT)
    assert chrome_trace(REPORT) == {"traceEvents": compile_time_io.chrome_events(report), "displayTimeUnit": "ms"}
    assert chrome_trace(compile_time_io.to_json(report)) == chrome_trace(REPORT)


def test_a_report_without_a_tree_is_refused_with_what_is_missing():
    with pytest.raises(ValueError, match="no phase tree"):
        chart({"source": "log"})


def test_trace_parts_make_the_compile_time_parts_on_request():
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    plain = TraceParts(trace)
    assert "compile_time" not in plain.summary() and CHART_KEY not in set(plain.keys())
    with pytest.raises(PartError):
        plain.get(CHART_KEY)
    parts = TraceParts({**trace, "compile_time": REPORT})
    assert parts.summary()["compile_time"] == {"seconds": 10.0}
    assert {CHART_KEY, CHROME_KEY} <= set(parts.keys())
    assert json.loads(parts.encoded(CHART_KEY)) == chart(REPORT)
    # the Chrome trace travels as its file's text: integers past 2**53 reach the download unrounded
    big = json.loads(json.dumps(REPORT))
    big["root"]["args"] = {"cache_event_time": 1795659532292951916}
    text = TraceParts({**trace, "compile_time": big}).get(CHROME_KEY)
    assert json.loads(text)["traceEvents"][0]["args"]["cache_event_time"] == 1795659532292951916


# ------------------------------------------------------------------------------------------ roofline


@pytest.fixture(scope="module")
def gpt_block() -> dict:
    return json.loads(gzip.decompress((EXAMPLES / "data" / "gpt_block.counters.json.gz").read_bytes()))


def test_roofline_points_come_from_counters_else_the_profile(gpt_block):
    graph = gpt_block["graphs"][0]
    part = roofline(gpt_block, graph)
    counters = {k["kernel"]: k for r in gpt_block["counters"] for k in r["kernels"]}
    profile = {k["kernel"]: k for k in gpt_block["profiles"][-1]["kernels"]}
    points = {p["kernel"]: p for p in part["points"]}
    assert set(points) | set(part["skipped"]) == {k["id"] for k in graph["kernels"] if k["id"] in counters or k["id"] in profile}
    assert points and set(counters) <= set(points) and set(points) - set(counters)
    for kid, p in points.items():
        assert p["intensity"] == pytest.approx(p["flops"] / p["bytes"])
        assert p["flops_per_s"] == pytest.approx(p["flops"] / p["seconds"])
        if kid in counters:
            c = counters[kid]
            assert (p["time_source"], p["seconds"]) == ("Nsight Compute", pytest.approx(c["duration_ns"] / 1e9))
            assert p["bytes"] == pytest.approx(c.get("dram_bytes") or c["dram_bandwidth"] * c["duration_ns"] / 1e9)
        else:
            assert (p["time_source"], p["seconds"]) == ("profile", pytest.approx(profile[kid]["ms"] / profile[kid]["calls"] / 1e3))
    peaks = (c["dram_bandwidth"] / (c["dram_percent"] / 100) for c in counters.values() if c["dram_percent"] >= 5)
    assert part["roofs"]["bandwidth"] == pytest.approx(statistics.median(peaks))
    assert part["roofs"]["compute"] is None and part["how_to"] is None


def test_roofline_roofs_come_from_the_datasheet_the_trace_records(gpt_block):
    """The compute roof is the datasheet peak of the dtype the kernels compute in; the bandwidth roof is
    Nsight Compute's where counters ran, else the datasheet's; a device not listed has neither."""
    with_peaks = {**gpt_block, "meta": {**gpt_block["meta"], "device_peaks": datasheet.peaks_json("NVIDIA H200")}}
    part = roofline(with_peaks, gpt_block["graphs"][0])
    assert {p["dtype"] for p in part["points"]} == {"float32"}
    assert part["roofs"]["compute"] == 66.9e12 and part["roofs"]["compute_source"] == "float32 peak, datasheet (H200, dense)"
    assert part["roofs"]["bandwidth"] == pytest.approx(roofline(gpt_block, gpt_block["graphs"][0])["roofs"]["bandwidth"])
    assert all(p["flops_per_s"] < part["roofs"]["compute"] for p in part["points"])

    profile_only = {**with_peaks, "counters": []}
    roofs = roofline(profile_only, gpt_block["graphs"][0])["roofs"]
    assert (roofs["bandwidth"], roofs["bandwidth_source"]) == (4.8e12, "datasheet (H200, dense)")

    half = json.loads(json.dumps(with_peaks))
    for node in half["graphs"][0]["post_grad"]["nodes"]:
        node["dtype"] = "torch.bfloat16"
    assert roofline(half, half["graphs"][0])["roofs"]["compute"] == 989.4e12

    unknown = {**gpt_block, "meta": {**gpt_block["meta"], "device_peaks": datasheet.peaks_json("Some GPU")}}
    assert datasheet.peaks_json("Some GPU") is None
    assert roofline(unknown, gpt_block["graphs"][0])["roofs"]["compute"] is None


def test_a_gpu_trace_records_its_datasheet_peaks_and_the_roofline_draws_them():
    """c.to_json() writes ``meta.device_peaks`` for a GPU the datasheet lists (from its device name), not
    for a CPU; the profiled GPU trace's roofline then has both roofs, with every kernel under them."""
    gpu = load_trace(json.loads((FIXTURES / "gpu_profile.json").read_text())).to_json()
    assert gpu["meta"]["device_name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["meta"]["device_peaks"] == datasheet.peaks_json("NVIDIA H100 80GB HBM3")
    assert gpu["meta"]["device_peaks"]["bandwidth"] == 3.35e12
    part = TraceParts(gpu).get(f"{gpu['graphs'][0]['id']}/roofline")
    assert part["points"] and part["roofs"]["bandwidth"] == 3.35e12 and part["roofs"]["compute"] == 66.9e12
    assert all(p["flops_per_s"] < part["roofs"]["compute"] and p["bytes_per_s"] < part["roofs"]["bandwidth"]
               for p in part["points"])
    cpu = load_trace(json.loads((FIXTURES / "widget_sample.json").read_text())).to_json()
    assert "device_peaks" not in cpu["meta"]


def test_roofline_estimates_are_the_compilers_own(gpt_block):
    """Bytes and FLOPs read from the JSON match compiler/model/cost.py on the loaded compilation."""
    c = load_trace(gpt_block)
    part = roofline(gpt_block, gpt_block["graphs"][0])
    graph = c.graphs[0]
    for p in part["points"]:
        kernel = next(k for k in graph.kernels if k.id == p["kernel"])
        assert p["flops"] == pytest.approx(cost.kernel_flops(kernel, graph))
        if p["bytes_source"] == "Inductor's estimate":
            assert p["bytes"] == pytest.approx(cost.kernel_bytes(kernel, graph))


def test_roofline_without_times_says_what_to_run():
    trace = json.loads((FIXTURES / "widget_sample.json").read_text())
    part = TraceParts(trace).get(f"{trace['graphs'][0]['id']}/roofline")
    assert part["points"] == [] and part["how_to"] == HOW_TO
    assert f"{trace['graphs'][0]['id']}/roofline" in set(TraceParts(trace).keys())


def test_the_live_widget_opens_on_the_compile_time_stage_and_serves_its_parts():
    import widgets

    trace = {**json.loads((FIXTURES / "widget_sample.json").read_text()), "compile_time": REPORT}
    w = widgets.ExplorerWidget(trace, stage="compile_time")
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_message(w, {"type": "part", "key": CHART_KEY, "id": 1, "revision": 0}, [])
    w._on_message(w, {"type": "part", "key": CHROME_KEY, "id": 2, "revision": 0}, [])
    assert json.loads(bytes(sent[0][1][0])) == chart(REPORT)
    assert json.loads(json.loads(bytes(sent[1][1][0]))) == chrome_trace(REPORT)
