"""c.save and c.check_numerics run with the cyclic collector paused, and leave it as they found it."""

from __future__ import annotations

import gc

import pytest

import explorer
from compiler.model import slots
from tests.paths import FIXTURES


@pytest.fixture
def collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled_before", [True, False])
def test_save_pauses_the_collector_and_restores_it(tmp_path, monkeypatch, collector_restored, enabled_before):
    c = explorer.load(FIXTURES / "gpu_default.json")
    seen, write = [], slots.write_json.impl
    monkeypatch.setattr(slots.write_json, "_impl", lambda data, path: seen.append(gc.isenabled()) or write(data, path))
    (gc.enable if enabled_before else gc.disable)()
    path = c.save(tmp_path / "a.json")
    assert seen == [False] and gc.isenabled() is enabled_before
    assert explorer.load(path).to_json() == c.to_json()


def test_a_failing_check_restores_the_collector(monkeypatch, collector_restored):
    c = explorer.load(FIXTURES / "gpu_default.json")
    seen = []

    def failing(*args):
        seen.append(gc.isenabled())
        raise RuntimeError("the check failed")

    monkeypatch.setattr(slots.check_numerics, "_impl", failing)
    gc.enable()
    with pytest.raises(RuntimeError, match="the check failed"):
        c.check_numerics()
    assert seen == [False] and gc.isenabled() and c.numerics == []
