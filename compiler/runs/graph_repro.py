"""g.repro(path) / c.repro(dir): one Dynamo graph as a standalone script that recompiles it with Inductor.

A kernel reproducer (compiler/runs/repro.py) isolates one generated kernel; this one goes a level up,
to what the compiler was handed: the Dynamo FX graph as a ``torch.nn.Module`` (its ``forward`` is the
graph's code), the graph's real inputs, and the Inductor config the capture compiled it under. The
script runs it eagerly and through ``torch.compile(backend="inductor")`` and compares the compiled
outputs with the eager ones saved by the writer, so a failure can be filed as-is or handed to torch's
minifier. It needs torch alone.

The inputs are those the graph received in the captured run: the compiled program runs once more on
clones of the example inputs (the module's state put back after) and the graph's first call is observed
(compiler/_torch/kernel_calls.py); Dynamo lifts parameters and buffers to graph inputs, so they are
among them. Backward graphs have no Dynamo graph of their own, and a loaded trace has no graph module
or tensors: both are refused, saying what to do instead.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path
from pprint import pformat
from typing import Any

import torch

from .._torch import fx_source, kernel_calls
from ..model import slots
from . import graph_repro_script, numerics, replay, repro, repro_script

MINIFIER = ("to minify a failure, run this script with TORCHDYNAMO_REPRO_AFTER=aot (a compile error) or "
            "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4 (wrong outputs): torch's minifier then writes "
            "a minifier_launcher.py (torch/_dynamo/config.py: repro_after, repro_level).")


@slots.repro_graph.fill
def write(graph: Any, path: Path, *, overwrite: bool = False) -> Path:
    """``g.repro(path)``: see ``GraphCapture.repro``. Returns the script's path."""
    if graph.kind == "backward":
        raise ValueError(f"{graph.id} is a backward graph: AOT autograd derived it, there is no Dynamo graph of its "
                         f"own to recompile; reproduce the forward graph of Dynamo graph {graph.dynamo_graph} instead")
    c = graph.compilation
    if c is None or not c.live or graph.fx.module is None:
        raise replay.NotRunnableError(f"g.repro({graph.id}): a graph reproducer needs the live Dynamo graph module "
                                      "and its inputs, and this graph comes from a loaded trace; compile it again "
                                      "with explorer.compile(...) and call repro on that")
    tensors_path = path.with_name(path.stem + ".pt")
    existing = [p for p in (path, tensors_path) if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} exists; pass overwrite=True to replace it")
    gm = graph.fx.module
    _check_nodes(graph, gm)
    imports, forward = fx_source.module_source(gm)
    attributes = {n.target: repro.snapshot(_attribute(gm, n.target)) for n in gm.graph.nodes if n.op == "get_attr"}
    tensors = {"inputs": _graph_inputs(graph, gm), "attributes": attributes}
    tensors["requires_grad"] = _requires_grad(gm, tensors["inputs"])
    with torch.set_grad_enabled(replay.grad_mode(c)):
        outputs = replay.flat_tensors(gm(*graph_repro_script.fresh(tensors)))
    tensors["outputs"] = [t.detach().clone() for t in outputs]
    config, skipped = _config(c.inductor_overrides)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(tensors, tensors_path)
    path.write_text(_script(graph, gm, imports, forward, config, skipped, tensors_path.name, len(outputs)))
    return path


@slots.repro_compilation.fill
def write_all(c: Any, directory: Path, *, overwrite: bool = False) -> list[Path]:
    """``c.repro(dir)``: one script per Dynamo graph, ``<graph id>.py``, its forward or inference graph."""
    graphs = [g for g in c.graphs if g.kind != "backward"]
    if not graphs:
        raise ValueError(f"{c.function} has no forward or inference graph to reproduce")
    return [write(g, directory / f"{g.id}.py", overwrite=overwrite) for g in graphs]


def _check_nodes(graph: Any, gm: torch.fx.GraphModule) -> None:
    """Refuse graphs whose module the script could not rebuild from tensors: submodule calls, and
    higher-order ops whose bodies are subgraph modules."""
    for node in gm.graph.nodes:
        held = _attribute(gm, node.target) if node.op == "get_attr" else None
        if node.op == "call_module" or isinstance(held, torch.nn.Module):
            raise ValueError(f"g.repro({graph.id}): node {node.name} uses the submodule {node.target}, and the "
                             "graph reproducer saves tensors only; reproduce its kernels with k.repro() instead")
        if node.op == "get_attr" and not isinstance(held, torch.Tensor):
            raise ValueError(f"g.repro({graph.id}): node {node.name} reads {node.target} = {held!r}, which is "
                             "not a tensor the reproducer can save")


