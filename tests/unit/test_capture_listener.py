"""compiler/_torch/hooks.py: the capture hooks take one CaptureListener, fire exactly the events its protocol
names, and refuse a listener that lacks one before anything of torch is patched."""

from __future__ import annotations

from typing import Any

import pytest

from compiler._torch import hooks, inductor_config
from compiler.pipeline.capture import _Recorder


def _listener_class(events: tuple[str, ...]) -> type:
    """A listener with a do-nothing method per event, noting every event method read from it."""

    class Spy:
        def __init__(self) -> None:
            self.read: list[str] = []

        def __getattribute__(self, name: str) -> Any:
            if name.startswith("on_"):
                object.__getattribute__(self, "read").append(name)
            return object.__getattribute__(self, name)

    for name in events:
        def event(self: Any, *args: Any) -> None:
            pass

        event.__name__ = name
        setattr(Spy, name, event)
    return Spy


def test_the_hooks_read_exactly_the_protocols_events():
    spy = _listener_class(hooks.EVENTS)()
    with hooks.capture_hooks(spy, settings={}):
        pass
    assert sorted(spy.read) == sorted(hooks.EVENTS)  # an event fired without a protocol method fails here too
    assert "on_output_code" in hooks.EVENTS and "on_pad_mm" in hooks.EVENTS


def test_a_listener_without_an_event_is_refused_naming_it_and_nothing_is_patched():
    before = inductor_config.snapshot()
    lacking = _listener_class(tuple(e for e in hooks.EVENTS if e not in ("on_pad_mm", "on_autotune")))()
    with pytest.raises(TypeError, match=r"Spy is not a CaptureListener: it has no on_autotune, on_pad_mm"):
        with hooks.capture_hooks(lacking, settings={"max_autotune": True}):
            pass
    assert lacking.read == [] and inductor_config.snapshot() == before


def test_every_event_is_wrapped_once():
    wrapped: list[str] = []

    def wrap(hook: Any) -> Any:
        wrapped.append(hook.__name__)
        return hook

    with hooks.capture_hooks(_listener_class(hooks.EVENTS)(), settings={}, wrap=wrap):
        pass
    assert sorted(wrapped) == sorted(hooks.EVENTS)


def test_the_capture_recorder_is_a_complete_listener():
    recorder = _Recorder({}, "cpu", None)
    assert all(callable(getattr(recorder, name)) for name in hooks.EVENTS)
