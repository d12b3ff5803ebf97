"""Every kernel of a compilation checked against torch's records and against the wrapper.

Three oracles, none of them the explorer's own ownership rule:

- torch's records (``torch_records``): which post-grad nodes Inductor lists for each kernel, the Dynamo FX
  nodes each post-grad node came from, the stack traces of each kernel;
- the wrapper: the order of its calls and the buffers each call names (a kernel cannot compute a node
  before that node's inputs are written), with the node each buffer holds (Inductor's ``origin_node``);
- the post-grad graph itself: a node's inputs, and whether its ATen op returns an alias of its input
  (read from the op's schema, not from a list of names).

Each difference is a finding: ``accepted`` when a rule of docs/ownership.md names it (the rule's name is
kept), a ``problem`` otherwise. A kernel whose nodes equal torch's is ``exact``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

import torch

from . import dataflow
from .torch_records import GraphRecords

EXACT, ACCEPTED, PROBLEM = "exact", "accepted", "problem"

# The rules of docs/ownership.md a difference with torch's records may be accepted by.
INHERITED = "inherited"  # torch lists an input's producer nodes: computed by an earlier kernel, read here
VIEW_READ = "views belong to their readers"
CONTROL_FLOW = "control flow"  # a higher-order op and its subgraphs: the wrapper runs them, no kernel
GRAPH_INPUT = "graph input"
NO_HANDLE = "a call torch logs no handle for"
REWRITE = "rewritten nodes"  # an FX node a pattern rewrite folded into this node (mm + add -> addmm)
SPLIT = "computed in parts"  # torch lists it for each of the kernels that compute it (split, recomputed)
IN_PLACE = "parts written in place"  # a cat whose inputs the kernel writes into the output's slices
NOT_YET = "inputs not computed yet"  # torch lists it for a kernel called before its inputs exist
ANCESTRY = "torch's own ancestry"  # a line of an FX node torch's postToPre maps to a node the kernel computes
LATER_PART = "an input of a later part"  # torch lists an input of an op with the op's first part (its copy)
NOTHING = "computes nothing"  # an FX call that left no post-grad node: a view, a no-op copy or cast, dead code
VIEW_WRITTEN = "a view of what it writes"  # a view no kernel reads (a graph output) of a value the kernel writes
VIEW_OF_CALL = "a view goes with its call"  # a view an FX call made with the value it aliases (mm's reshape)
WRITE_BACK = "a write-back links to the value it writes"  # torch maps functionalization's copy_ to nothing
TORCH_UNION = "torch's union of a lowering's origins"  # torch's mistake: a node of another input of the lowering


@dataclass(frozen=True)
class Finding:
    case: str
    graph: str
    kernel: str | None
    check: str  # nodes | order | fx | lines | coverage | outputs | capture
    verdict: str  # exact | accepted | problem
    rule: str = ""  # for accepted findings: the rule that accepts them
    detail: str = ""


@dataclass
class CaseResult:
    case: str
    findings: list[Finding] = field(default_factory=list)
    kernels: int = 0
    seconds: float = 0.0
    error: str | None = None  # the case could not be compiled (by torch.compile too: not counted)
    compilation: Any = None  # the capture, for tests that check its answers exactly

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == PROBLEM]


# ---------------------------------------------------------------------------------------- the graph facts


@lru_cache(maxsize=None)
def returns_alias(target: str) -> bool:
    """Whether an op (as post-grad graphs spell it: ``aten.permute.default``) returns a view of an input,
    from its schema; ``operator.getitem`` picks one output of a multi-output op, and Inductor lowers
    ``_unsafe_view`` (a reshape of a fresh tensor) as a view."""
    if target in ("operator.getitem", "_operator.getitem") or target.startswith("aten._unsafe_view."):
        return True
    parts = target.split(".")
    if len(parts) < 2 or parts[0] not in ("aten", "prims"):
        return False
    packet = getattr(getattr(torch.ops, parts[0]), parts[1], None)
    overload = getattr(packet, parts[2] if len(parts) > 2 else "default", None)
    schema = getattr(overload, "_schema", None)
    return bool(schema) and any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


class GraphFacts:
    """One captured graph as the checks read it: nodes, kernels and the wrapper's call order."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.nodes = {n.name: n for n in graph.post_grad.nodes}
        self.fx = {n.name: n for n in graph.fx.nodes}
        self.kernels = {k.id: k for k in graph.kernels}
        self.first_call: dict[str, int] = {}
        self.last_call: dict[str, int] = {}
        for kernel in graph.kernels:
            calls = kernel.call_lines
            if calls:
                self.first_call[kernel.id], self.last_call[kernel.id] = min(calls), max(calls)
        self.computed_by: dict[str, list[str]] = defaultdict(list)
        for kernel in graph.kernels:
            for name in dict.fromkeys(kernel.post_grad_nodes):
                self.computed_by[name].append(kernel.id)
        self.subgraphs = {n.subgraph for n in graph.post_grad.nodes if n.subgraph}
        self.written_at = _written_at(graph)
        self.live_fx: set[str] | None = None  # _live_fx
        self._functions: dict[str, str | None] = {}
        self._buffers: dict[str, set[str]] | None = None
        self._may_hold: dict[str, set[str]] | None = None

    @property
    def buffers(self) -> dict[str, set[str]]:
        """Kernel id -> the buffers its calls name (``dataflow.call_buffers``), read once."""
        if self._buffers is None:
            self._buffers = dataflow.call_buffers(self)
        return self._buffers

    @property
    def may_hold(self) -> dict[str, set[str]]:
        """Buffer -> the post-grad nodes it may hold (``dataflow.may_hold``), read once."""
        if self._may_hold is None:
            self._may_hold = dataflow.may_hold(self)
        return self._may_hold

    def base_of(self, name: str) -> str | None:
        """The node a view aliases, walking back through views (None for a view of nothing)."""
        seen: set[str] = set()
        while name in self.nodes and self.is_view(name) and name not in seen:
            seen.add(name)
            inputs = self.nodes[name].inputs
            if not inputs:
                return None
            name = inputs[0]
        return name if name in self.nodes else None

    def is_view(self, name: str) -> bool:
        node = self.nodes.get(name)
        return node is not None and returns_alias(node.target)

    def is_input(self, name: str) -> bool:
        node = self.nodes.get(name)
        return node is not None and node.op in ("placeholder", "get_attr")

    def is_control_flow(self, name: str) -> bool:
        node = self.nodes.get(name)
        return node is not None and (node.target.startswith("torch.ops.higher_order.")
                                     or (node.op == "get_attr" and name in self.subgraphs))

    def is_computing(self, name: str) -> bool:
        """A node that computes a tensor: a call that is not a view, not control flow, with a tensor value."""
        node = self.nodes.get(name)
        return (node is not None and node.op == "call_function" and node.shape is not None
                and (node.dtype or "").startswith("torch.") and not self.is_view(name)
                and not self.is_control_flow(name))

    def producers(self, name: str, seen: set[str] | None = None) -> set[str]:
        """The computing nodes whose value ``name`` is or aliases: itself, or through views its bases."""
        seen = seen if seen is not None else set()
        if name in seen or name not in self.nodes:
            return set()
        seen.add(name)
        if self.is_view(name):
            return {p for i in self.nodes[name].inputs for p in self.producers(i, seen)}
        return {name} if self.is_computing(name) else set()

    def is_dead(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """No output depends on the node: it has no users, or only dead ones."""
        node = self.nodes.get(name)
        if node is None or name in seen:
            return False
        return all(u != "output" and not u.endswith(".output") and self.is_dead(u, seen | {name}) for u in node.users)

    def needless(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """The node has no elements, or every value it feeds has none."""
        node = self.nodes.get(name)
        if node is None or name in seen:
            return False
        if any(size == 0 for size in node.shape or ()):
            return True
        users = [u for u in node.users if u in self.nodes and self.nodes[u].op != "output"]
        return bool(users) and len(users) == len(node.users) and all(self.needless(u, seen | {name}) for u in users)

    def ancestors(self, name: str) -> set[str]:
        """Every node ``name``'s value is computed from."""
        return _reach([name], self.nodes)

    def consumed_views(self, name: str) -> set[str]:
        """The view nodes a node reads through (its view inputs, their view inputs, ...)."""
        out: set[str] = set()
        stack = list(self.nodes[name].inputs) if name in self.nodes else []
        while stack:
            current = stack.pop()
            if current in out or not self.is_view(current):
                continue
            out.add(current)
            stack.extend(self.nodes[current].inputs)
        return out

    def function_of(self, kernel_id: str) -> str | None:
        """The subgraph whose wrapper function calls the kernel (None: the main call function)."""
        if kernel_id not in self._functions:
            self._functions[kernel_id] = wrapper_function(self.kernels[kernel_id], self)
        return self._functions[kernel_id]

    def runs_before(self, earlier: str, later: str) -> bool:
        """Some call of ``earlier`` comes before the last call of ``later`` in the wrapper (same function)."""
        if self.function_of(earlier) != self.function_of(later):
            return True  # calls in different functions of the wrapper: their order is the control flow's
        first, last = self.first_call.get(earlier), self.last_call.get(later)
        return first is None or last is None or first <= last


def _reach(starts: list[str], nodes: dict[str, Any]) -> set[str]:
    """The nodes of ``nodes`` whose values those named ``starts`` are computed from (inputs, their inputs...)."""
    out: set[str] = set()
    stack = [i for name in starts if name in nodes for i in nodes[name].inputs]
    while stack:
        current = stack.pop()
        if current in out or current not in nodes:
            continue
        out.add(current)
        stack.extend(nodes[current].inputs)
    return out


_DEF = re.compile(r"^(\s*)def (\w+)\(")


def wrapper_function(kernel: Any, facts: GraphFacts) -> str | None:
    """The subgraph whose wrapper function calls ``kernel`` (a ``cond`` branch is a function of the
    wrapper named after its subgraph), or None for the main call function."""
    lines = facts.graph.wrapper.source.splitlines()
    calls = kernel.call_lines
    paths = {(n.subgraph or "").replace(".", "_"): n.subgraph for n in facts.nodes.values() if n.subgraph}
    for number in calls[:1]:
        if number > len(lines):
            return None
        indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
        for line in reversed(lines[: number - 1]):
            match = _DEF.match(line)
            if match and len(match.group(1)) < indent:
                return paths.get(match.group(2))
    return None


_ALIAS = re.compile(r"^\s*(\w+) = reinterpret_tensor\((\w+),.*#\s*alias")
_BUFFER = re.compile(r"\b\w+\b")


def _written_at(graph: Any) -> dict[str, int]:
    """Post-grad node -> the wrapper line of the first kernel call that writes the buffer holding it (or a
    view of that buffer: a ``cat`` writes its parts through aliases), for nodes Inductor realized in a
    buffer (its ``origin_node``). A kernel called for several groups writes each group's buffers in the
    call that names them, so this is per call, not per kernel."""
    lines = graph.wrapper.source.splitlines()
    group: dict[str, str] = {}
    for line in lines:
        match = _ALIAS.match(line)
        if match:
            group[match.group(1)] = group.get(match.group(2), match.group(2))
    calls = sorted({n for k in graph.kernels for n in k.call_lines})
    first: dict[str, int] = {}
    for number in calls:
        if number > len(lines):
            continue
        for name in _BUFFER.findall(lines[number - 1]):
            first.setdefault(group.get(name, name), number)
    out: dict[str, int] = {}
    for ir in graph.loop_ir:
        for buffer, node in ir.buffer_nodes.items():
            line = first.get(group.get(buffer, buffer))
            if line is not None:
                out[node] = min(line, out.get(node, line))
    return out


def qualified(names: Iterable[str], facts: GraphFacts, home: str | None = None) -> list[str]:
    """torch names a subgraph's nodes without their subgraph (``sin`` for ``true_graph_0.sin``): they are
    read in ``home``, the subgraph whose function calls the kernel, else in the one subgraph a list
    names nodes found only in."""
    names = list(names)
    by_subgraph: dict[str | None, set[str]] = defaultdict(set)
    for node in facts.nodes.values():
        bare = node.name[len(node.subgraph) + 1:] if node.subgraph else node.name
        by_subgraph[node.subgraph].add(bare)
    if len(by_subgraph) == 1:
        return names
    if home is not None:
        return [f"{home}.{n}" if n in by_subgraph[home] else n for n in names]

    def only_in(path: str | None) -> int:
        others = set().union(*(v for k, v in by_subgraph.items() if k != path))
        return sum(1 for n in names if n in by_subgraph[path] and n not in others)

    home = max((p for p in by_subgraph if p is not None), key=only_in, default=None)
    if home is None or not only_in(home):
        return names
    return [f"{home}.{n}" if n in by_subgraph[home] else n for n in names]


# --------------------------------------------------------------------------------------------- the checks


def check_graph(case: str, graph: Any, records: GraphRecords | None) -> list[Finding]:
    facts = GraphFacts(graph)
    findings: list[Finding] = []
    if records is not None:
        findings += _nodes_against_torch(case, facts, records)
        findings += _fx_against_torch(case, facts, records)
        findings += _lines_against_torch(case, facts, records)
    findings += [Finding(case, facts.graph.id, kernel, "nodes", PROBLEM, detail=why)
                 for kernel, _, why in dataflow.claims_feeding_nothing(facts)]
    findings += _outer_lines(case, facts)
    findings += _kernel_fx(case, facts, records)
    findings += _order(case, facts)
    findings += _coverage(case, facts)
    findings += shared(case, facts, records)
    return findings


def _torch_nodes(kernel: Any, facts: GraphFacts, records: GraphRecords) -> tuple[list[str], list[str]]:
    """(torch's keys for this kernel, the post-grad nodes torch lists for them)."""
    keys = [kernel.id] if kernel.id in records.kernel_nodes else records.handles_of(kernel.name)
    home = facts.function_of(kernel.id)
    nodes = [n for key in keys for n in qualified(records.kernel_nodes.get(key, []), facts, home)]
    return keys, list(dict.fromkeys(nodes))


def _nodes_against_torch(case: str, facts: GraphFacts, records: GraphRecords) -> list[Finding]:
    out = []
    seen_keys: set[str] = set()
    gid = facts.graph.id
    for kernel in facts.graph.kernels:
        keys, theirs = _torch_nodes(kernel, facts, records)
        seen_keys.update(keys)
        ours = list(dict.fromkeys(kernel.post_grad_nodes))
        if not keys:
            if kernel.language == "extern" and not _has_handle(facts.graph.wrapper.source, kernel):
                out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED, NO_HANDLE,
                                   f"computes {ours}"))
            elif ours:
                out.append(Finding(case, gid, kernel.id, "nodes", PROBLEM, detail="torch logged no such kernel"))
            continue
        if set(ours) == set(theirs):
            out.append(Finding(case, gid, kernel.id, "nodes", EXACT))
            continue
        computed = [n for n in ours if not facts.is_view(n)]
        read_views = set().union(*(facts.consumed_views(n) for n in computed)) if computed else set()
        for name in theirs:
            if name in ours:
                continue
            rule, detail = _torch_only(name, kernel.id, facts, read_views)
            out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED if rule else PROBLEM, rule,
                               f"torch lists {name}: {detail}"))
        for name in ours:
            if name in theirs:
                continue
            if facts.is_view(name) and name in read_views:
                out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED, VIEW_READ, f"{name}: read by this kernel"))
            elif _view_of_its_call(name, ours, facts, records):
                out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED, VIEW_OF_CALL,
                                   f"{name}: torch traces it to the FX call of {facts.base_of(name)}, which this kernel "
                                   "computes"))
            elif _view_of_what_it_writes(name, ours, facts, records):
                out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED, VIEW_WRITTEN,
                                   f"{name}: no kernel reads it, torch lists it for none, this kernel writes "
                                   f"{facts.base_of(name)}"))
            elif _written_in_place(name, kernel, facts, records):
                out.append(Finding(case, gid, kernel.id, "nodes", ACCEPTED, IN_PLACE,
                                   f"{name}: a cat whose parts this kernel writes"))
            else:
                out.append(Finding(case, gid, kernel.id, "nodes", PROBLEM,
                                   detail=f"we list {name}, torch does not ({facts.nodes.get(name) and facts.nodes[name].target})"))
    for key in records.kernel_nodes:
        if key not in seen_keys and records.kernel_nodes[key]:
            out.append(Finding(case, gid, key, "nodes", PROBLEM, detail="a kernel torch logged that the capture lacks"))
    return out


