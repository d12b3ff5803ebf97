"""explorer.bisect: models whose culprit is known, on the CPU (torch 2.13's CompilerBisector, in this process).

- ``torch.rand_like`` in the compiled region: Inductor draws other numbers than eager unless ``fallback_random``;
  torch's bisector tries that config change after the three pass families and names it; captured with it and
  without, the kernel that draws the numbers and the line of ``rand_like`` are named (not the line before it).
- a bfloat16 ``((x * 1.001 - x) * 8).sum(-1)``: eager rounds each step to bfloat16, Inductor's one kernel keeps
  float32 unless ``emulate_precision_casts``; that kernel and its line are named.
- a post-grad custom pass the test breaks on purpose (``post_grad_custom_post_pass`` multiplying every mul by
  1.001): the bisector lands on ``post_grad_passes`` and, by bisecting its applications, on the pass by name.
- a fusion that keeps a bfloat16 value in float32: ``y = x + 1000`` is returned (stored as bfloat16, its spacing
  there is 8) and also read by ``(y - 1000).sum()``; fused, the reader gets the unrounded float32 value, so the sum
  keeps ``x`` where eager's rounded ``y`` lost it (an error of about 250, every time). torch's bisector blames
  ``emulate_precision_casts``; the fusion level, over the two fused groups, names the group, kernel and lines.
- a program that matches; a check that raises (first thing, and in the middle of torch's bisector); an interrupt.

Each bisect is module-scoped (one per model); the whole file takes about a minute on two cores.
"""

from __future__ import annotations

import io
import math
import re
import sys

import pytest
import torch
from rich.console import Console
from torch._inductor import compiler_bisector
from torch._inductor import config as inductor_config

import explorer
from tests import isolated


def noisy(x):
    y = x * 2  # LINE: scaled
    return y + torch.rand_like(y)  # LINE: rand_like


def bf16_scaled_difference(x):
    return ((x * 1.001 - x) * 8).sum(-1)  # LINE: bf16


def scaled_relu(x, y):
    return (x * y).relu() + 1  # LINE: scaled_relu


def bf16_kept_in_float32(x, w):
    z = w * 2
    y = x + 1000  # LINE: y
    return z, (z * 2).sum(), y, (y - 1000).sum()  # LINE: reader


def matching(x):
    return (x * 2).sin()


def break_muls(graph):
    """A post-grad pass broken on purpose: every aten.mul's result is multiplied by 1.001."""
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.aten.mul.Tensor:
            with graph.inserting_after(node):
                scaled = graph.call_function(torch.ops.aten.mul.Tensor, (node, 1.001))
            node.replace_all_uses_with(scaled, delete_user_cb=lambda user: user is not scaled)


