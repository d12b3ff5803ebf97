"""Raw capture records of one inner compile -> a linked GraphCapture.

Links are computed once here and stored as id lists in both directions, so every view (and the JSON)
can highlight the rest without searching. Everything here works on plain records and FX stages, so a
compile read from a TORCH_TRACE log is assembled without importing torch; what reads a live capture's
GraphModules (the FX stages, shape-padding ancestry, the wrapper's FX conversion) is assemble_live.py.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._torch import runtime, triton_ir
from .._torch.fx_print import frames_of
from ..model import provenance, slots
from ..model.kernel_ir import KernelIR, RawKernelIR
from ..model.stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                            Wrapper)
from . import feature_scan as features
from . import cpp_wrapper_code, frames, sass, triton_meta, wrapper_code
from .ir_line_maps import kernel_ir
from .memory_plan import build_timeline
from .ownership import (enclosing_op_lines, linking_nodes, log_claims, outputs_of_calls, parts_in_place, split_origins,
                        views_to_readers)

if TYPE_CHECKING:  # the live capture's types (assemble_live.py): a log's compile is assembled without torch
    from .._torch.pattern_rewrites import Source
    from .._torch.wrapper_fx import PlannedWrapper


@dataclass
class InnerRecord:
    """What the hooks saw during one inner compile (filled while Inductor runs)."""

    dynamo_index: int
    kind: str
    loop_ir: list[dict[str, Any]] = field(default_factory=list)
    eliminated: list[dict[str, Any]] = field(default_factory=list)
    post_grad_module: Any = None  # the GraphModule handed to Inductor's inner compile (lowered in place)
    names: Any = None  # fx_stage.StageNames of post_grad_module, made once it is lowered
    dynamo_graph_paths: dict[int, str] = field(default_factory=dict)  # Dynamo fx.Graph id -> subgraph path
    fused: list[dict[str, Any]] = field(default_factory=list)
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    wrapper: str = ""
    wrapper_language: str = "python"  # cpp: a C++ wrapper (cpp_wrapper, AOTInductor), read by cpp_wrapper_code
    kernel_code: str = ""  # an AOT package's kernel file (its C++ kernels are defined there, not in the wrapper)
    python_pass: str = ""  # AOT on a GPU: the Python wrapper of codegen's first pass, holding the Triton sources
    provenance: dict[str, list[str]] = field(default_factory=dict)
    kernel_traces: dict[str, list[str]] = field(default_factory=dict)
    node_lines: dict[str, set[str]] = field(default_factory=dict)
    kernel_nodes: dict[str, list[str]] = field(default_factory=dict)  # "kernel:handle" -> scheduler nodes
    lowered_by: dict[str, str] = field(default_factory=dict)  # operation -> the post-grad node whose lowering made it
    combos: dict[str, list[list[str]]] = field(default_factory=dict)  # "kernel:handle" -> sub-kernels' nodes
    # extern calls codegen wrote without a provenance handle: (scheduler node, the names its call is spelled with)
    unhandled_externs: list[tuple[str, list[str]]] = field(default_factory=list)
    rewrites: dict[Source, list[Source]] = field(default_factory=dict)  # node a rewrite made -> erased nodes' ancestry
    pad_decisions: list[dict[str, Any]] = field(default_factory=list)  # of this graph's Dynamo graph
    timings: dict[str, float] = field(default_factory=dict)
    autotune: list[AutotuneRecord] = field(default_factory=list)
    memory: dict[str, Any] | None = None  # planned wrapper events (wrapper_ir.events) + Inductor's estimate
    wrapper_fx: PlannedWrapper | None = None  # converted when g.wrapper.fx is first read
    compiled_fn: Any = None
    # a warm capture's FX graph cache lookup: Inductor's key and "hit" | "miss"; on a hit, the stored graph
    cache_lookup: tuple[str, str] | None = None
    served: dict[str, Any] | None = None
    post_grad_pending: Any = None  # a served graph's: rebuilds its post-grad GraphModule when first read
    notes: list[Any] = field(default_factory=list)  # model.compilation.Note: what torch warned during this compile
    cudagraphs: Any = None  # pipeline.cudagraph_capture.RawCudaGraphs, with triton.cudagraphs


def assemble_stages(index: int, record: InnerRecord, fx: FxStage, post_grad: FxStage,
                    pad_decisions: list[dict[str, Any]] | None = None) -> GraphCapture:
    """The linked GraphCapture of FX stages already built (from live modules or from a log's text);
    ``pad_decisions``: the shape-padding decisions linked to this graph's post-grad nodes (a live capture's)."""
    split_origins(record.loop_ir + record.eliminated, record.lowered_by, {n.name: n for n in post_grad.nodes})
    loop_ir = [_loop_ir_node(r) for r in record.loop_ir] + [_loop_ir_node(r, eliminated=True) for r in record.eliminated]
    computes = {n.name: n.origins for n in loop_ir}
    fused = [FusedGroup(name=f["name"], kind=f["kind"], nodes=list(f["nodes"]),
                        origins=list(dict.fromkeys(o for m in f["nodes"] for o in computes.get(m, ()))) or list(f["origins"]))
             for f in record.fused]
    group_of = {member: g.name for g in fused for member in g.nodes}
    for node in loop_ir:
        node.group = None if node.eliminated else group_of.get(node.name)
    kernels = _kernels(record, loop_ir, post_grad, fx)
    _link_back(kernels, loop_ir, fused, post_grad, fx)
    wrapper = Wrapper(
        source=record.wrapper,
        kernel_lines={line: k.id for k in kernels for line in k.wrapper_lines},
        language=record.wrapper_language,
    )
    memory = build_timeline(record.memory, record.wrapper, wrapper.kernel_lines) if record.memory else None
    graph = GraphCapture(
        index=index, kind=record.kind, dynamo_graph=record.dynamo_index, fx=fx, post_grad=post_grad,
        loop_ir=loop_ir, fused=fused, kernels=kernels, wrapper=wrapper, autotune=list(record.autotune),
        not_fused=_not_fused(record.refused, group_of), timings=dict(record.timings), memory=memory,
        compiled_fn=record.compiled_fn,
    )
    provenance.annotate(graph)
    graph.features = features.find(
        kernels, post_grad, record.wrapper, {_split_key(key): groups for key, groups in record.combos.items()},
        {n.name: n.origins for n in loop_ir}, pad_decisions or [],
    )
    return graph


def loaded_kernels(kernels: list[Kernel], compiled_fn: Any) -> dict[str, Any]:
    """The compiled wrapper's namespace, where its Triton kernels are bound by name ({} when none is)."""
    names = [k.name for k in kernels if k.language in ("triton", "template")]
    return runtime.wrapper_globals(compiled_fn, names) if compiled_fn is not None and names else {}


