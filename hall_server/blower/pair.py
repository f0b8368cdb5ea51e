"""Main and reserve blower (R83.6) and the switch procedure of R84.4.

The hall draws from the main blower.  When the reserve is put to use, its 90 balls are
counted before (a set that is not complete is refused) and, when it is taken out of use,
counted after; both counts go to the ``on_count`` callback for the journal and the
minutes book.  Numbers already drawn in the game are taken out of the reserve chamber by
staff; the blower's repeated-number fault catches one that was missed.
"""

from __future__ import annotations

from typing import Callable

from twisted.internet.defer import Deferred, inlineCallbacks

from hall_server.blower.driver import BlowerDriver, CountReport
from hall_server.blower.errors import BlowerBusy, ReserveSetIncomplete


class BlowerPair:
    """Draws from the blower in use; switches to the reserve and back with counts."""

    def __init__(self, main: BlowerDriver, reserve: BlowerDriver,
                 on_count: Callable[[str, str, CountReport], None]) -> None:
        self.main = main
        self.reserve = reserve
        self.on_count = on_count
        self.active = main

    def draw(self) -> Deferred[int]:
        return self.active.draw()

    @inlineCallbacks
    def switch_to_reserve(self, game: int = 0, drawn: list[int] | None = None):
        """Count the reserve's balls (R84.4, before), then draw from it, continuing
        ``game`` with the balls already ``drawn`` if a game is in progress."""
        if self.active is self.reserve:
            raise BlowerBusy("the reserve blower is already in use")
        report = yield self.reserve.count_set()
        self.on_count(self.reserve.name, "before use", report)
        if not report.complete:
            raise ReserveSetIncomplete("counted %d, missing %s, repeated %s" % (
                report.counted, list(report.missing), list(report.repeated)))
        if game:
            self.reserve.resume_game(game, drawn or [])
            if drawn:
                yield self.reserve.resynchronise()
            else:
                yield self.reserve.start_game(game)
        self.active = self.reserve
        return report

    @inlineCallbacks
    def retire_reserve(self):
        """Count the reserve's balls after use (R84.4) and go back to the main blower."""
        if self.active is not self.reserve:
            raise BlowerBusy("the reserve blower is not in use")
        self.active = self.main
        report = yield self.reserve.count_set()
        self.on_count(self.reserve.name, "after use", report)
        return report
