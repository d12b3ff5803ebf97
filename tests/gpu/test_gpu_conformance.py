"""The conformance harness (tests/conformance) on a GPU: Triton pointwise, reduction and persistent kernels,
a matmul template under max-autotune, cuBLAS externs, SDPA's flash and memory-efficient kernels and
``torch.cond``, and the model zoo built from configs (``cases.GPU_MODELS``: Hugging Face Llama, T5, ViT,
GPT-2, BERT and Mixtral, torchvision's ResNet and MobileNet, a training step, an AdamW step updating in
place, a dynamic-shape compile), each kernel checked against torch's own records and the Triton wrapper
with no problem allowed; the ``cond`` branch kernels' lines, Llama's rotary embedding, attention mask and
transpose, Llama's and T5's fused residual-add + RMSNorm kernels and every kernel's FX nodes asserted exactly
(tests/conformance/expectations.py, which the CPU slice asserts too).
With ``CONFORMANCE_REPORT=path`` set, the run's report is written there (docs/conformance-gpu.md)."""

from __future__ import annotations

import inspect
import os

import pytest
import torch

from tests.conformance import cases, checks, expectations, report
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
        pytest.skip("not in this torch's op database" if torch.cuda.is_available()
                    else "op_db builds its samples on the GPU only where one is")
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


@pytest.mark.parametrize("op", ["cos", "sin"])
def test_llamas_rotary_embedding_is_credited_to_every_kernel_that_computes_it(op):
    """Inductor inlines the rotary embedding's ``cos`` and ``sin`` into each kernel that applies it (the
    query's and the key's): a Triton kernel lists a ``cos`` or ``sin`` node exactly when its source calls
    one, and every ``cos``/``sin`` node is listed by some kernel."""
    graph = result("llama").compilation.graphs[0]
    expectations.kernels_list_a_function_exactly_where_their_code_calls_it(graph, op)


def test_attention_masks_written_out_stay_with_the_kernel_writing_them():
    """The attention takes its mask dense: the kernel computing the mask writes out the ``expand`` over the
    ``where``, so the expand is that kernel's (with what it views), never the attention's."""
    assert expectations.attention_masks_stay_with_the_kernel_writing_them(result("llama").compilation.graphs[0])


def test_llamas_fused_residual_add_and_rmsnorm_kernels_list_the_layers_lines():
    from transformers.models.llama import modeling_llama as llama

    norm = {expectations.source_line(llama.LlamaRMSNorm.forward, t)
            for t in ("variance = ", "* torch.rsqrt(", "return self.weight")}
    residual = set(expectations.source_lines(llama.LlamaDecoderLayer.forward, "hidden_states = residual + hidden_states"))
    expectations.norm_kernels_list_their_layers_lines(result("llama").compilation.graphs[0], norm, residual)


def test_t5s_fused_residual_add_and_rmsnorm_kernels_list_the_layers_lines():
    """Encoder and decoder: each stack's first norm reads the embeddings, every other a residual sum (after
    self-attention, cross-attention or the feed-forward block)."""
    from transformers.models.t5 import modeling_t5 as t5

    norm = {expectations.source_line(t5.T5LayerNorm.forward, t)
            for t in ("variance = ", "* torch.rsqrt(", "return self.weight")}
    residual = {expectations.source_line(layer.forward, "hidden_states + self.dropout(")
                for layer in (t5.T5LayerSelfAttention, t5.T5LayerCrossAttention, t5.T5LayerFF)}
    expectations.norm_kernels_list_their_layers_lines(result("t5").compilation.graphs[0], norm, residual,
                                                      on_embeddings=2)


@pytest.mark.parametrize("name", ["llama", "gpt2", "bert", "vit", "t5", "mixtral"])
def test_every_kernels_fx_nodes_hold_those_of_the_nodes_it_lists(name):
    """The ``getitem`` of an attention's output a matmul reads brings its FX node (and every other view)."""
    for graph in result(name).compilation.graphs:
        expectations.fx_nodes_hold_those_of_every_listed_node(graph)


def test_the_kernel_after_llamas_attention_lists_sdpa_attentions_transpose():
    from transformers.integrations import sdpa_attention

    line = expectations.source_line(sdpa_attention.sdpa_attention_forward, "attn_output.transpose(1, 2)")
    expectations.attention_output_kernels_list_the_transpose(result("llama").compilation.graphs[0], line)
