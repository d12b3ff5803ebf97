"""GPU: under max-autotune, c.compile_time charges each autotuning to the kernel it chose for.

Two matmuls of different shapes on two lines: Inductor autotunes each (``mm_template_precompiling`` and
``mm_template_autotuning``, deferred to the scheduler by benchmark_epilogue_fusion), and the shapes in
each autotuning's metadata say which matmul it was; the report must charge it to the kernel computing
that matmul, and through it to that line.
"""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer

pytestmark = pytest.mark.gpu


def two_matmuls(x, w1, w2):
    hidden = torch.relu(x @ w1)  # first matmul
    return torch.sigmoid(hidden @ w2)  # second matmul


def _line(marker):
    lines, first = inspect.getsourcelines(two_matmuls)
    return first + next(i for i, text in enumerate(lines) if marker in text)


@pytest.fixture(scope="module")
def tuned():
    torch.manual_seed(0)
    x = torch.randn(256, 512, device="cuda")
    w1 = torch.randn(512, 384, device="cuda")
    w2 = torch.randn(384, 128, device="cuda")
    return explorer.compile(two_matmuls, x, w1, w2, config={"max_autotune": True})


def test_each_autotuning_is_charged_to_the_kernel_of_its_matmul(tuned):
    report = tuned.compile_time
    expected = {"256x512, 512x384": _line("# first matmul"), "256x384, 384x128": _line("# second matmul")}
    tunings = [p for p in report.root.walk() if p.name.endswith("_template_autotuning")]
    assert len(tunings) == 2
    graph = tuned.graphs[0]
    for phase in tunings:
        assert phase.kernel is not None, phase
        kernel = graph.kernel(phase.kernel)
        line = expected[phase.args["autotune_shape"]]
        assert (__file__, line) in [tuple(u) for u in kernel.user_lines]
    charged = {k.kernel: k for k in report.kernels if k.autotune_s > 0}
    matmul_kernels = {p.kernel for p in tunings}
    assert len(matmul_kernels) == 2 and matmul_kernels <= set(charged)  # one kernel per matmul, both charged
    for kernel in matmul_kernels:
        entry = charged[kernel]
        assert entry.candidates > 1  # extern mm and Triton templates were timed
        assert entry.autotune_s >= sum(p.seconds for p in tunings if p.kernel == kernel)
    lines = {(row.file, row.line): row for row in report.lines}
    for line in expected.values():
        assert lines[(__file__, line)].kernel_s > 0


def test_autotuning_shows_in_the_split_and_the_sums_hold(tuned):
    report = tuned.compile_time
    assert report.categories()["autotune"] > 0
    waits = _build_waits(report)
    for entry in report.kernels:  # a kernel's seconds: the outermost phases charged to it, and its build share
        outermost = [p for p in report.root.walk() if p.kernel == entry.kernel and p.graph in (None, entry.graph)]
        inner = {id(c) for p in outermost for c in p.walk() if c is not p}
        timed = sum(p.seconds for p in outermost if id(p) not in inner)
        assert timed - 1e-5 <= entry.seconds <= timed + waits.get(entry.graph, 0.0) + 1e-5

    def check(phase):
        if phase.children:
            assert abs(sum(c.seconds for c in phase.children) - phase.seconds) <= 0.02 * phase.seconds + 1e-5
        for child in phase.children:
            check(child)

    check(report.root)
    # Triton config benchmarks at the first launch name their kernel: charged by that name
    for phase in report.root.walk():
        if phase.name == "CachingAutotuner.benchmark_all_configs":
            assert phase.kernel == phase.args["kernel_name"] or phase.kernel is None and not any(
                k.name == phase.args["kernel_name"] for g in tuned.graphs for k in g.kernels)


def _build_waits(report):
    """Seconds each graph waited for its kernel builds (kernel_compile leaves no kernel was charged)."""
    waits = {}
    for phase in report.root.walk():
        if phase.name == "inductor_compile" and phase.graph:
            waits[phase.graph] = waits.get(phase.graph, 0.0) + sum(
                p.seconds for p in phase.walk() if not p.children and p.category == "kernel_compile" and p.kernel is None)
    return waits


def test_each_triton_kernel_is_charged_its_share_of_the_builds(tuned):
    """torch times each Triton kernel's build in its compile worker (``triton_kernel_info``): every kernel
    Inductor built gets a build_s, and the graph's wait for the builds is split over them, adding up."""
    report = tuned.compile_time
    graph = tuned.graphs[0]
    built = {k.kernel: k for k in report.kernels if k.build_s > 0}
    triton = [k.id for k in graph.kernels if k.language in ("triton", "template")]
    assert triton and set(triton) <= set(built), (triton, sorted(built))
    waits = _build_waits(report)
    assert waits["g0"] > 0
    # each kernel's compile_s holds its share of the wait, in proportion to its build
    total_build = sum(k.build_s for k in built.values() if k.graph == "g0")
    for entry in built.values():
        assert entry.compile_s >= waits["g0"] * entry.build_s / total_build - 1e-5
    lines = {(row.file, row.line): row for row in report.lines}
    assert all(lines[(__file__, line)].kernel_s > 0 for line in (_line("# first matmul"), _line("# second matmul")))
