"""compiler/pipeline/compile_errors.py: an error the user's code raised while the compiled function ran
(eagerly, after a graph break) names the user's line, found in its traceback, as a tracing error does."""

from __future__ import annotations

import inspect
import os

import torch

from compiler.pipeline import compile_errors


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as error:
        return error
    raise AssertionError("did not raise")


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def torch_dynamo_resume_in_checked_at_3(total):  # how Dynamo names the rest of `checked` after a graph break
    raise ValueError("too large")


def normalized(x):
    return torch.nn.functional.layer_norm(x, (96,))


def test_a_value_error_names_the_users_line_and_function():
    line = _line_of(torch_dynamo_resume_in_checked_at_3, "raise")
    assert compile_errors.describe(_raised(torch_dynamo_resume_in_checked_at_3, 1.0)) == (
        f'ValueError: too large\n  at {__file__}:{line} in checked: raise ValueError("too large")')


def test_a_torch_call_refusing_the_users_arguments_names_the_call_and_the_library_frame_inside():
    message = compile_errors.describe(_raised(normalized, torch.randn(2, 95)))
    first, where, inside = message.splitlines()
    assert first.startswith("RuntimeError: Given normalized_shape=[96]")
    assert where == f"  at {__file__}:{_line_of(normalized, 'layer_norm')} in normalized: " \
                    "return torch.nn.functional.layer_norm(x, (96,))"
    assert inside.startswith("  inside ") and inside.endswith(" in layer_norm") and "torch/nn/functional.py" in inside



def _in_dynamo(source: str, name: str):
    """A function whose frames say they are in torch/_dynamo (as Dynamo's own code is)."""
    namespace: dict = {}
    exec(compile(source, os.path.join(os.path.dirname(torch.__file__), "_dynamo", "a_pass.py"), "exec"), namespace)
    return namespace[name]


def users_step(compile_frame):
    return compile_frame()


def test_an_error_torchs_compiler_raised_below_the_users_frame_names_no_user_line():
    compile_frame = _in_dynamo("def compile_frame():\n    raise RuntimeError('lowering failed')\n", "compile_frame")
    assert compile_errors.describe(_raised(users_step, compile_frame)) == "RuntimeError: lowering failed"
