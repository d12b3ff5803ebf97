"""A profile's call tree in the terminal: your call site at the root, each line below it with its time.

A library model's stack is deep (the script's call, the model's ``forward``, each decoder layer, its
attention, the attention function), so the tree shows only the branches that carry time: at most
``BRANCHES`` children per line, none under ``SHARE`` of the root, and a line with one child shown on the
same row as it (``a.py:9 -> modeling_llama.py:471``) so that depth costs no rows.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from rich.tree import Tree

from ..model.formatting import where
from ..model.lines import CallNode

BRANCHES = 3
SHARE = 0.02


def call_tree(roots: list[CallNode], total_ms: float) -> Tree | None:
    """The rich Tree of ``roots`` (Profile.call_tree()); None when nothing carries time."""
    shown = [r for r in roots if r.total_ms > 0][:BRANCHES]
    if not shown:
        return None
    top = Tree(Text("where the time went, by the lines that called each op (total / self ms per run)", style="bold"),
               guide_style="dim")
    floor = SHARE * sum(r.total_ms for r in roots)
    for root in shown:
        _add(top, root, total_ms, floor)
    return top


def _add(parent: Tree, node: CallNode, total_ms: float, floor: float) -> None:
    chain = [node]
    while len(_worth(chain[-1], floor)) == 1 and chain[-1].self_ms <= floor:
        chain.append(_worth(chain[-1], floor)[0])
    last = chain[-1]
    shown = chain if len(chain) <= 3 else [chain[0], None, chain[-1]]
    label = Text(" -> ".join(where(n.where) if n is not None else f"({len(chain) - 2} calls)" for n in shown))
    share = f" ({last.total_ms / total_ms:.0%})" if total_ms else ""
    label.append(f"  {last.total_ms:.3f} / {last.self_ms:.3f}{share}", style="cyan")
    branch = parent.add(label)
    for child in _worth(last, floor)[:BRANCHES]:
        _add(branch, child, total_ms, floor)


def _worth(node: CallNode, floor: float) -> list[CallNode]:
    return [child for child in node.children.values() if child.total_ms > floor]


def rendered(p: Any) -> Tree | None:
    """The call tree of profile ``p``, or None when it is not in a compilation (nothing to read lines from)."""
    if p.compilation is None:
        return None
    return call_tree(p.call_tree(), p.attributed_ms)
