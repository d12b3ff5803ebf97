"""Raw capture records of one inner compile -> a linked GraphCapture.

Links are computed once here and stored as id lists in both directions, so every view (and the JSON)
can highlight the rest without searching.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from . import sass, triton_meta, wrapper_code
from ._torch import fx_meta, runtime, triton_ir
from .fx_stage import fx_stage, link_post_grad_to_fx
from .kernel_ir import kernel_ir
from .memory import build_timeline
from .wrapper_fx import wrapper_fx
from .stages import FusedGroup, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused, Wrapper, AutotuneRecord


@dataclass
class InnerRecord:
    """What the hooks saw during one inner compile (filled while Inductor runs)."""

    dynamo_index: int
    kind: str
    loop_ir: list[dict[str, Any]] = field(default_factory=list)
    eliminated: list[dict[str, Any]] = field(default_factory=list)
    post_grad_module: Any = None
    fused: list[dict[str, Any]] = field(default_factory=list)
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    wrapper: str = ""
    provenance: dict[str, list[str]] = field(default_factory=dict)
    kernel_traces: dict[str, list[str]] = field(default_factory=dict)
    node_lines: dict[str, set[str]] = field(default_factory=dict)
    kernel_nodes: dict[str, list[str]] = field(default_factory=dict)  # "kernel:handle" -> scheduler nodes
    timings: dict[str, float] = field(default_factory=dict)
    autotune: list[AutotuneRecord] = field(default_factory=list)
    memory: dict[str, Any] | None = None  # planned wrapper events (wrapper_ir.events) + Inductor's estimate
    wrapper_fx: dict[str, Any] | None = None  # wrapper_fx.convert's result
    compiled_fn: Any = None


def assemble(index: int, record: InnerRecord, dynamo_module: Any) -> GraphCapture:
    fx = fx_stage("fx", dynamo_module)  # its own copy: forward and backward link it differently
    post_grad = fx_stage("post_grad", record.post_grad_module)
    link_post_grad_to_fx(post_grad, fx, record.post_grad_module)
    loop_ir = [_loop_ir_node(r) for r in record.loop_ir] + [_loop_ir_node(r, eliminated=True) for r in record.eliminated]
    fused = [FusedGroup(name=f["name"], kind=f["kind"], nodes=list(f["nodes"]), origins=list(f["origins"]))
             for f in record.fused]
    group_of = {member: g.name for g in fused for member in g.nodes}
    for node in loop_ir:
        node.group = None if node.eliminated else group_of.get(node.name)
    kernels = _kernels(record, loop_ir, post_grad, fx)
    _link_back(kernels, loop_ir, fused, post_grad, fx)
    wrapper = Wrapper(
        source=record.wrapper,
        kernel_lines={line: k.id for k in kernels for line in k.wrapper_lines},
    )
    memory = build_timeline(record.memory, record.wrapper, wrapper.kernel_lines) if record.memory else None
    wrapper.fx = wrapper_fx(record.wrapper_fx, kernels, loop_ir, memory)
    graph = GraphCapture(
        index=index, kind=record.kind, dynamo_graph=record.dynamo_index, fx=fx, post_grad=post_grad,
        loop_ir=loop_ir, fused=fused, kernels=kernels, wrapper=wrapper, autotune=list(record.autotune),
        not_fused=_not_fused(record.refused, group_of), timings=dict(record.timings), memory=memory,
        compiled_fn=record.compiled_fn,
    )
    return graph


def _loop_ir_node(raw: dict[str, Any], eliminated: bool = False) -> LoopIRNode:
    return LoopIRNode(
        name=raw["name"], kind=raw["kind"], buffers=list(raw["buffers"]), device=raw["device"],
        dtype=raw["dtype"], size=list(raw["size"]), stride=list(raw["stride"]), ranges=dict(raw["ranges"]),
        sizes=[list(p) for p in raw["sizes"]], indexing=dict(raw["indexing"]), reads=list(raw["reads"]),
        writes=list(raw["writes"]), body=raw["body"], origins=list(raw["origins"]),
        extern_target=raw["extern_target"], eliminated=eliminated,
    )


def _not_fused(refused: list[tuple[str, str, str]], group_of: dict[str, str]) -> list[NotFused]:
    """Keep the last reason per pair, and only pairs that really ended up in different groups."""
    reasons: dict[tuple[str, str], str] = {}
    for name1, name2, reason in refused:
        reasons[(name1, name2)] = reason
    out = []
    for (name1, name2), reason in reasons.items():
        members1, members2 = name1.split("_"), name2.split("_")
        groups = {group_of.get(m) for m in members1} | {group_of.get(m) for m in members2}
        if len(groups - {None}) > 1:
            out.append(NotFused(name1, name2, reason))
    return out


def _split_key(key: str) -> str:
    name, sep, handle = key.rpartition(":")
    return name if sep and handle.isdigit() else key


def _kernels(record: InnerRecord, loop_ir: list[LoopIRNode], post_grad: FxStage, fx: FxStage) -> list[Kernel]:
    definitions = wrapper_code.kernel_definitions(record.wrapper)
    call_lines = wrapper_code.handle_call_lines(record.wrapper)
    base_counts = Counter(_split_key(key) for key in record.provenance)
    kernels: list[Kernel] = []
    seen_defined: set[str] = set()
    scheduled: dict[str, list[str]] = {}  # kernel id -> the scheduler nodes codegen emitted it for
    for key, nodes in record.provenance.items():
        base = _split_key(key)
        definition = definitions.get(base)
        if definition is not None:
            if base in seen_defined:  # one kernel called for several groups (e.g. every layer): merge
                existing = next(k for k in kernels if k.name == base)
                existing.post_grad_nodes += [n for n in nodes if n not in existing.post_grad_nodes]
                scheduled[base] += [n for n in record.kernel_nodes.get(key, []) if n not in scheduled[base]]
                continue
            seen_defined.add(base)
            kernel = Kernel(id=base, name=base, language=definition.language, source=definition.source,
                            post_grad_nodes=list(nodes), wrapper_lines=list(range(definition.lines[0], definition.lines[1] + 1))[:1] + definition.calls)
        else:
            line, text = call_lines.get(key, (None, base))
            kernel_id = base if base_counts[base] == 1 else key
            kernel = Kernel(id=kernel_id, name=base, language="extern", source=text, post_grad_nodes=list(nodes),
                            wrapper_lines=[line] if line else [])
        kernel.meta["stack_traces"] = record.kernel_traces.get(key, [])
        scheduled[kernel.id] = list(record.kernel_nodes.get(key, []))
        kernels.append(kernel)
    for name, definition in definitions.items():  # kernels Inductor did not report provenance for
        if name not in seen_defined:
            kernels.append(Kernel(id=name, name=name, language=definition.language, source=definition.source,
                                  wrapper_lines=[definition.lines[0]] + definition.calls))
    names = [k.name for k in kernels if k.language in ("triton", "template")]
    live = runtime.wrapper_globals(record.compiled_fn, names) if record.compiled_fn is not None and names else {}
    for kernel in kernels:
        _attach(kernel, record, loop_ir, post_grad, fx, scheduled.get(kernel.id, []))
        if kernel.language in ("triton", "template"):
            _triton_meta(kernel, record.wrapper, live)
    with_ir = [k for k in kernels if k.language in ("triton", "template") and k.name in live]
    if with_ir:
        record.timings["kernel_ir"] = round(_kernel_irs(with_ir, live), 6)
    return kernels


def _kernel_irs(kernels: list[Kernel], live: dict[str, Any]) -> float:
    """Triton's IR stages of each kernel's chosen binary; SASS disassembled in parallel (subprocesses).
    Returns the seconds it took."""
    started = time.perf_counter()
    raws = [triton_ir.capture(live[k.name], k.name) for k in kernels]
    arch = triton_ir.device_arch() if raws else None
    with ThreadPoolExecutor(max_workers=min(8, len(raws) or 1)) as pool:
        disassembled = list(pool.map(lambda raw: sass.disassemble(raw["cubin"]) if raw.get("cubin") else None, raws))
    for kernel, raw, result in zip(kernels, raws, disassembled):
        if result is not None:
            text, note = result
            raw.setdefault("notes", []).append(note)
            if text:
                raw["texts"]["sass"] = text
        compiled_for = raw.get("meta", {}).get("arch")
        if compiled_for and arch and compiled_for != arch:
            raw["notes"].append(f"compiled for sm_{compiled_for}, but this GPU is sm_{arch}: "
                                "registers and SASS describe the other GPU")
        kernel.ir = kernel_ir(raw, kernel.source, kernel.name)
    return time.perf_counter() - started


def _triton_meta(kernel: Kernel, wrapper: str, live: dict[str, Any]) -> None:
    """Heuristic, size hints and Inductor's meta from the source; the chosen config from the live kernel."""
    kernel.meta.update(triton_meta.decorator_meta(kernel.source, kernel.name))
    kernel.meta.update(runtime.launch_config(live.get(kernel.name)))
    lines = wrapper.splitlines()
    for number in kernel.wrapper_lines:
        values = triton_meta.call_arguments(lines[number - 1], kernel.name) if number <= len(lines) else []
        if values:
            kernel.meta["call_args"] = values
            launch_grid = triton_meta.grid(kernel.meta.get("arguments", []), values, kernel.meta.get("config", {}))
            if launch_grid:
                kernel.meta["grid"] = launch_grid
            break


def _members(kernel: Kernel, record: InnerRecord, loop_ir: list[LoopIRNode], scheduled: list[str]) -> list[LoopIRNode]:
    """The loop-IR nodes a kernel implements: as codegen reported them, else inferred from origins and text."""
    if scheduled:
        exact = set(scheduled)
        return [n for n in loop_ir if n.name in exact]
    wanted = set(kernel.post_grad_nodes)
    candidates = [n for n in loop_ir if not n.eliminated and wanted.intersection(n.origins)]
    if kernel.language == "extern":
        return [n for n in candidates if n.kind == "extern"] or candidates
    source_lines = {line.strip() for line in kernel.lines}
    return [n for n in candidates if record.node_lines.get(n.name, set()) & source_lines] or candidates


def _attach(kernel: Kernel, record: InnerRecord, loop_ir: list[LoopIRNode], post_grad: FxStage, fx: FxStage,
            scheduled: list[str]) -> None:
    members = _members(kernel, record, loop_ir, scheduled)
    kernel.loop_ir = [n.name for n in members]
    first = next((n.group for n in members if n.group), None)  # the group of the first call
    kernel.group = first
    if not kernel.post_grad_nodes:
        kernel.post_grad_nodes = [o for n in members for o in n.origins]
    if kernel.language != "extern":
        kernel.line_nodes = _line_nodes(kernel, members, record.node_lines)
    by_name = {n.name: n for n in post_grad.nodes}
    fx_names: list[str] = []
    user_lines: list[tuple[str, int]] = []
    for name in kernel.post_grad_nodes:
        node = by_name.get(name)
        if node is None:
            continue
        fx_names += [f for f in node.fx if f not in fx_names]
        if node.user_line and node.user_line not in user_lines:
            user_lines.append(node.user_line)
    fx_by_name = {n.name: n for n in fx.nodes}
    for name in fx_names:  # a pattern-rewritten node (addmm from mm + add) keeps only one line itself
        line = fx_by_name[name].user_line if name in fx_by_name else None
        if line and line not in user_lines:
            user_lines.append(line)
    for trace in kernel.meta.get("stack_traces", []):  # Inductor's own per-kernel stack traces
        for file, line, _ in fx_meta.frames_of(trace)[-1:]:
            if (file, line) not in user_lines:
                user_lines.append((file, line))
    kernel.fx_nodes = fx_names
    kernel.user_lines = user_lines


