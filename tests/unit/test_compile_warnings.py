"""compiler/_torch/compile_warnings.py and guard.py: what torch warns during a capture, and what a capture hook
swallows to let the compile go on, reach the capture instead of stderr; everything else passes as before."""

from __future__ import annotations

import io
import logging
import warnings

import pytest
import torch

from compiler._torch import compile_warnings, guard


@pytest.fixture
def torch_stderr(monkeypatch, capsys):
    """What torch's own log handler on torch._dynamo printed so far: it writes to the stderr of when torch was
    imported (patched here), or (torch 2.14) follows sys.stderr (capsys reads it)."""
    printed = io.StringIO()
    for handler in logging.getLogger("torch._dynamo").handlers:
        if type(handler) is logging.StreamHandler:  # pytest adds handlers of its own: not theirs
            monkeypatch.setattr(handler, "stream", printed)

    def text() -> str:
        printed.write(capsys.readouterr().err)
        return printed.getvalue()

    return text


@pytest.fixture
def dynamo_module_logger():
    """A logger of a Dynamo module, at DEBUG as TORCH_LOGS="+dynamo" would set it (setLevel: loggers cache
    whether a level is enabled)."""
    logger = logging.getLogger("torch._dynamo.a_module")
    logger.setLevel(logging.DEBUG)
    yield logger
    logger.setLevel(logging.NOTSET)


def test_torchs_logged_warnings_are_kept_and_its_other_records_still_print(torch_stderr, dynamo_module_logger):
    logger = dynamo_module_logger
    handlers = {h: list(h.filters) for h in logging.getLogger("torch._dynamo").handlers}
    noted = []
    with compile_warnings.kept(lambda *note: noted.append(note)):
        logger.warning("Graph break from %s", "`Tensor.item()`")
        logger.debug("a debug line the user asked for")
    assert noted == [("warning", "torch._dynamo.a_module", "Graph break from `Tensor.item()`")]
    printed = torch_stderr()
    assert "a debug line the user asked for" in printed and "Graph break" not in printed
    assert {h: list(h.filters) for h in logging.getLogger("torch._dynamo").handlers} == handlers
    logger.warning("after the capture")
    assert "after the capture" in torch_stderr()


def test_torchs_python_warnings_are_kept_and_the_users_shown_after():
    filters = list(warnings.filters)
    noted = []
    with pytest.warns(UserWarning, match="the user's own") as shown:
        with compile_warnings.kept(lambda *note: noted.append(note)):
            warnings.warn_explicit("torch says so", UserWarning, filename=torch.__file__, lineno=7)
            warnings.warn("the user's own", UserWarning)
    assert noted == [("warning", "UserWarning at torch/__init__.py:7", "torch says so")]
    assert [str(w.message) for w in shown] == ["the user's own"]
    assert warnings.filters == filters


def test_the_guard_swallows_and_reports_to_the_innermost_capture():
    outer, inner = [], []
    with guard.reporting_to(lambda *r: outer.append(r)), guard.reporting_to(lambda *r: inner.append(r)):
        with guard.never_breaking("compiler._torch.kernel_lines"):
            raise AttributeError("no get_name\nand more")
        reached = True
    assert reached and outer == [] and inner == [("kernel_lines", "AttributeError", "no get_name")]
    with pytest.raises(KeyboardInterrupt), guard.never_breaking("compiler._torch.kernel_lines"):
        raise KeyboardInterrupt  # an interrupt still stops the compile


def test_outside_a_capture_the_guard_warns_instead():
    with pytest.warns(UserWarning, match=r"kernel_nodes hook failed \(ValueError: bad\)"):
        with guard.never_breaking("compiler._torch.kernel_nodes"):
            raise ValueError("bad")
