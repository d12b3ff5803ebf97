"""The only code that touches torch._dynamo / torch._inductor private APIs.

One small module per hook. Each adapter is feature-probed (``hasattr``), never version-checked, so a
torch upgrade is a change in this folder alone. ``hooks.capture_hooks`` enters all of them in one
context manager and restores every patched symbol on exit, also when compilation raises.
"""
