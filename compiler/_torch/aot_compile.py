"""torch.export + AOTInductor with the capture's hooks: where the AOT path differs from torch.compile's.

``aoti_compile_and_package`` runs the same GraphLowering and Scheduler as a JIT compile, so every
capture hook applies; two things differ and are adapted here:

- the inner compile: ``compile_fx_aot`` takes an ``inner_compile`` argument that
  ``aoti_compile_and_package`` never passes. ``torch._inductor.aot_compile`` imports ``compile_fx_aot``
  from its module at call time, so it is replaced there for the block, calling the original with
  ``inner_compile`` wrapped (the module Inductor received comes first, like a Dynamo graph).
- the output code: in AOT mode Inductor does not call ``GraphLowering.save_output_code`` with the C++
  wrapper; it hands the wrapper and the kernel file to ``AotCodeCompiler.compile``, which is wrapped
  to read both before the C++ compiler runs. (On a GPU the first, Python pass of AOT codegen still
  goes through ``save_output_code``: its Triton sources are the kernels' sources.)
"""

from __future__ import annotations

import contextlib
import functools
import shutil
from typing import Any, Callable, Iterator

import sympy
import torch
from torch._inductor import codecache as _codecache
from torch._inductor import compile_fx as _compile_fx

from . import method_patch


def export(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None, dynamic_shapes: Any,
           strict: bool) -> Any:
    """``torch.export.export``: the ExportedProgram."""
    return torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=strict)


def compile_and_package(program: Any, package_path: str | None, inductor_configs: dict[str, Any]) -> str:
    """``torch._inductor.aoti_compile_and_package``: the path of the .pt2 package."""
    return torch._inductor.aoti_compile_and_package(program, package_path=package_path,
                                                    inductor_configs=dict(inductor_configs))


def load_package(path: str) -> Any:
    """The package loaded the way a deployment loads it (``torch._inductor.aoti_load_package``)."""
    return torch._inductor.aoti_load_package(path)


def graph_inputs(loaded: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The inputs of the package's graph, one per placeholder, in order: the leaves of ``(args, kwargs)``
    with the keywords in the order the package was exported with (as ``AOTICompiledModel.__call__``
    flattens them). Unlike the package's own call, non-tensor inputs (``use_cache=False``) are kept: the
    graph has a placeholder for each, though the compiled library takes only the tensors."""
    from torch.export._tree_utils import reorder_kwargs
    from torch.utils import _pytree as pytree

    loader = getattr(loaded, "loader", None)
    if kwargs and loader is not None and hasattr(loader, "get_call_spec"):
        kwargs = reorder_kwargs(kwargs, pytree.treespec_loads(loader.get_call_spec()[0]))
    return pytree.tree_leaves((tuple(args), dict(kwargs)))


def compiler_name() -> str:
    """The C++ compiler AOTInductor builds with under the current config (``cpp.cxx``, from CXX)."""
    from torch._inductor import cpp_builder

    try:
        return cpp_builder.get_cpp_compiler()
    except Exception:  # none found: compiler_missing() says so before any build
        return "unknown"


def compiler_missing() -> str | None:
    """Why AOTInductor cannot build a package here (no C++ compiler on PATH), or None."""
    from torch._inductor import cpp_builder

    try:
        compiler = cpp_builder.get_cpp_compiler()
    except Exception as error:  # torch raises when none of its candidates exists
        return f"no C++ compiler found ({error})"
    if shutil.which(compiler) is None:
        return f"the C++ compiler {compiler!r} is not on PATH"
    return None


@contextlib.contextmanager
def observed(on_module: Callable[[torch.fx.GraphModule, list[Any]], int],
             around_inner: Callable[..., Any],
             on_aot_code: Callable[[str, str], None]) -> Iterator[None]:
    """Inside the block, an AOT compile calls ``on_module(gm, example_inputs)`` with the module Inductor
    receives (it returns an index), ``around_inner(index, compile_inner, gm, inputs, **kwargs)`` around
    each inner compile, and ``on_aot_code(wrapper, kernels)`` with the C++ sources of the package."""
    original_aot = _compile_fx.compile_fx_aot

    def compile_fx_aot(model_: Any, example_inputs_: Any, inner_compile: Any = _compile_fx.compile_fx_inner,
                       config_patches: Any = None) -> Any:
        index = on_module(model_, list(example_inputs_))
        return original_aot(model_, example_inputs_, inner_compile=functools.partial(around_inner, index, inner_compile),
                            config_patches=config_patches)

    original_compile = _codecache.AotCodeCompiler.__dict__["compile"].__func__

    def compile(cls: Any, graph: Any, wrapper_code: str, kernel_code: str, *args: Any, **kwargs: Any) -> Any:
        on_aot_code(wrapper_code, kernel_code)
        return original_compile(cls, graph, wrapper_code, kernel_code, *args, **kwargs)

    with method_patch.replaced(_codecache.AotCodeCompiler, "compile", classmethod(compile)):
        _compile_fx.compile_fx_aot = compile_fx_aot
        try:
            yield
        finally:
            _compile_fx.compile_fx_aot = original_aot


def describe_program(program: Any) -> dict[str, Any]:
    """The parts of an ExportedProgram the explorer shows: its graph as code, the signature, the ranges of
    its dynamic dims and the call graph of the modules it traced."""
    signature = program.graph_signature
    return {
        "graph": program.graph_module.print_readable(print_output=False, include_stride=False, include_device=False),
        "inputs": [_spec(spec) for spec in signature.input_specs],
        "outputs": [_spec(spec) for spec in signature.output_specs],
        "range_constraints": {str(symbol): _range(value) for symbol, value in program.range_constraints.items()},
    }


def _spec(spec: Any) -> dict[str, Any]:
    argument = getattr(spec, "arg", None)
    return {"kind": getattr(spec.kind, "name", str(spec.kind)), "name": getattr(argument, "name", str(argument)),
            "target": getattr(spec, "target", None)}


def _range(value: Any) -> list[Any]:
    """[lower, upper] of a dim's value range, ints where finite, the text of infinity otherwise."""
    return [_bound(value.lower), _bound(value.upper)]


def _bound(bound: Any) -> Any:
    """An int, or the text of an unbounded end (sympy's ``oo``, torch's ``int_oo``)."""
    return int(bound) if isinstance(bound, (int, sympy.Integer)) else str(bound)
