"""Compilation <-> the versioned JSON trace (see SCHEMA.md). JSON only: loading runs no code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import sympy_io
from .compilation import Compilation
from .errors import TraceFormatError
from .kernel_ir import kernel_ir_from_json, kernel_ir_to_json
from .memory import timeline_from_json, timeline_to_json
from .stages import (AutotuneRecord, FusedGroup, FxNode, FxStage, GraphCapture, Kernel, LoopIRNode, NotFused,
                     Wrapper)
from .wrapper_fx import wrapper_fx_from_json, wrapper_fx_to_json

SCHEMA = "inductor-explorer/trace"
VERSION = 2


def _fx_node(n: FxNode) -> dict[str, Any]:
    return {
        "name": n.name, "op": n.op, "target": n.target, "args": n.args, "shape": n.shape, "dtype": n.dtype,
        "inputs": n.inputs, "users": n.users, "user_line": list(n.user_line) if n.user_line else None,
        "stack": [list(f) for f in n.stack], "fx": n.fx, "post_grad": n.post_grad, "loop_ir": n.loop_ir,
        "kernels": n.kernels,
    }


def _fx_stage(s: FxStage) -> dict[str, Any]:
    return {"code": s.code, "nodes": [_fx_node(n) for n in s.nodes]}


def _loop_ir(n: LoopIRNode) -> dict[str, Any]:
    return {
        "name": n.name, "kind": n.kind, "buffers": n.buffers, "device": n.device, "dtype": n.dtype,
        "size": n.size, "stride": n.stride,
        "ranges": {sympy_io.to_text(k): sympy_io.to_text(v) for k, v in n.ranges.items()},
        "sizes": [[sympy_io.to_text(v) for v in part] for part in n.sizes],
        "indexing": {k: sympy_io.to_text(v) for k, v in n.indexing.items()},
        "reads": n.reads, "writes": n.writes, "body": n.body, "origins": n.origins,
        "extern_target": n.extern_target, "group": n.group, "eliminated": n.eliminated, "kernels": n.kernels,
    }


def _kernel(k: Kernel) -> dict[str, Any]:
    out = {
        "id": k.id, "name": k.name, "language": k.language, "source": k.source, "group": k.group,
        "loop_ir": k.loop_ir, "post_grad_nodes": k.post_grad_nodes, "fx_nodes": k.fx_nodes,
        "user_lines": [list(u) for u in k.user_lines],
        "line_nodes": {str(line): names for line, names in k.line_nodes.items()},
        "wrapper_lines": k.wrapper_lines, "meta": _jsonable(k.meta),
    }
    if k.ir is not None:
        out["ir"] = kernel_ir_to_json(k.ir)
    return out


def _wrapper(w: Wrapper) -> dict[str, Any]:
    out: dict[str, Any] = {"source": w.source, "kernel_lines": {str(k): v for k, v in w.kernel_lines.items()}}
    if w.fx is not None:
        out["fx"] = wrapper_fx_to_json(w.fx)
    return out


def _jsonable(value: Any) -> Any:
    """Plain JSON: non-string keys (Triton meta uses tuples) become strings, unknown objects their str."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _graph(g: GraphCapture) -> dict[str, Any]:
    return {
        "id": g.id, "index": g.index, "kind": g.kind, "dynamo_graph": g.dynamo_graph, "timings": g.timings,
        "fx": _fx_stage(g.fx), "post_grad": _fx_stage(g.post_grad),
        "loop_ir": [_loop_ir(n) for n in g.loop_ir],
        "fused": [{"name": f.name, "kind": f.kind, "nodes": f.nodes, "origins": f.origins, "kernels": f.kernels}
                  for f in g.fused],
        "not_fused": [{"node1": r.node1, "node2": r.node2, "reason": r.reason} for r in g.not_fused],
        "kernels": [_kernel(k) for k in g.kernels],
        "wrapper": _wrapper(g.wrapper),
        "autotune": [{"kernel": a.kernel, "choice": a.choice, "time_ms": a.time_ms, "chosen": a.chosen,
                      "source": a.source} for a in g.autotune],
        **({"memory": timeline_to_json(g.memory)} if g.memory is not None else {}),
    }


def to_json(c: Compilation) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "meta": {
            "function": c.function, "device": c.device, "device_name": c.device_name, "torch": c.torch,
            "triton": c.triton, "python": c.python, "created": c.created, "toggles": _jsonable(c.toggles),
            "inductor_overrides": _jsonable(c.inductor_overrides), "backward": c.backward, "timings": c.timings,
        },
        "inputs": c.inputs,
        "outputs": c.output_specs,
        "sources": {file: {str(line): text for line, text in lines.items()} for file, lines in c.sources.items()},
        "graphs": [_graph(g) for g in c.graphs],
    }


# ---------------------------------------------------------------------------------------------- load


def load(path: str | Path) -> Compilation:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TraceFormatError(f"{path} is not a JSON trace ({exc.msg} at line {exc.lineno}); "
                               "save traces with Compilation.save(path)") from exc
    return from_json(data, origin=str(path))


