"""Inductor's post-grad passes run again on a graph whose compile a cache hit skipped.

A hit returns the compiled graph without touching the GraphModule it was given, so a warm capture would
have the post-grad stage's nodes (from its store) but not the post-grad GraphModule that numerics and node
calls run. The passes are what Inductor runs before lowering on a miss (the same order as
``_InProcessFxCompile.codegen_and_compile``), and deterministic for the key that hit, so the module
they leave has the stored stage's nodes. A hit in AOTAutograd's cache skips AOTAutograd too, so there is
no graph to run them on: ``retraced`` makes them again from the Dynamo graph.
"""

from __future__ import annotations

from typing import Any

import torch

from . import backend, guard, inductor_config

# What is left out when a rebuild fails, said in its warning (the rebuild runs when the module is first read).
_LEFT_OUT = ("the served graph's post-grad GraphModule is left out (g.post_grad.module is None: check_numerics and "
             "node calls need it); explorer.compile(..., cache=False) captures it cold")


def replay(gm: torch.fx.GraphModule, example_inputs: list[Any], is_inference: bool) -> bool:
    """Rewrite ``gm`` in place as Inductor's post-grad passes would; False when this torch lacks them or
    they failed (a warning says why): then ``gm`` is no post-grad graph to run."""
    with guard.never_breaking(__name__, "rebuild", _LEFT_OUT):
        from torch._inductor.compile_fx import _recursive_post_grad_passes, fake_tensor_prop, view_to_reshape
        from torch._inductor.virtualized import V

        view_to_reshape(gm)
        with torch.no_grad():
            fake_mode = fake_tensor_prop(gm, example_inputs)
        with V.set_fake_mode(fake_mode):
            _recursive_post_grad_passes(gm, is_inference=is_inference)
        return True
    return False


def retraced(dynamo_module: torch.fx.GraphModule, example_inputs: list[Any], settings: dict[str, Any],
             inference: bool) -> list[torch.fx.GraphModule] | None:
    """The post-grad GraphModules of one Dynamo graph, made again from it: Inductor's own ``compile_fx`` on a
    copy, every cache off and ``settings`` (the capture's toggles) on, with an inner compiler that keeps
    what it is given after the post-grad passes and compiles nothing. The same pre-grad, joint-graph and
    partitioning passes run as in the compile; no kernel is built, nothing runs.

    ``inference``: one inference graph, traced without gradients. Else the forward and the backward of a
    training graph, in that order: AOTAutograd lowers a backward when it first runs, so the retrace asks
    for it at once (``force_non_lazy_backward_lowering``) and nothing has to run a backward.
    None when that failed (a warning says why) or made another number of graphs."""
    kept: list[torch.fx.GraphModule] = []
    with guard.never_breaking(__name__, "rebuild", _LEFT_OUT):
        import torch._functorch.config as functorch_config
        from torch._functorch.aot_autograd import make_boxed_func
        from torch._inductor.compile_fx import compile_fx

        def keep(gm: torch.fx.GraphModule, inputs: list[Any], **kwargs: Any) -> Any:
            if replay(gm, list(inputs), bool(kwargs.get("is_inference", inference))):
                kept.append(gm)
            return make_boxed_func(gm)

        grad = torch.no_grad() if inference else torch.enable_grad()
        eager_backward = {} if inference else {"force_non_lazy_backward_lowering": True}
        with inductor_config.patched({**settings, "force_disable_caches": True}), grad, \
                functorch_config.patch(eager_backward):
            compile_fx(backend.copy_graph_module(dynamo_module), list(example_inputs), inner_compile=keep)
    return kept if len(kept) == (1 if inference else 2) else None
