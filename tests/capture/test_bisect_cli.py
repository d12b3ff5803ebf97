"""``python -m explorer bisect SCRIPT``: a script's ``fn`` and ``inputs`` bisected, printed with rich; exit 0 on a
culprit, 1 on none, 2 on bad input with one line.

The culprit case (``torch.rand`` in the compiled region: the culprit is ``fallback_random``; ``--no-fusion``) calls
``main`` with this process's streams on a pseudo-terminal 100 columns wide, as a user's terminal gives them;
its variant marked ``heavy`` runs the same command in a fresh interpreter under that terminal (about a minute
on two cores: a first compile, then the whole bisect). The other cases call ``main`` in this process: a
matching program (one compile), and bad input that fails before anything compiles.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from explorer.__main__ import main
from tests import pseudo_terminal
from tests.paths import ROOT


def _script(tmp_path, text, name="program.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


CULPRIT_SCRIPT = """
    import torch

    def fn(x):
        return x + torch.rand(x.shape)

    inputs = (torch.ones(4, 4),)
    """
CULPRIT_PRINTED = ("culprit, level by level", "inductor_fallback_random", "fallback_random=True (checked)")


def test_a_culprit_is_printed_under_a_terminal_and_the_streams_are_restored(tmp_path):
    """Under a terminal the progress bar redirects sys.stdout while it is drawn; the bisect's own capture of
    what torch's bisector prints must not end up as the process's stdout (the table was lost, exit 0). The
    command runs in this process, its streams on a pseudo-terminal."""
    script = _script(tmp_path, CULPRIT_SCRIPT)
    with pseudo_terminal.this_process(columns=100) as terminal:
        code = main(["bisect", str(script), "--no-fusion"])
        after = sys.stdout, sys.stderr
    text = terminal.text
    assert code == 0, text[-3000:]
    assert after[0] is terminal.out and after[1] is terminal.err, (after, terminal)
    for expected in CULPRIT_PRINTED:
        assert expected in text, text[-3000:]


@pytest.mark.heavy  # a fresh interpreter's first compile and the whole bisect: `make test-heavy`
def test_a_culprit_is_printed_under_a_terminal_in_a_fresh_interpreter(tmp_path):
    """The case above as a user's shell runs it: a new process whose stdout and stderr are the terminal.
    CI runs the in-process case, which checks the same streams and the same printed culprit."""
    script = _script(tmp_path, CULPRIT_SCRIPT)
    driver = ("import sys\n"
              "from explorer.__main__ import main\n"
              "streams = sys.stdout, sys.stderr\n"
              f"code = main(['bisect', {str(script)!r}, '--no-fusion'])\n"
              "kept = sys.stdout is streams[0] and sys.stderr is streams[1]\n"
              "print('streams restored:', kept, type(sys.stdout).__name__, file=sys.__stdout__, flush=True)\n"
              "sys.exit(code)\n")
    done = pseudo_terminal.run([sys.executable, "-c", driver], columns=100, cwd=ROOT)
    text = done.text
    assert done.returncode == 0, text[-3000:]
    assert "streams restored: True" in text, text[-3000:]
    for expected in CULPRIT_PRINTED:
        assert expected in text, text[-3000:]


def test_a_matching_program_exits_1(tmp_path, capsys):
    script = _script(tmp_path, """
        import torch

        def double(x):
            return x * 2

        def make():
            return torch.ones(3)
        """)
    assert main(["bisect", str(script), "--fn", "double", "--inputs", "make"]) == 1
    assert "matches" in capsys.readouterr().out


@pytest.mark.parametrize("text, args, message", [
    (None, [], "no such script"),
    ("import torch\ninputs = (torch.ones(2),)\n", [], "defines no 'fn' at module level"),
    ("fn = 3\ninputs = ()\n", [], "is a int, not a function"),
    ("raise RuntimeError('broken on purpose')\n", [], "raised RuntimeError when run: broken on purpose"),
    ("import torch\nfn = torch.sin\ninputs = (torch.ones(2),)\n", ["--check", "judge"], "defines no 'judge'"),
    ("import torch\nfn = torch.sin\ninputs = (torch.ones(2),)\n", ["--check", "slower", "--slower-than", "{"],
     "neither a saved trace nor a JSON config"),
])
def test_bad_input_is_one_line_and_exits_2(tmp_path, capsys, text, args, message):
    path = tmp_path / "missing.py" if text is None else _script(tmp_path, text)
    assert main(["bisect", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("python -m explorer bisect: ") and err.count("\n") == 1, err


def test_a_check_that_raises_exits_2(tmp_path, capsys):
    script = _script(tmp_path, """
        import torch

        def fn(x):
            return x * 2

        inputs = (torch.ones(2),)

        def judge(compiled, eager):
            raise ValueError("the check itself is broken")
        """)
    assert main(["bisect", str(script), "--check", "judge"]) == 2
    err = capsys.readouterr().err
    assert "the check raised" in err and "the check itself is broken" in err and err.count("\n") == 1