def _line_nodes(kernel: Kernel, members: list[LoopIRNode], node_lines: dict[str, set[str]]) -> dict[int, list[str]]:
    wanted = set(kernel.post_grad_nodes)
    out: dict[int, list[str]] = {}
    for lineno, line in enumerate(kernel.lines, start=1):
        text = line.strip()
        if not any(ch.isalnum() for ch in text):  # braces and blank lines belong to no node
            continue
        names: list[str] = []
        for member in members:
            if text in node_lines.get(member.name, ()):
                names += [o for o in member.origins if o in wanted and o not in names]
        if names:
            out[lineno] = names
    return out


def _link_back(kernels: list[Kernel], loop_ir: list[LoopIRNode], fused: list[FusedGroup],
               post_grad: FxStage, fx: FxStage) -> None:
    loop_by_name = {n.name: n for n in loop_ir}
    group_by_name = {g.name: g for g in fused}
    pg_by_name = {n.name: n for n in post_grad.nodes}
    fx_by_name = {n.name: n for n in fx.nodes}
    for node in loop_ir:
        for origin in node.origins:
            if origin in pg_by_name and node.name not in pg_by_name[origin].loop_ir:
                pg_by_name[origin].loop_ir.append(node.name)
    for kernel in kernels:
        for name in kernel.loop_ir:
            _add(loop_by_name[name].kernels, kernel.id)
            group = loop_by_name[name].group
            if group in group_by_name:
                _add(group_by_name[group].kernels, kernel.id)
        for name in kernel.post_grad_nodes:
            if name in pg_by_name:
                _add(pg_by_name[name].kernels, kernel.id)
        for name in kernel.fx_nodes:
            if name in fx_by_name:
                _add(fx_by_name[name].kernels, kernel.id)


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)
