"""Renderings for terminals (rich) and notebooks (HTML): each module registers its classes' renderings
with the model's ``rich_of`` / ``html_of`` (compiler/model/slots.py) when imported here."""

from . import bisect, compile_time, core, counters, cudagraphs, diff, dynamo, memory_ir, reports, tables, traceset, watch, what_if  # noqa: F401 - each registers its renderings
