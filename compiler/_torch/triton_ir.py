"""Triton's IR stages of the binary a live Inductor kernel launches with.

A ``CachingAutotuner`` keeps, after its first run, the chosen launcher in ``launchers[0]``, whose
``config`` and ``cache_hash`` (the Triton cache directory key of the compiled binary) Inductor sets for
both launcher kinds. The IR texts come from:

- the ``CompiledKernel`` of the matching ``compile_results`` entry, when it is one (``.asm``: ttir,
  ttgir, llir, ptx, cubin, Triton's own record of every stage);
- else Triton's cache directory for that hash (with the static CUDA launcher, Inductor's default, the
  parent process holds no ``CompiledKernel``). A capture disables caches, so Inductor compiles into a
  fresh cache directory per compile, whose Triton cache is ``<dir>/triton``; the kernel's module lies
  in ``<dir>/<two letters>/``. The ``__grp__<name>.json`` group lists every file Triton stored for the
  kernel, ``<name>.ttir`` ... ``<name>.cubin`` and the ``<name>.json`` metadata.

``TRITON_STORE_BINARY_ONLY`` or a kernel restored from Inductor's caches can leave only the cubin: the
note says which stages are missing. The kernel's source file (Triton's locations point into it) is
``fn.fn.__code__.co_filename`` of the autotuner's ``JITFunction``, or its ``filename`` for a kernel
compiled in a compile worker (its Triton cache is then the worker's, in a sibling fresh directory).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx")


def _compiled_kernel(kernel_object: Any, launcher: Any) -> Any:
    for result in getattr(kernel_object, "compile_results", None) or []:
        compiled = getattr(result, "kernel", None)
        if getattr(result, "config", None) is launcher.config and hasattr(compiled, "asm"):
            return compiled
    return None


def _cache_files(kernel_object: Any, launcher: Any, name: str) -> tuple[dict[str, Any], str | None]:
    cache_hash = getattr(launcher, "cache_hash", None)
    if not cache_hash:
        return {}, None
    try:
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir
    except ImportError:
        return {}, None
    device = (getattr(kernel_object, "triton_meta", None) or {}).get("device", 0)
    directory = Path(triton_cache_dir(getattr(device, "index", device) or 0)) / cache_hash
    source_file, _ = _source(kernel_object)
    if not directory.is_dir() and source_file:
        directory = _fresh_cache_entry(Path(source_file), cache_hash) or directory
    group = directory / f"__grp__{name}.json"
    try:
        children = json.loads(group.read_text())["child_paths"]
    except (OSError, ValueError, KeyError):
        children = {p.name: str(p) for p in directory.glob(f"{name}.*")} if directory.is_dir() else {}
    files: dict[str, Any] = {}
    for filename, path in children.items():
        ext = filename.rsplit(".", 1)[-1]
        try:
            files[ext] = Path(path).read_bytes() if ext == "cubin" else Path(path).read_text()
        except OSError:
            continue
    return files, str(directory)


def _fresh_cache_entry(module: Path, cache_hash: str) -> Path | None:
    """The Triton cache entry of a kernel compiled with caches off. Captures compile into fresh Inductor
    cache directories (``<root>/tmpXXXX``) whose Triton cache is ``<dir>/triton[/<device>]``; the entry can
    lie in the fresh directory the kernel's module was written to, in another one beside it (compile
    workers keep the directory of the compile that started them), or, for a template kernel chosen by
    max-autotune, whose module sits in the root, in the fresh directory of the autotuning compile. The
    hash names one compiled binary, so any directory holding it is the right one."""
    roots = {module.parent.parent, module.parent.parent.parent}
    for root in roots:
        for pattern in ("triton", "triton/*", "*/triton", "*/triton/*"):
            for directory in root.glob(f"{pattern}/{cache_hash}"):
                if directory.is_dir():
                    return directory
    return None


def _source(kernel_object: Any) -> tuple[str | None, str | None]:
    """The kernel's module file and its text. A kernel compiled in a compile worker arrives with its
    ``JITFunction.fn`` dropped (``prepare_for_pickle``); the autotuner's ``filename`` or a reload still
    names it."""
    code = getattr(getattr(getattr(kernel_object, "fn", None), "fn", None), "__code__", None)
    path = getattr(code, "co_filename", None) or getattr(kernel_object, "filename", None)
    if not path and callable(getattr(kernel_object, "_reload_kernel", None)):
        try:  # Inductor's own way back to the function of a worker-compiled kernel
            path = kernel_object._reload_kernel().fn.fn.__code__.co_filename
        except Exception:
            path = None
    if not path:
        return None, None
    try:
        return path, Path(path).read_text()
    except OSError:
        return path, None


def capture(kernel_object: Any, name: str) -> dict[str, Any]:
    """{"texts": {stage: text}, "cubin": bytes | None, "meta": {...}, "source_file", "source_text", "notes"}."""
    launchers = getattr(kernel_object, "launchers", None) or []
    if not launchers:
        return {"notes": ["the kernel has not run, so no binary was chosen: no IR"]}
    launcher = launchers[0]
    compiled = _compiled_kernel(kernel_object, launcher)
    notes: list[str] = []
    if compiled is not None:
        files = dict(compiled.asm)
        metadata = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
        where = None
    else:
        files, where = _cache_files(kernel_object, launcher, name)
        try:
            metadata = json.loads(files.get("json") or "{}")
        except ValueError:
            metadata = {}
    missing = [stage for stage in TEXT_STAGES if not files.get(stage)]
    if missing:
        place = f" in the Triton cache ({where})" if where else ""
        notes.append(f"{', '.join(missing)} not found{place}: Triton stored only part of this kernel "
                     "(TRITON_STORE_BINARY_ONLY, or a kernel restored from a cache)")
    source_file, source_text = _source(kernel_object)
    target = metadata.get("target") or {}
    if not isinstance(target, dict):  # GPUTarget from a live CompiledKernel
        target = {"backend": getattr(target, "backend", None), "arch": getattr(target, "arch", None)}
    meta = {
        "num_warps": metadata.get("num_warps"), "num_stages": metadata.get("num_stages"),
        "shared_memory": getattr(launcher, "shared", None) if getattr(launcher, "shared", None) is not None
        else metadata.get("shared"),
        "registers": getattr(launcher, "n_regs", None), "spills": getattr(launcher, "n_spills", None),
        "target": f"{target.get('backend')}:{target.get('arch')}" if target else None, "arch": target.get("arch"),
        "triton_hash": metadata.get("hash"),
    }
    return {"texts": {s: files[s] for s in TEXT_STAGES if isinstance(files.get(s), str)},
            "cubin": files.get("cubin") if isinstance(files.get("cubin"), bytes) else None,
            "meta": meta, "source_file": source_file, "source_text": source_text, "notes": notes}


def device_arch() -> int | None:
    """Compute capability of the current CUDA device as Triton spells it (90 for sm_90), or None."""
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor
