"""%%compile through IPython's test shell: options, namespace effects, errors, --trace.

One shell for the module; compiled cells are shared through module fixtures (CPU compiles take seconds).
"""

from __future__ import annotations

import pytest
import torch
from IPython.core.error import UsageError
from IPython.testing import globalipapp
from IPython.utils.capture import capture_output

from compiler import TOGGLES
from explorer import Compilation, Session
from explorer.magic import CellFailed, ExplorerMagics, toggle_flags
from tests.paths import ROOT

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def ip():
    globalipapp.start_ipython()  # one test shell per process: another module may have started it already
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "explorer")
    torch.manual_seed(0)
    shell.user_ns.update(torch=torch, x=torch.randn(8, 16), w=torch.randn(16, 4), scale=3.0)
    return shell


@pytest.fixture(scope="module")
def session(ip):
    return ip.magics_manager.registry["ExplorerMagics"].session


def run(ip, source):
    with capture_output() as captured:
        result = ip.run_cell(source)
    return result, captured


@pytest.fixture(scope="module")
def first_cell(ip, session):
    before = len(session)
    result, captured = run(ip, "%%compile --name mm\nh = torch.relu(x @ w)\nout = h.sum(-1) * scale\n")
    assert result.success, result.error_in_exec
    return session[before], captured


def test_cell_is_one_region_whose_assigned_names_reach_the_notebook(ip, first_cell):
    entry, _ = first_cell
    ns = ip.user_ns
    expected = torch.relu(ns["x"] @ ns["w"])
    torch.testing.assert_close(ns["h"], expected)
    torch.testing.assert_close(ns["out"], expected.sum(-1) * 3.0)
    c = ns["mm"]
    assert isinstance(c, Compilation) and c is entry.compilation
    assert entry.origin == "cell" and entry.name == "mm"
    assert len(c.graphs) == 1                        # one torch.compile region for the whole cell
    assert [spec["shape"] for spec in c.inputs] == [[8, 16], [16, 4]]  # tensors are inputs, not constants
    assert {k.language for k in c.kernels} == {"extern", "cpp"}
    # provenance points at the cell's own lines
    lines = {line for k in c.kernels for file, line in k.user_lines if file.startswith("<%%compile mm")}
    assert lines == {1, 2}
    assert c.sources and all(text for lines in c.sources.values() for text in lines.values())


def test_progress_line_is_replaced_by_the_explorer_view(first_cell):
    _, captured = first_cell
    first, last = captured.outputs[0], captured.outputs[-1]
    assert first.data["text/plain"].startswith("compiling mm (x, w)")
    bars = [out.data["text/plain"] for out in captured.outputs[1:-1] if "ie-progress" in out.data.get("text/html", "")]
    assert bars and all(out.update for out in captured.outputs[1:])  # the compile's stages, in the same place
    assert all(bar.startswith("compile mm: ") for bar in bars), bars
    assert last.update and WIDGET_MIME in last.data


def test_toggle_flags_and_config_reach_inductor(ip, session):
    before = dict(ip.user_ns)
    result, captured = run(ip, "%%compile --deterministic --config emulate_precision_casts=true --quiet --device cpu\n"
                                "q = (x.bfloat16() * 3 + 1).float()\n")
    assert result.success, result.error_in_exec
    assert captured.outputs == [] and captured.stdout == ""  # --quiet
    c = session[-1].compilation
    assert c.toggles == {"deterministic": True, "emulate_precision_casts": True}
    assert c.inductor_overrides["emulate_precision_casts"] is True
    assert "convert<" in c.kernels[0].source or "bfloat16" in c.kernels[0].source.lower()
    assert ip.user_ns["q"].dtype == torch.float32
    assert set(ip.user_ns) - set(before) == {"q"}


def test_no_cache_captures_a_cell_cold_and_a_cell_is_warm_by_default(ip, session):
    result, _ = run(ip, "%%compile --no-cache --quiet\ncold = torch.tanh(x) * 2\n")
    assert result.success, result.error_in_exec
    assert [g.cache for g in session[-1].compilation.graphs] == [""]
    result, _ = run(ip, "%%compile --quiet\nwarm = torch.tanh(x) * 2\n")
    assert result.success, result.error_in_exec
    assert [g.cache for g in session[-1].compilation.graphs] == ["stored"]


def test_flags_are_derived_from_the_toggle_registry(ip):
    flags = toggle_flags()
    assert sorted(name for name, _ in flags.values()) == sorted(TOGGLES)
    assert flags["--no-loop-ordering"] == ("loop_ordering_after_fusion", False)
    for flag in ("--native-matmul", "--deterministic", "--max-autotune", "--combo-kernels", "--block-ptr",
                 "--coordinate-descent", "--emulate-precision-casts"):
        assert flags[flag][1] is True, flag
    magic = ip.magics_manager.registry["ExplorerMagics"].compile_cell
    from explorer.magic import parse_config
    from IPython.core.magic_arguments import parse_argstring

    args = parse_argstring(magic, "--no-loop-ordering --native-matmul --config triton.cudagraphs=false "
                                  "--config max_autotune_gemm_backends=ATEN --config cpp.threads=2")
    assert parse_config(args) == {"loop_ordering_after_fusion": False, "native_matmul": True,
                                  "triton.cudagraphs": False, "max_autotune_gemm_backends": "ATEN", "cpp.threads": 2}


