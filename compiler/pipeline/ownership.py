"""Which kernel computes each post-grad node: the one ownership rule (docs/ownership.md).

Inductor lists, for every IR node, the FX nodes being lowered when it was made *and* the origins of
every unrealized input handed to that lowering (``gather_origins``), and inside a higher-order op's
subgraph the enclosing op's too. Taken as they are, a matmul claims the LayerNorm it reads, a
scatter's copy of its input claims the sine it scatters, a mask kernel claims the q/k/v views that only
the attention reads, and a branch's kernel claims the ``cond``. What a kernel computes is decided
instead from what it reads and writes:

1. **A node computes only what it can, and only what its output is made of.** A loop-IR node computes an
   origin Inductor lists for it when that origin is of its own (sub)graph, is not held by a buffer it
   reads, and every input of that origin is available to it: computed by the node itself, held by a
   buffer it reads, a graph input it reads, a constant, or a view of one of those. Of those, it computes
   the ones its output (the node its buffer holds, or the creator's input it realizes) is made of:
   Inductor gives every buffer one lowering makes the origins of all the lowering's inputs, so an
   attention's realized query lists the mask's ``iota``. A value is held by a buffer that holds it, not
   by one whose producer computed it on the way: a node inlined into several kernels is each one's. The
   FX node whose lowering made the node is always computed by it (the stages of one op, a split
   reduction's passes or a fallback's copy and scatter, read each other and all compute that op); when
   its inputs are not all available the node computes that op *in part* (a scatter's copy of its input).
   An extern call (a matmul, an attention, a fallback) computes that op alone: its inputs are realized
   buffers, nothing of its producers is inlined into it.
2. **A kernel computes what its loop-IR nodes compute**, a ``cat`` whose parts it writes in place
   (Inductor writes each input straight into a slice of the output; the ``cat`` has no code of its own),
   and the outputs of the extern call it makes (``buf7 = buf6[0]``: the ``getitem`` each holds).
3. **Views belong to the kernels that read them.** A view (``permute``, ``split``, ``getitem``...)
   computes nothing: it is listed by every kernel that computes a node reading it, directly or through
   other views, and by no other; a view no kernel reads stays where Inductor listed it, and a kernel that
   lists nothing but views runs them (an extern call of ``slice``) and keeps them. A view a kernel
   writes out (a mask's ``expand`` an attention takes dense) is that kernel's, and a view an FX call made
   together with the node it aliases (the reshape ``x @ w`` ends with) goes with the kernel computing that
   node. A view a reader lists brings the FX nodes that are views too (``x.view(...)``) or that the
   reader computes, never a call another kernel computes.
4. **A rewritten node belongs to what replaced it.** A node that a pattern rewrite replaced (``mm`` +
   ``add`` -> ``addmm``, an attention pattern, cat/split folding) brings its FX nodes and lines to the
   node the rewrite made; a call that common-subexpression elimination merged into an identical one
   goes with that one (a dead call is nobody's twin), a factory folded into its users' nodes
   (``arange(16) + 0`` made one ``iota``) with them, and a mutated input's write-back with the value it
   writes (``fx_stage.link_post_grad_to_fx``): so to the kernel computing it.
5. **A kernel's lines are where its nodes were written.** Each node's own line, then the lines that
   called it, except the line of a higher-order op enclosing it: ``torch.cond(...)`` is the op's line,
   computed by no kernel.

What a node lists but does not compute is kept as ``inherited``, so nothing Inductor said is lost.

A TORCH_TRACE log holds no loop IR, only Inductor's kernel -> node map, which over-claims the same way
(``log_claims``): a kernel listing a node whose inputs only later kernels compute gives it up to a later
claimant, each node then goes to the first kernel in codegen order that lists it, then rule 3.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..model.provenance import is_view
from ..model.stages import FxNode, LoopIRNode


def buffer_name(dep: str) -> str:
    """``buf3`` of a recorded dependency ``buf3[c0 + 96*c1]`` (or ``buf3[*]``)."""
    return dep.split("[", 1)[0]


# ------------------------------------------------------------------------------ rule 1: loop-IR nodes


def split_origins(records: list[dict[str, Any]], lowered_by: dict[str, str], post_grad: dict[str, FxNode]) -> None:
    """Set each raw loop-IR record's ``origins`` to the post-grad nodes it computes (rule 1), ``inherited``
    to the rest of Inductor's list and ``holds`` to the values its buffers hold, where known.
    ``lowered_by``: operation -> the post-grad node whose lowering made it; ``post_grad``: the post-grad
    nodes by name."""
    listed = {record["name"]: list(record["origins"]) for record in records}
    producer = {buffer: record["name"] for record in records for buffer in record["buffers"]}
    held = {buffer: node for record in records for buffer, node in record.get("buffer_nodes", {}).items()}
    holds: dict[str, set[str]] = {}  # loop-IR node -> the values its buffers may hold
    copied: dict[str, set[str]] = {}  # a node computing its op in part (a copy of an input) -> the values it read
    inputs: dict[str | None, list[str]] = {}  # (sub)graph -> its inputs
    for node in post_grad.values():
        if node.op == "placeholder":
            inputs.setdefault(node.subgraph, []).append(node.name)
    for record in records:  # in the scheduler's order: a buffer's producer is settled before its readers
        name = record["name"]
        origins = listed[name]
        subgraph = record.get("subgraph")
        inside = [o for o in origins if _subgraph(o, post_grad) == subgraph] or origins
        creator = lowered_by.get(name)
        buffers = {buffer_name(dep) for dep in record["reads"]}
        extern = record.get("kind") == "extern"
        values = _values_read(buffers, producer, held, listed, inputs.get(subgraph, []))
        values |= {v for b in buffers if producer.get(b) in copied for v in copied[producer[b]]}
        outputs = [] if extern else _output_values(record, inside, creator, held, values, post_grad)
        if outputs:  # what it reads is known value by value: it computes what its output needs of the rest
            read = _held_values(buffers - set(record["buffers"]), producer, held, holds, listed)
            candidates = [o for o in inside if o not in read or o == creator]
        else:  # the buffers it reads hold whatever their producers compute
            read = set()
            held_by_sources = {o for b in buffers if producer.get(b, name) != name for o in listed[producer[b]]}
            candidates = [o for o in inside if o not in held_by_sources or o == creator]
        if extern and creator in candidates:
            candidates = [creator]  # an extern call computes its op on realized inputs, nothing inlined
        computed, partial = _computable(candidates, creator, values, post_grad)
        if any(o in computed for o in outputs):
            computed = _feeding(outputs, computed, creator, read, post_grad)
        own = [held[b] for b in record["buffers"] if b in held]
        if extern:  # one output of a multi-output call, written by the call into a buffer of its own; a view
            # of that output Inductor names for the buffer (the ``expand`` a bmm reads of an attention's
            # output) is its readers' (rule 3)
            computed += [v for v in own if v in post_grad and is_view(post_grad[v]) and creator in post_grad[v].inputs
                         and v not in computed]
        record["origins"] = computed
        record["partial"] = partial
        if partial:
            copied[name] = values
        record["inherited"] = [o for o in origins if o not in computed]
        mine = set(own) | {o for o in outputs if o in computed} | ({creator} & set(computed))
        record["holds"] = sorted(mine - {creator}) if outputs or own else []
        holds[name] = mine if outputs or own else set(computed)
        listed[name] = computed  # what its readers find in its buffers


def _output_values(record: dict[str, Any], inside: list[str], creator: str | None, held: dict[str, str],
                   values: set[str], post_grad: dict[str, FxNode]) -> list[str]:
    """The post-grad nodes whose values a loop-IR node writes, among those Inductor lists for it: the node
    its buffer holds (Inductor's ``origin_node``, or the listed node under it when that is a view), else, for an input a lowering realized (the query of an
    attention, the mask, the input of a fallback), the creator's input it is, seen through views (the
    ``expand`` of a mask a node writes out is its output, not the ``where`` under it). Of several such
    inputs, those made from the ``values`` it reads. Empty when unknown."""
    own = []
    for buffer in record["buffers"]:  # the node its buffer holds, seen through views Inductor did not list
        name = held.get(buffer)  # (``_safe_softmax``'s ``where`` written out as the ``expand`` the bmm reads)
        while name in post_grad and name not in inside and is_view(post_grad[name]) and post_grad[name].inputs:
            name = post_grad[name].inputs[0]
        if name in inside and name not in own:
            own.append(name)
    if own or creator not in post_grad:
        return own
    found = []
    for name in post_grad[creator].inputs:
        while name in post_grad and name not in inside and is_view(post_grad[name]) and post_grad[name].inputs:
            name = post_grad[name].inputs[0]
        if name in inside and name != creator and name not in found:
            found.append(name)
    fed = [name for name in found if _made_from(name, values, set(inside), post_grad)]
    return fed or found


def _made_from(name: str, values: set[str], inside: set[str], post_grad: dict[str, FxNode]) -> bool:
    """Whether ``name`` is made, through nodes of ``inside`` and views, from one of ``values``."""
    made_of = _walk_back([name], lambda i: i in inside or is_view(post_grad[i]), post_grad)
    return any(i in values for n in made_of for i in post_grad[n].inputs)


def _walk_back(starts: list[str], through: Callable[[str], bool], post_grad: dict[str, FxNode]) -> set[str]:
    """``starts`` and the nodes reached from them walking back through the inputs ``through`` lets pass."""
    seen: set[str] = set()
    stack = list(starts)
    while stack:
        name = stack.pop()
        if name in seen or name not in post_grad:
            continue
        seen.add(name)
        stack += [i for i in post_grad[name].inputs if i in post_grad and through(i)]
    return seen


def _held_values(buffers: set[str], producer: dict[str, str], held: dict[str, str], holds: dict[str, set[str]],
                 listed: dict[str, list[str]]) -> set[str]:
    """The post-grad nodes whose values the buffers a node reads hold: each buffer's own node where
    Inductor recorded it, else what its producer holds (everything it computes where that is unknown)."""
    out: set[str] = set()
    for buffer in buffers:
        if buffer in held:
            out.add(held[buffer])
        elif buffer in producer:
            out |= holds.get(producer[buffer], set(listed[producer[buffer]]))
    return out


def _feeding(outputs: list[str], computed: list[str], creator: str | None, read: set[str],
             post_grad: dict[str, FxNode]) -> list[str]:
    """Of ``computed``, the creator and the nodes a node's ``outputs`` are made of, found walking back from
    them through its own nodes and views, up to the values it reads (``read``): Inductor gives every buffer
    one lowering makes the origins of all its inputs, so the query an attention realizes lists the mask's
    ``iota`` and ``le``, which only the mask's node computes (each recomputes what its output needs: an
    op inlined into several kernels is computed by each)."""
    mine = set(computed)
    seen = _walk_back([o for o in outputs if o in mine],
                      lambda i: i not in read and (i in mine or is_view(post_grad[i])), post_grad)
    return [o for o in computed if o in seen or o == creator]


def _subgraph(name: str, post_grad: dict[str, FxNode]) -> str | None:
    node = post_grad.get(name)
    return node.subgraph if node is not None else None


def _values_read(buffers: set[str], producer: dict[str, str], held: dict[str, str], listed: dict[str, list[str]],
                 inputs: list[str]) -> set[str]:
    """The post-grad nodes whose values a loop-IR node reading ``buffers`` has: the node each buffer holds and
    what its producer computes (a scatter's copy holds the scatter's input before the scatter writes into
    it), and the graph inputs it reads (``inputs``: those of its own graph or subgraph)."""
    values: set[str] = set()
    for buffer in buffers:
        if buffer in held:
            values.add(held[buffer])
        if buffer in producer:
            values.update(listed[producer[buffer]])
        if buffer not in held and buffer not in producer:  # a graph input: a subgraph's is <subgraph>_<name>
            values.update([name for name in inputs if buffer in (name, _flat(name))] or inputs)
    return values


def _is_tensor(node: FxNode) -> bool:
    """A node whose value is a tensor (a symbolic size or a Python scalar is recorded with a dtype such as
    ``SymInt``; a tensor's dtype is ``torch.*``)."""
    return node.shape is not None and (node.dtype or "").startswith("torch.")


def _flat(qualified: str) -> str:
    return qualified.replace(".", "_")


def _computable(candidates: list[str], creator: str | None, values: set[str],
                post_grad: dict[str, FxNode]) -> tuple[list[str], list[str]]:
    """(the candidates whose inputs are all available, the creator's op when it is computed only in part):
    rule 1, found by dropping candidates until none is left to drop (dropping one can leave another
    without its input)."""
    computed = set(candidates)
    available: dict[str, bool] = {}

    def has(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in computed or name in values:
            return True
        if name in available:
            return available[name]
        node = post_grad.get(name)
        if node is None or name in seen:
            return True  # not a node of the graph (a constant, a symbol): nothing to compute
        if node.op == "get_attr" or not _is_tensor(node):
            answer = True  # a constant or subgraph attribute, or a value that is not a tensor (a size)
        elif is_view(node):
            answer = all(has(i, seen | {name}) for i in node.inputs)
        else:
            answer = False
        available[name] = answer
        return answer

    changed = True
    while changed:
        changed = False
        for name in list(computed):
            node = post_grad.get(name)
            if name == creator or node is None:
                continue
            available.clear()
            if not all(has(i) for i in node.inputs):
                computed.discard(name)
                changed = True
    available.clear()
    creator_node = post_grad.get(creator) if creator in computed else None
    partial = [creator] if creator_node is not None and not all(has(i) for i in creator_node.inputs) else []
    return [c for c in candidates if c in computed], partial


# ------------------------------------------------------------------- rule 2: kernels, parts in place


def parts_in_place(members: list[list[LoopIRNode]], loop_ir: list[LoopIRNode]) -> list[list[str]]:
    """Per kernel, the nodes it computes by writing their parts in place: a ``cat`` whose inputs Inductor
    writes straight into slices of its output is a loop-IR node with no code of its own (``nop``), read
    only by the kernels that write those slices. ``members``: each kernel's loop-IR nodes."""
    owner = {node.name: k for k, mine in enumerate(members) for node in mine}
    producer = {buffer: node.name for node in loop_ir for buffer in node.buffers}
    out: list[list[str]] = [[] for _ in members]
    for node in loop_ir:
        if node.kind != "nop" or node.eliminated or node.name in owner or not node.origins:
            continue
        writers = {owner[producer[b]] for b in map(buffer_name, node.reads) if producer.get(b) in owner}
        for k in sorted(writers):
            out[k] += [o for o in node.origins if o not in out[k]]
    return out


def outputs_of_calls(members: list[list[LoopIRNode]], loop_ir: list[LoopIRNode]) -> list[list[LoopIRNode]]:
    """Per kernel, the loop-IR nodes that pick the outputs of the extern call it makes: a call returning
    several tensors (an attention, a sort) or an alias of its result is followed by nodes of no kernel of
    their own (``buf7 = buf6[0]`` in the wrapper), each reading only the call's buffer and holding one
    output (the ``getitem``). Control flow (``cond``) is no kernel's call: its outputs stay no kernel's.
    ``members``: each kernel's loop-IR nodes."""
    owner = {node.name: k for k, mine in enumerate(members) for node in mine}
    producer = {buffer: node for node in loop_ir for buffer in node.buffers}
    out: list[list[LoopIRNode]] = [[] for _ in members]
    for node in loop_ir:  # in the scheduler's order: an output of an output finds its kernel
        if node.kind != "extern" or node.eliminated or node.extern_target or node.name in owner or not node.reads:
            continue
        calls = [producer.get(buffer_name(dep)) for dep in node.reads]
        makers = {owner.get(call.name, -1) if call is not None and call.kind == "extern" else -1 for call in calls}
        if len(makers) == 1 and -1 not in makers:
            owner[node.name] = kernel = makers.pop()
            out[kernel].append(node)
    return out


# --------------------------------------------------------------------------------- rule 3: views


def views_to_readers(kernel_nodes: list[list[str]], post_grad: dict[str, FxNode],
                     partial: list[set[str]] | None = None, written: Iterable[str] = ()) -> list[list[str]]:
    """Each kernel's nodes with views placed (rule 3). ``kernel_nodes``: each kernel's post-grad nodes, as
    rules 1-2 give them; ``partial``: per kernel, the nodes it computes only in part, whose inputs it does
    not read; ``written``: views a kernel writes out into a buffer of its own (the ``expand`` of a mask an
    attention needs dense, one output of a multi-output call), which stay with it and which readers read
    as values, not through."""
    partial = partial or [set() for _ in kernel_nodes]
    written = set(written)
    whole = [set(nodes) - part for nodes, part in zip(kernel_nodes, partial)]
    with_call = views_of_calls(post_grad, set().union(*whole) if whole else set(), written)
    order = {name: i for i, name in enumerate(post_grad)}
    settled = written | set(with_call)  # views whose kernels are known: readers do not list them
    reads = [_views_read([n for n in nodes if n not in part], post_grad, order, settled)
             for nodes, part in zip(kernel_nodes, partial)]
    read_by_any = set().union(*reads) if reads else set()
    out = []
    for nodes, views, mine in zip(kernel_nodes, reads, whole):
        if all(n in post_grad and is_view(post_grad[n]) for n in nodes):
            out.append(list(nodes))  # a kernel of views alone runs them (an extern call of a slice)
            continue
        kept = [n for n in nodes if n not in post_grad or not is_view(post_grad[n]) or n in written
                or (n not in with_call and n not in read_by_any)]
        calls = [v for v, base in with_call.items() if base in mine]
        out.append(list(dict.fromkeys(kept + sorted(set(views + calls) - set(kept), key=lambda n: order.get(n, 0)))))
    return out


def views_of_calls(post_grad: dict[str, FxNode], computed: set[str], written: set[str] = frozenset()) -> dict[str, str]:
    """View -> the node it aliases, for the views an FX call made together with that node: the reshape a
    matmul ends with (``view_1`` of ``mm``, both from ``x @ w``), the ``getitem`` that picks one output of
    an attention or a sort. Such a view is part of the call, so it goes with the kernel computing the node
    it aliases, with all its FX nodes (a no-op the view also stands for, ``dropout`` in eval, included);
    its readers do not list it, nor the call's FX node and line: they compute none of it. ``computed``:
    the nodes some kernel computes."""
    out = {}
    for name, node in post_grad.items():
        if not is_view(node) or name in written or not node.fx:
            continue
        base = node
        while is_view(base) and base.name not in written and base.inputs and base.inputs[0] in post_grad:
            base = post_grad[base.inputs[0]]
        if base.name in computed and not is_view(base) and set(node.fx) & set(base.fx):
            out[name] = base.name
    return out


def _views_read(nodes: Iterable[str], post_grad: dict[str, FxNode], order: dict[str, int],
                settled: set[str] = frozenset()) -> list[str]:
    """The views the computing nodes among ``nodes`` read, directly or through other views, in graph order
    (``order``: each node's position); ``settled`` views are read as values, not through."""
    found: dict[str, None] = {}
    stack = [i for n in nodes if n in post_grad and not is_view(post_grad[n]) for i in post_grad[n].inputs]
    while stack:
        name = stack.pop()
        node = post_grad.get(name)
        if node is None or name in found or not is_view(node) or name in settled:
            continue
        found[name] = None
        stack.extend(node.inputs)
    return sorted(found, key=lambda n: order.get(n, 0))


def linking_nodes(nodes: list[FxNode], post_grad: dict[str, FxNode], fx: dict[str, FxNode],
                  written: Iterable[str] = ()) -> tuple[list[FxNode], list[str]]:
    """(the post-grad nodes of a kernel that bring it their lines, the FX nodes they bring). A node it
    computes, a view it writes out (``written``) or runs (an extern call of ``slice``), brings all its FX
    nodes; a view it reads brings those of its FX nodes that are views too (``x.view(...)``, ``.split``)
    or that its own nodes come from, and its lines when it brings them all: not a call another kernel
    computes (the reshape that the q, k and v projections share is the q projection's)."""
    written = set(written)

    def fx_view(name: str) -> bool:
        made = [post_grad[p] for p in fx[name].post_grad if p in post_grad] if name in fx else []
        return bool(made) and all(is_view(p) for p in made)

    runs_views = all(is_view(node) for node in nodes)  # a kernel of views alone runs them (an extern slice)
    own = {f for node in nodes if runs_views or not is_view(node) or node.name in written for f in node.fx}
    bringing: list[FxNode] = []
    names: list[str] = []
    for node in nodes:
        brought = [f for f in node.fx if f in own or fx_view(f)]
        if len(brought) == len(node.fx):
            bringing.append(node)
        names += brought
    return bringing, list(dict.fromkeys(names))


# --------------------------------------------------------------------------------- rule 5: lines


def enclosing_op_lines(post_grad: dict[str, FxNode]) -> dict[str, set[tuple[str, int]]]:
    """Subgraph path -> the lines of the higher-order ops that run it (a nested subgraph's also hold the
    outer op's): lines no kernel of the subgraph computes."""
    subgraphs = {n.subgraph for n in post_grad.values() if n.subgraph}
    runs: dict[str, set[tuple[str, int]]] = {}
    for node in post_grad.values():
        if not node.target.startswith("torch.ops.higher_order.") or node.user_line is None:
            continue
        for name in node.inputs:
            if name in subgraphs:
                runs.setdefault(name, set()).add(tuple(node.user_line))
    out = {}
    for path in subgraphs:
        parts = path.split(".")
        out[path] = set().union(*(runs.get(".".join(parts[:i]), set()) for i in range(1, len(parts) + 1)))
    return out


# ----------------------------------------------------------------------------------- TORCH_TRACE logs


def log_claims(claims: list[list[str]], post_grad: list[FxNode]) -> list[list[str]]:
    """The nodes each kernel of a TORCH_TRACE log computes, from Inductor's kernel -> node map (``claims``,
    kernels in codegen order): subgraph names qualified, every node kept by its first claimant, views
    moved to their readers."""
    targets = {n.name: "get_attr" if n.op == "get_attr" else n.target for n in post_grad}
    graphs: dict[str | None, set[str]] = {}
    for node in post_grad:
        graphs.setdefault(node.subgraph, set()).add(node.name[len(node.subgraph) + 1:] if node.subgraph else node.name)
    if len(graphs) > 1:
        claims = [qualify_claims(nodes, graphs) for nodes in claims]
    nodes = {n.name: n for n in post_grad}
    return views_to_readers(first_claims(not_before_inputs(claims, nodes), targets), nodes)


def not_before_inputs(claims: list[list[str]], post_grad: dict[str, FxNode]) -> list[list[str]]:
    """Each kernel's claims (kernels in call order) without the nodes whose inputs only later kernels
    compute, where a later kernel claims the node too: the log's form of rule 1 (a scatter's copy, called
    before the cumsum, does not compute the cumsum's sine)."""
    claims = [list(nodes) for nodes in claims]
    changed = True
    while changed:
        changed = False
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for position, nodes in enumerate(claims):
            for name in nodes:
                first.setdefault(name, position)
                last[name] = position
        for position, nodes in enumerate(claims):
            for name in list(nodes):
                node = post_grad.get(name)
                if node is None or is_view(node) or last[name] == position:
                    continue
                if any(first.get(source, position) > position for source in _sources(node, post_grad)):
                    nodes.remove(name)
                    changed = True
    return claims


def _sources(node: FxNode, post_grad: dict[str, FxNode]) -> set[str]:
    """The computing nodes whose values ``node`` reads, seen through views."""
    out: set[str] = set()
    stack = list(node.inputs)
    while stack:
        name = stack.pop()
        current = post_grad.get(name)
        if current is None or name in out:
            continue
        if is_view(current):
            stack.extend(current.inputs)
        else:
            out.add(name)
    return out


def first_claims(claims: list[list[str]], targets: dict[str, str]) -> list[list[str]]:
    """Node lists of kernels in codegen order, each node kept by the first kernel that lists it: without
    the loop IR (a TORCH_TRACE log) only Inductor's over-claiming map is there, and a kernel over-claims
    the nodes of the kernels that produced its inputs, which ran before it. The higher-order op itself
    (``cond``) and its subgraph attributes are the wrapper's control flow, computed by no kernel.
    ``targets``: post-grad node -> its target (``get_attr`` nodes map to "get_attr")."""
    taken: set[str] = set()
    out = []
    for nodes in claims:
        mine = [n for n in nodes if n not in taken and not _control_flow(targets.get(n, ""))]
        taken.update(mine)
        out.append(mine or [n for n in nodes if not _control_flow(targets.get(n, ""))] or list(nodes))
    return out


def _control_flow(target: str) -> bool:
    return target == "get_attr" or target.startswith("torch.ops.higher_order.")


def qualify_claims(nodes: list[str], graph_names: dict[str | None, set[str]]) -> list[str]:
    """A log's kernel -> node list names a subgraph's nodes without their subgraph (``sin`` for
    ``true_graph_0.sin``). A kernel listing names found only in one subgraph lives there (the outer
    names it lists are the enclosing op's, which Inductor adds to everything lowered inside it): its
    names found in that subgraph are qualified with it. Of several, the subgraph with the most such
    names wins. ``graph_names``: graph (None for the main one, else the subgraph path) -> bare names."""
    def unique(path: str | None) -> int:
        others = set().union(*(names for other, names in graph_names.items() if other != path))
        return sum(1 for n in nodes if n in graph_names[path] and n not in others)

    home = max((path for path in graph_names if path is not None), key=unique, default=None)
    if home is None or not unique(home):
        return list(nodes)
    return [f"{home}.{n}" if n in graph_names[home] else n for n in nodes]
