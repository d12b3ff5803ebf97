"""Errors that reject a name suggest the nearest valid ones."""

from __future__ import annotations


import pytest

import explorer
from compiler import ToggleError
from compiler.pipeline import toggles
from compiler.model.formatting import did_you_mean
from tests.paths import FIXTURES

SAMPLE = FIXTURES / "widget_sample.json"


def test_did_you_mean_names_the_close_choices_only():
    assert did_you_mean("natve_matmul", ["native_matmul", "deterministic"]) == " (did you mean 'native_matmul'?)"
    assert did_you_mean("xyz", ["native_matmul", "deterministic"]) == ""


def test_a_misspelled_toggle_suggests_the_right_one():
    with pytest.raises(ToggleError, match=r"unknown toggle 'max_autotun' \(did you mean 'max_autotune'\?\)"):
        toggles.resolve({"max_autotun": True})


def test_kernel_node_and_buffer_lookups_suggest_near_names():
    c = explorer.load(SAMPLE)
    g = c.graphs[0]
    kernel = g.kernels[0]
    with pytest.raises(KeyError, match=f"did you mean '{kernel.id}'"):
        g.kernel(kernel.id[:-1] + "x")
    node = g.post_grad.nodes[-1].name
    with pytest.raises(KeyError, match=f"did you mean '{node}'"):
        g.post_grad.node(node + "_")


def test_a_misspelled_raw_inductor_key_suggests_the_key():
    with pytest.raises(ToggleError, match=r"unknown toggle 'triton\.cudagraph' \(did you mean 'triton\.cudagraphs'"):
        toggles.resolve({"triton.cudagraph": True})
    with pytest.raises(ToggleError, match=r"\(did you mean 'emulate_precision_casts'\?\)"):
        toggles.resolve({"emulate_precision_cast": True})  # a toggle name and a raw key: suggested once
