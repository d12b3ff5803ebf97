"""The command line starts fast and quietly: ``--help`` imports no torch, ``show`` of a saved trace (JSON,
read by the model and printed by rich) no torch either, and nothing is said on stderr, even where numpy,
which torch warns about when it is missing, is not installed.

Each command runs in a fresh interpreter, as ``python -m explorer`` does (``runpy`` with the package's
``__main__``), and reports which modules it left imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

from tests.paths import FIXTURES, ROOT

# run the command as `python -m explorer ARGV` does, then print what it imported as the last line of stdout
_RUN = """
import json, runpy, sys
sys.argv = ["explorer", *{argv!r}]
if {hide_numpy!r}:
    sys.modules["numpy"] = None  # as in an environment without numpy: importing it fails
try:
    runpy.run_module("explorer", run_name="__main__", alter_sys=True)
except SystemExit as done:
    code = done.code
else:
    code = 0
print(json.dumps({{"code": code, "torch": sorted(m for m in sys.modules if m.split(".")[0] == "torch")}}))
"""


def _command(*argv: str, hide_numpy: bool = False) -> tuple[dict, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-c", _RUN.format(argv=list(argv), hide_numpy=hide_numpy)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done


def test_help_imports_no_torch_and_says_nothing_on_stderr_even_without_numpy():
    imported, done = _command("--help", hide_numpy=True)
    assert imported["code"] == 0 and "show PATH" in done.stdout
    assert imported["torch"] == []
    assert done.stderr == ""  # torch's "Failed to initialize NumPy" is printed only when torch is imported


def test_show_of_a_saved_trace_imports_no_torch():
    imported, done = _command("show", str(FIXTURES / "gpu_training.json"), "--no-pager")
    assert imported["code"] == 0 and "triton_per_fused_native_layer_norm_native_layer_norm_backward_2" in done.stdout
    assert imported["torch"] == []
    assert done.stderr == ""


def test_numpy_is_a_core_dependency():
    """torch warns on import ("Failed to initialize NumPy") in an environment without it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [dep.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower()
             for dep in project["dependencies"]]
    assert "numpy" in names, project["dependencies"]


def test_loading_and_diffing_saved_traces_imports_no_torch():
    """Two traces recorded elsewhere (here: on a GPU) opened and compared on a machine that only reads them."""
    script = (f"import json, sys, explorer\n"
              f"a = explorer.load({str(FIXTURES / 'gpu_default.json')!r})\n"
              f"b = explorer.load({str(FIXTURES / 'gpu_native_matmul.json')!r})\n"
              f"d = explorer.diff(a, b)\n"
              f"print(json.dumps({{'outputs': d.outputs.note,"
              f" 'torch': sorted(m for m in sys.modules if m.split('.')[0] == 'torch')}}))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["outputs"] == "a compilation loaded from a file has no outputs"
    assert result["torch"] == []


def test_diff_of_two_saved_traces_pairs_their_kernels_and_imports_no_torch():
    imported, done = _command("diff", str(FIXTURES / "gpu_default.json"), str(FIXTURES / "gpu_native_matmul.json"))
    assert imported["code"] == 0 and imported["torch"] == [] and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].startswith("native_matmul: default -> True; kernels +0 -1 ~1 =0")
    # the extern mm became a Triton kernel with tl.dot that also computes the epilogue: one changed pair
    assert any("extern_kernels.mm" in line and "triton_red_fused_add_gelu_mm_0" in line and "changed" in line
               for line in lines)
    assert "+++ triton_red_fused_add_gelu_mm_0" in done.stdout
    imported, done = _command("diff", "--summary", str(FIXTURES / "gpu_default.json"),
                              str(FIXTURES / "gpu_native_matmul.json"))
    assert "+++" not in done.stdout and done.stdout.startswith("native_matmul: default -> True")


def test_diff_of_a_directory_says_what_diff_takes():
    imported, done = _command("diff", str(FIXTURES / "gpu_default.json"), str(FIXTURES / "torch_trace_nccl"))
    assert imported["code"] == 2 and done.stdout.count("\n") == 1  # only _RUN's own line
    assert done.stderr.strip() == (f"python -m explorer diff: {FIXTURES / 'torch_trace_nccl'} is a directory: diff "
                                   "compares two traces saved by c.save(path); `python -m explorer trace "
                                   f"{FIXTURES / 'torch_trace_nccl'}` prints a TORCH_TRACE directory")


def test_every_commands_help_reads_as_plain_text():
    """The help is printed as it is written: no reStructuredText marks from a docstring."""
    from explorer.__main__ import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps the subcommands' parsers there
    for name, command in {"": parser, **commands}.items():
        text = command.format_help()
        assert "``" not in text, f"python -m explorer {name} --help:\n{text}"
    bisect = commands["bisect"].format_help()
    assert "python -m explorer bisect SCRIPT: explorer.bisect on a program a script defines" in bisect
    assert "a function NAME(compiled_output, eager_output) -> bool" in bisect
