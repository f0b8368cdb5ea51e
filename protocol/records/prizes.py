"""Claims, prizes and their payment, and the pots (R85.6-11, R87-R91)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol import events
from protocol.records.base import JournalRecord, record
from protocol.records.events import EventRecord


@record
@dataclass(frozen=True, kw_only=True)
class ClaimRejected(EventRecord, events.ClaimRejected):
    """A claimed card does not win (:class:`protocol.events.ClaimRejected`, R85.11), checked after ball ``ball_count``."""

    ball_count: int


@record
@dataclass(frozen=True, kw_only=True)
class PrizeWon(EventRecord, events.PrizeWon):
    """A card won a pattern (:class:`protocol.events.PrizeWon`, R87)."""


@record
@dataclass(frozen=True, kw_only=True)
class PrizePaid(JournalRecord):
    """Prize ``prize`` (line, bingo or a pot) of ``amount_cents``, won on ball ``ball_count``, is paid (R85.9, R88).

    ``payments`` is each winning card (``series-number``) with what it is paid, as
    ``[card, cents]``; ``carry_cents`` what the split leaves and is carried (R88.5);
    ``desk`` the cash drawer paper cards were paid from (``null`` when only player
    accounts were credited).  The postings follow.
    """

    type: ClassVar[str] = "prize_paid"
    game_id: str
    prize: str
    ball_count: int
    amount_cents: int
    carry_cents: int
    payments: tuple[tuple[str, int], ...]
    desk: str | None


@record
@dataclass(frozen=True, kw_only=True)
class PotsAnnounced(JournalRecord):
    """The pots in play in game ``game_id`` and their levels at the announcement (R89-R91).

    ``superbingo_limit``, ``grand_superbingo_limit``, ``jackpot_threshold`` and
    ``megabingo_cents`` are the terms of each pot in play, ``null`` for a pot that is not;
    the ``*_cents`` levels are what each pot holds.
    """

    type: ClassVar[str] = "pots_announced"
    game_id: str
    superbingo_limit: int | None
    grand_superbingo_limit: int | None
    jackpot_threshold: int | None
    megabingo_cents: int | None
    superbingo_cents: int
    grand_superbingo_cents: int
    jackpot_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class ReserveBoostAnnounced(JournalRecord):
    """The players are told that game ``game_id``'s line and bingo get ``line_cents`` and
    ``bingo_cents`` from the jackpot's reserve (R91.7); a later announcement replaces it.

    ``allowance_cents`` is 30% of the reserve at the session's start, ``boosted_before_cents``
    what the session's earlier games took of it, ``reserve_cents`` the reserve now.
    """

    type: ClassVar[str] = "reserve_boost_announced"
    game_id: str
    line_cents: int
    bingo_cents: int
    allowance_cents: int
    boosted_before_cents: int
    reserve_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class MegabingoAnnounced(JournalRecord):
    """A megabingo on ``date`` at ``time``, announced on ``announced_on`` (R90: at least 10 days ahead)
    with ``fund_cents`` in its fund.

    It pays its whole fund as it stands at that game; ``amount_cents`` is the least it
    pays, announced with it: the fund less what the sale of a game under way set aside.
    (Journals written before the megabingo paid its whole fund hold there the amount it
    was to pay.)
    """

    type: ClassVar[str] = "megabingo_announced"
    date: str
    time: str
    amount_cents: int
    announced_on: str
    fund_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class OperatorContribution(JournalRecord):
    """The operator pays ``amount_cents`` from the house into ``pot`` on ``date`` (R89.5, R91.9).

    ``month`` (YYYY-MM) is kept for the monthly limit.
    """

    type: ClassVar[str] = "operator_contribution"
    pot: str
    amount_cents: int
    date: str
    month: str


@record
@dataclass(frozen=True, kw_only=True)
class JackpotContributionRecovered(JournalRecord):
    """The operator takes back ``amount_cents`` on ``date`` of what it contributed to the jackpot and
    players have not won (R91.9), between sessions.

    ``accumulated_cents`` and ``reserve_cents`` are what left the accumulated jackpot and
    the reserve; ``contributions`` each contribution it came from (``[date, cents]``,
    oldest first); ``recoverable_cents`` what could be taken back that day.  The
    posting to the house follows.
    """

    type: ClassVar[str] = "jackpot_contribution_recovered"
    amount_cents: int
    date: str
    accumulated_cents: int
    reserve_cents: int
    contributions: tuple[tuple[str, int], ...]
    recoverable_cents: int