def _loop_ir_node(raw: dict[str, Any], eliminated: bool = False) -> LoopIRNode:
    return LoopIRNode(
        name=raw["name"], kind=raw["kind"], buffers=list(raw["buffers"]), buffer_nodes=dict(raw["buffer_nodes"]),
        device=raw["device"],
        dtype=raw["dtype"], size=list(raw["size"]), stride=list(raw["stride"]), ranges=dict(raw["ranges"]),
        sizes=[list(p) for p in raw["sizes"]], indexing=dict(raw["indexing"]), reads=list(raw["reads"]),
        writes=list(raw["writes"]), body=raw["body"], origins=list(raw["origins"]),
        inherited_origins=list(raw.get("inherited", [])),
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


def _wrapper_index(record: InnerRecord) -> tuple[dict[str, Any], dict[str, tuple[int, str]]]:
    """The kernels the wrapper defines or calls, and the wrapper line each provenance key annotates."""
    if record.wrapper_language == "cpp":
        python_pass = record.python_pass or cpp_wrapper_code.commented_python_kernels(record.wrapper)
        python_kernels = wrapper_code.kernel_definitions(python_pass) if python_pass else {}
        return (cpp_wrapper_code.kernel_definitions(record.wrapper, record.kernel_code, python_kernels),
                cpp_wrapper_code.handle_call_lines(record.wrapper))
    return wrapper_code.kernel_definitions(record.wrapper), wrapper_code.handle_call_lines(record.wrapper)


def _kernels(record: InnerRecord, loop_ir: list[LoopIRNode], post_grad: FxStage, fx: FxStage) -> list[Kernel]:
    kernels, scheduled = _wrapper_kernels(record)
    if not loop_ir:  # a log's kernels, in codegen order: Inductor's map alone, which over-claims inputs' nodes
        for kernel, nodes in zip(kernels, log_claims([k.post_grad_nodes for k in kernels], post_grad.nodes)):
            kernel.post_grad_nodes = nodes
    live = loaded_kernels(kernels, record.compiled_fn)
    index = _Index(loop_ir, post_grad, fx)
    wrapper_lines = record.wrapper.splitlines()
    found = [_members(kernel, record, index, scheduled.get(kernel.id, [])) for kernel in kernels]
    members = [_attach_members(kernel, mine, outputs, bool(scheduled.get(kernel.id)))
               for kernel, mine, outputs in zip(kernels, found, outputs_of_calls(found, loop_ir))]
    for kernel, parts in zip(kernels, parts_in_place(members, loop_ir)):
        kernel.post_grad_nodes += [n for n in parts if n not in kernel.post_grad_nodes]
    if loop_ir:  # a log's kernels had the views moved with the rest of its claims
        partial = {r["name"]: set(r.get("partial", ())) for r in record.loop_ir}
        in_part = [_in_part(mine, partial) for mine in members]
        in_kernels = {n.name for mine in members for n in mine}  # a cond's outputs are written by no kernel
        index.written = {v for r in record.loop_ir if r["name"] in in_kernels for v in r.get("holds", ())
                         if v in r["origins"] and v in index.post_grad and provenance.is_view(index.post_grad[v])}
        placed = views_to_readers([k.post_grad_nodes for k in kernels], index.post_grad, in_part, index.written)
        for kernel, nodes in zip(kernels, placed):
            kernel.post_grad_nodes = nodes
    for kernel, mine in zip(kernels, members):
        _attach_links(kernel, record, index, mine)
        if kernel.language in ("triton", "template"):
            _triton_meta(kernel, wrapper_lines, live)
    with_ir = [k for k in kernels if k.language in ("triton", "template") and k.name in live]
    if with_ir:
        record.timings["kernel_ir"] = round(_kernel_irs(with_ir, live), 6)
    return kernels


def _wrapper_kernels(record: InnerRecord) -> tuple[list[Kernel], dict[str, list[str]]]:
    """The graph's kernels as the wrapper and Inductor's provenance name them (one per provenance key, a kernel
    called for several groups once; then those defined without provenance; extern calls without a handle
    placed by their call), each with the post-grad nodes provenance gives it; and kernel id -> the scheduler
    nodes codegen emitted it for."""
    definitions, call_lines = _wrapper_index(record)
    base_counts = Counter(_split_key(key) for key in record.provenance)
    kernels: list[Kernel] = []
    defined: dict[str, Kernel] = {}  # kernel name -> its Kernel, for kernels the wrapper defines
    scheduled: dict[str, list[str]] = {}  # kernel id -> the scheduler nodes codegen emitted it for
    for key, nodes in record.provenance.items():
        base = _split_key(key)
        definition = definitions.get(base)
        if definition is not None:
            if base in defined:  # one kernel called for several groups (e.g. every layer): merge
                existing = defined[base]
                existing.post_grad_nodes += [n for n in nodes if n not in existing.post_grad_nodes]
                scheduled[base] += [n for n in record.kernel_nodes.get(key, []) if n not in scheduled[base]]
                continue
            kernel = defined[base] = Kernel(
                id=base, name=base, language=definition.language, source=definition.source, post_grad_nodes=list(nodes),
                wrapper_lines=list(range(definition.lines[0], definition.lines[1] + 1))[:1] + definition.calls)
        else:
            line, text = call_lines.get(key, (None, base))
            kernel_id = base if base_counts[base] == 1 else key
            kernel = Kernel(id=kernel_id, name=base, language="extern", source=text, post_grad_nodes=list(nodes),
                            wrapper_lines=[line] if line else [])
        kernel.meta["stack_traces"] = record.kernel_traces.get(key, [])
        scheduled[kernel.id] = list(record.kernel_nodes.get(key, []))
        kernels.append(kernel)
    for name, definition in definitions.items():  # kernels Inductor did not report provenance for
        if name not in defined:
            kernels.append(Kernel(id=name, name=name, language=definition.language, source=definition.source,
                                  wrapper_lines=[definition.lines[0]] + definition.calls))
    taken = {line for k in kernels for line in k.wrapper_lines}
    unhandled = wrapper_code.unhandled_calls(record.unhandled_externs, record.wrapper, taken)
    called = Counter(call.name for call in unhandled)
    ids = {k.id for k in kernels}
    for call in unhandled:  # extern calls with no provenance handle: kernels of their own, in call order
        kernel_id = call.name if called[call.name] == 1 and call.name not in ids else f"{call.name}:{call.node}"
        later = next((i for i, k in enumerate(kernels) if _first_call(k) > call.line), len(kernels))
        kernels.insert(later, Kernel(id=kernel_id, name=call.name, language="extern", source=call.text,
                                     wrapper_lines=[call.line]))
        scheduled[kernel_id] = [call.node]
    return kernels, scheduled


def _first_call(kernel: Kernel) -> int:
    """The wrapper line of a kernel's first call."""
    return min(kernel.call_lines, default=0)


def _kernel_irs(kernels: list[Kernel], live: dict[str, Any]) -> float:
    """Each kernel's Triton IR texts copied from its chosen binary; the SASS disassembly and the line maps
    are built when ``k.ir`` is first read (or the trace saved). Returns the seconds the copy took."""
    started = time.perf_counter()
    arch = triton_ir.device_arch()
    for kernel in kernels:
        raw = triton_ir.capture(live[kernel.name], kernel.name)
        kernel.ir = KernelIR(pending=RawKernelIR(raw, kernel.source, kernel.name, arch))
    return time.perf_counter() - started


@slots.build_kernel_ir.fill
def built_ir(unbuilt: RawKernelIR) -> KernelIR:
    """The KernelIR of one captured binary: SASS disassembled (nvdisasm), every stage mapped to source lines."""
    raw = {**unbuilt.raw, "texts": dict(unbuilt.raw.get("texts") or {}), "notes": list(unbuilt.raw.get("notes") or [])}
    if raw.get("cubin"):
        text, note = sass.disassemble(raw["cubin"])
        raw["notes"].append(note)
        if text:
            raw["texts"]["sass"] = text
    compiled_for = raw.get("meta", {}).get("arch")
    if compiled_for and unbuilt.arch and compiled_for != unbuilt.arch:
        raw["notes"].append(f"compiled for sm_{compiled_for}, but this GPU is sm_{unbuilt.arch}: "
                            "registers and SASS describe the other GPU")
    return kernel_ir(raw, unbuilt.source, unbuilt.name)


def _triton_meta(kernel: Kernel, lines: list[str], live: dict[str, Any]) -> None:
    """Heuristic, size hints and Inductor's meta from the source; the chosen config from the live kernel.
    ``lines``: the wrapper's lines."""
    kernel.meta.update(triton_meta.decorator_meta(kernel.source, kernel.name))
    kernel.meta.update(runtime.launch_config(live.get(kernel.name)))
    for number in kernel.wrapper_lines:
        values = triton_meta.call_arguments(lines[number - 1], kernel.name) if number <= len(lines) else []
        if values:
            kernel.meta["call_args"] = values
            launch_grid = triton_meta.grid(kernel.meta.get("arguments", []), values, kernel.meta.get("config", {}))
            if launch_grid:
                kernel.meta["grid"] = launch_grid
            break


class _Index:
    """One graph's loop-IR nodes by name and by origin, and its FX nodes by name, made once for all its
    kernels: searching the lists per kernel made assembling grow with the square of the model."""

    def __init__(self, loop_ir: list[LoopIRNode], post_grad: FxStage, fx: FxStage) -> None:
        self.loop_ir = loop_ir
        self.named: dict[str, list[int]] = {}  # name -> positions in loop_ir
        self.made_from: dict[str, list[int]] = {}  # post-grad node -> positions of the nodes it is an origin of
        for position, node in enumerate(loop_ir):
            self.named.setdefault(node.name, []).append(position)
            if not node.eliminated:
                for origin in dict.fromkeys(node.origins):
                    self.made_from.setdefault(origin, []).append(position)
        self.post_grad = {n.name: n for n in post_grad.nodes}
        self.fx = {n.name: n for n in fx.nodes}
        self.outer_lines = enclosing_op_lines(self.post_grad)  # subgraph -> lines of the ops that run it
        self.written: set[str] = set()  # views a kernel writes out into a buffer of its own (ownership rule 3)

    def named_in_order(self, names: list[str]) -> list[LoopIRNode]:
        """The loop-IR nodes called one of ``names``, in the graph's order."""
        return self._at(p for name in set(names) for p in self.named.get(name, ()))

    def made_from_any(self, origins: list[str]) -> list[LoopIRNode]:
        """The loop-IR nodes (not eliminated) with one of ``origins``, in the graph's order."""
        return self._at(p for origin in set(origins) for p in self.made_from.get(origin, ()))

    def _at(self, positions: Any) -> list[LoopIRNode]:
        return [self.loop_ir[p] for p in sorted(set(positions))]


def _members(kernel: Kernel, record: InnerRecord, index: _Index, scheduled: list[str]) -> list[LoopIRNode]:
    """The loop-IR nodes a kernel implements: as codegen reported them, else inferred from origins and text."""
    if scheduled:
        return index.named_in_order(scheduled)
    candidates = index.made_from_any(kernel.post_grad_nodes)
    if kernel.language == "extern":
        return [n for n in candidates if n.kind == "extern"] or candidates
    source_lines = {line.strip() for line in kernel.lines}
    return [n for n in candidates if record.node_lines.get(n.name, set()) & source_lines] or candidates


def _attach_members(kernel: Kernel, members: list[LoopIRNode], outputs: list[LoopIRNode],
                    scheduled: bool) -> list[LoopIRNode]:
    """The loop-IR nodes a kernel implements (``members``, and the ``outputs`` of the call it makes), its
    group, and the post-grad nodes they compute (ownership rules 1-2); returns the loop-IR nodes."""
    first = next((n.group for n in members if n.group), None)  # the group of the first call
    kernel.group = first
    if scheduled or not kernel.post_grad_nodes:  # members' origins carry subgraph-qualified names
        kernel.post_grad_nodes = list(dict.fromkeys(o for n in members for o in n.origins)) or kernel.post_grad_nodes
    kernel.post_grad_nodes += [o for n in outputs for o in n.origins if o not in kernel.post_grad_nodes]
    members = members + outputs
    kernel.loop_ir = [n.name for n in members]
    return members


def _in_part(members: list[LoopIRNode], partial: dict[str, set[str]]) -> set[str]:
    """The nodes a kernel's loop-IR nodes compute only in part (ownership rule 1), and none of them whole."""
    whole = {o for n in members for o in n.origins if o not in partial.get(n.name, set())}
    return set().union(*(partial.get(n.name, set()) for n in members)) - whole


def _attach_links(kernel: Kernel, record: InnerRecord, index: _Index, members: list[LoopIRNode]) -> None:
    """Source lines -> nodes, FX nodes and user lines of a kernel whose post-grad nodes are settled."""
    if kernel.language != "extern":
        kernel.line_nodes = _line_nodes(kernel, members, record.node_lines)
    by_name, fx_by_name = index.post_grad, index.fx
    mine = [by_name[name] for name in kernel.post_grad_nodes if name in by_name]
    mine.sort(key=lambda node: node.subgraph is None)  # a branch's own nodes before the op that runs it
    pg_nodes, kernel.fx_nodes = linking_nodes(mine, by_name, fx_by_name, index.written)
    nodes = pg_nodes + [fx_by_name[name] for name in kernel.fx_nodes if name in fx_by_name]
    traces = _own_traces(kernel.meta.get("stack_traces", []), nodes)
    outer = set().union(*(index.outer_lines.get(n.subgraph, set()) for n in pg_nodes if n.subgraph))
    kernel.user_lines = _user_lines(nodes, [stack for _, stack in traces], outer)
    kernel.meta["stack_traces"] = [frames.strip_entry(text) for text, _ in traces]


def _own_traces(stack_traces: list[str], nodes: list[FxNode]) -> list[tuple[str, list[frames.Frame]]]:
    """Inductor's stack traces of a kernel (with their frames) that belong to the nodes it computes.
    Inductor collects them from every origin it lists, inputs' included, so a matmul would carry its
    LayerNorm's trace: a trace is kept when it ends with the stack of one of the nodes (a log's graph
    text records only a node's innermost frame, a live graph its whole stack)."""
    own = {tuple((file, line) for file, line, _ in node.stack) for node in nodes if node.stack}
    kept = []
    for text in stack_traces:
        stack = frames.without_entry(frames_of(text))
        lines = [(file, line) for file, line, _ in stack]
        if any(len(lines) >= len(tail) and tuple(lines[len(lines) - len(tail):]) == tail for tail in own):
            kept.append((text, stack))
    return kept


def _user_lines(nodes: list[FxNode], stacks: list[list[frames.Frame]], outer: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each node's own line first (a pattern-rewritten node such as addmm from mm + add keeps one line
    itself; its FX nodes add the others), then the rest of every node's stack, innermost first, without
    ``outer``: the lines of the higher-order ops enclosing the nodes (ownership rule 5). ``stacks``: more
    stacks of the same nodes (Inductor's traces hold whole stacks where a log's graph text holds one frame)."""
    own = [node.user_line for node in nodes if node.user_line]
    stacks = [node.stack for node in nodes] + stacks
    callers = [line for stack in stacks for line in frames.stack_lines(stack) if line not in outer]
    return list(dict.fromkeys(own + callers))


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
