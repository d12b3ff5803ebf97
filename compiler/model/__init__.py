"""The plain data classes of every stage and report, and the registry (``slots.py``) the rooms above fill.

Standard library and sympy only: nothing here imports torch, rich or pygments, or any room above it.
"""
