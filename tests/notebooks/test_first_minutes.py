"""A newcomer's first minutes: the README's code runs as written, the demo's answer fits one screen, the
command line fails in one line, and a compile says nothing about what the explorer itself set.

Each runs as a newcomer runs it, in a fresh process (``python -m explorer ...``, a script of the
README's blocks), so nothing a test session imported or warned about before hides a problem.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from compiler.render.summary import compact_view
from explorer.__main__ import main as cli
from tests.paths import ROOT

SCREEN_LINES, SCREEN_COLUMNS = 40, 80


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(SCREEN_COLUMNS), **env}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=environment)


def readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_the_readmes_code_runs_as_written(tmp_path):
    blocks = readme_python_blocks()
    assert len(blocks) >= 2 and "explorer.compile" in blocks[0]
    script = tmp_path / "readme.py"
    script.write_text("\n".join(blocks))
    done = _run([str(script)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "trace.json").is_file() and (tmp_path / "trace.html").is_file()
    assert "fused" in done.stdout and "your line" in done.stdout  # c.show() in a terminal: the compact view


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return _run(["-m", "explorer", "demo", "--html", str(out / "demo.html"), "--save", str(out / "demo.json")],
                out), out


def test_the_demos_answer_fits_one_screen_and_names_the_users_lines(demo):
    done, out = demo
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.rstrip("\n").splitlines()
    assert len(lines) <= SCREEN_LINES and max(map(len, lines)) <= SCREEN_COLUMNS, done.stdout
    from explorer import demo as source

    for text in ("h = self.norm(x)", "h = torch.nn", "return x + s"):  # each line of the block that made a kernel
        assert any("demo.py:" in line and text in line for line in lines), (text, done.stdout)
    assert "next:" in done.stdout and "open demo.html" in done.stdout  # written in the working directory
    assert (out / "demo.html").is_file() and json.loads((out / "demo.json").read_text())["graphs"]
    assert Path(source.__file__).name == "demo.py"


def test_a_compile_says_nothing_about_what_the_explorer_set(demo):
    """No Python warning under the default filters in a fresh process (a compile and a profile). A CUDA
    build of torch on a machine without a GPU logs that from its native layer: that is the machine's."""
    done, _ = demo
    assert not re.search(r"\w+Warning: ", done.stderr), done.stderr


def test_show_of_a_saved_trace_fits_80_columns_with_every_header_whole(demo):
    _, out = demo
    console = Console(file=io.StringIO(), width=SCREEN_COLUMNS)
    from explorer import __main__ as command

    command._show(command.build_parser().parse_args(["show", str(out / "demo.json"), "--no-pager"]), console)
    text = console.file.getvalue()
    assert max(map(len, text.splitlines())) <= SCREEN_COLUMNS
    header = next(line for line in text.splitlines() if line.strip().startswith("kernel "))
    assert header.split() == ["kernel", "kind", "ms", "share", "user", "line"]
    assert text.index("fused") < text.index("kernels (")  # the summary leads


def test_compact_view_lists_each_kernel_with_its_time_and_line(demo):
    import explorer

    _, out = demo
    c = explorer.load(out / "demo.json")
    console = Console(file=io.StringIO(), width=SCREEN_COLUMNS)
    console.print(compact_view(c))
    text = console.file.getvalue()
    c.graphs[0].kernels, kernels = [], c.graphs[0].kernels  # a graph of views only compiles to no kernel
    console.print(compact_view(c))
    c.graphs[0].kernels = kernels
    rows: list[list[str]] = []  # a line holding one word continues the kernel id above it (never cut)
    for line in text.split("your line")[1].splitlines()[2:]:
        if rows and len(line.split()) == 1:
            rows[-1][0] += line.split()[0]
        elif line.split():
            rows.append(line.split())
    found = {cells[0]: " ".join(cells[1:]) for cells in rows}
    for kernel in c.kernels:
        assert f"{c.profiles[-1].ms(kernel):.3f}" in found[kernel.id] and "demo.py:" in found[kernel.id]


@pytest.mark.parametrize("argv, message", [
    (["show", "missing.json"], "python -m explorer show: no such file or directory: missing.json"),
    (["show", "not_a_trace.json"], "python -m explorer show: "),
    (["trace", "missing_dir"], "python -m explorer trace: "),
])
def test_command_line_errors_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not_a_trace.json").write_text('{"hello": 1}')
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err, err


def test_help_is_plain_text(capsys):
    with pytest.raises(SystemExit):
        cli(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and "python -m explorer demo" in text and "show PATH" in text


def test_a_headless_notebook_run_prints_nothing(tmp_path):
    """What `make docs` and the notebook tests run: the kernel's own notices stay out of the output."""
    script = ("import tempfile, pathlib; from tests.notebook_runner import execute, write_kernel_spec, errors_of; "
              "nb, _ = execute('12_counters.ipynb', write_kernel_spec(pathlib.Path(tempfile.mkdtemp()))); "
              "assert not errors_of(nb), errors_of(nb)")
    done = _run(["-c", script], tmp_path)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr


def test_the_readmes_links_into_the_docs_resolve():
    from markdown.extensions.toc import slugify

    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", readme)
    assert len(links) >= 10
    for path, anchor in links:
        target = ROOT / path
        assert target.is_file(), path
        headings = {slugify(h.strip(), "-") for h in re.findall(r"^#+ (.+)$", target.read_text(), flags=re.M)}
        assert not anchor or anchor in headings, (path, anchor)


def test_show_prints_in_a_terminal_and_returns_the_view_in_a_notebook(demo, monkeypatch, capsys):
    import explorer

    _, out = demo
    c = explorer.load(out / "demo.json")
    assert c.show() is None and explorer.show(c.kernels[0]) is None
    printed = capsys.readouterr().out
    assert "your line" in printed and c.kernels[0].id in printed
    monkeypatch.setattr(explorer.progress, "in_notebook", lambda: True)
    assert type(c.show()).__name__ == "ExplorerWidget"
    assert explorer.show(c.kernels[0]) is c.kernels[0]  # displayed by its own HTML
