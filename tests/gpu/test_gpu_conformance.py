"""The conformance harness (tests/conformance) on a GPU: Triton pointwise, reduction and persistent kernels,
a matmul template under max-autotune, cuBLAS externs, SDPA's flash and memory-efficient kernels and
``torch.cond``, and the model zoo built from configs (``cases.GPU_MODELS``: Hugging Face Llama, T5, ViT,
GPT-2, BERT and Mixtral, torchvision's ResNet and MobileNet, a training step, an AdamW step updating in
place, a dynamic-shape compile), each kernel checked against torch's own records and the Triton wrapper
with no problem allowed; the ``cond`` branch kernels' lines and Llama's rotary embedding asserted exactly.
With ``CONFORMANCE_REPORT=path`` set, the run's report is written there (docs/conformance-gpu.md)."""

from __future__ import annotations

import inspect
import os
import re

import pytest
import torch

from tests.conformance import cases, checks, report
from tests.conformance.run import run_case

pytestmark = pytest.mark.gpu

SETS = {
    "programs with known owners": {**cases.known_cases(), **cases.gpu_cases()},
    "real models": cases.model_cases(cases.GPU_MODELS),
}
BUILDERS = {name: cases.on("cuda", build) for builders in SETS.values() for name, build in builders.items()}
OPS = dict(cases.op_cases(cases.SLICE_OPS, "cuda")) if torch.cuda.is_available() else {}
_results: dict[str, checks.CaseResult] = {}


def result(name: str) -> checks.CaseResult:
    if name not in _results:
        _results[name] = run_case(name, BUILDERS.get(name) or OPS[name])
    return _results[name]


@pytest.fixture(scope="module", autouse=True)
def written_report():
    yield
    path = os.environ.get("CONFORMANCE_REPORT")
    if path and _results:
        summaries = {title: report.summarize([_results[n] for n in names if n in _results])
                     for title, names in {**{t: list(b) for t, b in SETS.items()}, "op_db slice": list(OPS)}.items()}
        header = (f"# Conformance on a GPU\n\n{torch.cuda.get_device_name()}, torch {torch.__version__}, Triton "
                  f"{_triton_version()}: `CONFORMANCE_REPORT=docs/conformance-gpu.md pytest -m gpu "
                  "tests/gpu/test_gpu_conformance.py`. Triton pointwise, reduction and persistent kernels, a matmul "
                  "template under max-autotune, cuBLAS externs, SDPA's flash and memory-efficient kernels, "
                  "`torch.cond` and the model zoo (Hugging Face Llama, T5, ViT, GPT-2, BERT and Mixtral built from "
                  "configs, torchvision's ResNet and MobileNet, a training step, an AdamW step updating in place, a "
                  "dynamic-shape compile), checked as on the CPU ([Conformance](conformance.md)).")
        with open(path, "w") as out:
            out.write(report.markdown(summaries, header))


def _triton_version() -> str:
    import triton

    return triton.__version__


@pytest.mark.parametrize("name", [*BUILDERS, *(f"op:{n}" for n in cases.SLICE_OPS)])
def test_every_gpu_kernel_agrees_with_torchs_records_or_a_rule(name):
    if name.startswith("op:") and name not in OPS:
        pytest.skip("op_db builds its samples on the GPU only where one is")
    outcome = result(name)
    assert not outcome.error or outcome.error.startswith("skipped"), outcome.error
    assert not outcome.problems, "\n".join(f"[{p.check}] {p.graph}/{p.kernel}: {p.detail}" for p in outcome.problems)


def test_cond_branch_triton_kernels_claim_their_own_lines_only():
    graph = result("cond_one_line_branches").compilation.graphs[0]
    source, start = inspect.getsourcelines(cases.one_line_branches)
    file = inspect.getsourcefile(cases.one_line_branches)

    def line(text):
        return (file, start + next(i for i, row in enumerate(source) if text in row))

    for prefix, text in (("true_graph_0.", "lambda t: (t - 1) * 2"), ("false_graph_0.", "lambda t: t * 3")):
        kernel = next(k for k in graph.kernels if any(n.startswith(prefix) for n in k.post_grad_nodes))
        assert kernel.language == "triton" and kernel.user_lines == [line(text)]


def test_max_autotune_template_owns_the_matmul_line():
    graph = result("tour_max_autotune").compilation.graphs[0]
    matmul = next(k for k in graph.kernels if any(n.startswith(("addmm", "mm")) for n in k.post_grad_nodes))
    source, start = inspect.getsourcelines(cases.tour)
    file = inspect.getsourcefile(cases.tour)
    assert (file, start + next(i for i, row in enumerate(source) if "x @ w" in row)) in matmul.user_lines
    assert "y" in matmul.fx_nodes


def test_llamas_rotary_embedding_is_credited_to_every_kernel_that_computes_it():
    """Inductor inlines the rotary embedding's ``cos`` and ``sin`` into each kernel that applies it (the
    query's and the key's): a Triton kernel lists a ``cos`` or ``sin`` node exactly when its source calls
    one, and every ``cos``/``sin`` node is listed by some kernel."""
    graph = result("llama").compilation.graphs[0]
    nodes = {n.name: n for n in graph.post_grad}
    for op in ("cos", "sin"):
        wanted = {n for n, node in nodes.items() if node.target == f"aten.{op}.default"}
        listing = {k.id for k in graph.kernels if wanted & set(k.post_grad_nodes)}
        calling = {k.id for k in graph.kernels if k.language == "triton" and re.search(rf"\b{op}\(", k.source)}
        assert wanted and listing == calling, (op, sorted(listing ^ calling))


def test_attention_masks_written_out_stay_with_the_kernel_writing_them():
    """The attention takes its mask dense: the kernel computing the mask writes out the ``expand`` over the
    ``where``, so the expand is that kernel's (with what it views), never the attention's."""
    graph = result("llama").compilation.graphs[0]
    nodes = {n.name: n for n in graph.post_grad}
    checked = 0
    for attention in (n for n in graph.post_grad if "scaled_dot_product" in n.target and len(n.inputs) > 3):
        mask = attention.inputs[3]
        if not nodes[mask].target.startswith("aten.expand"):
            continue
        base = nodes[mask].inputs[0]
        listing = [k for k in graph.kernels if mask in k.post_grad_nodes]
        assert listing and all(base in k.post_grad_nodes for k in listing), (mask, [k.id for k in listing])
        checked += 1
    assert checked, "no attention of Llama took an expanded mask"
