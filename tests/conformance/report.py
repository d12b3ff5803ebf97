"""The conformance report: kernels compared, exact, accepted by a rule, problems; as text and markdown."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import checks
from .checks import CaseResult

# What each rule accepts, as docs/ownership.md names it (the report's table of accepted differences).
RULES = {
    checks.INHERITED: "torch lists an input's producer nodes; an earlier kernel computes them (rule 1)",
    checks.NOT_YET: "torch lists a node whose input is written only after the kernel runs (rule 1)",
    checks.LATER_PART: "torch lists an input of an op with the op's first part (a scatter's copy) (rule 1)",
    checks.SPLIT: "several kernels compute one op in parts or inline it again, and torch lists it for each (rule 1)",
    checks.VIEW_READ: "a view is listed by the kernels that read it, with its line (rule 3)",
    checks.REWRITE: "an FX node a pattern rewrite folded in: torch maps it to no post-grad node (rule 4)",
    checks.ANCESTRY: "a line of an FX node torch's own postToPre maps to a node the kernel computes (rule 5)",
    checks.CONTROL_FLOW: "a higher-order op, its subgraph, or a value that is not a tensor: no kernel computes it",
    checks.GRAPH_INPUT: "a graph input torch lists for a kernel that copies it",
    checks.NO_HANDLE: "an extern call Inductor writes without a provenance handle: a kernel torch's map lacks",
    checks.NOTHING: "nothing to compute: a view, a no-op copy or cast, dead code, an allocation, no elements",
    checks.IN_PLACE: "a cat whose parts the kernel writes into the output's slices: the cat has no code (rule 2)",
    checks.VIEW_WRITTEN: "a view no kernel reads (a graph output) stays with the kernel writing what it views, "
                         "where torch lists it for no kernel (rule 3)",
    checks.VIEW_OF_CALL: "a view torch traces to the FX call of the node it aliases goes with that node's kernel (rule 3)",
    checks.WRITE_BACK: "a mutated input's write-back, which torch maps to nothing, links to the value it writes",
    checks.TORCH_UNION: ("torch's mistake: it lists a node of another input of the lowering that made the kernel's "
                         "buffer (a layout copy credited with batch norm), which nothing the kernel computes reads"),
    "random": "outputs drawn from torch's RNG or uninitialized memory, which compiled code fills differently",
}


@dataclass
class Summary:
    cases: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    kernels: int = 0
    compared: int = 0  # kernels torch logged a node list for
    exact: int = 0
    accepted: int = 0
    problem_kernels: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    problems: list[checks.Finding] = field(default_factory=list)
    seconds: float = 0.0


def summarize(results: list[CaseResult]) -> Summary:
    summary = Summary()
    for result in results:
        if result.error:
            summary.skipped[result.error.split(":", 1)[-1].split("(")[0].strip()] += 1
            continue
        summary.cases += 1
        summary.kernels += result.kernels
        summary.seconds += result.seconds
        verdicts: dict[tuple[str, str], set[str]] = defaultdict(set)
        for finding in result.findings:
            if finding.verdict == checks.ACCEPTED:
                summary.rules[finding.rule] += 1
            elif finding.verdict == checks.PROBLEM:
                summary.problems.append(finding)
            if finding.kernel is not None and finding.check in ("nodes", "fx", "lines", "order"):
                verdicts[(finding.graph, finding.kernel)].add(finding.verdict)
        for found in verdicts.values():
            if checks.PROBLEM in found:
                summary.problem_kernels += 1
            elif checks.ACCEPTED in found:
                summary.accepted += 1
            else:
                summary.exact += 1
        summary.compared += len(verdicts)
    return summary


def text(summary: Summary) -> str:
    return (f"{summary.cases} cases ({sum(summary.skipped.values())} skipped), {summary.kernels} kernels, "
            f"{summary.compared} compared with torch's records: {summary.exact} exact, {summary.accepted} accepted by "
            f"a rule, {summary.problem_kernels} with problems; {len(summary.problems)} problem findings")


def markdown(sets: dict[str, Summary], header: str) -> str:
    lines = [header, "",
             "| set | cases | skipped | kernels | compared | exact | accepted by rule | with problems | problem findings |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, s in sets.items():
        lines.append(f"| {name} | {s.cases} | {sum(s.skipped.values())} | {s.kernels} | {s.compared} | {s.exact} | "
                     f"{s.accepted} | {s.problem_kernels} | {len(s.problems)} |")
    rules: Counter[str] = sum((s.rules for s in sets.values()), Counter())
    lines += ["", "Differences from torch's records, each accepted by a rule of [the ownership rule](ownership.md):", "",
              "| rule | findings | what it accepts |", "| --- | ---: | --- |"]
    lines += [f"| {rule} | {count} | {RULES.get(rule, '')} |" for rule, count in rules.most_common()]
    problems = [p for s in sets.values() for p in s.problems]
    lines += ["", "## Problems", ""]
    lines += [f"- `{p.case}` {p.graph}/{p.kernel or '-'} [{p.check}]: {p.detail}" for p in problems] or ["None."]
    skipped: Counter[str] = sum((s.skipped for s in sets.values()), Counter())
    if skipped:
        lines += ["", "## Not compared", ""]
        lines += [f"- {count} x {reason}" for reason, count in skipped.most_common()]
    return "\n".join(lines) + "\n"
