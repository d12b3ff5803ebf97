"""k.repro(path): one kernel as a standalone script, with the tensors to check it against.

A kernel worth a bug report or a tuning session has to leave the model: the script runs where only
torch (and triton, for a Triton kernel) is installed, so it can go to an issue tracker or another
machine. It holds the kernel's source (a Triton kernel with the config the capture chose, pinned, so it
does not autotune again), launches it once, compares what it wrote with the outputs of the captured
run and exits 0 or 1; ``--bench`` times it.

The inputs are the kernel's arguments at its first launch: the compiled program runs once more, on
clones of the example inputs (the module's state put back after), and the one launch is observed
(compiler/_torch/kernel_calls.py): its tensor arguments are copied before the call, those it writes
after. Nothing is copied at capture time. With ``inputs="random"`` the script draws seeded random
tensors of the same layouts (``repro_script.make_args``, which the writer runs too, so the outputs it
saves are the original kernel's on those very tensors). A loaded trace has no tensors: the layouts
come from the trace (compiler/model/launch_args.py) and there are no outputs to check.

A C++ kernel of an AOTInductor package takes its launch from the package's copy that saves every
kernel's tensors (compiler/runs/package_repro.py).

The script is assembled from real functions, copied as source: the shared body
(compiler/runs/repro_script.py) and the loader of the kernel's language (compiler/_torch/kernel_launch.py).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from pathlib import Path
from pprint import pformat
from typing import Any

import torch

from .._torch import kernel_calls, kernel_launch, runtime
from ..model import kernel_io, launch_args, slots
from . import numerics, package_repro, replay, repro_script

SEED = 0
LARGE_BYTES = 256 * 2**20
INPUTS = ("captured", "random")
LANGUAGES = {"cpp": "C++", "triton": "Triton", "template": "Triton template"}
CONFIG_KEYS = ("num_warps", "num_stages", "num_ctas")


@slots.repro_kernel.fill
def write(kernel: Any, path: Path, *, inputs: str = "captured", source: str | None = None,
          overwrite: bool = False) -> Path:
    """``k.repro(path, ...)``: see ``Kernel.repro``. Returns the script's path."""
    if inputs not in INPUTS:
        raise ValueError(f"repro(inputs={inputs!r}): use one of {INPUTS}")
    if kernel.language not in LANGUAGES:
        raise ValueError(f"{kernel.id} is an {kernel.language} kernel, a call of an existing op rather than "
                         "generated code: there is nothing to reproduce beyond calling that op; take a "
                         f"generated kernel ({', '.join(LANGUAGES)})")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise ValueError("repro(source=...) must be the edited kernel's full source text (start from k.source)")
    if source is not None and kernel.language != "cpp" and f"def {kernel.name}(" not in source:
        raise ValueError(f"repro(source=...): the edited source must still define the kernel {kernel.name}")
    tensors_path = path.with_name(path.stem + ".pt")
    existing = [p for p in (path, tensors_path) if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} exists; pass overwrite=True to replace it")
    wrapper = kernel.graph.wrapper.source
    names = _output_names(kernel, wrapper)
    notes: list[str] = []
    config = dict(kernel.meta)
    why_not = _not_live(kernel)
    if why_not is None and replay.in_package(kernel):
        specs, tensors, names = _package_launch(kernel, inputs)
    elif why_not is None:
        specs, tensors, live_config = _run_once(kernel, list(names), inputs)
        config.update(live_config)
    else:
        try:
            specs, tensors, inputs = launch_args.launch_args(kernel, wrapper), None, "random"
        except ValueError as error:
            raise ValueError(f"k.repro({kernel.id}): {why_not}, so its inputs would be random, but the trace does "
                             f"not hold the layout of every argument: {error}") from None
        notes.append(f"{why_not}: the inputs are random and no outputs were saved, so the script only runs "
                     "the kernel (it prints 'no saved outputs: ran only')")
        warnings.warn(f"k.repro({kernel.id}): {notes[-1]}", stacklevel=4)
    script_source = kernel.source if source is None else source
    if kernel.language == "cpp" and replay.in_package(kernel):
        script_source = package_repro.bindable(script_source, kernel.name)
    text = _script(kernel, source=script_source, edited=source is not None,
                   specs=specs, names=names, inputs=inputs, config=_pinned(config),
                   tensors=tensors_path.name if tensors is not None else None, notes=notes)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tensors is not None:
        size = sum(t.untyped_storage().nbytes() for group in tensors.values()
                   for t in (group.values() if isinstance(group, dict) else group) if isinstance(t, torch.Tensor))
        if size > LARGE_BYTES:
            warnings.warn(f"k.repro({kernel.id}): writing {size / 2**20:,.0f} MB of tensors to {tensors_path} "
                          "(inputs='random' saves only the outputs)", stacklevel=4)
        torch.save(tensors, tensors_path)
    elif tensors_path.exists():  # overwrite=True: a stale file beside a script that no longer reads it
        tensors_path.unlink()
    path.write_text(text)
    return path