def _view_of_its_call(name: str, ours: list[str], facts: GraphFacts, records: GraphRecords) -> bool:
    """``name`` is one output (``getitem``) of a call this kernel computes, or a view one of whose FX nodes, by
    torch's ``postToPre``, made the node it aliases too (the reshape a matmul ends with; where torch maps
    neither, as in a backward graph, the two were traced on the same stack), and this kernel computes that
    node."""
    base = facts.base_of(name)
    if not facts.is_view(name) or base not in ours or facts.is_view(base):
        return False
    node = facts.nodes[name]
    if node.target in ("operator.getitem", "_operator.getitem") and node.inputs == [base]:
        return True  # one output of the call itself
    theirs = [f for f in records.post_to_pre.get(name, []) if f]
    if theirs or records.post_to_pre.get(base):
        return bool(set(theirs) & set(records.post_to_pre.get(base, [])))
    stack = facts.nodes[name].stack  # torch maps neither (a backward graph): its stack trace tells the call
    return bool(stack) and stack == facts.nodes[base].stack


def _view_of_what_it_writes(name: str, ours: list[str], facts: GraphFacts, records: GraphRecords) -> bool:
    """``name`` is a view that no kernel reads (the graph returns it: the ``squeeze`` of a call's output) of
    a node this kernel computes, and torch lists it for no kernel: it stays where Inductor listed it, with
    the kernel writing what it views (rule 3)."""
    base = facts.base_of(name)
    if not facts.is_view(name) or base not in ours or facts.is_view(base):
        return False
    computing = [n for k in facts.graph.kernels for n in k.post_grad_nodes if not facts.is_view(n)]
    if any(name in facts.consumed_views(n) for n in computing):
        return False
    return not any(name in qualified(nodes, facts) for nodes in records.kernel_nodes.values())