def _attribute(gm: torch.fx.GraphModule, target: str) -> Any:
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _graph_inputs(graph: Any, gm: torch.fx.GraphModule) -> list[Any]:
    """The inputs of the graph's first call when the compiled program runs once more, as they were before
    the call (Inductor's wrapper empties its argument list and may update inputs in place)."""
    c = graph.compilation
    replay.check_runnable(c, "g.repro()")
    if graph.compiled_fn is None:
        raise replay.NotRunnableError(f"g.repro({graph.id}): the graph has no live compiled function to observe")
    seen: list[list[Any]] = []

    def observe(label: str, invoke: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not seen:
            seen.append([repro.snapshot(x) for x in args[0]])
        return invoke()

    replay.run_on_copies(c, kernel_calls.observed_graph_calls([(graph.compiled_fn, graph.id)], observe))
    if not seen:
        raise RuntimeError(f"g.repro({graph.id}): the graph was not called when the program ran again (a branch "
                           "these inputs do not take?), so it has no inputs to save")
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(seen[0]):
        raise RuntimeError(f"g.repro({graph.id}): the compiled graph was called with {len(seen[0])} inputs, the Dynamo "
                           f"graph has {len(placeholders)} (AOT autograd added or removed some), so they cannot be "
                           "matched up")
    return seen[0]


def _requires_grad(gm: torch.fx.GraphModule, inputs: list[Any]) -> list[bool]:
    """Whether each input required grad when Dynamo traced it (parameters do): the snapshots do not, and
    AOT autograd compiles a training graph only for inputs that do."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    flags = []
    for node, value in zip(placeholders, inputs):
        example = node.meta.get("example_value")
        flags.append(isinstance(value, torch.Tensor) and isinstance(example, torch.Tensor)
                     and bool(example.requires_grad) and (value.is_floating_point() or value.is_complex()))
    return flags


def _config(overrides: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The capture's Inductor config changes the script can write as literals; the keys it cannot."""
    config, skipped = {}, []
    for key, value in overrides.items():
        try:
            literal = ast.literal_eval(repr(value)) == value
        except (SyntaxError, ValueError):
            literal = False
        if literal:
            config[key] = value
        else:
            skipped.append(key)
    return config, skipped


# ------------------------------------------------------------------------------------------ the script


def _header(graph: Any, gm: torch.fx.GraphModule, config: dict[str, Any], skipped: list[str], tensors: str,
            outputs: int) -> str:
    c = graph.compilation
    nodes = list(gm.graph.nodes)
    calls = sum(1 for n in nodes if n.op not in ("placeholder", "output", "get_attr"))
    inputs = sum(1 for n in nodes if n.op == "placeholder")

    def settings(values: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "none"

    where = f"{graph.id} ({graph.kind}), Dynamo graph {graph.dynamo_graph}, compile id {graph.compile_id or 'unknown'}"
    patched = f"{settings(config)} (the capture's changes, applied with torch._inductor.config.patch)"
    returned = f"{outputs} tensor{'s' if outputs != 1 else ''}"
    fields = [("model", c.function),
              ("graph", where),
              ("FX nodes", f"{len(nodes)} ({inputs} inputs, {calls} calls)"),
              ("captured with", f"torch {c.torch}, grad mode {'on' if replay.grad_mode(c) else 'off'}"),
              ("toggles", settings(c.toggles or {})),
              ("inductor config", patched)]
    if skipped:
        fields.append(("not applied", f"{', '.join(skipped)}: values the script cannot write as literals"))
    fields += [("inputs", f"the {inputs} inputs the graph got in the captured run, parameters included ({tensors})"),
               ("outputs", f"{returned}, the graph run eagerly on those inputs when this was written ({tensors})"),
               ("minifier", MINIFIER)]
    intro = (f"Reproducer of graph {graph.id} of {c.function}, written by inductor-explorer (GraphCapture.repro): "
             "the Dynamo FX graph as a module, run eagerly and with torch.compile(backend='inductor') under the "
             "capture's Inductor config. It compares the compiled outputs with the saved eager ones: exit 0 when "
             "they match, 1 (printing the largest error) when they do not. Needs torch only.")
    return repro.header_comment(intro, fields)


def _script(graph: Any, gm: torch.fx.GraphModule, imports: list[str], forward: str, config: dict[str, Any],
            skipped: list[str], tensors: str, outputs: int) -> str:
    c = graph.compilation
    tolerances = {str(dtype).removeprefix("torch."): value for dtype, value in numerics.TOLERANCES.items()}
    constants = [f"CONFIG = {pformat(config, width=100, sort_dicts=False)}",
                 f"GRAD = {replay.grad_mode(c)!r}",
                 f"TENSORS = Path(__file__).with_name({tensors!r})",
                 f"TOLERANCES = {pformat(tolerances, width=100)}  # dtype -> (rtol, atol)"]
    lines = ["import argparse", "import sys", "from pathlib import Path", "from typing import Any", "",
             *dict.fromkeys(["import torch", "import torch._inductor.config", *imports])]
    functions = [repro_script.check, graph_repro_script.flat, graph_repro_script.fresh, graph_repro_script.build,
                 graph_repro_script.main]
    module = f"class Repro(torch.nn.Module):\n{textwrap.indent(forward, '    ')}"
    return (f"{_header(graph, gm, config, skipped, tensors, outputs)}\n\nfrom __future__ import annotations\n\n"
            + "\n".join(lines) + "\n\n" + "\n".join(constants) + "\n\n\n" + module.rstrip() + "\n\n\n"
            + "\n\n\n".join(inspect.getsource(f).rstrip() for f in functions)
            + '\n\n\nif __name__ == "__main__":\n    sys.exit(main(Repro, TENSORS, CONFIG, GRAD, TOLERANCES))\n')