def _not_live(kernel: Any) -> str | None:
    """Why the kernel's inputs cannot be taken by running its compilation again; None when they can."""
    c = kernel.graph.compilation
    if c is None or not c.live:
        return f"{kernel.id} comes from a loaded trace, with no live compilation to run"
    if c.live.example_inputs is None:
        return f"the example inputs of {kernel.id}'s compilation were released"
    if kernel.graph.compiled_fn is None and c.export is None:  # a package's kernels run inside it (below)
        return f"{kernel.id}'s graph {kernel.graph.id} has no live compiled function"
    return None


def _output_names(kernel: Any, wrapper: str) -> dict[int, str]:
    """Argument position -> ``parameter (buffer)`` for each argument the kernel writes, from its first
    call in the wrapper; empty when unknown (then every tensor argument is checked)."""
    calls = kernel_io.kernel_calls(kernel, wrapper)
    params = kernel_io.parameter_names(kernel)
    if not calls:
        return {}
    return {position: f"{params[position]} ({buffer})" for position, buffer in sorted(calls[0].outputs.items())}


def snapshot(value: Any) -> Any:
    """A copy of a tensor argument with the same shape and strides (overlaps and gaps kept: the kernel
    indexes memory with the strides it was compiled for), on storage of its own; other values as they are."""
    if not isinstance(value, torch.Tensor):
        return value
    tensor = value.detach()
    extent = 1 + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride())) if tensor.numel() else 0
    base = tensor.as_strided((extent,), (1,), tensor.storage_offset()).clone()
    return base.as_strided(tensor.shape, tensor.stride())


