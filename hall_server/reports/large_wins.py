"""Who took each prize of a hall's day (R75.6), folded from the journal for the daily report.

Every prize the hall paid is a :class:`~protocol.daily.BeneficiaryPrize`:

* a prize of the hall's own games and of the games played with the partner hall is a
  ``prize:*`` posting: credited to ``player:<account>`` it is the account's; paid from a
  cash desk it is a paper card's, and the card's winner is the person the cashier
  identified in a ``prize_winner_identified`` record of that game (one person per
  document within the game), or the card alone when nobody was;
* a network game's prize is the ``network_credit_paid`` record that credited the account;
* a video bingo play's prizes and jackpots are the ``vb_play`` record's: the account
  signed in on the station when it played, or else the account the station's credit
  then went out to; a credit paid out in cash leaves the station as the beneficiary.

Which day a prize belongs to: the session date of its game for the hall's own and joint
games (as the rest of the report); the calendar day in the hall's time zone of the
record for network credits and video bingo plays.  :func:`protocol.daily.large_wins`
then sums them per account over the day and per person within a game.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import Mapping, Sequence

from hall_server.reports.minutes import MinutesBook
from protocol.chain import Record
from protocol.daily import (
    ACCOUNT,
    HALL_GAME,
    JOINT_GAME,
    NETWORK_GAME,
    PAPER_CARD,
    PAPER_WINNER,
    STATION,
    VIDEO_BINGO,
    Beneficiary,
    BeneficiaryPrize,
)
from protocol.records import declared
from protocol.records.cashier import PlayerAccountOpened, Posting
from protocol.records.network import NetworkCreditPaid
from protocol.records.prizes import PrizeWinnerIdentified
from protocol.records.videobingo import VbCreditOut, VbPlay, VbPlayerSignedIn, VbPlayerSignedOut

PLAYER = "player:"
PRIZE_REASON = "prize:"
#: How a video bingo jackpot shows among the prizes of a play.
JACKPOT_PRIZES = {"machine": "machine jackpot", "super": "superjackpot"}


@dataclass
class _Fold:
    day: str
    timezone: tzinfo
    game_days: Mapping[str, tuple[str, str]]  # game id -> (session date, HALL_GAME or JOINT_GAME)
    visitors: dict[str, int] = field(default_factory=dict)  # account number -> visitor
    #: game id -> card -> the beneficiary its identity record names
    identified: dict[str, dict[str, Beneficiary]] = field(default_factory=dict)
    #: game id -> document -> the first identity record of that document in the game
    documents: dict[str, dict[str, int]] = field(default_factory=dict)
    signed_in: dict[tuple[str, int], str] = field(default_factory=dict)  # (machine, station) -> account
    #: the plays won with nobody signed in, by station, waiting for their credit to go out
    pending: dict[tuple[str, int], list[BeneficiaryPrize]] = field(default_factory=dict)
    prizes: list[BeneficiaryPrize] = field(default_factory=list)

    def on_day(self, record: Record) -> bool:
        return datetime.datetime.fromtimestamp(record.time_ms / 1000, self.timezone).date().isoformat() == self.day

    def account(self, ledger_account: str) -> Beneficiary:
        number = ledger_account.removeprefix(PLAYER)
        return Beneficiary(ACCOUNT, number, visitor=self.visitors.get(number))

    def identify(self, seq: int, identified: PrizeWinnerIdentified) -> None:
        """A paper winner identified (record ``seq``): their cards are theirs for the whole game, prizes paid
        before included."""
        first = self.documents.setdefault(identified.game_id, {}).setdefault(identified.document, seq)
        cards = self.identified.setdefault(identified.game_id, {})
        for card in identified.cards:
            cards[card] = Beneficiary(PAPER_WINNER, f"identity record {first}", identity_seq=first)

    def apply(self, record: Record) -> None:
        event = declared(record)
        match event:
            case PlayerAccountOpened():
                self.visitors[event.account] = event.visitor
            case Posting():
                self._posting(record, event)
            case NetworkCreditPaid():
                if event.kind == "prize" and event.amount_cents > 0 and self.on_day(record):
                    self.prizes.append(BeneficiaryPrize(
                        self.account(event.account), NETWORK_GAME, event.game_id, str(event.pattern),
                        f"{event.terminal}/{event.card_number}", event.amount_cents, record.seq))
            case VbPlayerSignedIn():
                self.signed_in[(event.machine, event.station)] = event.account
            case VbPlayerSignedOut():
                self.signed_in.pop((event.machine, event.station), None)
            case VbPlay():
                self._play(record, event)
            case VbCreditOut():
                waiting = self.pending.pop((event.machine, event.station), [])
                if event.destination == "account" and event.account:
                    who = self.account(event.account)
                    waiting = [replace(prize, beneficiary=who) for prize in waiting]
                self.prizes.extend(waiting)

    def _posting(self, record: Record, posting: Posting) -> None:
        reason, reference = posting.reason, posting.reference
        game_id = reference.game_id
        if not reason.startswith(PRIZE_REASON) or game_id is None or game_id not in self.game_days:
            return
        date, source = self.game_days[game_id]
        if date != self.day:
            return
        card = str(reference.card)
        for account, cents in posting.credits:
            if account.startswith(PLAYER):
                who = self.account(account)
            else:  # paid in cash from a desk: a paper card's winner
                who = self.identified.get(game_id, {}).get(card) or Beneficiary(PAPER_CARD, f"{game_id}/{card}")
            self.prizes.append(BeneficiaryPrize(who, source, game_id, reason.removeprefix(PRIZE_REASON), card, cents,
                                                reference.event_seq or record.seq))

    def _play(self, record: Record, play: VbPlay) -> None:
        if not self.on_day(record):
            return
        station = (play.machine, play.station)
        game_id, where = f"{play.machine}#{play.number}", f"{play.machine}.{play.station}"
        account = self.signed_in.get(station)
        who = self.account(account) if account else Beneficiary(STATION, where)
        won = [("play", play.won_cents)] + [(JACKPOT_PRIZES.get(j.which, j.which), j.cents) for j in play.jackpots]
        prizes = [BeneficiaryPrize(who, VIDEO_BINGO, game_id, prize, where, cents, record.seq)
                  for prize, cents in won if cents > 0]
        if account:
            self.prizes.extend(prizes)
        else:  # the winner is known once the station's credit goes out
            self.pending.setdefault(station, []).extend(prizes)


def beneficiary_prizes(records: Sequence[Record], day: str, timezone: tzinfo,
                       book: MinutesBook) -> tuple[BeneficiaryPrize, ...]:
    """Every prize of ``day`` with who took it, from ``records`` (the whole journal, in order)."""
    game_days: dict[str, tuple[str, str]] = {}
    for session in book.sessions:
        game_days.update({game.game_id: (session.date, HALL_GAME) for game in session.games})
        game_days.update({joint.game_id: (session.date, JOINT_GAME) for joint in session.joint_games})
    fold = _Fold(day, timezone, game_days)
    for record in records:
        if isinstance(event := declared(record), PrizeWinnerIdentified):
            fold.identify(record.seq, event)
    for record in records:
        fold.apply(record)
    for waiting in fold.pending.values():  # credit not paid out yet: the station stands for the winner
        fold.prizes.extend(waiting)
    return tuple(sorted(fold.prizes, key=lambda prize: prize.seq))
