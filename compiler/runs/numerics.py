"""c.check_numerics(): every kernel's output against eager, and the first kernel that diverges.

The compiled function runs once, on clones of its inputs, while every kernel call of the wrapper is
observed (compiler/_torch/kernel_calls.py): after a call returns, the buffers it wrote are copied. The
inputs of every compiled graph call are copied too, and the graph's post-grad ATen program is then run
node by node in eager PyTorch on them (compiler/runs/reference.py). A buffer is compared with the
value of the post-grad node it holds (Inductor's ``origin_node``, kept as ``LoopIRNode.buffer_nodes``).

Errors are also computed against a float64 run of the same nodes, so a report says whether a kernel
that disagrees with eager is closer to the exact result than eager is (the common, benign case when a
fused kernel keeps bfloat16 intermediates in float32). That run keeps no values: each node's float64
value meets the buffers compared with it as it is computed (``reference.stream_values``); kept whole, it
held 70 GB of a 7B model's check on an H200 and made its first call twice as slow as the next.

That comparison gives each buffer its *propagated* error: the eager run starts from the graph's inputs,
so a buffer's error holds the rounding of every kernel before it, and a bfloat16 matmul that sums
rounding its inputs carried within tolerance leaves tolerance itself. Each buffer also gets its *local*
error: the graph runs eagerly once more where every node the compiled program kept a buffer of takes
that buffer's value (``reference.on_own_inputs``), so a kernel's nodes run on the values the compiled
program gave the kernel, and an extern kernel's op runs again on the very arguments it was called with.
The first divergent kernel is the first whose local error leaves tolerance: a matmul that only sums
rounding from before is not it. Local errors are computed where the propagated ones leave tolerance, so
a program within tolerance is not run a third time. The buffers are the copies the observed run already
made; the figures are read back once a graph call and once at the end.

Default tolerances, per dtype of the buffer (``|compiled - reference| <= atol + rtol * |reference|``
element by element): float64 1e-7/1e-7, float32 1e-4/1e-5 (fused kernels reassociate sums), float16
1e-3/1e-5, bfloat16 1.6e-2/1e-5 (torch.testing's); integer and bool buffers must be equal.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch

from .._torch import kernel_calls, runtime
from ..model import kernel_io, slots
from ..model.keys import kernel_keys
from ..model.numerics import BufferCheck, KernelNumerics, NumericsReport
from . import package_numerics, reference, replay, substitution

REFERENCES = ("eager", "float64")
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {  # dtype -> (rtol, atol)
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
}


# ------------------------------------------------------------------------------------------ comparing


def tolerance(dtype: torch.dtype, rtol: float | None, atol: float | None) -> tuple[float, float]:
    default = TOLERANCES.get(dtype, (0.0, 0.0))
    return (default[0] if rtol is None else rtol, default[1] if atol is None else atol)


def _rel(worst: float, scale: float) -> float:
    """The largest error relative to the reference's largest magnitude."""
    return worst / scale if scale > 0 else (0.0 if worst == 0 else math.inf)


def _largest(values: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
    """The largest of ``values`` (all >= 0) where ``where`` holds, 0 where it holds nowhere: on the device,
    without the synchronising boolean indexing."""
    return torch.where(where, values, torch.zeros((), dtype=values.dtype, device=values.device)).max()


class Readback:
    """Figures of many comparisons, reduced on their devices and read back together: one synchronisation
    a device for all of them. Reading each buffer's figures as it was compared stalled the host once a
    buffer (about 800 a 24-block training step), and the local comparisons would have doubled that."""

    def __init__(self) -> None:
        self._pending: list[tuple[torch.Tensor, Callable[[list[float]], None]]] = []

    def add(self, figures: list[torch.Tensor], fill: Callable[[list[float]], None]) -> None:
        """``fill`` gets the figures' values, in order, when they are read."""
        self._pending.append((torch.stack([f.double() for f in figures]), fill))

    def read(self) -> None:
        by_device: dict[torch.device, list[tuple[torch.Tensor, Callable[[list[float]], None]]]] = defaultdict(list)
        for values, fill in self._pending:
            by_device[values.device].append((values, fill))
        self._pending = []
        for pending in by_device.values():
            flat = torch.cat([values for values, _ in pending]).tolist()
            at = 0
            for values, fill in pending:
                fill(flat[at:at + len(values)])
                at += len(values)


def _outside(a64: torch.Tensor, b64: torch.Tensor, rtol: float, atol: float) -> list[torch.Tensor]:
    """The fraction of elements outside tolerance, the largest finite error, and the largest finite
    magnitude of the reference where both sides are finite (what max_rel is relative to). NaN against
    NaN and an infinity against the same one agree (``isclose``)."""
    diff = (a64 - b64).abs()
    finite = a64.isfinite() & b64.isfinite()
    outside = ~torch.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True)
    return [outside.double().mean(), _largest(diff, finite), _largest(b64.abs(), finite)]


