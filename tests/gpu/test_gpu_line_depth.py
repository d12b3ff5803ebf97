"""Lines at every depth on the GPU, on a model users bring: a transformers Llama built from its config, bf16,
called from this file. The library's lines hold the time, this file's call site holds all of it, and each
cuBLAS matmul's time lands whole on its nn.Linear call line in modeling_llama.py."""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer
from compiler.model import provenance

pytestmark = pytest.mark.gpu
transformers = pytest.importorskip("transformers")

_model: list[torch.nn.Module] = []


def step(input_ids):
    return _model[0](input_ids).logits


@pytest.fixture(scope="module")
def llama():
    config = transformers.LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=4, vocab_size=32000,
                                      max_position_embeddings=1024)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    _model[:] = [transformers.LlamaForCausalLM(config).eval().to("cuda", torch.bfloat16)]
    with torch.no_grad():
        c = explorer.compile(step, torch.randint(0, 32000, (2, 256), device="cuda"))
    return c, c.profile(runs=10, warmup=3)


def test_the_models_own_lines_hold_the_time_and_the_call_site_all_of_it(llama):
    c, p = llama
    assert {c.library_files.get(file) for file, _ in p.line_ms} == {"transformers"}
    source, start = inspect.getsourcelines(step)
    call = (__file__, start + next(i for i, line in enumerate(source) if "input_ids).logits" in line))
    assert p.lines("user") == pytest.approx({call: p.attributed_ms})
    (root,) = p.call_tree()
    assert root.where == call and root.total_ms == pytest.approx(p.attributed_ms)


def test_each_cublas_matmul_lands_whole_on_its_linear_line(llama):
    c, p = llama
    graph = c.graphs[0]
    fx = {n.name: n for n in graph.fx.nodes}
    pg = {n.name: n for n in graph.post_grad.nodes}
    matmuls = [k for k in graph.kernels if k.language == "extern" and "mm" in k.name]
    of_linears = 0
    for kernel in matmuls:
        computing = provenance.computing_fx_nodes(kernel, pg)
        linears = [f for f in computing if fx[f].target.endswith("linear")]
        if not linears:  # the rotary embedding's inv_freq @ position_ids, a matmul of the model's own
            assert [fx[f].target for f in computing if "matmul" in fx[f].target], (kernel.id, computing)
            continue
        (linear,) = linears
        of_linears += 1
        assert p.fx_node_ms["g0"][linear] == pytest.approx(p.ms(kernel), rel=1e-9)
        file, line = fx[linear].user_line
        assert file.endswith("modeling_llama.py") and "(" in c.sources[file][line]
    assert of_linears >= 2 * 7 + 1  # q, k, v, o, gate, up, down a layer, and the LM head (some may fuse)
