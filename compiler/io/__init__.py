"""Every JSON conversion of the model: the trace (``trace.py``), the TraceSet (``traceset.py``), run
reports (``reports.py``), the Dynamo stage (``dynamo.py``), sympy expressions as text (``sympy_text.py``),
Chrome traces (``chrome_trace.py``), compile-time reports (``compile_time.py``) and diffs (``diff.py``);
``files.load`` opens a saved file whatever it holds."""

from . import chrome_trace, compile_time, diff, files, reports, trace, traceset  # noqa: F401 - they fill slots