def _unequal(a: torch.Tensor, b: torch.Tensor) -> list[torch.Tensor]:
    """Integer and bool buffers: the fraction of elements that differ, and the largest difference."""
    return [(a.to(b.dtype) != b).double().mean(), (a.double() - b.double()).abs().max()]


def compare(check: BufferCheck, compiled: torch.Tensor, ref: torch.Tensor, rtol: float | None, atol: float | None,
            readback: Readback | None = None) -> None:
    """Fill ``check`` with the errors of ``compiled`` against ``ref``, on the compiled buffer's device:
    copying every buffer of a GPU model to the host took seconds a check. Every figure is reduced on the
    device; given a ``readback``, they are read with the report's others (its ``read()`` fills
    ``check``), else at once."""
    check.dtype, check.shape = str(compiled.dtype), list(compiled.shape)
    if list(ref.shape) != list(compiled.shape):
        check.note = f"the buffer is a view of shape {list(compiled.shape)}, the node's value has {list(ref.shape)}"
        return
    check.compared = True
    a, b = compiled.detach(), ref.detach().to(compiled.device)
    floating = a.is_floating_point() or a.is_complex()
    check.rtol, check.atol = tolerance(compiled.dtype, rtol, atol) if floating else (0.0, 0.0)
    if not a.numel():  # nothing differs
        check.mismatched = check.max_abs = check.max_rel = 0.0
        check.ok = True
        if floating:
            check.nan = check.inf = (0, 0)
        return
    now = readback is None
    readback = Readback() if readback is None else readback
    if not floating:
        def fill_exact(values: list[float]) -> None:
            check.mismatched, check.max_abs = values
            check.max_rel = check.max_abs
            check.ok = check.mismatched == 0

        readback.add(_unequal(a, b), fill_exact)
    else:
        a64, b64 = a.double(), b.double()

        def fill(values: list[float]) -> None:
            nan_a, nan_b, inf_a, inf_b, mismatched, max_abs, scale = values
            check.nan, check.inf = (int(nan_a), int(nan_b)), (int(inf_a), int(inf_b))
            check.mismatched, check.max_abs = mismatched, max_abs
            check.max_rel = _rel(max_abs, scale)
            check.ok = mismatched == 0

        readback.add([a64.isnan().sum(), b64.isnan().sum(), a64.isinf().sum(), b64.isinf().sum(),
                      *_outside(a64, b64, check.rtol, check.atol)], fill)
    if now:
        readback.read()


def compare_float64(check: BufferCheck, compiled: torch.Tensor, eager: torch.Tensor, exact: torch.Tensor,
                    readback: Readback) -> None:
    """Fill ``check``'s distances from the exact result: ``compiled`` and ``eager`` against ``exact``
    (the node's float64 value), each relative to its largest magnitude, where all three are finite."""
    if not check.compared or not compiled.is_floating_point() or list(exact.shape) != list(compiled.shape):
        return
    if not compiled.numel():
        check.compiled_vs_float64 = check.eager_vs_float64 = 0.0
        return
    a64 = compiled.detach().double()
    b64 = eager.detach().to(compiled.device, torch.float64)
    e64 = exact.detach().to(compiled.device, torch.float64)
    both = a64.isfinite() & b64.isfinite() & e64.isfinite()

    def fill(values: list[float]) -> None:
        compiled_worst, eager_worst, scale = values
        check.compiled_vs_float64 = _rel(compiled_worst, scale)
        check.eager_vs_float64 = _rel(eager_worst, scale)

    readback.add([_largest((a64 - e64).abs(), both), _largest((b64 - e64).abs(), both), _largest(e64.abs(), both)], fill)