def _need(data: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise TraceFormatError(f"malformed trace: {where} has no {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise TraceFormatError(f"malformed trace: {where}.{key} should be {getattr(kind, '__name__', kind)}, "
                               f"got {type(value).__name__}")
    return value


def from_json(data: Any, origin: str = "trace") -> Compilation:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise TraceFormatError(f"{origin} is not an inductor-explorer trace (missing schema {SCHEMA!r})")
    version = _need(data, "version", int, origin)
    if version > VERSION:
        raise TraceFormatError(f"{origin} uses trace schema version {version}, newer than this inductor-explorer "
                               f"reads ({VERSION}); upgrade inductor-explorer to open it")
    meta = _need(data, "meta", dict, origin)
    try:
        graphs = [_load_graph(g, f"graphs[{i}]") for i, g in enumerate(_need(data, "graphs", list, origin))]
        return Compilation(
            function=str(meta.get("function", "?")), device=str(meta.get("device", "?")),
            device_name=str(meta.get("device_name", "?")), torch=str(meta.get("torch", "?")),
            triton=meta.get("triton"), python=str(meta.get("python", "?")), created=str(meta.get("created", "")),
            toggles=dict(meta.get("toggles") or {}), inductor_overrides=dict(meta.get("inductor_overrides") or {}),
            backward=bool(meta.get("backward", False)), timings=dict(meta.get("timings") or {}),
            inputs=list(data.get("inputs") or []), output_specs=list(data.get("outputs") or []), graphs=graphs,
            sources={f: {int(k): str(v) for k, v in lines.items()} for f, lines in (data.get("sources") or {}).items()},
        )
    except TraceFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TraceFormatError(f"malformed trace {origin}: {type(exc).__name__}: {exc}") from exc


def _load_node(n: dict[str, Any]) -> FxNode:
    return FxNode(
        name=n["name"], op=n["op"], target=n["target"], args=n.get("args", ""), shape=n.get("shape"),
        dtype=n.get("dtype"), inputs=list(n.get("inputs", [])), users=list(n.get("users", [])),
        user_line=tuple(n["user_line"]) if n.get("user_line") else None,
        stack=[tuple(f) for f in n.get("stack", [])], fx=list(n.get("fx", [])), post_grad=list(n.get("post_grad", [])),
        loop_ir=list(n.get("loop_ir", [])), kernels=list(n.get("kernels", [])),
    )


def _load_stage(stage: str, s: dict[str, Any]) -> FxStage:
    return FxStage(stage=stage, code=s.get("code", ""), nodes=[_load_node(n) for n in s.get("nodes", [])])


def _load_loop_ir(n: dict[str, Any]) -> LoopIRNode:
    expr = sympy_io.from_text
    return LoopIRNode(
        name=n["name"], kind=n["kind"], buffers=list(n.get("buffers", [])), device=n.get("device"),
        dtype=n.get("dtype"), size=list(n.get("size", [])), stride=list(n.get("stride", [])),
        ranges={expr(k): expr(v) for k, v in n.get("ranges", {}).items()},
        sizes=[[expr(v) for v in part] for part in n.get("sizes", [])],
        indexing={k: expr(v) for k, v in n.get("indexing", {}).items()},
        reads=list(n.get("reads", [])), writes=list(n.get("writes", [])), body=n.get("body", ""),
        origins=list(n.get("origins", [])), extern_target=n.get("extern_target"), group=n.get("group"),
        eliminated=bool(n.get("eliminated", False)), kernels=list(n.get("kernels", [])),
    )


def _load_kernel(k: dict[str, Any]) -> Kernel:
    return Kernel(
        id=k["id"], name=k["name"], language=k["language"], source=k["source"], group=k.get("group"),
        loop_ir=list(k.get("loop_ir", [])), post_grad_nodes=list(k.get("post_grad_nodes", [])),
        fx_nodes=list(k.get("fx_nodes", [])), user_lines=[tuple(u) for u in k.get("user_lines", [])],
        line_nodes={int(line): list(names) for line, names in k.get("line_nodes", {}).items()},
        wrapper_lines=list(k.get("wrapper_lines", [])), meta=dict(k.get("meta", {})),
        ir=kernel_ir_from_json(k["ir"]) if k.get("ir") is not None else None,
    )


def _load_graph(g: dict[str, Any], where: str) -> GraphCapture:
    if not isinstance(g, dict):
        raise TraceFormatError(f"malformed trace: {where} should be an object")
    wrapper = g.get("wrapper") or {}
    return GraphCapture(
        index=_need(g, "index", int, where), kind=_need(g, "kind", str, where),
        dynamo_graph=int(g.get("dynamo_graph", 0)),
        fx=_load_stage("fx", _need(g, "fx", dict, where)),
        post_grad=_load_stage("post_grad", _need(g, "post_grad", dict, where)),
        loop_ir=[_load_loop_ir(n) for n in g.get("loop_ir", [])],
        fused=[FusedGroup(name=f["name"], kind=f["kind"], nodes=list(f["nodes"]), origins=list(f.get("origins", [])),
                          kernels=list(f.get("kernels", []))) for f in g.get("fused", [])],
        kernels=[_load_kernel(k) for k in g.get("kernels", [])],
        wrapper=Wrapper(source=wrapper.get("source", ""),
                        kernel_lines={int(k): v for k, v in (wrapper.get("kernel_lines") or {}).items()},
                        fx=wrapper_fx_from_json(wrapper["fx"]) if wrapper.get("fx") is not None else None),
        autotune=[AutotuneRecord(a["kernel"], a["choice"], float(a["time_ms"]), bool(a["chosen"]), a.get("source", ""))
                  for a in g.get("autotune", [])],
        not_fused=[NotFused(r["node1"], r["node2"], r["reason"]) for r in g.get("not_fused", [])],
        timings=dict(g.get("timings", {})),
        memory=timeline_from_json(g["memory"]) if g.get("memory") is not None else None,
    )
