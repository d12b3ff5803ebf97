"""Inductor's own reasons for not fusing two nodes.

The scheduler reports each refused pair as a ``WhyNoFuse`` record on the ``fusion`` artifact logger
(what ``TORCH_LOGS=fusion`` prints). We attach a handler to that logger for the capture only,
lower its level to DEBUG, stop propagation unless the user already shows these logs, and put all three back on exit.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Callable, Iterator

from . import guard

FUSION_LOGGER = "torch._inductor.scheduler.__fusion"


class _Collector(logging.Handler):
    def __init__(self, callback: Callable[[str, str, str], None]) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg
        name1, name2 = getattr(msg, "name1", None), getattr(msg, "name2", None)
        if name1 is None or name2 is None or not hasattr(msg, "reason"):
            return
        try:
            reason = msg.reason % msg.args if msg.args else msg.reason
        except Exception:  # a reason that is not a format string for its args: as it is
            reason = str(msg.reason)
        with guard.never_breaking(__name__):
            self.callback(name1, name2, reason)


@contextlib.contextmanager
def on_fusion_refused(callback: Callable[[str, str, str], None]) -> Iterator[None]:
    logger = logging.getLogger(FUSION_LOGGER)
    handler = _Collector(callback)
    level, propagate, disabled = logger.level, logger.propagate, logger.disabled
    already_shown = logger.isEnabledFor(logging.DEBUG)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = propagate and already_shown  # print only what the user asked to see
    logger.disabled = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
        logger.disabled = disabled