def compare_local(check: BufferCheck, compiled: torch.Tensor, local: torch.Tensor, readback: Readback) -> None:
    """Fill ``check``'s local figures: ``compiled`` against ``local``, the value its node has when run on
    the compiled program's own inputs to it, within the tolerance ``compare`` gave ``check``."""
    a, b = compiled.detach(), local.detach().to(compiled.device)
    if not a.numel():
        check.local_mismatched = check.local_max_abs = check.local_max_rel = 0.0
        check.local_ok = True
        return
    floating = a.is_floating_point() or a.is_complex()

    def fill(values: list[float]) -> None:
        check.local_mismatched, check.local_max_abs = values[:2]
        check.local_max_rel = _rel(check.local_max_abs, values[2]) if floating else check.local_max_abs
        check.local_ok = check.local_mismatched == 0

    rtol, atol = check.rtol or 0.0, check.atol or 0.0
    readback.add(_outside(a.double(), b.double(), rtol, atol) if floating else _unequal(a, b), fill)


# ------------------------------------------------------------------------------------------ running


@dataclass
class _GraphCall:
    graph: str
    inputs: list[Any]
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # kernel id -> calls so far
    pending_externs: list[Any] = field(default_factory=list)  # extern kernels not yet seen in this call
    writes: list[tuple[str, int, dict[str, torch.Tensor]]] = field(default_factory=list)  # kernel, call, buffers
    extern_args: dict[str, list[Any]] = field(default_factory=dict)  # extern kernel -> the arguments it was given
    unchanging: set[int] = field(default_factory=set)  # storages of the inputs no kernel of the call writes


