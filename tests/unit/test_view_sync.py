"""A session view sends the browser one message when it switches compilations: sent trait by trait, the
browser drew the new status beside the old toggle states in between (a toggle just unticked showed ticked
until its own message came)."""

from __future__ import annotations

import explorer
from explorer import Session, settings
from tests.paths import FIXTURES


class RecordingComm:
    """Stands in for the kernel's comm: keeps the state keys of each message the widget sends."""

    comm_id = "recording"
    kernel = object()

    def __init__(self) -> None:
        self.sent: list[set[str]] = []

    def send(self, data=None, buffers=None) -> None:
        self.sent.append(set((data or {}).get("state", {})))

    def on_msg(self, callback) -> None:
        pass

    def close(self, *args, **kwargs) -> None:
        pass


def test_switching_to_another_compilation_is_one_message_with_its_status_and_toggles():
    session = Session()
    for name, config in (("gpu_default.json", {}), ("gpu_block_ptr.json", {"use_block_ptr": True})):
        session.add(explorer.load(FIXTURES / name), code="f", config=config)
    view = session.view(0)
    view.widget.comm = comm = RecordingComm()
    view.show(1)
    assert len(comm.sent) == 1, comm.sent
    assert {"status", "toggles", "summary", "diff", "current"} <= comm.sent[0]
    assert view.widget.toggles == settings.toggle_states(session[1].config)
