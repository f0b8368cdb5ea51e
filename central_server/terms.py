"""The prize terms of interconnected bingo, notified to the regulator before they apply (R93.11, R94.3).

A network game's terms are its winning combinations and each one's share of the sales.
:class:`PrizeTerms` (a module of the central core) folds the terms notified
(``prize_terms_notified``) and decides, for each configured game before it is
scheduled:

* the first terms ever are notified and in force at once (the licence's);
* terms equal to those in force: the game is scheduled;
* a change of the percentages is notified now and applies :data:`NOTICE_DAYS` days later
  (R94.3: "the system refuses to apply it earlier"): the game is not scheduled until then
  (a start of the central server after that day schedules it);
* a change of the combinations alone is notified and applies at once (R93.11: notified
  to the regulator and announced to the players, which the halls do from the game's
  scheduling on).

Terms compare as the prizes' patterns and basis points, in order; a carry into a game is
not a term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.internet import defer

from central_server.domain.config import NetworkGameConfig
from central_server.module import SYSTEM
from protocol.chain import Record
from protocol.records import declared
from protocol.records.notices import PrizeTermsNotified
from server_kit.core import CommandCore

#: Days between a change of percentages' notice and the day it may apply (R94.3).
NOTICE_DAYS = 5
NOTICE_MS = NOTICE_DAYS * 24 * 3600 * 1000


def terms_of(config: NetworkGameConfig) -> list[dict[str, Any]]:
    prizes = config.to_dict()["prizes"]
    return [{"pattern": p["pattern"], "basis_points": p["basis_points"]} for p in prizes]


@dataclass(frozen=True)
class Admission:
    """Whether a game may be scheduled now; when not, from when."""

    schedule: bool
    applies_from_ms: int
    notified: bool  # a notice was journaled for it


class PrizeTerms:
    def __init__(self, core: CommandCore) -> None:
        self.core = core
        #: The terms last notified and when they apply; and the terms in force before them.
        self.latest: list[dict[str, Any]] | None = None
        self.latest_from_ms = 0
        self.before: list[dict[str, Any]] | None = None
        core.add_module(self)
        core.allow({"notify_prize_terms": {"system"}})

    def apply(self, record: Record) -> None:
        event = declared(record)
        if isinstance(event, PrizeTermsNotified):
            if self.latest is not None and record.time_ms >= self.latest_from_ms:
                self.before = self.latest  # the last terms were in force when the new ones were notified
            self.latest = list(event.prizes)
            self.latest_from_ms = event.applies_from_ms

    def reset(self) -> None:
        self.latest, self.latest_from_ms, self.before = None, 0, None

    def checkpoint(self) -> Any:
        return {"latest": self.latest, "latest_from_ms": self.latest_from_ms, "before": self.before}

    def restore(self, data: Any) -> None:
        if not isinstance(data, dict) or sorted(data) != ["before", "latest", "latest_from_ms"]:
            raise TypeError("the prize terms' checkpoint holds other fields")
        self.latest, self.latest_from_ms, self.before = data["latest"], data["latest_from_ms"], data["before"]

    def in_force(self, now_ms: int) -> list[dict[str, Any]] | None:
        if self.latest is None or now_ms >= self.latest_from_ms:
            return self.latest
        return self.before

    @defer.inlineCallbacks
    def admit(self, config: NetworkGameConfig):  # type: ignore[no-untyped-def]
        """Whether ``config``'s game may be scheduled now (an :class:`Admission`), notifying its terms when new."""
        terms = terms_of(config)
        now = self.core.now_ms()
        if terms == self.latest:
            return Admission(now >= self.latest_from_ms, self.latest_from_ms, False)
        current = self.in_force(now)
        percentages = current is not None and [t["basis_points"] for t in terms] != [t["basis_points"] for t in current]
        combinations = current is not None and [t["pattern"] for t in terms] != [t["pattern"] for t in current]
        if current is not None and not percentages and not combinations:
            return Admission(True, now, False)  # the terms in force, while a change waits for its day
        delay = NOTICE_MS if percentages else 0

        def decide(now_ms: int) -> list[PrizeTermsNotified]:
            return [PrizeTermsNotified(
                game_id=config.game_id, prizes=terms, applies_from_ms=now_ms + delay,
                percentages_changed=percentages, combinations_changed=combinations,
            )]

        (record,) = yield self.core.execute(SYSTEM, "notify_prize_terms", decide)
        notice = declared(record)
        assert isinstance(notice, PrizeTermsNotified)
        applies = notice.applies_from_ms
        return Admission(applies <= record.time_ms, applies, True)