def _spec(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    return launch_args.TensorSpec(shape=list(value.shape), stride=list(value.stride()),
                                  dtype=str(value.dtype).removeprefix("torch."), device=str(value.device))


def _run_once(kernel: Any, written: list[int], inputs: str) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Run the compilation once, observing the kernel's first launch: (argument specs, the tensors the
    script reads, the launch config the live kernel chose)."""
    c, graph = kernel.graph.compilation, kernel.graph
    replay.check_runnable(c, "k.repro()")
    namespace = runtime.wrapper_globals(graph.compiled_fn, [kernel.name])
    original = namespace.get(kernel.name)
    if original is None:
        raise RuntimeError(f"k.repro({kernel.id}): the live wrapper of {graph.id} has no {kernel.name} to observe")
    seen: dict[str, Any] = {}

    def observe(label: str, invoke: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if seen:
            return invoke()
        seen["inputs"] = [snapshot(a) for a in args]
        seen["keywords"] = sorted(k for k in kwargs if k != "stream")
        result = invoke()
        positions = written or [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        seen["outputs"] = {p: snapshot(args[p]) for p in positions}
        return result

    replay.run_on_copies(c, kernel_calls.observed_kernels([(namespace, {kernel.name: kernel.id})], observe))
    if not seen:
        raise RuntimeError(f"k.repro({kernel.id}): the kernel was not launched when the program ran again "
                           "(a branch these inputs do not take?), so it has no inputs to save")
    if seen["keywords"]:
        raise RuntimeError(f"k.repro({kernel.id}): the wrapper launches it with keyword arguments "
                           f"{seen['keywords']}, which the reproducer does not pass")
    specs = [_spec(a) for a in seen["inputs"]]
    config = runtime.launch_config(original) if kernel.language != "cpp" else {}
    if inputs == "captured":
        return specs, {"inputs": seen["inputs"], "outputs": seen["outputs"]}, config
    drawn = repro_script.make_args(specs, SEED)
    launch = kernel_launch.launch_cpp if kernel.language == "cpp" else kernel_launch.launch_triton
    launch(original, drawn)
    replay.synchronize(c.device)
    return specs, {"outputs": {p: drawn[p] for p in seen["outputs"]}}, config


def _package_launch(kernel: Any, inputs: str) -> tuple[list[Any], dict[str, Any], dict[int, str]]:
    """A package kernel's first launch, from the package's saving copy (compiler/runs/package_repro.py):
    (argument specs, the tensors the script reads, written position -> parameter)."""
    values, outputs, names = package_repro.first_launch(kernel)
    specs = [_spec(v) for v in values]
    if inputs == "captured":
        return specs, {"inputs": [snapshot(v) for v in values], "outputs": outputs}, names
    drawn = repro_script.make_args(specs, SEED)
    if kernel.language == "cpp":
        loaded = kernel_launch.load_cpp(package_repro.bindable(kernel.source, kernel.name),
                                        launch_args.cpp_argtypes(kernel, ""))
        kernel_launch.launch_cpp(loaded, drawn)
    else:
        kernel_launch.launch_triton(getattr(runtime.load_kernel_module(kernel.source), kernel.name), drawn)
        replay.synchronize(kernel.graph.compilation.device)
    return specs, {"outputs": {p: drawn[p] for p in outputs}}, names


def _pinned(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The chosen Triton config as the script's CONFIG; None when the capture did not record it."""
    if not isinstance(meta.get("config"), dict) or "num_warps" not in meta:
        return None
    return {"kwargs": dict(meta["config"]), **{key: meta[key] for key in CONFIG_KEYS if key in meta}}


# ------------------------------------------------------------------------------------------ the script


def _literal(text: str) -> str:
    """``text`` as a raw triple-quoted literal, the way Inductor embeds kernel sources; repr() when that
    would not read back the same."""
    raw = f"r'''{text}'''"
    try:
        if ast.literal_eval(raw) == text:
            return raw
    except (SyntaxError, ValueError):
        pass
    return repr(text)


