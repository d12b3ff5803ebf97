"""g.repro(path) / c.repro(dir): a Dynamo graph as a standalone script that recompiles it with Inductor,
run in a fresh interpreter that can import torch and nothing of this project (tests/isolated.py)."""

from __future__ import annotations

import pytest
import torch

import explorer
from compiler.runs.replay import NotRunnableError
from tests import isolated


class BrokenBlock(torch.nn.Module):
    """A Linear and a relu, a graph break, then a layer norm: two Dynamo graphs."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.linear(x))
        torch._dynamo.graph_break()
        return self.norm(y) * 2


@pytest.fixture(scope="module")
def broken():
    torch.manual_seed(0)
    return explorer.compile(BrokenBlock(), torch.randn(8, 16), config={"coordinate_descent_tuning": True})


@pytest.fixture(scope="module")
def scripts(broken, tmp_path_factory):
    return broken.repro(tmp_path_factory.mktemp("graphs"))


def _header(script) -> str:
    lines = script.read_text().splitlines()
    comment = " ".join(line.lstrip("#") for line in lines[:lines.index("from __future__ import annotations")])
    return " ".join(comment.split())


def test_each_dynamo_graph_reproduces_in_a_bare_interpreter(broken, scripts):
    assert [g.kind for g in broken.graphs] == ["forward", "forward"]
    assert [p.name for p in scripts] == ["g0.py", "g1.py"]
    for graph, script in zip(broken.graphs, scripts):
        assert script.with_suffix(".pt").exists()
        text = _header(script)
        for fact in ("model: BrokenBlock", f"compile id {graph.compile_id}", f"graph: {graph.id}",
                     f"torch {torch.__version__}", f"FX nodes: {len(graph.fx)}", "TORCHDYNAMO_REPRO_AFTER=aot"):
            assert fact in text, fact
        result = isolated.run(script)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "outputs match the saved ones" in result.stdout
    assert "layer_norm" in scripts[1].read_text() and "layer_norm" not in scripts[0].read_text()


def test_the_capture_config_is_patched_in(scripts):
    text = scripts[0].read_text()
    assert "CONFIG = {'coordinate_descent_tuning': True}" in text
    assert "torch._inductor.config.patch(config)" in text


def test_corrupted_saved_outputs_fail_with_the_max_error(broken, tmp_path):
    script = broken.graphs[1].repro(tmp_path / "bad.py")
    saved = torch.load(script.with_suffix(".pt"), weights_only=True)
    saved["outputs"][0] = saved["outputs"][0] + 3.0
    torch.save(saved, script.with_suffix(".pt"))
    result = isolated.run(script)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "MISMATCH: max error 3" in result.stdout


def test_an_existing_file_is_kept_without_overwrite(broken, tmp_path):
    path = tmp_path / "g0.py"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        broken.graphs[0].repro(path)
    assert path.read_text() == "keep me"
    assert broken.graphs[0].repro(path, overwrite=True).read_text().startswith("# Reproducer of graph g0")


def test_a_loaded_trace_says_to_compile_again(broken, tmp_path):
    loaded = explorer.load(broken.save(tmp_path / "trace.json"))
    with pytest.raises(NotRunnableError, match="live Dynamo graph module.*compile it again"):
        loaded.graphs[0].repro(tmp_path / "g0.py")
    with pytest.raises(NotRunnableError, match="compile it again"):
        loaded.repro(tmp_path / "all")
    assert not (tmp_path / "g0.py").exists()


def test_a_backward_graph_points_to_its_forward(tmp_path):
    torch.manual_seed(0)
    c = explorer.compile(torch.nn.Linear(4, 4), torch.randn(2, 4), backward=True)
    backward = next(g for g in c.graphs if g.kind == "backward")
    with pytest.raises(ValueError, match="reproduce the forward graph"):
        backward.repro(tmp_path / "b.py")
    (script,) = c.repro(tmp_path)  # the forward graph, parameters requiring grad as captured
    assert script.name == "g0.py" and "GRAD = True" in script.read_text()
    result = isolated.run(script)
    assert result.returncode == 0, result.stdout + result.stderr
