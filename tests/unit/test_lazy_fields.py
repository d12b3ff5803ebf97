"""compiler/model/lazy.py: lazy fields are built by their pending builder on first read, once, and nothing else
triggers it; the model's two lazy classes (k.ir, g.wrapper.fx) use it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import pytest

from compiler.model.kernel_ir import KernelIR
from compiler.model.lazy import LazyFields
from compiler.model.stages import Wrapper


@dataclass
class Sample(LazyFields):
    text: str = ""
    size: int = 0
    name: str = "sample"  # not lazy
    pending: Callable[[], tuple[str, int]] | None = None
    _lazy_fields: ClassVar[frozenset[str]] = frozenset({"text", "size"})

    def _fill(self, built: tuple[str, int]) -> None:
        object.__setattr__(self, "text", built[0])
        object.__setattr__(self, "size", built[1])


def counting(result: Any) -> tuple[Callable[[], Any], list[int]]:
    calls: list[int] = []
    return (lambda: calls.append(1) or result), calls


def test_the_first_read_of_a_lazy_field_builds_them_all_once():
    builder, calls = counting(("built", 5))
    sample = Sample(pending=builder)
    assert calls == []
    assert sample.size == 5 and sample.text == "built" and sample.size == 5
    assert calls == [1] and sample.pending is None


def test_a_field_outside_the_set_does_not_build():
    builder, calls = counting(("built", 5))
    sample = Sample(pending=builder)
    assert sample.name == "sample" and sample.pending is builder and calls == []
    assert sample.complete() is sample and calls == [1] and sample.text == "built"


def test_a_builder_that_raises_is_tried_again_on_the_next_read():
    attempts: list[int] = []

    def flaky() -> tuple[str, int]:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("nvdisasm crashed")
        return "built", 1

    sample = Sample(pending=flaky)
    with pytest.raises(OSError):
        sample.text
    assert sample.pending is flaky and sample.text == "built" and len(attempts) == 2


def test_a_class_that_names_lazy_fields_must_say_how_to_fill_them():
    @dataclass
    class Unfilled(LazyFields):
        value: int = 0
        pending: Any = None
        _lazy_fields: ClassVar[frozenset[str]] = frozenset({"value"})

    with pytest.raises(NotImplementedError, match="Unfilled"):
        Unfilled(pending=lambda: 1).value


def test_kernel_ir_and_the_wrapper_build_on_first_read():
    built = KernelIR(stages={"ttir": "a\nb"}, line_map={"ttir": [1, None]}, meta={"num_warps": 4}, source_file="k.py")
    builder, calls = counting(built)
    ir = KernelIR(pending=builder)
    assert ir.pending is builder and calls == []
    assert ir.lines("ttir") == ["a", "b"] and ir.source_file == "k.py" and ir.meta == {"num_warps": 4}
    assert calls == [1] and ir.pending is None

    fx, fx_calls = counting("the wrapper as FX")
    wrapper = Wrapper(source="call()\n", fx_pending=fx)
    assert wrapper.source == "call()\n" and fx_calls == []
    assert wrapper.fx == "the wrapper as FX" and wrapper.fx_pending is None and fx_calls == [1]
