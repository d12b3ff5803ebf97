"""Every JSON conversion of the model: the trace (``trace.py``), the TraceSet (``traceset.py``), run
reports (``reports.py``), the Dynamo stage (``dynamo.py``), sympy expressions as text (``sympy_text.py``)
and Chrome traces (``chrome_trace.py``); ``files.load`` opens a saved file whatever it holds."""

from . import chrome_trace, files, reports, trace, traceset  # noqa: F401 - trace, traceset, chrome_trace fill slots
