"""The browser's requests to the compilation view, each way as compiler/model/contract.py declares them.

Every ``send({...})`` in the bundle's sources is read and its keys checked against the TypedDict of its
``type``; every declared request is dispatched by the widget's table (widgets/widget.py).
"""

from __future__ import annotations

import json
import re
import typing

import pytest

import widgets
from compiler.model import contract
from tests.paths import FIXTURES, ROOT

REQUESTS = {"part": contract.PartRequest, "what_if": contract.WhatIfRequest, "toggle": contract.ToggleAction,
            "select": contract.SelectAction, "repro": contract.ReproAction}
_SEND = re.compile(r"\bsend\(\{([^{}]*)\}\)")


def _keys(literal: str) -> list[str]:
    """The keys of a JS object literal without nested objects (``{ type: "x", key, id: f(a) }``)."""
    keys, depth, part = [], 0, ""
    for char in literal + ",":
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            keys.append(part.split(":", 1)[0].strip())
            part = ""
        else:
            part += char
    return [k for k in keys if k]


def _sent() -> list[tuple[str, list[str], str]]:
    out = []
    for path in sorted((ROOT / "widgets" / "js").glob("*.js")):
        for literal in _SEND.findall(path.read_text()):
            kind = re.search(r"type:\s*\"(\w+)\"", literal)
            out.append((kind.group(1) if kind else "", _keys(literal), path.name))
    return out


def test_every_message_the_browser_sends_is_declared_with_exactly_its_keys():
    sent = _sent()
    assert {kind for kind, _, _ in sent} == set(REQUESTS)  # each declared request is sent somewhere, and no other
    for kind, keys, where in sent:
        declared = typing.get_type_hints(REQUESTS[kind])
        assert sorted(keys) == sorted(declared), (where, kind)
        assert typing.get_args(declared["type"]) == (kind,)


def test_the_widget_dispatches_each_declared_request_and_ignores_the_rest():
    w = widgets.ExplorerWidget(json.loads((FIXTURES / "widget_sample.json").read_text()))
    assert set(w._HANDLERS) == set(REQUESTS)
    replies, actions = [], []
    w.send = lambda content, buffers=None: replies.append(content)
    w.on_action(actions.append)
    for action in ({"type": "toggle", "name": "max_autotune", "value": True}, {"type": "select", "index": 0},
                   {"type": "repro"}):
        w._on_message(w, action, [])
    assert [a["type"] for a in actions] == list(contract.WIDGET_ACTIONS)
    w._on_message(w, {"type": "what_if", "graph": "g0", "group": "op0", "measure": False, "id": "w1"}, [])
    assert replies[-1]["type"] == "what_if" and replies[-1]["id"] == "w1" and "error" in replies[-1]  # a trace: no recompiles
    for ignored in ({"type": "unknown"}, ["part"], None):
        w._on_message(w, ignored, [])
    assert len(replies) == 1 and len(actions) == 3


@pytest.mark.parametrize("literal, keys", [('type: "part", key, id, revision: model.get("revision")',
                                            ["type", "key", "id", "revision"]),
                                           ('type: "select", index: Number(select.value)', ["type", "index"])])
def test_object_literal_keys_are_read_with_calls_in_their_values(literal, keys):
    assert _keys(literal) == keys
