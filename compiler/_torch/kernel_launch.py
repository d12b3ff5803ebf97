"""Loading and launching one generated kernel without its wrapper: the part of a kernel's reproducer
(compiler/runs/repro.py) that touches Inductor.

Each function is copied as source into the reproducer scripts, which run without this package: each is
self-contained (its imports inside it, no module globals) and leans only on APIs that torch 2.11 to 2.14
all have:

- ``CppPythonBindingsCodeCache.load_pybinding(argtypes, source)``: what ``async_compile.cpp_pybinding``
  in the wrapper calls; it compiles the C++ source with Inductor's flags and returns a callable taking
  tensors and numbers.
- ``PyCodeCache.load(source)``: writes a Triton kernel module to a file and imports it (``@triton.jit``
  reads the source from a file). Its kernel is a ``CachingAutotuner``; until its first launch it only
  holds ``configs``, so putting the one config the capture chose there, with coordinate descent and
  combo tuning off in ``inductor_meta``, makes that launch compile that config alone and never
  autotune. ``run(*args, stream=...)`` computes the grid from the config and the numel arguments
  (templates take the grid as their last arguments).
"""

from __future__ import annotations

from typing import Any


def load_cpp(source: str, argtypes: list[str]) -> Any:
    from torch._inductor.codecache import CppPythonBindingsCodeCache

    return CppPythonBindingsCodeCache.load_pybinding(argtypes, source)


def launch_cpp(kernel: Any, args: list[Any]) -> None:
    kernel(*args)


def load_triton(source: str, name: str, config: dict[str, Any] | None) -> Any:
    from torch._inductor.codecache import PyCodeCache

    kernel = getattr(PyCodeCache.load(source), name)
    if config is not None:
        import triton

        options = {key: config[key] for key in ("num_warps", "num_stages", "num_ctas") if key in config}
        kernel.configs = [triton.Config(dict(config["kwargs"]), **options)]
        kernel.inductor_meta = {**kernel.inductor_meta, "coordinate_descent_tuning": False,
                                "combo_tuning_groups": None}
    return kernel


def launch_triton(kernel: Any, args: list[Any]) -> None:
    import torch

    device = next(a.device for a in args if isinstance(a, torch.Tensor))
    with torch.cuda.device(device):
        kernel.run(*args, stream=torch.cuda.current_stream(device).cuda_stream)