def _written_in_place(name: str, kernel: Any, facts: GraphFacts, records: GraphRecords) -> bool:
    """``name`` is a ``cat`` torch lists for no kernel, and this kernel computes one of its inputs: Inductor
    writes the parts straight into the output's slices, so the cat has no kernel of its own."""
    node = facts.nodes.get(name)
    if node is None or not node.target.startswith("aten.cat."):
        return False
    if any(name in qualified(nodes, facts) for nodes in records.kernel_nodes.values()):
        return False
    mine = set(kernel.post_grad_nodes)
    return any(p in mine for i in node.inputs for p in facts.producers(i))


def _torch_only(name: str, kernel: str, facts: GraphFacts, read_views: set[str]) -> tuple[str, str]:
    """Why torch lists ``name`` for ``kernel`` although the capture does not (rule, detail); no rule: a problem."""
    if name not in facts.nodes:
        return "", "not a node of the post-grad graph"
    if facts.is_input(name) and not facts.is_control_flow(name):
        return GRAPH_INPUT, "a graph input"
    if facts.is_control_flow(name):
        return CONTROL_FLOW, "the higher-order op (or its subgraph) the wrapper runs"
    if facts.is_view(name):
        readers = [k for k in facts.computed_by.get(name, []) if k != kernel]
        return VIEW_READ, f"a view this kernel does not read (listed by {readers or 'no kernel'})"
    others = [k for k in facts.computed_by.get(name, []) if k != kernel]
    if not others:
        if not facts.is_computing(name):
            return CONTROL_FLOW, "computes no tensor"
        return "", "no kernel of the capture computes it"
    earlier = [other for other in others if facts.runs_before(other, kernel)]
    if earlier:
        recomputed = dataflow.needs_without_reading(name, facts.kernels[kernel], facts)
        if recomputed:
            return "", recomputed
        return INHERITED, f"computed by {earlier}, which run before this kernel"
    last = facts.last_call.get(kernel)
    late = [source for i in facts.nodes[name].inputs for source in facts.producers(i)
            if last is not None and facts.written_at.get(source, 0) > last]
    if late:
        return NOT_YET, f"its input {late[0]} is written at wrapper line {facts.written_at[late[0]]}, after this kernel"
    part = _later_part_needing(name, kernel, facts)
    if part:
        return LATER_PART, f"an input of {part[0]}, which this kernel computes only in part; {part[1]} computes the rest"
    if not dataflow.read_by(name, facts.kernels[kernel], facts):
        return TORCH_UNION, (f"nothing this kernel computes reads it, and {others} compute it later: torch gives every "
                             "buffer one lowering makes the origins of all the lowering's inputs")
    return "", f"the capture gives it to {others}, which do not all run before this kernel"


