"""GPU: ``explorer.watch()`` over a small CUDA training loop with a recompile (run with `pytest -m gpu`).

The loop's events are known: a batch whose size changes at step 3 recompiles the forward once there,
every step runs the compiled forward (and its backward), and the recompiled graph captures in full on
demand with Triton kernels.
"""

from __future__ import annotations

import inspect

import pytest
import torch

import explorer

pytestmark = pytest.mark.gpu


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_cuda_loop_recompiles_once_at_the_step_the_batch_changes():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Mlp().cuda()
    step_fn = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    batches = [torch.randn(16 if step < 3 else 24, 64, device="cuda") for step in range(6)]
    with explorer.watch() as w:
        for x in w.steps_of(batches):
            loss = step_fn(x).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        torch.cuda.synchronize()
    assert len(w.steps) == 6
    [recompile] = w.recompiles
    assert recompile.step == 3
    assert "size mismatch at index 0" in recompile.reason and recompile.value == "24"
    forward_line = inspect.getsourcelines(Mlp.forward)[1]
    assert recompile.file == __file__ and recompile.line >= forward_line
    [frame] = [f for f in w.frames if f.function == "forward"]
    assert frame.calls == 6 and frame.recompiles == 1 and frame.timed_calls >= 1
    assert all(s.calls for s in w.steps)
    c = recompile.compilation()
    assert c.device.startswith("cuda") and any(k.language == "triton" for g in c.graphs for k in g.kernels)
    torch._dynamo.reset()


def test_cuda_training_loop_without_marks_has_one_step_per_optimizer_step():
    """The same loop with no ``w.steps_of``: the watch makes one step per ``optimizer.step()`` (torch.optim's
    step hook), so the recompile is at step 3 again, and the compiled forward runs once in each step."""
    from compiler.model.watch import StepRule

    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Mlp().cuda()
    step_fn = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    with explorer.watch(live=False) as w:
        for step in range(6):
            loss = step_fn(torch.randn(16 if step < 3 else 24, 64, device="cuda")).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        torch.cuda.synchronize()
    assert w.step_rule is StepRule.OPTIMIZER and [s.index for s in w.steps] == list(range(6))
    [recompile] = w.recompiles
    assert recompile.step == 3 and "size mismatch at index 0" in recompile.reason
    assert [sum(s.calls.values()) for s in w.steps] == [1] * 6
    torch._dynamo.reset()