def _header(kernel: Any, *, edited: bool, names: dict[int, str], inputs: str, config: dict[str, Any] | None,
            tensors: str | None, notes: list[str]) -> str:
    """The script's opening comment: what it does, and where the kernel came from."""
    c, graph = kernel.graph.compilation, kernel.graph
    sources = getattr(c, "sources", None) or {}

    def settings(values: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "none"

    fields = [("model", getattr(c, "function", "unknown")),
              ("graph", f"{graph.id} ({graph.kind}), compile id {graph.compile_id or 'unknown'}"),
              ("FX nodes", ", ".join(kernel.fx_nodes) or "none recorded"),
              ("post-grad nodes", ", ".join(kernel.post_grad_nodes) or "none recorded")]
    fields += [("user lines" if i == 0 else "", f"{file}:{line}  {(sources.get(file) or {}).get(line, '').strip()}")
               for i, (file, line) in enumerate(kernel.user_lines)]
    versions = f"torch {getattr(c, 'torch', 'unknown')}, Triton {getattr(c, 'triton', None) or 'none'}"
    fields += [("captured with", versions),
               ("toggles", settings(getattr(c, "toggles", None) or {})),
               ("inductor config", f"{settings(getattr(c, 'inductor_overrides', None) or {})} (the capture's changes)")]
    if kernel.language != "cpp" and config is None:
        fields.append(("launch config", "not recorded by the capture: the kernel autotunes as Inductor would"))
    elif kernel.language != "cpp":
        chosen = settings({**config["kwargs"], **{k: v for k, v in config.items() if k != "kwargs"}})
        grid = f"; grid {kernel.meta['grid']}" if kernel.meta.get("grid") else ""
        fields.append(("launch config", f"{chosen}: the capture's choice, pinned (no autotuning){grid}"))
    fields.append(("inputs", f"the kernel's arguments at its first launch in the captured run ({tensors})"
                   if inputs == "captured" else
                   f"seeded random tensors (seed {SEED}) of the arguments' shapes, strides, dtypes and devices"))
    if tensors is not None:
        written = ", ".join(names.values()) or "every tensor argument"
        fields.append(("outputs", f"{written}, as the original kernel's launch left them ({tensors})"))
    if edited:
        fields.append(("source", "EDITED: an edit of the captured kernel, checked against the original's outputs"))
    fields += [("note", note) for note in notes]
    intro = (f"Reproducer of {kernel.id}, a {LANGUAGES[kernel.language]} kernel, written by inductor-explorer "
             "(Kernel.repro). It compiles the kernel, launches it once and compares what it wrote with the "
             "saved outputs: exit 0 when they match, 1 (printing the largest error) when they do not. "
             "--bench also times it. Needs torch, and triton for a Triton kernel.")
    return header_comment(intro, fields)


def header_comment(intro: str, fields: list[tuple[str, str]]) -> str:
    """A reproducer's opening comment: the intro, then each ``name: value`` field, wrapped at 100 columns."""
    lines = textwrap.wrap(intro, 98) + [""]
    for name, value in fields:
        lines += textwrap.wrap(value, 98, initial_indent=f"{name + ':' if name else '':17}", subsequent_indent=" " * 17,
                               break_long_words=False, break_on_hyphens=False)
    return "\n".join(f"# {line}".rstrip() for line in lines)


def _script(kernel: Any, *, source: str, edited: bool, specs: list[Any], names: dict[int, str], inputs: str,
            config: dict[str, Any] | None, tensors: str | None, notes: list[str]) -> str:
    if kernel.language == "cpp":
        argtypes = launch_args.cpp_argtypes(kernel, kernel.graph.wrapper.source)
        constants = [f"ARGTYPES = {argtypes!r}"]
        functions = [kernel_launch.load_cpp, kernel_launch.launch_cpp]
        load, launch = "lambda: load_cpp(SOURCE, ARGTYPES)", "launch_cpp"
    else:
        constants = [f"NAME = {kernel.name!r}", f"CONFIG = {pformat(config, width=100, sort_dicts=False)}"]
        functions = [kernel_launch.load_triton, kernel_launch.launch_triton]
        load, launch = "lambda: load_triton(SOURCE, NAME, CONFIG)", "launch_triton"
    functions += [repro_script.make_args, repro_script.check, repro_script.bench, repro_script.main]
    tolerances = {str(dtype).removeprefix("torch."): value for dtype, value in numerics.TOLERANCES.items()}
    constants += [f"ARGS = {pformat(specs, width=100, sort_dicts=False)}",
                  f"OUTPUTS = {pformat(names, width=100)}  # argument position -> the parameter it is",
                  f"INPUTS = {inputs!r}",
                  f"SEED = {SEED}",
                  f"TENSORS = Path(__file__).with_name({tensors!r})" if tensors else "TENSORS = None",
                  f"TOLERANCES = {pformat(tolerances, width=100)}  # dtype -> (rtol, atol)"]
    imports = ("import argparse\nimport sys\n" + ("from pathlib import Path\n" if tensors else "")
               + "from typing import Any\n\nimport torch")
    call = f"main({load}, {launch}, ARGS, OUTPUTS, INPUTS, SEED, TENSORS, TOLERANCES)"
    header = _header(kernel, edited=edited, names=names, inputs=inputs, config=config, tensors=tensors, notes=notes)
    return (f"{header}\n\nfrom __future__ import annotations\n\n{imports}\n\n" + "\n".join(constants)
            + f"\n\nSOURCE = {_literal(source)}\n\n\n"
            + "\n\n\n".join(inspect.getsource(f).rstrip() for f in functions)
            + f'\n\n\nif __name__ == "__main__":\n    sys.exit({call})\n')