def _line(marker: str) -> int:
    source = open(__file__).read().splitlines()
    return next(i for i, text in enumerate(source, 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def _bisector_state():
    bisector = compiler_bisector.CompilerBisector
    return (bisector.bisection_enabled, bisector.in_process_cache, "print" in vars(compiler_bisector),
            {backend: [s.name for s in items] for backend, items in compiler_bisector.BACKENDS.items()})


@pytest.fixture(scope="module")
def rand_result():
    return explorer.bisect(noisy, torch.ones(4, 4))


@pytest.fixture(scope="module")
def bf16_result():
    x = torch.rand(8, 64, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    return explorer.bisect(bf16_scaled_difference, x)


@pytest.fixture(scope="module")
def pass_result():
    with inductor_config.patch(post_grad_custom_post_pass=break_muls):
        before = inductor_config.save_config()
        result = explorer.bisect(scaled_relu, torch.ones(4, 4), torch.full((4, 4), 2.0))
        after = inductor_config.save_config()
    return result, before == after


@pytest.fixture(scope="module")
def fusion_result():
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(8, 64, generator=generator).to(torch.bfloat16)
    w = torch.rand(16, 32, generator=generator).to(torch.bfloat16)
    return explorer.bisect(bf16_kept_in_float32, x, w)


def test_rand_in_the_compiled_region_is_blamed_on_fallback_random(rand_result):
    r = rand_result
    assert r.status == "diverges" and r.found
    assert (r.backend, r.subsystem, r.subsystem_kind) == ("inductor", "inductor_fallback_random", "config")
    assert r.avoided_by == {"fallback_random": True} and r.avoided_by_checked
    assert r.application is None and r.fusion is None
    outcomes = {t.what: t.outcome for t in r.trials}
    assert outcomes["Inductor as configured"] == "bad"
    assert outcomes["backend eager"] == "good" and outcomes["backend aot_eager"] == "good"
    assert outcomes["backend inductor"] == "bad"
    assert outcomes["inductor / inductor_fallback_random: disabled"] == "good"
    assert outcomes["Inductor with fallback_random=True"] == "good"
    assert "not a fusion" in r.fusion_note  # keeping its one fused group apart still differs
    assert "Setting config inductor field fallback_random to True fixed the issue" in r.log


def test_a_config_culprit_names_the_kernel_that_draws_the_numbers_and_its_line(rand_result):
    """Captured with fallback_random and without, kernels paired by their nodes: the kernel that computes
    rand_like (by the capture's provenance) is the one whose code changes, and only rand_like's line is named,
    not the line of y that the same kernel computes."""
    r = rand_result
    graph = r.compilation.graphs[0]
    drawing = [k.id for k in graph.kernels if "rand_like" in k.fx_nodes]
    assert len(drawing) == 1 and {"y", "rand_like"} <= set(graph.kernel(drawing[0]).fx_nodes)
    (changed,) = r.setting.kernels
    assert (changed.graph, changed.kernel, changed.fx_nodes, changed.how) == (
        graph.id, drawing[0], ["rand_like"], "lowered differently")
    made = set(graph.fx.node("rand_like").post_grad)  # Inductor's random ops in place of aten.rand_like
    assert changed.post_grad_nodes and set(changed.post_grad_nodes) == made & set(graph.kernel(drawing[0]).post_grad_nodes)
    assert any("rand_like" in kernel for kernel in changed.becomes)  # with it, aten.rand_like computes it
    assert r.kernels == drawing and r.user_lines == [(__file__, _line("rand_like"))]
    assert ("it changes", f"{drawing[0]}: rand_like lowered differently; with it: {', '.join(changed.becomes)}") \
        in r.culprit_lines()


def test_a_precision_culprit_names_the_kernel_that_rounds_differently_and_its_line(bf16_result):
    r = bf16_result
    assert (r.backend, r.subsystem) == ("inductor", "inductor_emulate_precision_casts"), r
    assert r.avoided_by == {"emulate_precision_casts": True} and r.avoided_by_checked
    (graph,) = r.compilation.graphs
    (kernel,) = graph.kernels
    (changed,) = r.setting.kernels
    # the same post-grad ops either way: the kernel's lines that round to bfloat16 changed, and they compute
    # the difference that eager rounds at each step
    assert (changed.kernel, changed.how) == (kernel.id, "generated differently")
    assert "sub" in changed.fx_nodes and set(changed.fx_nodes) <= set(kernel.fx_nodes)
    assert r.kernels == [kernel.id] and r.user_lines == [(__file__, _line("bf16"))]
    assert "nothing was fused" in r.fusion_note


def test_each_level_says_what_it_lights_in_the_view(rand_result):
    from widgets import ExplorerWidget

    r = rand_result
    changed = r.setting.kernels[0]
    links = {c["level"]: c for c in r.culprit_links()}
    assert list(links) == [level for level, _ in r.culprit_lines()]
    for level in ("config change", "avoided by", "it changes"):
        assert (links[level]["graph"], links[level]["fx"], links[level]["kernels"]) == (
            "g0", ["rand_like"], [changed.kernel]), level
        assert links[level]["post_grad"] == changed.post_grad_nodes
        assert links[level]["user_lines"] == [[__file__, _line("rand_like")]]
    assert links["backend"]["graph"] is None and not links["backend"]["kernels"]
    assert links["kernel"]["kernels"] == [changed.kernel]
    assert links["lines"]["user_lines"] == [[__file__, _line("rand_like")]]
    view = r.trace_view()
    assert view["culprits"] == r.culprit_links()
    widget = ExplorerWidget(view)
    assert widget.summary["culprits"] == r.culprit_links() and "culprits" not in widget.summary["parts"]
    widget.select("culprit", "1")
    assert widget.selection == {"kind": "culprit", "id": "1"}
    with pytest.raises(ValueError, match=f"this view has {len(links)} culprit levels"):
        widget.select("culprit", str(len(links)))


def test_a_broken_post_grad_pass_is_found_by_name(pass_result):
    r, config_unchanged = pass_result
    assert config_unchanged
    assert (r.backend, r.subsystem, r.subsystem_kind) == ("inductor", "post_grad_passes", "bisect")
    assert r.applied == "post_grad_custom_post_pass" and isinstance(r.application, int) and r.application > 0
    assert r.avoided_by == {"disabled_passes": "post_grad_custom_post_pass"} and r.avoided_by_checked
    bisecting = [t for t in r.trials if t.what.startswith("inductor / post_grad_passes: applications")]
    applications = int(re.search(r" of 0\.\.(\d+)$", bisecting[0].what).group(1))  # counted by torch
    assert 0 < r.application <= applications
    assert len(bisecting) <= math.ceil(math.log2(applications + 1)) + 1  # a binary search
    assert {"inductor / pre_grad_passes: disabled": "bad", "inductor / post_grad_passes: disabled": "good"}.items() \
        <= {t.what: t.outcome for t in r.trials}.items()
    assert ("application", f"#{r.application}: post_grad_custom_post_pass") in r.culprit_lines()
    (changed,) = r.setting.kernels  # captured with the pass turned off: the mul it rewrote is lowered otherwise
    assert (changed.fx_nodes, changed.how) == (["mul"], "lowered differently")
    assert r.kernels == [changed.kernel] and r.user_lines == [(__file__, _line("scaled_relu"))]


def test_the_pass_repro_says_how_torchs_bisector_reproduces_it(pass_result, tmp_path):
    r, _ = pass_result
    text = r.repro(tmp_path / "pass.py").read_text()
    assert (f"TORCH_BISECT_BACKEND=inductor TORCH_BISECT_SUBSYSTEM=post_grad_passes "
            f"TORCH_BISECT_MAX={r.application}") in text
    assert "post_grad_custom_post_pass" in text and "not carried" in text


def test_a_fusion_that_keeps_bf16_in_float32_names_group_kernel_and_lines(fusion_result):
    r = fusion_result
    assert (r.backend, r.subsystem) == ("inductor", "inductor_emulate_precision_casts")
    assert r.avoided_by == {"emulate_precision_casts": True} and r.avoided_by_checked
    assert r.fusion is not None and {"add", "sub"} <= set(r.fusion.nodes) and "mul" not in r.fusion.nodes
    graph = r.compilation.graph(r.fusion.graph)
    assert r.kernels == r.fusion.kernels and r.kernels and all(k in {k.id for k in graph.kernels} for k in r.kernels)
    lines = {line for file, line in r.user_lines if file == __file__}
    assert {_line("y"), _line("reader")} <= lines
    fusion_trials = [t for t in r.trials if t.level == "fusion"]
    groups = [f for f in graph.fused if len(f.nodes) > 1]
    assert len(groups) == 2  # so the search halves once
    assert [t.outcome for t in fusion_trials][0] == "good"  # all kept apart: matches
    assert len(fusion_trials) <= 1 + math.ceil(math.log2(len(groups))) + 1


def test_the_rendering_names_each_level(fusion_result):
    console = Console(width=200, record=True, color_system=None)
    console.print(fusion_result)
    text = console.export_text()
    for expected in ("culprit, level by level", "inductor_emulate_precision_casts", fusion_result.fusion.group,
                     fusion_result.kernels[0], f"test_bisect.py:{_line('y')}", "trials"):
        assert expected in text
    page = fusion_result._repr_html_()
    assert "<table>" in page and fusion_result.kernels[0] in page


def test_the_repro_shows_the_failure_with_torch_only(fusion_result, tmp_path):
    script = fusion_result.repro(tmp_path / "culprit.py")
    text = script.read_text()
    assert "# explorer.bisect found:" in text and "'emulate_precision_casts': True" in text
    result = isolated.run(script)
    assert result.returncode == 1, result.stdout + result.stderr[-2000:]
    fixed = text.replace("CONFIG = {}", "CONFIG = {'emulate_precision_casts': True}")
    assert fixed != text
    script.write_text(fixed)
    result = isolated.run(script)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_a_program_that_matches_bisects_nothing():
    r = explorer.bisect(matching, torch.linspace(-1, 1, 16))
    assert r.status == "matches" and not r.found and r.backend is None
    assert [t.outcome for t in r.trials] == ["good"]
    assert "float32 0.0001/1e-05" in r.message and "max abs error" in r.message and "nothing to bisect" in r.message
    with pytest.raises(ValueError, match="nothing to reproduce"):
        r.repro("/nonexistent/never_written.py")


def test_a_check_that_raises_is_reported_not_blamed():
    def check(compiled, eager):
        raise ValueError("the check itself is broken")

    r = explorer.bisect(matching, torch.ones(3), check=check)
    assert r.status == "check raised" and r.backend is None and r.subsystem is None
    assert "ValueError: the check itself is broken" in r.message
    assert [t.outcome for t in r.trials] == ["check raised"]


def test_state_is_as_it_was_after_a_check_raises_inside_torchs_bisector():
    calls = []

    def check(compiled, eager):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("third call")
        return len(calls) == 2  # the first run "fails", eager is good, the check raises on aot_eager

    compiles = []

    def counting(gm, example_inputs):
        compiles.append(1)
        return gm.forward

    other = torch.compile(lambda x: x * 3, backend=counting)
    other(torch.ones(2))
    config, state, rng = inductor_config.save_config(), _bisector_state(), torch.get_rng_state()
    r = explorer.bisect(matching, torch.ones(3), check=check)
    assert r.status == "check raised" and r.backend is None
    assert [t.outcome for t in r.trials] == ["bad", "good", "check raised"]  # first run, backend eager, aot_eager
    assert inductor_config.save_config() == config and _bisector_state() == state
    assert torch.equal(torch.get_rng_state(), rng)
    other(torch.ones(2))
    assert len(compiles) == 1  # the user's other compiled function was not reset


def test_state_is_as_it_was_after_an_interrupt():
    calls = []
    streams = sys.stdout, sys.stderr

    def check(compiled, eager):
        calls.append(1)
        if len(calls) == 2:  # inside torch's bisector, with the streams swapped as a live display swaps them
            sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
            raise KeyboardInterrupt
        return False

    config, state = inductor_config.save_config(), _bisector_state()
    with pytest.raises(KeyboardInterrupt):
        explorer.bisect(matching, torch.ones(3), check=check)
    assert inductor_config.save_config() == config and _bisector_state() == state
    assert sys.stdout is streams[0] and sys.stderr is streams[1]


def sin_then_scale(x):
    return x.sin() * 2  # LINE: sin


@pytest.fixture
def sin_lowered_as_cos():
    """aten.sin lowered as cos for the test's length: a lowering broken on purpose, put back afterwards."""
    from torch._inductor.lowering import lowerings

    sin, cos = torch.ops.aten.sin.default, torch.ops.aten.cos.default
    original = lowerings[sin]
    lowerings[sin] = lowerings[cos]
    try:
        yield
    finally:
        lowerings[sin] = original


def test_a_broken_lowering_is_found_by_its_node(sin_lowered_as_cos):
    from torch._inductor.lowering import lowerings as table

    lowerings = dict(table)
    config, state, rng = inductor_config.save_config(), _bisector_state(), torch.get_rng_state()
    r = explorer.bisect(sin_then_scale, torch.linspace(0, 1, 16), fusion=False)
    assert (r.backend, r.subsystem, r.subsystem_kind) == ("inductor", "lowerings", "bisect"), r
    assert r.applied == "sin" and r.application is not None  # torch counts lowered nodes; this is aten.sin's
    assert {"inductor / lowerings: disabled": "good", "inductor / post_grad_passes: disabled": "bad"}.items() \
        <= {t.what: t.outcome for t in r.trials}.items()
    assert r.kernels and (__file__, _line("sin")) in r.user_lines  # the lowered node's kernel and line
    assert dict(table) == lowerings  # the bisect patched no lowering itself
    assert inductor_config.save_config() == config and _bisector_state() == state
    assert torch.equal(torch.get_rng_state(), rng)