def _later_part_needing(name: str, kernel: str, facts: GraphFacts) -> tuple[str, str] | None:
    """(node, later kernel) when ``name`` feeds a node that ``kernel`` computes in part and a later kernel
    computes too (a scatter's copy of its input, then the scatter that needs ``name``)."""
    mine = [n for n, makers in facts.computed_by.items() if kernel in makers]
    for node in mine:
        later = [k for k in facts.computed_by[node] if k != kernel and facts.first_call.get(k, -1) > facts.first_call.get(kernel, -1)]
        if later and name in facts.ancestors(node):
            return node, later[0]
    return None


def _has_handle(wrapper: str, kernel: Any) -> bool:
    lines = wrapper.splitlines()
    return any(n >= 2 and "[Provenance debug handles]" in lines[n - 2] for n in kernel.wrapper_lines if n <= len(lines))


def _order(case: str, facts: GraphFacts) -> list[Finding]:
    """A kernel computes a node only if each of the node's inputs exists by then: computed by the same
    kernel, or by a kernel called before it."""
    out = []
    for kernel in facts.graph.kernels:
        for name in dict.fromkeys(kernel.post_grad_nodes):
            if not facts.is_computing(name) or _an_earlier_part(name, kernel.id, facts):
                continue
            for value in facts.nodes[name].inputs:
                sources = facts.producers(value)
                for source in sources:
                    makers = facts.computed_by.get(source, [])
                    if not makers or kernel.id in makers:
                        continue
                    if not any(facts.runs_before(m, kernel.id) for m in makers):
                        out.append(Finding(case, facts.graph.id, kernel.id, "order", PROBLEM,
                                           detail=f"{name} needs {source}, computed by {makers} only after this kernel"))
    return out


