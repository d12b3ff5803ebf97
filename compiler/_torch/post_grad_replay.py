"""Inductor's post-grad passes run again on a graph whose compile an FX graph cache hit skipped.

A hit returns the compiled graph without touching the GraphModule it was given, so a warm capture would
have the post-grad stage's nodes (from its store) but not the post-grad GraphModule that numerics and node
calls run. The passes are what Inductor runs before lowering on a miss (the same order as
``_InProcessFxCompile.codegen_and_compile``), and deterministic for the key that hit, so the module
they leave has the stored stage's nodes.
"""

from __future__ import annotations

from typing import Any

import torch

from . import guard


def replay(gm: torch.fx.GraphModule, example_inputs: list[Any], is_inference: bool) -> bool:
    """Rewrite ``gm`` in place as Inductor's post-grad passes would; False when this torch lacks them or
    they failed (a warning says why): then ``gm`` is no post-grad graph to run."""
    with guard.never_breaking(__name__):
        from torch._inductor.compile_fx import _recursive_post_grad_passes, fake_tensor_prop, view_to_reshape
        from torch._inductor.virtualized import V

        view_to_reshape(gm)
        with torch.no_grad():
            fake_mode = fake_tensor_prop(gm, example_inputs)
        with V.set_fake_mode(fake_mode):
            _recursive_post_grad_passes(gm, is_inference=is_inference)
        return True
    return False
