"""Lines at every depth (compiler/model/lines.py) and time split by what each node costs
(compiler/model/attribution.py), on programs whose answer is known: a transformers Llama called from this
file (the library's lines hold the time, this file's call site the whole of it), and small programs of
this file whose nodes' costs follow from their shapes."""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer
from compiler.model import provenance

transformers = pytest.importorskip("transformers")

torch.manual_seed(0)
_CONFIG = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                                   max_position_embeddings=64)
_CONFIG._attn_implementation = "sdpa"
model = transformers.LlamaForCausalLM(_CONFIG).eval()


def step(input_ids):
    return model(input_ids).logits  # the user's call site of the library model


def reduce_then_exp(x):
    s = (x * 2).sum(-1)
    return s.exp()


def sine_view_cosine(x):
    y = x.sin()
    z = y.t()
    return z.cos()


def _line(fn, text: str) -> tuple[str, int]:
    source, start = inspect.getsourcelines(fn)
    return (__file__, start + next(i for i, line in enumerate(source) if text in line))


@pytest.fixture(scope="module")
def llama():
    with torch.no_grad():
        c = explorer.compile(step, torch.randint(0, 256, (2, 16)))
    return c, c.profile(runs=3, warmup=1)


def test_a_library_models_time_lands_on_its_own_source_lines(llama):
    c, p = llama
    assert p.line_ms, "no line got time"
    assert {c.library_files.get(file) for file, _ in p.line_ms} == {"transformers"}
    assert any(file.endswith("modeling_llama.py") for file, _ in p.line_ms)
    assert p.lines("transformers") == pytest.approx(p.line_ms)
    assert sum(p.line_ms.values()) == pytest.approx(p.attributed_ms)


def test_the_call_site_is_the_root_of_the_tree_and_the_user_depth(llama):
    c, p = llama
    call = _line(step, "model(input_ids)")
    assert p.lines("user") == pytest.approx({call: p.attributed_ms})
    (root,) = p.call_tree()
    assert root.where == call and root.self_ms == 0.0
    assert root.total_ms == pytest.approx(p.attributed_ms)
    assert p.line_total_ms[call] == pytest.approx(p.attributed_ms)
    leaves: dict[tuple[str, int], float] = {}
    for node in root.walk():  # a line is a leaf wherever it is called from (RMSNorm: three places a layer)
        if node.self_ms:
            leaves[node.where] = leaves.get(node.where, 0.0) + node.self_ms
    assert leaves == pytest.approx(p.line_ms)


def test_each_extern_matmul_lands_whole_on_its_linear_call_line(llama):
    c, p = llama
    graph = c.graphs[0]
    fx = {n.name: n for n in graph.fx.nodes}
    matmuls = [k for k in graph.kernels if k.language == "extern" and "mm" in k.name]
    assert len(matmuls) == 8  # q, k, v, o, gate, up, down and the LM head
    for kernel in matmuls:
        made_from = provenance.computing_fx_nodes(kernel, {n.name: n for n in graph.post_grad.nodes})
        (linear,) = [name for name in made_from if fx[name].target.endswith("linear")]
        assert p.fx_node_ms["g0"][linear] == pytest.approx(p.ms(kernel))  # all of it, on one FX node...
        file, line = fx[linear].user_line
        text = c.sources[file][line]  # ...whose line is the nn.Linear call in the model's own source
        assert c.library_files[file] == "transformers" and ("_proj(" in text or "lm_head(" in text), text


def test_modules_and_views_at_their_depth(llama):
    c, p = llama
    modules = p.lines("module")
    assert "model.model.layers.0.self_attn.q_proj" in modules and "model.lm_head" in modules
    assert sum(modules.values()) == pytest.approx(p.attributed_ms)
    graph = c.graphs[0]
    pg = {n.name: n for n in graph.post_grad.nodes}
    copies = {n.name for n in graph.fx.nodes  # a reshape of a strided value copies it (torch 2.11's repeat_kv): real work
              if any(("clone" in pg[m].target or "copy" in pg[m].target) for m in n.post_grad if m in pg)}
    views = [n.name for n in graph.fx.nodes if n.op == "call_method" and n.target in ("view", "transpose", "reshape")
             and n.name not in copies]
    assert views and all(p.fx_node_ms["g0"].get(name, 0.0) == 0.0 for name in views)


def test_a_depth_nobody_can_answer_is_refused_with_the_choices(llama):
    c, p = llama
    with pytest.raises(ValueError, match=r"unknown depth 'transformer' \(did you mean 'transformers'\?\)"):
        p.lines("transformer")
    alone = type(p)(**{**p.__dict__, "compilation": None})
    with pytest.raises(ValueError, match="not in a compilation's profiles"):
        alone.lines()


def test_lines_at_every_depth_survive_a_save(tmp_path, llama):
    c, p = llama
    loaded = explorer.load(c.save(tmp_path / "llama.json.gz")).profiles[-1]
    for depth in ("source", "user", "module", "transformers"):
        assert loaded.lines(depth) == pytest.approx(p.lines(depth))
    assert loaded.line_total_ms == pytest.approx(p.line_total_ms)


def test_a_fused_kernels_time_is_split_by_what_each_node_costs():
    x = torch.randn(64, 256)
    c = explorer.compile(reduce_then_exp, x)
    p = c.profile(runs=3, warmup=1)
    (kernel,) = c.graphs[0].kernels
    reduce_line, exp_line = _line(reduce_then_exp, "(x * 2).sum(-1)"), _line(reduce_then_exp, "s.exp()")
    assert set(p.line_ms) == {reduce_line, exp_line}
    assert sum(p.line_ms.values()) == pytest.approx(p.ms(kernel))
    # the multiply reads and writes 64 x 256 floats and the sum reads them again; exp reads and writes 64:
    # bytes, not the count of nodes (which gave exp a third), decide
    moved = {reduce_line: (2 + 1) * 64 * 256 * 4, exp_line: 2 * 64 * 4}
    assert p.line_ms[exp_line] / p.ms(kernel) < 2 * moved[exp_line] / sum(moved.values())


def test_a_view_between_two_ops_gets_no_time():
    c = explorer.compile(sine_view_cosine, torch.randn(48, 32))
    p = c.profile(runs=3, warmup=1)
    (kernel,) = [k for k in c.graphs[0].kernels]
    sine, view, cosine = (_line(sine_view_cosine, t) for t in ("x.sin()", "y.t()", "z.cos()"))
    assert view not in p.line_ms
    assert p.line_ms[sine] == pytest.approx(p.line_ms[cosine]) == pytest.approx(p.ms(kernel) / 2)