def _outer_lines(case: str, facts: GraphFacts) -> list[Finding]:
    """A kernel inside a higher-order op's subgraph (a ``cond`` branch) does not claim the line of the op
    (``torch.cond(...)``) unless one of its own nodes was written on that line."""
    runs: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for node in facts.nodes.values():
        if node.target.startswith("torch.ops.higher_order.") and node.user_line:
            for name in node.inputs:
                if facts.nodes.get(name) is not None and facts.nodes[name].op == "get_attr":
                    runs[name].add(tuple(node.user_line))
    out = []
    for kernel in facts.graph.kernels:
        home = facts.function_of(kernel.id)
        own = {tuple(facts.nodes[n].user_line) for n in kernel.post_grad_nodes
               if n in facts.nodes and facts.nodes[n].user_line}
        for line in runs.get(home or "", set()):
            if line in {tuple(u) for u in kernel.user_lines} and line not in own:
                out.append(Finding(case, facts.graph.id, kernel.id, "lines", PROBLEM,
                                   detail=f"claims {line[0]}:{line[1]}, the line of the op that runs its subgraph"))
    return out


def _an_earlier_part(name: str, kernel: str, facts: GraphFacts) -> bool:
    """``kernel`` computes ``name`` in part and another kernel computing it runs later (a scatter's copy of
    its input, then the scatter): only the last part needs every input."""
    return any(other != kernel and facts.first_call.get(other, -1) > facts.first_call.get(kernel, -1)
               for other in facts.computed_by.get(name, []))


def _coverage(case: str, facts: GraphFacts) -> list[Finding]:
    """Every computing post-grad node has a kernel, or nothing to compute."""
    out = []
    for name, node in facts.nodes.items():
        if facts.is_computing(name) and not facts.computed_by.get(name):
            why = _nothing_to_compute(name, facts)
            out.append(Finding(case, facts.graph.id, None, "coverage", ACCEPTED if why else PROBLEM,
                               NOTHING if why else "", f"post-grad node {name} ({node.target}) is computed by no "
                               f"kernel{': ' + why if why else ''}"))
    return out


