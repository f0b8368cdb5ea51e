"""The ball blower: faults its board reports, its serial link, the switch to the reserve (R85.5, R86)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, keyed, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class BlowerFault(JournalRecord):
    """Blower ``blower`` reports fault ``code`` (``fault`` its name) at draw ``draw_no``.

    ``ball`` is the ball concerned (the repeated number), ``null`` when none;
    ``message`` the fault as staff read it.  The blower in use suspends the game.
    """

    type: ClassVar[str] = "blower_fault"
    blower: str
    code: int
    fault: str
    draw_no: int
    ball: int | None
    message: str


@record
@dataclass(frozen=True, kw_only=True)
class BlowerLink(JournalRecord):
    """The serial link to blower ``blower`` went ``up`` (true) or down, with the ``detail``."""

    type: ClassVar[str] = "blower_link"
    blower: str
    up: bool
    detail: str


@record
@dataclass(frozen=True, kw_only=True)
class BlowerFaultCleared(JournalRecord):
    """Staff clear blower ``blower``'s fault after a check."""

    type: ClassVar[str] = "blower_fault_cleared"
    blower: str


@record
@dataclass(frozen=True, kw_only=True)
class BlowerSwitched(JournalRecord):
    """The draw moves from blower ``from`` to blower ``to``, in front of witnesses.

    ``balls_drawn`` is how many balls of the game were drawn when the reserve took
    over; absent when the reserve is retired and the main blower takes back.
    """

    type: ClassVar[str] = "blower_switched"
    to: str
    from_: str = keyed("from")
    balls_drawn: int | None = optional()
