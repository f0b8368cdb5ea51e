"""The pots put in play, the megabingo's announcement, the last game and the operator's contributions (R89-R91, R93.15).

The limits on the operator's contributions and where they go are
:func:`protocol.settlement.operator_contribution`."""

from __future__ import annotations

import datetime

from twisted.internet.defer import Deferred

from hall_server.hall.games.common import (
    GRAND_SUPERBINGO,
    JACKPOT,
    MEGABINGO,
    RESERVE,
    SUPERBINGO,
    GameModuleError,
    GamesBase,
    _text,
    _whole,
)
from hall_server.hall.ledger import posting_entries
from protocol.chain import Record
from protocol.game import State, describe
from protocol.ledger import Leg, Posting, Reference
from protocol.money import format_cents
from protocol.settlement import (
    JACKPOT_THRESHOLDS,
    MEGABINGO_NOTICE_DAYS,
    OPERATOR_POTS,
    POT_ACCOUNTS,
    RESERVE_BOOST_PCT,
    SUPERBINGO_LIMITS,
    LimitExceeded,
    check_reserve_boost,
    operator_contribution,
    reserve_boost_allowance,
)
from server_kit.core import Actor
from server_kit.journal.port import Entry


class PotCommands(GamesBase):
    """Pots in play, the last game, the megabingo and the operator's contributions."""

    def announce_pots(
        self,
        actor: Actor,
        superbingo_limit: int = 0,
        grand_superbingo_limit: int = 0,
        jackpot_threshold: int = 0,
        megabingo: bool = False,
    ) -> Deferred[list[Record]]:
        """Put pots in play for the game on sale, before its draw (R89, R90, R91); 0: not in play.

        Announced again while the sale is open, the later announcement replaces the earlier.
        """

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if game.machine.state is not State.SELLING:
                raise GameModuleError(
                    f"pots are announced before the game, while its sale is open, not {describe(game.machine.state)}"
                )
            superbingo = _whole(superbingo_limit, "a superbingo ball limit") or None
            grand = _whole(grand_superbingo_limit, "a grand superbingo ball limit") or None
            threshold = _whole(jackpot_threshold, "a jackpot threshold") or None
            for name, limit in (("superbingo", superbingo), ("grand superbingo", grand)):
                if limit is not None and limit not in SUPERBINGO_LIMITS:
                    raise GameModuleError(
                        f"the {name}'s ball limit is {SUPERBINGO_LIMITS.start} to "
                        f"{SUPERBINGO_LIMITS.stop - 1} (R89), not {limit}"
                    )
            if superbingo is not None and not self.rules.superbingo_bp:
                raise GameModuleError("the hall's prize rules fund no superbingo (superbingo_bp is 0)")
            if superbingo is not None and grand is not None:
                raise GameModuleError("superbingo and grand superbingo are never in play in the same game (R89)")
            if threshold is not None:
                if threshold not in JACKPOT_THRESHOLDS:
                    raise GameModuleError(f"the jackpot is won within 40, 41 or 42 balls (R91), not {threshold}")
                if not self.rules.jackpot:
                    raise GameModuleError("the hall's prize rules fund no jackpot")
            megabingo_cents = None
            if not isinstance(megabingo, bool):
                raise GameModuleError(f"megabingo is true or false, not {megabingo!r}")
            if megabingo:
                session = self.session.require_open()
                announced = self.state.megabingo
                if announced is None or announced["date"] != session.date:
                    when = "none is announced" if announced is None else f"it is announced for {announced['date']}"
                    raise GameModuleError(
                        f"a megabingo is played on the day announced at least {MEGABINGO_NOTICE_DAYS} "
                        f"days ahead (R90); {when}"
                    )
                megabingo_cents = int(announced["amount_cents"])
            return [
                (
                    "pots_announced",
                    {
                        "game_id": game.game_id,
                        "superbingo_limit": superbingo,
                        "grand_superbingo_limit": grand,
                        "jackpot_threshold": threshold,
                        "megabingo_cents": megabingo_cents,
                        "superbingo_cents": self.ledger.balance(SUPERBINGO),
                        "grand_superbingo_cents": self.ledger.balance(GRAND_SUPERBINGO),
                        "jackpot_cents": self.ledger.balance(JACKPOT),
                    },
                )
            ]

        return self.core.execute(actor, "announce_pots", decide)

    def announce_reserve_boost(self, actor: Actor, line_cents: int, bingo_cents: int) -> Deferred[list[Record]]:
        """Tell the players that the jackpot's reserve adds to this game's line and bingo (R91.7).

        The game is on sale; the session's boosts together stay within 30% of the reserve
        at the session's start, and within what the reserve holds.  The amounts move at
        the sale's close; announced again, the later announcement replaces the earlier
        (0 and 0 withdraws it).
        """

        def decide(now: int) -> list[Entry]:
            session = self.session.require_open()
            game = self.require_game()
            if game.machine.state is not State.SELLING:
                raise GameModuleError(
                    "a reserve boost is announced to the players before the game, while its sale is open, "
                    f"not {describe(game.machine.state)} (R91.7)"
                )
            if not self.rules.jackpot:
                raise GameModuleError("the hall's prize rules fund no jackpot, so there is no reserve to boost from")
            line, bingo = (_whole(v, what) for v, what in ((line_cents, "the line's boost in cents"),
                                                            (bingo_cents, "the bingo's boost in cents")))
            if line < 0 or bingo < 0:
                raise GameModuleError("a reserve boost adds to a prize: zero or more, never less")
            start = self.state.reserve_at_session_start.get(session.number, 0)
            allowance = reserve_boost_allowance(start)
            before = self.boosted_in_session(session.number, besides=game)
            reserve = self.ledger.balance(RESERVE)
            try:
                check_reserve_boost(line + bingo, before, allowance, reserve)
            except LimitExceeded:
                raise GameModuleError(
                    f"a boost of {format_cents(line + bingo)} is refused: the session may add at most "
                    f"{format_cents(allowance)} from the reserve ({RESERVE_BOOST_PCT}% of the "
                    f"{format_cents(start)} it held at the session's start), its earlier games took "
                    f"{format_cents(before)}, and the reserve holds {format_cents(reserve)} (R91.7)"
                ) from None
            return [
                (
                    "reserve_boost_announced",
                    {"game_id": game.game_id, "line_cents": line, "bingo_cents": bingo,
                     "allowance_cents": allowance, "boosted_before_cents": before, "reserve_cents": reserve},
                )
            ]

        return self.core.execute(actor, "announce_reserve_boost", decide)

    def announce_last_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Announce the game on sale as the session's last (R93.15), before its draw."""

        def decide(now: int) -> list[Entry]:
            game = self.require_game()
            if game.machine.state not in (State.SELLING, State.SALE_CLOSED):
                raise GameModuleError(
                    f"the last game is announced before its draw, not {describe(game.machine.state)}"
                )
            if game.last_game:
                raise GameModuleError(f"game {game.game_id} is already announced as the session's last")
            return [("last_game_announced", {"game_id": game.game_id, "session": game.session})]

        return self.core.execute(actor, "announce_last_game", decide)

    def announce_megabingo(self, actor: Actor, date: str, time: str, amount_cents: int) -> Deferred[list[Record]]:
        """Set a megabingo's date, time and amount at least 10 days ahead (R90)."""

        def decide(now: int) -> list[Entry]:
            if not self.rules.megabingo:
                raise GameModuleError("the hall's prize rules fund no megabingo")
            try:
                day = datetime.date.fromisoformat(date)
            except (TypeError, ValueError):
                raise GameModuleError(f"a megabingo date is YYYY-MM-DD, not {date!r}") from None
            at = _text(time, "the megabingo's time")
            today = self.session.local_date(now)  # the hall's day, in its configured time zone
            if (day - today).days < MEGABINGO_NOTICE_DAYS:
                raise GameModuleError(
                    f"a megabingo is announced at least {MEGABINGO_NOTICE_DAYS} days ahead (R90); "
                    f"{day} is {(day - today).days} day(s) after today ({today})"
                )
            pending = self.state.megabingo
            if pending is not None and datetime.date.fromisoformat(pending["date"]) >= today:
                raise GameModuleError(f"a megabingo is already announced for {pending['date']}")
            amount = _whole(amount_cents, "an amount in cents")
            fund = self.ledger.balance(MEGABINGO)
            if not 0 < amount <= fund:
                raise GameModuleError(
                    f"the megabingo's amount is more than nothing and at most its fund ({fund} cents), "
                    f"not {amount} (R90)"
                )
            return [
                (
                    "megabingo_announced",
                    {"date": day.isoformat(), "time": at, "amount_cents": amount,
                     "announced_on": today.isoformat(), "fund_cents": fund},
                )
            ]

        return self.core.execute(actor, "announce_megabingo", decide)

    def contribute_to_pot(self, actor: Actor, pot: str, amount_cents: int) -> Deferred[list[Record]]:
        """The operator pays into the superbingo, grand superbingo or jackpot (R89.5, R91.9).

        Taken from the house's share (the ruling of R89.5), within the daily and monthly limits.
        """

        def decide(now: int) -> list[Entry]:
            session = self.session.require_open()
            if pot not in OPERATOR_POTS:
                raise GameModuleError(f"the operator pays into {', '.join(OPERATOR_POTS)}, not {pot!r}")
            amount = _whole(amount_cents, "an amount in cents")
            if amount <= 0:
                raise GameModuleError(f"a contribution is a positive number of cents, not {amount}")
            day, month = session.date, session.date[:7]
            contribution = operator_contribution(
                pot, amount, self.pots(),
                self.state.operator_superbingo.get(day, 0), self.state.operator_jackpot.get(month, 0),
            )
            credits = tuple(Leg(POT_ACCOUNTS[level], cents) for level, cents in contribution.credits.items())
            posting = Posting((Leg("house", amount),), credits, f"operator:{pot}", Reference(event_seq=self.core.seq + 1))
            self.ledger.check([posting])
            return [
                ("operator_contribution", {"pot": pot, "amount_cents": amount, "date": day, "month": month}),
                *posting_entries([posting]),
            ]

        return self.core.execute(actor, "contribute_to_pot", decide)
