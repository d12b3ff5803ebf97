"""compiler/model/compilation.py: what runs a compilation lives in one ``c.live``, which a loaded trace lacks,
and every run of a loaded trace says to compile again."""

from __future__ import annotations

import dataclasses

import pytest

import explorer
from compiler.model.compilation import Compilation, LiveHandles
from compiler.runs.replay import NotRunnableError
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def loaded() -> Compilation:
    return explorer.load(FIXTURES / "widget_sample.json")


def test_a_loaded_trace_has_no_live_handles_and_says_so(loaded):
    assert loaded.live is None and loaded.outputs is None and repr(loaded).endswith(", loaded)")
    with pytest.raises(NotRunnableError, match="loaded from a file"):
        loaded.run()
    with pytest.raises(NotRunnableError, match="loaded from a file"):
        loaded.profile()
    with pytest.raises(RuntimeError, match="loaded from a file: it has no compiled function"):
        loaded.recompile()
    with pytest.raises(RuntimeError, match="needs the live compilation"):
        loaded.check_determinism()


def test_the_handles_are_one_field_apart_from_the_saved_data():
    saved = {f.name for f in dataclasses.fields(Compilation)} - {"live"}
    handles = {f.name for f in dataclasses.fields(LiveHandles)}
    assert handles == {"compiled", "target", "example_inputs", "call_kwargs", "grad_enabled", "outputs", "rerun",
                       "build_package", "derived"}
    assert not saved & handles


def test_handles_run_the_compilation_they_are_given_to(loaded):
    calls = []
    live = LiveHandles(compiled=lambda *a, **k: calls.append((a, k)) or "out", target=None, example_inputs=(1,),
                       call_kwargs={}, grad_enabled=None, outputs="first",
                       rerun=lambda c, inputs, kwargs: (c.function, inputs, kwargs))
    c = dataclasses.replace(loaded, live=live)
    assert c.outputs == "first" and c.recompile() == (loaded.function, (1,), {})
    assert c.recompile(2, k=3) == (loaded.function, (2,), {"k": 3})
    assert repr(live) == "LiveHandles(function of NoneType, 1 input, recompiles)"
