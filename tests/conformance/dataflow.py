"""What a kernel's claims imply for the values it reads and writes, checked against the wrapper.

A kernel that computes a node must write that node's value somewhere a later kernel (or the output)
reads it, or feed another node it computes; and a kernel that computes a node from an input it does
not compute itself must read that input from a buffer an earlier kernel wrote. The wrapper says which
buffers each call names, in which order; the post-grad graph says which node reads which. Neither is
the explorer's ownership rule, so a claim that breaks them is a problem:

- ``claims_feeding_nothing``: Inductor gives every buffer one lowering makes the origins of all its
  inputs (the query an attention realizes lists the mask's ``iota``); a kernel that keeps such a node
  claims a value it never computes: nothing after it reads it.
- ``needs_without_reading``: a node Inductor inlines into several kernels is computed by each; a
  kernel that computes a user of it, names no buffer that may hold it and is not credited with it lost
  its share.
"""

from __future__ import annotations

import re
from typing import Any

_BUFFER = re.compile(r"\bbuf\d+\b")
_ALIAS = re.compile(r"^\s*(buf\d+) = (?:reinterpret_tensor\()?(buf\d+)\b")


def call_buffers(facts: Any) -> dict[str, set[str]]:
    """Kernel id -> the buffers its calls name, with the buffers those alias (``buf4 =
    reinterpret_tensor(buf0, ...)``, ``buf7 = buf6[0]``): what it may read or write."""
    lines = facts.graph.wrapper.source.splitlines()
    base: dict[str, str] = {}
    for line in lines:
        match = _ALIAS.match(line)
        if match:
            base[match.group(1)] = base.get(match.group(2), match.group(2))
    out: dict[str, set[str]] = {}
    for kernel in facts.graph.kernels:
        calls = kernel.call_lines
        names = {name for n in calls if n <= len(lines) for name in _BUFFER.findall(lines[n - 1])}
        out[kernel.id] = names | {base[name] for name in names if name in base}
    return out


def _consumers(name: str, facts: Any, seen: set[str] | None = None) -> tuple[set[str], bool]:
    """(the computing nodes that read ``name``'s value, directly or through views; whether it reaches the
    graph's output or something no kernel computes, such as control flow)."""
    seen = seen if seen is not None else set()
    out: set[str] = set()
    escapes = False
    for user in facts.nodes[name].users if name in facts.nodes else ():
        if user in seen:
            continue
        seen.add(user)
        node = facts.nodes.get(user)
        if node is None or node.op == "output":
            escapes = True
        elif facts.is_view(user):
            more, out_too = _consumers(user, facts, seen)
            out |= more
            escapes = escapes or out_too
        elif facts.is_computing(user) and facts.computed_by.get(user):
            out.add(user)
        else:
            escapes = True  # control flow, a value no kernel computes: nothing to hold its claim against
    return out, escapes


def claims_feeding_nothing(facts: Any) -> list[tuple[str, str, str]]:
    """(kernel, node, why) for each computing node a kernel claims whose value nothing after it can read:
    every node reading it is computed only by kernels that all run before this one."""
    out = []
    for kernel in facts.graph.kernels:
        mine = set(kernel.post_grad_nodes)
        useful: dict[str, bool] = {}

        def feeds(name: str, path: frozenset[str] = frozenset()) -> bool:
            if name in useful:
                return useful[name]
            if any(other != kernel.id and _later(kernel.id, other, facts) for other in facts.computed_by.get(name, [])):
                return True  # a later kernel computes it too (the rest of a split op, a recomputation)
            consumers, escapes = _consumers(name, facts)
            if _writes(name, facts) or not facts.nodes[name].users:
                return True  # a write into an input (a write-back, ``index_put_``), or dead code: no reader to find
            answer = escapes or any(
                (user in mine and user not in path and feeds(user, path | {name}))
                or any(other != kernel.id and _later(kernel.id, other, facts) for other in facts.computed_by[user])
                for user in consumers)
            useful[name] = answer
            return answer

        for name in dict.fromkeys(kernel.post_grad_nodes):
            if facts.is_computing(name) and not feeds(name):
                users, _ = _consumers(name, facts)
                makers = sorted({k for u in users for k in facts.computed_by[u] if k != kernel.id})
                out.append((kernel.id, name, f"claims {name}, whose value only {sorted(users)} read, computed by "
                                             f"{makers} before this kernel runs (or by this kernel, for nothing later)"))
    return out


def _writes(name: str, facts: Any) -> bool:
    """An in-place ATen op (``aten.copy_.default``, ``aten.index_put_.default``): its effect is the write."""
    parts = facts.nodes[name].target.split(".")
    return len(parts) > 1 and parts[0] == "aten" and parts[1].endswith("_")


def _later(kernel: str, other: str, facts: Any) -> bool:
    """``other`` runs (some call of it) after the first call of ``kernel``, or in another function of the
    wrapper (control flow decides)."""
    if facts.function_of(kernel) != facts.function_of(other):
        return True
    first, last = facts.first_call.get(kernel), facts.last_call.get(other)
    return first is None or last is None or last > first or kernel == other


def may_hold(facts: Any) -> dict[str, set[str]]:
    """Buffer -> the post-grad nodes it may hold, from Inductor's IR: the node it holds where Inductor
    recorded one (``origin_node``), else any node Inductor lists for the IR node writing it. A buffer an
    in-place op writes into (an ``index_put_`` accumulating into zeros) first holds what its writer
    computes (the ``full`` of zeros), though Inductor records the op's final value."""
    out: dict[str, set[str]] = {}
    for ir in facts.graph.loop_ir:
        for buffer in ir.buffers:
            held = ir.buffer_nodes.get(buffer)
            if not held:
                out[buffer] = set(ir.origins) | set(ir.inherited_origins)
            elif held in facts.nodes and _writes(held, facts):
                out[buffer] = {held, *ir.origins}
            else:
                out[buffer] = {held}
    return out


def read_by(name: str, kernel: Any, facts: Any) -> list[str]:
    """The nodes ``kernel`` computes that read ``name``, directly or through views."""
    return [n for n in kernel.post_grad_nodes if facts.is_computing(n) and name in _inputs_through_views(n, facts)]


def needs_without_reading(name: str, kernel: Any, facts: Any) -> str:
    """Why ``kernel``, which torch credits with ``name`` while the capture gives it to other kernels, must
    compute it itself: a node it computes reads ``name``, and no buffer its calls name may hold ``name``
    (Inductor inlined it here too). "" when it may read it (or needs it for nothing)."""
    readers = [n for n in read_by(name, kernel, facts)
               if not any(other != kernel.id and facts.runs_before(other, kernel.id) for other in facts.computed_by[n])]
    if not readers:  # (a node an earlier kernel computes in part, a scatter's copy, has its inputs from there)
        return ""
    sources = [p for p in facts.producers(name)] or [name]
    holding = [b for b in facts.buffers.get(kernel.id, set()) if set(sources) & facts.may_hold.get(b, set())]
    if holding:
        return ""
    return (f"{readers[0]}, which it computes, reads {name}, and no buffer it names holds it: it computes "
            f"{name} again")


def _inputs_through_views(name: str, facts: Any) -> set[str]:
    out: set[str] = set()
    stack = list(facts.nodes[name].inputs)
    while stack:
        current = stack.pop()
        if current in out or current not in facts.nodes:
            continue
        out.add(current)
        if facts.is_view(current):
            stack.extend(facts.nodes[current].inputs)
    return out