def _copy(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _storage(value: torch.Tensor) -> int:
    return value.untyped_storage().data_ptr()


class _Observer:
    """Copies graph inputs, the buffers each kernel call wrote and the arguments each extern call was
    given, while the compiled function runs once."""

    def __init__(self, c: Any, mutated: dict[str, set[str]]) -> None:
        self.graphs = {g.id: g for g in c.graphs}
        self.calls = {(g.id, k.id): kernel_io.kernel_calls(k, g.wrapper.source) for g in c.graphs for k in g.kernels}
        self.externs = {g.id: sorted((k for k in g.kernels if k.language == "extern"),
                                     key=lambda k: k.wrapper_lines[0] if k.wrapper_lines else 0) for g in c.graphs}
        self.written_inputs = {g.id: _written_inputs(g, self.calls, mutated.get(g.id)) for g in c.graphs}
        self.current: dict[str, _GraphCall] = {}
        self.order: list[_GraphCall] = []

    def graph_call(self, label: str, invoke: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        inputs, written = args[0], self.written_inputs[label]
        record = _GraphCall(label, [_copy(x) for x in inputs], pending_externs=list(self.externs[label]),
                            unchanging=set() if written is None else {
                                _storage(x) for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and i not in written})
        self.current[label] = record
        self.order.append(record)
        return invoke()

    def kernel_call(self, label: str, invoke: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        graph, _, name = label.partition("/")
        record = self.current.get(graph)
        if record is not None and name.startswith("extern:"):
            # what it reads, before it runs (an extern may write in place): the local error of an extern is
            # its op run again on these; an input nothing writes is the run's own tensor, not a copy
            given = [a if not isinstance(a, torch.Tensor) or _storage(a) in record.unchanging else _copy(a) for a in args]
        result = invoke()
        if record is None:
            return result
        if name.startswith("extern:"):
            function = name[len("extern:"):]
            kernel = next((k for k in record.pending_externs if kernel_io.extern_function(k) == function), None)
            if kernel is None:
                return result
            record.pending_externs.remove(kernel)
            out = kwargs.get("out", result)
            calls = self.calls[(graph, kernel.id)]
            buffer = calls[0].keyword_output if calls else None
            if isinstance(out, torch.Tensor) and buffer:
                record.writes.append((kernel.id, 0, {buffer: _copy(out)}))
                record.extern_args[kernel.id] = given
            return result
        index = record.calls[name]
        record.calls[name] += 1
        calls = self.calls[(graph, name)]
        if calls:  # a call site inside a loop's body runs once per iteration: the sites repeat
            written = {buffer: _copy(args[pos]) for pos, buffer in calls[index % len(calls)].outputs.items()
                       if pos < len(args) and isinstance(args[pos], torch.Tensor)}
            record.writes.append((name, index, written))
        return result


def _written_inputs(graph: Any, calls: dict[tuple[str, str], list[Any]], mutated: set[str] | None) -> set[int] | None:
    """Positions of the graph's inputs that a kernel call writes or an op of the graph mutates (``mutated``:
    ``reference.mutated_inputs``); the rest keep their values through the call. None, all of them, without
    its post-grad graph."""
    gm = graph.post_grad.module
    if gm is None or mutated is None:
        return None
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    written = set(mutated)
    for kernel in graph.kernels:
        for call in calls.get((graph.id, kernel.id), ()):
            written.update(call.outputs.values())
            if call.keyword_output:
                written.add(call.keyword_output)
    return {i for i, name in enumerate(names) if name in written}


def _run_observed(c: Any, edits: Mapping[Any, str] | None, mutated: dict[str, set[str]]) -> tuple[_Observer, list[str]]:
    observer = _Observer(c, mutated)
    found = substitution.substitutes(c, edits, "check_numerics(edits=...)")
    namespaces, prefixes, graph_labels = [], {}, []
    for graph in c.graphs:
        if graph.compiled_fn is None:
            continue
        names = [k.name for k in graph.kernels if k.language != "extern"]
        namespace = runtime.wrapper_globals(graph.compiled_fn, names + ["extern_kernels"])
        namespaces.append((namespace, {n: f"{graph.id}/{n}" for n in names}))
        prefixes[id(namespace)] = f"{graph.id}/extern:"
        graph_labels.append((graph.compiled_fn, graph.id))
    with substitution.swapped(c, found) as edited:
        replay.run_on_copies(c, kernel_calls.observed_graph_calls(graph_labels, observer.graph_call),
                             kernel_calls.observed_kernels(namespaces, observer.kernel_call, prefixes))
    return observer, edited


def _observe(c: Any, edits: Mapping[Any, str] | None, mutated: dict[str, set[str]]) -> tuple[list[_GraphCall], dict[tuple[str, str], list[Any]],
                                                                list[str], list[str]]:
    """Each graph call's inputs and the buffers each kernel call wrote; the wrapper's call sites of each
    kernel; the kernels edited; notes. An AOTInductor package is observed through a copy that saves its
    kernels' tensors (compiler/runs/package_numerics.py), a Python wrapper by watching its calls."""
    if c.export is None:
        observer, edited = _run_observed(c, edits, mutated)
        return observer.order, observer.calls, edited, []
    if edits:
        raise ValueError("check_numerics(edits=...) replaces kernels in the Python wrapper; a package's kernels are "
                         "compiled into its library. Try the edits on explorer.compile(model, *inputs) of the same model")
    observed = package_numerics.observe(c)
    return [_GraphCall(c.graphs[0].id, observed.inputs, writes=observed.writes)], {}, [], observed.notes


# ------------------------------------------------------------------------------------------ the report


def _reference(graph: Any, inputs: list[Any], written: set[str], upcast: bool) -> tuple[dict[str, Any] | None, str]:
    """The graph's node values, kept, in eager (float64 when ``upcast``), or None and a note saying why
    there are none."""
    gm = graph.post_grad.module
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(inputs):
        return None, (f"{graph.id}: the graph has {len(placeholders)} inputs but was called with {len(inputs)}; "
                      "its kernels were not compared")
    try:
        return reference.node_values(gm, inputs, upcast=upcast, written=written), ""
    except Exception as error:  # an op with no eager implementation: say so, keep the rest of the report
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        run = "in float64" if upcast else "eagerly"
        return None, (f"{graph.id}: running its post-grad graph {run} failed ({type(error).__name__}: {first}); "
                      "its kernels were not compared")


def _float64_distances(graph: Any, inputs: list[Any], written: set[str], kept_upcast: bool,
                       wanted: dict[str, dict[int, list[tuple[torch.Tensor, BufferCheck, torch.Tensor]]]],
                       readback: Readback) -> str:
    """Each compared buffer's distance from the exact result, and eager's: the graph runs once more, in
    the run the comparison did not keep (float64 after an eager reference, eager after a float64 one),
    and each node's value meets the buffers of it in ``wanted`` (node -> run -> (compiled value, check,
    the kept reference's value)) as it is computed, then is dropped. A buffer of a loop's body called
    more times than the node ran meets the node's last value. Returns a note when that run fails (the
    buffers it had not reached have no distances): flash and memory-efficient attention on a GPU have no
    float64 kernel."""
    latest: dict[str, torch.Tensor] = {}

    def meet(entries: list[tuple[torch.Tensor, BufferCheck, torch.Tensor]], value: torch.Tensor) -> None:
        for compiled, item, kept in entries:
            eager, exact = (value, kept) if kept_upcast else (kept, value)
            compare_float64(item, compiled, eager, exact, readback)

    def seen(name: str, run: int, value: Any) -> None:
        runs = wanted.get(name)
        if runs and isinstance(value, torch.Tensor):
            meet(runs.pop(run, []), value)
            if runs:  # later runs are wanted: the last value serves those the node does not reach
                latest[name] = value

    try:
        reference.stream_values(graph.post_grad.module, inputs, seen, upcast=not kept_upcast, written=written)
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        run = "eagerly" if kept_upcast else "in float64"
        return (f"{graph.id}: running its post-grad graph {run} failed ({type(error).__name__}: {first}); "
                f"its kernels are compared against {'float64' if kept_upcast else 'eager'} only")
    for name, value in latest.items():
        for entries in wanted[name].values():
            meet(entries, value)
    return ""


@slots.check_numerics.fill
def check(c: Any, reference_kind: str = "eager", rtol: float | None = None, atol: float | None = None,
          edits: Mapping[Any, str] | None = None) -> NumericsReport:
    _check_arguments(c, reference_kind, rtol, atol)
    mutated = {g.id: reference.mutated_inputs(g.post_grad.module) for g in c.graphs if g.post_grad.module is not None}
    order, call_sites, edited, notes = _observe(c, edits, mutated)
    graphs = {g.id: g for g in c.graphs}
    keys = kernel_keys(c)
    rows: dict[str, KernelNumerics] = {}
    random_of = {g.id: reference.random_nodes(g.post_grad.module) for g in c.graphs if g.post_grad.module is not None}
    buffer_nodes = {g.id: {**reference.input_updates(g.post_grad.module),
                           **{b: n for ir in g.loop_ir for b, n in ir.buffer_nodes.items()}}
                    for g in c.graphs if g.post_grad.module is not None}
    inputs_of = {g.id: {n.name for n in g.post_grad.nodes if n.op == "placeholder"} for g in c.graphs}
    ran: dict[str, set[str]] = defaultdict(set)  # graph -> the nodes that ran in its eager reference
    readback = Readback()
    for record in order:
        graph = graphs[record.graph]
        upcast = reference_kind == "float64"
        values, note = _reference(graph, record.inputs, mutated.get(graph.id, set()), upcast)
        if note:
            notes.append(note)
        ran[graph.id].update(values or ())
        kept: dict[tuple[str, int], list[tuple[torch.Tensor, BufferCheck]]] = defaultdict(list)  # node, run -> buffers
        given: dict[tuple[str, int], list[Any]] = {}  # node, run -> the arguments its extern kernel was called with
        # node -> run -> the buffers to measure against float64, each with its reference value
        wanted: dict[str, dict[int, list[tuple[torch.Tensor, BufferCheck, torch.Tensor]]]] = defaultdict(lambda: defaultdict(list))
        for kernel_id, index, written in record.writes:
            kernel = graph.kernel(kernel_id)
            iteration = index // max(1, len(call_sites.get((graph.id, kernel_id), ())))  # of a loop its call sites are in
            key = keys[(graph.id, kernel_id)]
            row = rows.setdefault(key, KernelNumerics(key, graph.id, kernel_id, kernel.language, 0))
            row.calls = max(row.calls, index + 1)
            for buffer, value in written.items():
                node = buffer_nodes.get(graph.id, {}).get(buffer)
                item = BufferCheck(buffer, node, index, dtype=str(value.dtype), shape=list(value.shape))
                row.buffers.append(item)
                item.note = "no reference (see the report's notes)" if values is None else _no_reference(
                    buffer, node, iteration, values, inputs_of[graph.id], random_of.get(graph.id, {}))
                if not item.note:
                    ref = _call_value(values, node, iteration)
                    compare(item, value, ref, rtol, atol, readback)
                    if item.compared:
                        kept[(node, iteration)].append((value, item))
                        wanted[node][iteration].append((value, item, ref))
                    if kernel_id in record.extern_args:
                        given[(node, iteration)] = record.extern_args[kernel_id]
        del values  # only the references ``wanted`` holds stay
        if wanted:
            note = _float64_distances(graph, record.inputs, mutated.get(graph.id, set()), upcast, wanted, readback)
            if note:
                notes.append(note)
        del wanted  # the local run keeps no values: only one graph's are held at a time
        readback.read()  # the local errors are computed where the propagated ones leave tolerance
        if any(item.ok is False for buffers in kept.values() for _, item in buffers):
            note = _local_errors(graph, record.inputs, mutated[graph.id], kept, given, reference_kind == "float64",
                                 readback)
            if note:
                notes.append(note)
    readback.read()
    _add_unobserved(c, keys, rows, random_of, ran)
    first = next((key for key, row in rows.items() if row.introduces_error), None)
    report = NumericsReport(reference_kind, c.device, rtol, atol, rows, first, notes=notes, edited=edited)
    _link(report, c)
    return report


def _check_arguments(c: Any, reference_kind: str, rtol: float | None, atol: float | None) -> None:
    """Refuse, before anything runs, a compilation check_numerics cannot run or a reference or tolerance it
    does not know."""
    if c.export is None:
        replay.check_python_wrapper(c, "check_numerics()")
    if reference_kind not in REFERENCES:
        raise ValueError(f"check_numerics(reference={reference_kind!r}): use one of {REFERENCES}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0):
            raise ValueError(f"check_numerics({name}={value!r}): give a number >= 0, or None for the per-dtype default")
    replay.check_runnable(c, "check_numerics()")


def _no_reference(buffer: str, node: str | None, iteration: int, values: dict[str, list[Any]], inputs: set[str],
                  random: dict[str, str]) -> str:
    """Why a buffer a kernel wrote has no reference value to be compared with ("" when it has one): ``node``,
    the post-grad node holding its value; ``values``, the reference run's; ``inputs``, the graph's
    placeholders; ``random``, its random nodes."""
    if node is None and buffer in inputs:
        return "a graph input the kernel updates in place, with no copy back in the graph"
    if node is None:
        return ("no post-grad node holds this buffer's value (an intermediate Inductor introduced, "
                "such as one output of a fused multi-output reduction)")
    if node in random:
        return f"depends on the random op {random[node]}: eager and the compiled kernel draw different numbers"
    if node not in values:
        return f"the node {node} did not run in the eager reference (a branch that was not taken)"
    if not isinstance(_call_value(values, node, iteration), torch.Tensor):
        return f"the node {node} does not produce one tensor"
    return ""


def _add_unobserved(c: Any, keys: dict[tuple[str, str], str], rows: dict[str, KernelNumerics],
                    random_of: dict[str, dict[str, str]], ran: dict[str, set[str]]) -> None:
    """A row for each kernel that never ran (or was not observed), saying why it has nothing compared."""
    for graph in c.graphs:
        for kernel in graph.kernels:
            key = keys[(graph.id, kernel.id)]
            if key not in rows:
                note = _unobserved(kernel, random_of.get(graph.id, {}), ran.get(graph.id))
                rows[key] = KernelNumerics(key, graph.id, kernel.id, kernel.language, 0, [BufferCheck("-", None, 0, note=note)])


def _local_errors(graph: Any, inputs: list[Any], written: set[str],
                  kept: dict[tuple[str, int], list[tuple[torch.Tensor, BufferCheck]]],
                  given: dict[tuple[str, int], list[Any]], upcast: bool, readback: Readback) -> str:
    """Compare every kept buffer whose propagated error leaves tolerance with its node run on the compiled
    program's own values (its kernel's local error), in one more eager run of the graph: ``kept`` maps
    (node, run) to the buffers holding its compiled value, ``given`` to the arguments of the extern
    kernel computing it. A buffer within tolerance of eager gets no local error: whatever its kernel did
    leaves the program within tolerance there, and a program within tolerance is not run again. An
    extern kernel's inputs may be buffers no node holds (a layout copy Inductor made, the output of an
    attention it calls through torch.ops): run on its own arguments, its local error is its op's and
    only its op's. Returns a note when that run fails (the buffers keep their propagated errors)."""
    def check(node: str, run: int, local: torch.Tensor) -> None:
        for value, item in kept[(node, run)]:
            if item.ok is False:
                compare_local(item, value, local, readback)

    compiled = {where: buffers[0][0] for where, buffers in kept.items()}
    try:
        reference.on_own_inputs(graph.post_grad.module, inputs, compiled, given, check, upcast=upcast, written=written)
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return (f"{graph.id}: running its post-grad graph on the compiled program's own buffers failed "
                f"({type(error).__name__}: {first}); the kernels it had not reached have no local error, and there a "
                "kernel whose propagated error leaves tolerance counts as introducing it")
    return ""


def _call_value(values: dict[str, list[Any]], node: str, iteration: int) -> Any:
    """The value ``node`` had in ``iteration`` of the loop whose body holds it (a node outside any loop
    has one value)."""
    seen = values.get(node) or [None]
    return seen[iteration] if iteration < len(seen) else seen[-1]


def _unobserved(kernel: Any, random_of: dict[str, str], ran: set[str] | None) -> str:
    """Why a kernel has no call to compare. ``ran``: the nodes of its graph that ran eagerly (None when
    the graph was not run)."""
    branch = {n.split(".", 1)[0] for n in kernel.post_grad_nodes if "." in n}
    if ran is not None and branch and not any(n in ran for n in kernel.post_grad_nodes):
        return f"it computes {', '.join(sorted(branch))}, a branch or body that did not run on these inputs"
    randoms = [random_of[n] for n in kernel.post_grad_nodes if n in random_of]
    if randoms:
        return f"the random op {randoms[0]} (seeds or draws): eager and the compiled program draw different numbers"
    if replay.in_package(kernel) and kernel.language == "extern":
        return ("AOTInductor's saving copy saved none of the tensors this call computes: it saves the tensors a call "
                "is passed, and a shim that returns new tensors (an attention, a cumsum) returns them through handles")
    if kernel.language == "extern" and kernel_io.extern_function(kernel) is None:
        return "an extern call the wrapper makes through torch.ops, which is not observed"
    return "no call of this kernel was observed"


def _link(report: NumericsReport, c: Any) -> None:
    """Spread kernel errors to the nodes they implement, and name the first divergent kernel's origins."""
    graphs = {g.id: g for g in c.graphs}
    for row in report.kernels.values():
        if row.max_rel is None:
            continue
        kernel = graphs[row.graph].kernel(row.kernel)
        for names, into in ((kernel.post_grad_nodes, report.post_grad_error), (kernel.fx_nodes, report.fx_error)):
            errors = into.setdefault(row.graph, {})
            for name in names:
                errors[name] = max(errors.get(name, 0.0), row.max_rel)
    if report.first_divergent is not None:
        row = report.kernels[report.first_divergent]
        kernel = graphs[row.graph].kernel(row.kernel)
        report.first_divergent_nodes = {"post_grad": list(kernel.post_grad_nodes), "fx": list(kernel.fx_nodes),
                                         "user_lines": [list(u) for u in kernel.user_lines]}
