"""Framed messages between the sweep and its local workers: an 8-byte length, then a pickle.

Only plain data crosses (dicts, strings, the payload's bytes): the user's objects stay inside the
payload, which the worker unpacks itself (compiler/sweeps/payload.py).
"""

from __future__ import annotations

import pickle
import struct
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")


def send(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO) -> Any:
    """The next message, or None when the other side has gone (end of stream)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)