def fx_coverage(case: str, graphs: list[tuple[Any, GraphRecords | None]]) -> list[Finding]:
    """Every FX call that computes a tensor reaches a kernel of one of the graphs made from its Dynamo graph
    (a training step's forward or backward), or has nothing to compute. ``graphs``: each captured graph
    with torch's records of it."""
    out = []
    by_dynamo: dict[Any, list[tuple[GraphFacts, GraphRecords | None]]] = defaultdict(list)
    for graph, records in graphs:
        by_dynamo[graph.dynamo_graph].append((GraphFacts(graph), records))
    for group in by_dynamo.values():
        mapped = {f for _, records in group if records is not None for names in records.post_to_pre.values() for f in names}
        first, _ = group[0]
        for fx in first.fx.values():
            if fx.op not in ("call_function", "call_method", "call_module"):
                continue
            if fx.shape is None or not (fx.dtype or "").startswith("torch."):
                continue  # not a tensor: a size, a Python scalar
            if fx.target in ("operator.getitem", "_operator.getitem"):
                continue  # picks one output of a call that returned several
            whys = [_fx_reach(facts.fx[fx.name], facts, mapped) for facts, _ in group if fx.name in facts.fx]
            if any(why is None for why in whys):
                continue  # a kernel computes it
            why = next((w for w in whys if w), "")
            out.append(Finding(case, first.graph.id, None, "coverage", ACCEPTED if why else PROBLEM, NOTHING if why else "",
                               f"FX node {fx.name} ({fx.target}) maps to no kernel{': ' + why if why else ''}"))
    return out


def _fx_reach(fx: Any, facts: GraphFacts, mapped: set[str]) -> str | None:
    """None when a kernel of this graph computes the FX node; else why it needs none here, or ""."""
    if fx.kernels:
        return None
    post_grad = [n for n in fx.post_grad if n in facts.nodes]
    if post_grad and not any(facts.is_computing(n) and not _nothing_to_compute(n, facts) for n in post_grad):
        return "only views, inputs, control flow or values with nothing to compute came of it"
    return "" if post_grad or fx.name in mapped else _computes_nothing(fx, facts)


def _nothing_to_compute(name: str, facts: GraphFacts) -> str:
    """Why a computing post-grad node needs no kernel, or "": its value is never used, it has no elements,
    or it only allocates (``empty``: no values to compute)."""
    node = facts.nodes[name]
    if facts.is_dead(name):
        return "its value is never used"
    if node.target.startswith(("aten.empty.", "aten.empty_strided.", "aten.new_empty")):
        return "an allocation: no values to compute"
    if facts.needless(name):
        return "it has no elements, or only feeds values with none"
    return ""


# FX calls that may leave no post-grad node because they compute nothing: views, copies and casts that
# turned out to be no-ops (a contiguous tensor made contiguous, float32 made float32), dropout in eval
_VIEW_CALLS = frozenset({"view", "reshape", "transpose", "permute", "expand", "expand_as", "unsqueeze", "squeeze",
                         "flatten", "unflatten", "t", "narrow", "select", "split", "chunk", "unbind", "view_as",
                         "detach", "alias", "movedim", "swapaxes", "__getitem__", "contiguous", "clone", "dropout",
                         "identity", "Identity", "Dropout"})
