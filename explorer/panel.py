"""``%explorer panel``: the session in JupyterLab's right-hand side panel (through ipylab).

The panel holds one SessionView that follows the session: each new compilation (a new %%compile
cell, a toggle change in any view) is shown there with its diff against the one before; the history
picker goes back to any earlier one. ipylab adds the widget to the lab shell once the front end
reports it is ready (a message sent before that would be lost).
"""

from __future__ import annotations

from typing import Any

from .session import Session
from .view import SessionView

PANEL_LABEL = "inductor-explorer"
PANEL_MIN_WIDTH_PX = 480
_ACTIVATE_BY_ID = "tabsmenu:activate-by-id"  # JupyterLab's command; it activates side-bar widgets too


class SidePanel:
    def __init__(self, session: Session, area: str = "right") -> None:
        try:
            from ipylab import JupyterFrontEnd, Panel
        except ImportError as error:
            raise ImportError("the side panel needs ipylab: pip install 'inductor-explorer[lab]'") from error
        self.view = SessionView(session, session.entries[-1] if session.entries else None, follow=True)
        self.panel = Panel([self.view.widget])
        self.panel.title.label = PANEL_LABEL
        self.panel.title.caption = "torch.compile stages of this notebook's %%compile cells"
        self.panel.add_class("ie-side-panel")
        # JupyterLab opens a side panel at about 220 px and has no API to set its width; its layout
        # (Lumino) does honour a widget's CSS min-width, so the panel opens at least this wide and
        # can still be dragged wider. The view lays itself out for narrow widths (stacked panes).
        self.panel.layout.min_width = f"{PANEL_MIN_WIDTH_PX}px"
        self.area = area
        self.app = _frontend(JupyterFrontEnd)
        self.app.on_ready(self._add)
        if _READY.get(id(self.app)):
            self._add()

    def _add(self) -> None:
        if getattr(self, "_added", False):
            return
        self._added = True
        self.app.shell.observe(self._on_added, "_widgets")
        self.app.shell.add(self.panel, self.area, {"rank": 1000})

    def _on_added(self, change: Any) -> None:
        """The lab reports the id it gave our panel: activate it, so the side bar opens on it."""
        ours = f"IPY_MODEL_{self.panel.model_id}"
        for added in change["new"]:
            if added.get("serializedWidget") == ours and added.get("id"):
                self.app.shell.unobserve(self._on_added, "_widgets")
                self.panel_id = added["id"]
                self.app.commands.execute(_ACTIVATE_BY_ID, {"id": added["id"]})
                return

    def __repr__(self) -> str:
        return f"SidePanel({self.area}, {self.view!r})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": f"inductor-explorer opened in the {self.area} side panel"}


_APP: Any = None
_READY: dict[int, bool] = {}


def _frontend(factory: Any) -> Any:
    """One ipylab front end per kernel, remembered as ready once the lab said so."""
    global _APP
    if _APP is None:
        _APP = factory()
        _APP.on_ready(lambda: _READY.__setitem__(id(_APP), True))
    return _APP


def open_panel(session: Session, area: str = "right") -> SidePanel:
    return SidePanel(session, area)