@pytest.mark.parametrize("options, message", [
    ("--bogus", "unrecognized arguments"),
    ("--config nokey", "key=value"),
    ("--config not_a_key=1", "unknown toggle 'not_a_key'"),
    ("--config natve_matmul=true", "did you mean 'native_matmul'?"),
    ("--natve-matmul", "--natve-matmul (did you mean '--native-matmul'?)"),
    ("--config deterministic=3", "takes a bool"),
    ("--native-matmul --block-ptr", "cannot both be on"),
    ("--device cuda" if not torch.cuda.is_available() else "--device nowhere", "--device"),
    ("--name 'not an identifier'", "identifier"),
])
def test_bad_options_are_usage_errors_and_change_nothing(ip, session, options, message):
    names, count = dict(ip.user_ns), len(session)
    result, _ = run(ip, f"%%compile {options}\nfresh = x + 1\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert message in str(result.error_in_exec)
    assert "fresh" not in ip.user_ns and len(session) == count and ip.user_ns.keys() == names.keys()


@pytest.mark.parametrize("cell, stage, text", [
    ("h = (x +\n", "parse", "SyntaxError at line 1"),
    ("h = x + undefined_thing\n", "names", "name 'undefined_thing' is not defined"),
    ("h = x * 5\nz = x @ torch.ones(3, 3)\n", "tracing", "must have same reduction dim, but got [8, 16] X [3, 3].') - at line 2 of the cell"),
])
def test_errors_name_the_stage_and_leave_the_namespace_alone(ip, session, first_cell, cell, stage, text):
    h_before, count = ip.user_ns["h"], len(session)
    result, captured = run(ip, "%%compile\n" + cell)
    error = result.error_in_exec
    assert isinstance(error, CellFailed) and error.stage == stage and text in str(error)
    shown = captured.stdout
    assert f"%%compile failed during {stage}" in shown and "Traceback" not in shown
    assert len(shown.splitlines()) <= 3  # short, not a compiler stack trace
    assert ip.user_ns["h"] is h_before and "z" not in ip.user_ns
    assert len(session) == count and session[count - 1].compilation.live


def test_trace_captures_every_compiled_call_and_restores_the_wrappers(ip, session):
    ip.run_cell("def double_sin(t):\n    return torch.sin(t) * 2\ncompiled_sin = torch.compile(double_sin)\n")
    wrapper = ip.user_ns["compiled_sin"]
    count = len(session)
    result, captured = run(ip, "%%compile --trace --name traced\n"
                               "a = compiled_sin(x)\n"
                               "a2 = compiled_sin(x)\n"                  # same shapes: no second capture
                               "cos3 = torch.compile(lambda t: torch.cos(t) * 3)\n"
                               "b = cos3(w)\n")
    assert result.success, result.error_in_exec
    new = session.entries[count:]
    assert [e.origin for e in new] == ["trace", "trace"]
    assert [e.name for e in new] == ["traced.double_sin", "traced.<lambda>"]
    torch.testing.assert_close(ip.user_ns["a"], torch.sin(ip.user_ns["x"]) * 2)
    torch.testing.assert_close(ip.user_ns["a2"], ip.user_ns["a"])
    torch.testing.assert_close(ip.user_ns["b"], torch.cos(ip.user_ns["w"]) * 3)
    assert ip.user_ns["traced"] is new[-1].compilation
    assert ip.user_ns["compiled_sin"] is wrapper                      # the notebook's wrapper is back
    assert getattr(ip.user_ns["cos3"], "_torchdynamo_orig_callable", None) is not None  # a real torch.compile wrapper
    assert torch.compile.__module__ == "torch"                          # the redirect is gone
    assert sum(WIDGET_MIME in o.data for o in captured.outputs) == 2
    # a traced call can be recompiled with other toggles after the cell, and torch.compile stays real
    real_compile = torch.compile
    toggled, cached = session.with_config(new[0], {"deterministic": True})
    assert not cached and toggled.compilation.toggles == {"deterministic": True}
    assert torch.compile is real_compile


def test_explorer_line_magic(ip, session):
    assert ip.run_line_magic("explorer", "session") is session
    with pytest.raises(UsageError, match="panel, session, clear"):
        ip.run_line_magic("explorer", "nonsense")
    with pytest.raises(UsageError, match="did you mean 'panel'"):
        ip.run_line_magic("explorer", "pannel")
    assert isinstance(ip.magics_manager.registry["ExplorerMagics"], ExplorerMagics)
    assert isinstance(session, Session)


def test_rerun_with_new_shapes_recompiles_into_the_same_compilation(ip, session):
    cell = "%%compile --name grown\ng = torch.tanh(x @ w) * scale\n"
    result, _ = run(ip, cell)
    assert result.success, result.error_in_exec
    c, count, old_x = ip.user_ns["grown"], len(session), ip.user_ns["x"]
    try:
        ip.user_ns["x"] = torch.randn(5, 16)  # new shapes: the compiled code's guards fail
        result, captured = run(ip, cell)
        assert result.success, result.error_in_exec
        assert ip.user_ns["grown"] is c and len(session) == count        # no fresh compile, no new entry
        torch.testing.assert_close(ip.user_ns["g"], torch.tanh(ip.user_ns["x"] @ ip.user_ns["w"]) * 3.0)
        [recompile] = c.recompiles
        assert recompile.graphs == ["g1"] and "tensor 'x' size mismatch at index 0. expected 8, actual 5" in recompile.reasons[0]
        lines = [o.data["text/plain"] for o in captured.outputs if WIDGET_MIME not in o.data]
        assert lines[-1].startswith("grown: recompiled for the new inputs (5x16, 16x4)")
        assert "size mismatch" in lines[-1]
        assert WIDGET_MIME in captured.outputs[-1].data
        assert ip.magics_manager.registry["ExplorerMagics"].views[-1].widget.graph == "g1"  # opens on the recompile
        # the same shapes again: the recompiled graph's guards hold
        result, captured = run(ip, cell)
        assert len(c.recompiles) == 1 and "its guards held, nothing recompiled" in captured.outputs[-2].data["text/plain"]
        # a changed number the cell reads is not a re-run: it compiles afresh, as a new entry
        ip.user_ns["scale"] = 4.0
        result, _ = run(ip, cell)
        assert result.success and ip.user_ns["grown"] is not c and len(session) == count + 1
        assert ip.user_ns["grown"].recompiles == []
    finally:
        ip.user_ns.update(x=old_x, scale=3.0)


def test_a_notebook_that_compiled_exits_without_tracebacks(tmp_path):
    """Dynamo deletes names it put into a compiled function's globals when the compiled code is freed; a
    notebook's namespace is cleared at exit first, and each deletion printed a KeyError traceback."""
    import subprocess
    import sys

    script = tmp_path / "session.py"
    script.write_text(
        "import torch, explorer\n"
        "explorer.compile(lambda t: t.sin() + 1, torch.randn(4))\n"  # a capture before the shell, as in a test run
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'explorer')\n"
        "ip.run_cell('import torch\\nx = torch.randn(8, 8)\\ndef helper(t):\\n    return t.cos() * 2\\n')\n"
        "assert ip.run_cell('%%compile --quiet --name c\\ny = helper(x.sin() + 1).relu()\\n').success\n"
        "assert ip.run_cell('%%compile --quiet --trace\\nf = torch.compile(helper)\\nw = f(x)\\n').success\n"
        "print('compiled')\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            cwd=str(ROOT))
    assert result.returncode == 0 and "compiled" in result.stdout, result.stderr[-3000:]
    assert "Exception ignored" not in result.stderr and "KeyError" not in result.stderr, result.stderr[-3000:]


def test_the_reproducer_button_writes_the_selected_kernel_or_the_graph_shown(first_cell, session, tmp_path,
                                                                             monkeypatch):
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)
    entry, _ = first_cell
    view = session.view(entry.index)
    view.handle({"type": "repro"})  # nothing selected: the graph shown
    status = view.widget.status
    assert status["state"] == "idle" and status["message"].startswith(f"wrote repros/{entry.name}/g0.py"), status
    generated = next(k for k in entry.compilation.kernels if k.language == "cpp")
    view.widget.selection = {"kind": "kernel", "id": generated.id}
    view.handle({"type": "repro"})
    script = tmp_path / "repros" / entry.name / f"g0_{generated.id}.py"
    assert script.exists() and str(script.relative_to(tmp_path)) in view.widget.status["message"]
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    extern = next(k for k in entry.compilation.kernels if k.language == "extern")
    view.widget.selection = {"kind": "kernel", "id": extern.id}
    view.handle({"type": "repro"})
    assert view.widget.status["state"] == "error"
    assert view.widget.status["message"].startswith("no reproducer:") and "extern" in view.widget.status["message"]
    view.close()


def test_a_cell_run_again_keeps_its_name_and_is_served_warm(ip, session):
    """The same cell text keeps its number (its name and file): run again with a new module of the same shape
    (so the earlier compile is not reused), its graph is the same program and is served from the store."""
    ip.user_ns["lin"] = torch.nn.Linear(16, 4)
    cell = "%%compile --quiet\nlinear_out = torch.sigmoid(lin(x))\n"
    result, _ = run(ip, cell)
    assert result.success, result.error_in_exec
    first = session[-1]
    ip.user_ns["lin"] = torch.nn.Linear(16, 4)  # another object: the cell compiles again
    result, _ = run(ip, cell)
    assert result.success, result.error_in_exec
    again = session[-1]
    assert again is not first and again.name == first.name
    assert [g.cache for g in first.compilation.graphs] == ["stored"]
    assert [g.cache for g in again.compilation.graphs] == ["served"]
    torch.testing.assert_close(ip.user_ns["linear_out"], torch.sigmoid(ip.user_ns["lin"](ip.user_ns["x"])))
