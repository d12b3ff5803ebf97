"""compiler/'s face and its two plug-in mechanisms (compiler/__init__.py, compiler/model/slots.py).

The package is lazy: importing one of its modules loads neither torch nor the rooms, ``from compiler
import X`` still works for every public name, and each model slot imports the module that fills it on
first use, so a model object's methods work whatever was imported before. Fresh interpreters check what
an import loads, since this process has imported everything already.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import compiler
from compiler.model import slots
from tests.paths import FIXTURES, ROOT


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter at the repository root; its stdout."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_importing_a_model_module_loads_no_torch_and_no_room():
    out = _fresh("import sys, compiler.model.stages, compiler.model.compilation, compiler.model.traceset\n"
                 "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('compiler.io', "
                 "'compiler.render', 'compiler.runs', 'compiler.pipeline', 'compiler.sweeps', 'compiler._torch'))))")
    assert out.strip() == "[]"


def test_importing_compiler_loads_nothing_until_a_name_is_used():
    out = _fresh("import sys, compiler\nprint('torch' in sys.modules, 'compiler.pipeline.capture' in sys.modules)\n"
                 "compiler.capture\nprint('compiler.pipeline.capture_entry' in sys.modules)")
    assert out.split() == ["False", "False", "True"]


def test_the_capture_imports_torchs_compiler_inside_its_first_call():
    """``explorer.compile`` is a light entry: torch's compiler (the capture's imports) loads inside the call, whose
    compile-time report counts it (compiler/pipeline/capture_entry.py)."""
    out = _fresh("import sys, compiler\ncompiler.capture\n"
                 "print('compiler.pipeline.capture' in sys.modules, 'torch._inductor.compile_fx' in sys.modules)")
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("name", compiler.__all__)
def test_every_public_name_imports_from_the_package(name):
    namespace: dict = {}
    exec(f"from compiler import {name}", namespace)
    assert namespace[name] is getattr(compiler, name)


def test_the_public_names_are_the_lazy_table():
    assert sorted(compiler.__all__) == sorted(compiler._NAMES)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        compiler.nothing  # noqa: B018
    assert set(compiler.__all__) <= set(dir(compiler))


def test_a_model_object_fills_its_slots_on_first_use():
    """A trace opened through io alone: its summary (render/), its JSON and a rich rendering work,
    each slot importing its room when first called."""
    code = (f"import sys\nfrom compiler.io.trace import from_json\nimport json\n"
            f"c = from_json(json.load(open({str(FIXTURES / 'widget_sample.json')!r})))\n"
            "print('compiler.render' in sys.modules)\n"
            "from compiler.model import slots\n"
            "print('<' in slots.html_summary(c), c.to_json()['schema'], type(slots.rich_of(c.graphs[0])).__name__)\n"
            "print('compiler.render' in sys.modules, 'compiler.runs' in sys.modules)")
    lines = _fresh(code).splitlines()
    assert lines[0] == "False"
    html, schema, rendered = lines[1].split()
    assert html == "True" and schema == "inductor-explorer/trace" and rendered != "str"
    assert lines[2] == "True False"


def test_a_saved_sweep_loads_without_importing_the_sweeps(tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps({"schema": "inductor-explorer/sweep", "version": 1, "rows": [], "traces": [],
                                "meta": {"function": "f", "device": "cpu", "engine": "local"}}))
    out = _fresh(f"import sys, compiler\nprint('compiler.sweeps' in sys.modules)\n"
                 f"print(type(compiler.load({str(path)!r})).__name__)")
    assert out.split() == ["False", "Sweep"]


def test_the_views_come_from_explorer_without_importing_it(tmp_path):
    """``c.to_html()`` and ``c.show()`` are served by explorer/, which the first call imports."""
    page = tmp_path / "c.html"
    code = (f"import sys, compiler\nc = compiler.load({str(FIXTURES / 'widget_sample.json')!r})\n"
            "print('explorer' in sys.modules)\n"
            f"print(c.to_html({str(page)!r}).name, 'explorer' in sys.modules)\n"
            "c.show()")
    lines = _fresh(code).splitlines()
    assert lines[:2] == ["False", "c.html True"]
    assert "<html" in page.read_text()[:2000].lower()
    assert any("kernel" in line.lower() for line in lines[2:])  # the compact view, printed


def _actions() -> list[tuple[str, slots.Action]]:
    found = [(name, a) for name, a in vars(slots).items() if isinstance(a, slots.Action)]
    return found + [(f"loaders[{schema!r}]", a) for schema, a in slots.loaders.items()]


@pytest.mark.parametrize("name, action", _actions(), ids=[name for name, _ in _actions()])
def test_every_action_is_filled_by_the_module_it_names(name, action):
    importlib.import_module(action.provider)
    assert action._impl is not None, f"{action.provider} does not fill slots.{name}"
    assert action._impl.__module__ == action.provider


def test_an_action_nobody_fills_says_which_module_failed_it():
    action: slots.Action = slots.Action("x.nothing()", "compiler.model.errors")
    with pytest.raises(RuntimeError, match=r"x.nothing\(\) is not available: importing compiler.model.errors"):
        action()