_CASTS = frozenset({"to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "bool"})


def _computes_nothing(fx: Any, facts: GraphFacts) -> str:
    """Why an FX call that left no post-grad node (and that torch maps to none) computes nothing, or ""."""
    name = fx.target.rsplit(".", 1)[-1]
    if not fx.users:
        return "its value is never used"
    if fx.name not in _live_fx(facts):  # read only by dead code (transformers' unused ``kv_arange = arange + offset``)
        return "its value reaches no output: only dead code reads it"
    if name in _VIEW_CALLS:
        return "a view or a copy that was a no-op"
    source = facts.fx.get(fx.inputs[0]) if fx.inputs else None
    if name in _CASTS and source is not None and source.dtype == fx.dtype:
        return f"a cast to the dtype it had ({fx.dtype})"
    same = [i for i in fx.inputs if i in facts.fx and facts.fx[i].shape == fx.shape and facts.fx[i].dtype == fx.dtype]
    if same:
        return f"returns its input {same[0]} unchanged (same shape and dtype, no post-grad node)"
    return ""


def shared(case: str, facts: GraphFacts, records: GraphRecords | None) -> list[Finding]:
    out = []
    for name, kernels in facts.computed_by.items():
        if len(kernels) < 2 or not facts.is_computing(name):
            continue
        logged = [k for k in kernels if _torch_nodes(facts.kernels[k], facts, records)[0]] if records else []
        if records is not None and logged and all(name in _torch_nodes(facts.kernels[k], facts, records)[1]
                                                  for k in logged):
            out.append(Finding(case, facts.graph.id, None, "shared", ACCEPTED, SPLIT, f"{name} in {kernels}"))
        else:
            out.append(Finding(case, facts.graph.id, None, "shared", PROBLEM, detail=f"{name} in {kernels}"))
    return out


def _fx_against_torch(case: str, facts: GraphFacts, records: GraphRecords) -> list[Finding]:
    """Each post-grad node's Dynamo FX nodes against torch's ``postToPre``: none of torch's may be missing;
    one more is accepted where torch maps that FX node to nothing (a rewrite folded it in) and it is no
    dead code. A write-back of a mutated input, which torch maps to nothing, may link only to the FX nodes
    torch maps the value it writes to."""
    out = []
    mapped = {f for names in records.post_to_pre.values() for f in names}
    live = _live_fx(facts)
    for name, theirs in records.post_to_pre.items():
        node = facts.nodes.get(name)
        theirs = [f for f in theirs if f]  # torch lists "" where a node's ancestor had no name
        if node is None:
            continue
        missing = [f for f in theirs if f not in node.fx]
        if missing:
            out.append(Finding(case, facts.graph.id, None, "fx", PROBLEM,
                               detail=f"{name}: torch's FX nodes {missing} missing from {node.fx}"))
        for extra in (f for f in node.fx if f not in theirs):
            if extra in mapped:
                out.append(Finding(case, facts.graph.id, None, "fx", PROBLEM,
                                   detail=f"{name}: also {extra}, which torch maps to {_pre_to_post(records, extra)}"))
            elif extra in facts.fx and extra not in live:
                out.append(Finding(case, facts.graph.id, None, "fx", PROBLEM,
                                   detail=f"{name}: also {extra}, dead code (nothing uses its value)"))
            else:
                out.append(Finding(case, facts.graph.id, None, "fx", ACCEPTED, REWRITE,
                                   f"{name}: also {extra}, which torch maps to no post-grad node"))
    for name, node in facts.nodes.items():
        if name in records.post_to_pre or not _is_write_back(node, facts):
            continue
        written = {f for i in node.inputs[1:] for p in facts.producers(i) for f in records.post_to_pre.get(p, [])}
        for f in node.fx:
            if f in written:
                out.append(Finding(case, facts.graph.id, None, "fx", ACCEPTED, WRITE_BACK,
                                   f"{name}: {f}, which torch maps the value it writes to"))
            else:
                out.append(Finding(case, facts.graph.id, None, "fx", PROBLEM,
                                   detail=f"{name} writes back {node.inputs[0]}: linked to {f}, which torch maps "
                                          f"{_pre_to_post(records, f) or 'to nothing'}, not to the value it writes "
                                          f"({sorted(written)})"))
    return out


def _is_write_back(node: Any, facts: GraphFacts) -> bool:
    """Functionalization's ``copy_`` of a new value into a graph input."""
    return (node.target.startswith("aten.copy_") and len(node.inputs) > 1 and facts.is_input(node.inputs[0]))


_OPERATORS_IN_PLACE = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor",
                       "ilshift", "irshift", "imatmul"}


def _live_fx(facts: GraphFacts) -> set[str]:
    """The FX nodes whose values reach the output or an in-place call (``p.add_``, ``x += 1``); worked out
    once a graph."""
    if facts.live_fx is None:
        facts.live_fx = _reach_live(facts)
    return facts.live_fx


def _reach_live(facts: GraphFacts) -> set[str]:
    def writes(target: str) -> bool:
        module, _, name = target.rpartition(".")
        if module in ("operator", "_operator"):
            return name in _OPERATORS_IN_PLACE
        return name.endswith("_") and not name.endswith("__")

    starts = [n.name for n in facts.fx.values() if n.op == "output" or (n.op != "placeholder" and writes(n.target))]
    return set(starts) & set(facts.fx) | _reach(starts, facts.fx)


def _kernel_fx(case: str, facts: GraphFacts, records: GraphRecords | None) -> list[Finding]:
    """A kernel's FX nodes hold torch's FX nodes (``postToPre``) of every post-grad node it lists: the two
    lists of a kernel tell one story."""
    if records is None:
        return []
    out = []
    for kernel in facts.graph.kernels:
        mine = set(kernel.fx_nodes)
        computed = [n for n in kernel.post_grad_nodes if facts.is_computing(n)]
        read = set().union(*(facts.consumed_views(n) for n in computed)) if computed else set()
        for name in dict.fromkeys(kernel.post_grad_nodes):
            left = [f for f in records.post_to_pre.get(name, []) if f and f in facts.fx and f not in mine]
            base = facts.base_of(name) if name in read else None
            if left and base is not None and not set(left) & set(records.post_to_pre.get(base, [])):
                out.append(Finding(case, facts.graph.id, kernel.id, "fx", ACCEPTED, VIEW_READ,
                                   f"{name}: a view of {base} it reads, which the call {left} made of its input "
                                   f"(computed by {sorted({k for f in left for p in _pre_to_post(records, f) for k in facts.computed_by.get(p, []) if k != kernel.id})})"))
            elif left:
                out.append(Finding(case, facts.graph.id, kernel.id, "fx", PROBLEM,
                                   detail=f"lists {name} but not its FX nodes {left} (torch's postToPre)"))
    return out


def _pre_to_post(records: GraphRecords, fx: str) -> list[str]:
    return [post for post, pre in records.post_to_pre.items() if fx in pre]


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_PROJECT = tuple(str(Path(__file__).resolve().parents[2] / part) + "/" for part in ("compiler", "explorer"))


def frames(trace: str) -> list[tuple[str, int]]:
    return [(file, int(line)) for file, line in _FRAME.findall(trace)]


def _lines_against_torch(case: str, facts: GraphFacts, records: GraphRecords) -> list[Finding]:
    """Each of a kernel's own lines (its nodes were traced there) is a frame of one of torch's stack traces
    for it; a kernel's first line that torch's traces lack is a problem. And each of torch's traces for the
    kernel that is the stack of a node the kernel lists has all its lines among the kernel's (but the
    lines of a higher-order op running it, rule 5)."""
    out = []
    mapped = {f for names in records.post_to_pre.values() for f in names}
    outer = {tuple(n.user_line) for n in facts.nodes.values() if n.target.startswith("torch.ops.higher_order.") and n.user_line}
    for kernel in facts.graph.kernels:
        keys = [k for k in ([kernel.id] if kernel.id in records.stack_traces else records.handles_of(kernel.name))
                if k in records.stack_traces]
        if not keys or not kernel.user_lines:
            continue
        traces = [[f for f in frames(trace) if not f[0].startswith(_PROJECT)]
                  for key in keys for trace in records.stack_traces[key]]
        theirs = {f for trace in traces for f in trace}
        if not theirs:
            continue
        own = {facts.nodes[n].user_line for n in kernel.post_grad_nodes if n in facts.nodes and facts.nodes[n].user_line}
        own |= {facts.fx[f].user_line for f in kernel.fx_nodes if f in facts.fx and facts.fx[f].user_line}
        unmapped = {tuple(facts.fx[f].user_line or ()) for f in kernel.fx_nodes if f in facts.fx and f not in mapped}
        ancestry = {tuple(facts.fx[f].user_line or ()) for n in kernel.post_grad_nodes
                    for f in records.post_to_pre.get(n, []) if f in facts.fx}
        computed = [n for n in kernel.post_grad_nodes if not facts.is_view(n)]
        read = set().union(*(facts.consumed_views(n) for n in computed)) if computed else set()
        viewed, of_calls = set(), set()
        for n in kernel.post_grad_nodes:
            if facts.is_view(n):
                lines = {tuple(facts.nodes[n].user_line or ())}
                lines |= {tuple(facts.fx[f].user_line or ()) for f in facts.nodes[n].fx if f in facts.fx}
                (viewed if n in read else of_calls).update(lines)
        for line in own:
            if tuple(line) in theirs:
                continue
            rule = (REWRITE if tuple(line) in unmapped else VIEW_READ if tuple(line) in viewed
                    else VIEW_OF_CALL if tuple(line) in of_calls else ANCESTRY if tuple(line) in ancestry else "")
            out.append(Finding(case, facts.graph.id, kernel.id, "lines", ACCEPTED if rule else PROBLEM, rule,
                               f"{line[0]}:{line[1]} is in none of torch's stack traces for it"))
        stacks = {tuple((f, line) for f, line, _ in facts.nodes[n].stack): n
                  for n in kernel.post_grad_nodes if n in facts.nodes and facts.nodes[n].stack}
        have = {tuple(line) for line in kernel.user_lines} | outer
        for trace in traces:
            node = stacks.get(tuple(trace))
            missing = [line for line in trace if line not in have]
            if node is None or not missing:
                continue
            have |= set(missing)
            where = ", ".join(f"{f}:{n}" for f, n in missing)
            elsewhere = [f for f in facts.nodes[node].fx if f not in kernel.fx_nodes]
            if node in read and elsewhere:
                out.append(Finding(case, facts.graph.id, kernel.id, "lines", ACCEPTED, VIEW_READ,
                                   f"{where}: the stack of {node}, a view it reads, is that of {elsewhere}, a call "
                                   "another kernel computes"))
            else:
                out.append(Finding(case, facts.graph.id, kernel.id, "lines", PROBLEM,
                                   detail=f"misses {where}, on the stack of {node} (torch's trace for it)"))
    return out


def outputs_equal(compiled: Any, eager: Any, atol: float = 1e-4, rtol: float = 1e-4) -> bool:
    flat_c, flat_e = _tensors(compiled), _tensors(eager)
    if len(flat_c) != len(flat_e):
        return False
    return all(a.shape == b.shape and torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol, equal_nan=True)
               if a.is_floating_point() or a.is_complex() else torch.equal(a, b) for a, b in zip(flat_c, flat_e))


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value.detach().to_dense() if value.layout != torch.strided else value.detach()]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    to_tuple = getattr(value, "to_tuple", None)
    return _tensors(to_tuple()) if callable(to_tuple) else []

