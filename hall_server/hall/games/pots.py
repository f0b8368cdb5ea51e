"""The pots put in play, the megabingo's announcement, the last game, and the operator's contributions
and their taking back (R89-R91, R93.15).

The limits on the operator's contributions and where they go are
:func:`protocol.settlement.operator_contribution`; what it may take back of the jackpot's,
:func:`protocol.settlement.jackpot_recovery`."""

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
from hall_server.hall.ledger import posting_records
from protocol.chain import Record
from protocol.errors import N_, Cents
from protocol.game import State, describe
from protocol.ledger import Leg, Posting, Reference
from protocol.records import JournalRecord
from protocol.records.game import LastGameAnnounced
from protocol.records.prizes import (
    JackpotContributionRecovered,
    MegabingoAnnounced,
    OperatorContribution,
    PotsAnnounced,
    ReserveBoostAnnounced,
)
from protocol.settlement import (
    JACKPOT_THRESHOLDS,
    MEGABINGO_NOTICE_DAYS,
    OPERATOR_POTS,
    POT_ACCOUNTS,
    RESERVE_BOOST_PCT,
    SUPERBINGO_LIMITS,
    LimitExceeded,
    check_reserve_boost,
    jackpot_funds,
    jackpot_recovery,
    operator_contribution,
    recovery_last_day,
    reserve_boost_allowance,
)
from server_kit.core import Actor


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

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if game.machine.state is not State.SELLING:
                raise GameModuleError(N_("pots are announced before the game, while its sale is open, not {when}"),
                                      when=describe(game.machine.state))
            superbingo = _whole(superbingo_limit, "a superbingo ball limit") or None
            grand = _whole(grand_superbingo_limit, "a grand superbingo ball limit") or None
            threshold = _whole(jackpot_threshold, "a jackpot threshold") or None
            for template, limit in ((N_("the superbingo's ball limit is {least} to {most} (R89), not {limit}"),
                                     superbingo),
                                    (N_("the grand superbingo's ball limit is {least} to {most} (R89), not {limit}"),
                                     grand)):
                if limit is not None and limit not in SUPERBINGO_LIMITS:
                    raise GameModuleError(template, least=SUPERBINGO_LIMITS.start, most=SUPERBINGO_LIMITS.stop - 1,
                                          limit=limit)
            if superbingo is not None and not self.rules.superbingo_bp:
                raise GameModuleError(N_("the hall's prize rules fund no superbingo (superbingo_bp is 0)"))
            if superbingo is not None and grand is not None:
                raise GameModuleError(N_("superbingo and grand superbingo are never in play in the same game (R89)"))
            if threshold is not None:
                if threshold not in JACKPOT_THRESHOLDS:
                    raise GameModuleError(N_("the jackpot is won within 40, 41 or 42 balls (R91), not {threshold}"),
                                          threshold=threshold)
                if not self.rules.jackpot:
                    raise GameModuleError(N_("the hall's prize rules fund no jackpot"))
            megabingo_cents = None
            if not isinstance(megabingo, bool):
                raise GameModuleError(N_("megabingo is true or false, not {megabingo!r}"), megabingo=megabingo)
            if megabingo:
                session = self.session.require_open()
                announced = self.state.megabingo
                if announced is None or announced.date != session.date:
                    if announced is None:
                        raise GameModuleError(N_("a megabingo is played on the day announced at least {days} days "
                                                 "ahead (R90); none is announced"), days=MEGABINGO_NOTICE_DAYS)
                    raise GameModuleError(N_("a megabingo is played on the day announced at least {days} days "
                                             "ahead (R90); it is announced for {date}"),
                                          days=MEGABINGO_NOTICE_DAYS, date=announced.date)
                megabingo_cents = announced.amount_cents
            return [
                PotsAnnounced(
                    game_id=game.game_id,
                    superbingo_limit=superbingo,
                    grand_superbingo_limit=grand,
                    jackpot_threshold=threshold,
                    megabingo_cents=megabingo_cents,
                    superbingo_cents=self.ledger.balance(SUPERBINGO),
                    grand_superbingo_cents=self.ledger.balance(GRAND_SUPERBINGO),
                    jackpot_cents=self.ledger.balance(JACKPOT),
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

        def decide(now: int) -> list[JournalRecord]:
            session = self.session.require_open()
            game = self.require_game()
            if game.machine.state is not State.SELLING:
                raise GameModuleError(N_("a reserve boost is announced to the players before the game, while its "
                                         "sale is open, not {when} (R91.7)"), when=describe(game.machine.state))
            if not self.rules.jackpot:
                raise GameModuleError(N_("the hall's prize rules fund no jackpot, so there is no reserve to boost from"))
            line, bingo = (_whole(v, what) for v, what in ((line_cents, "the line's boost in cents"),
                                                            (bingo_cents, "the bingo's boost in cents")))
            if line < 0 or bingo < 0:
                raise GameModuleError(N_("a reserve boost adds to a prize: zero or more, never less"))
            start = self.state.reserve_at_session_start.get(session.number, 0)
            allowance = reserve_boost_allowance(start)
            before = self.boosted_in_session(session.number, besides=game)
            reserve = self.ledger.balance(RESERVE)
            try:
                check_reserve_boost(line + bingo, before, allowance, reserve)
            except LimitExceeded:
                raise GameModuleError(
                    N_("a boost of {boost} is refused: the session may add at most {allowance} from the reserve "
                       "({pct}% of the {start} it held at the session's start), its earlier games took {before}, "
                       "and the reserve holds {reserve} (R91.7)"),
                    boost=Cents(line + bingo), allowance=Cents(allowance), pct=RESERVE_BOOST_PCT, start=Cents(start),
                    before=Cents(before), reserve=Cents(reserve),
                ) from None
            return [
                ReserveBoostAnnounced(game_id=game.game_id, line_cents=line, bingo_cents=bingo,
                                      allowance_cents=allowance, boosted_before_cents=before, reserve_cents=reserve)
            ]

        return self.core.execute(actor, "announce_reserve_boost", decide)

    def announce_last_game(self, actor: Actor) -> Deferred[list[Record]]:
        """Announce the game on sale as the session's last (R93.15), before its draw."""

        def decide(now: int) -> list[JournalRecord]:
            game = self.require_game()
            if game.machine.state not in (State.SELLING, State.SALE_CLOSED):
                raise GameModuleError(N_("the last game is announced before its draw, not {when}"),
                                      when=describe(game.machine.state))
            if game.last_game:
                raise GameModuleError(N_("game {game} is already announced as the session's last"), game=game.game_id)
            return [LastGameAnnounced(game_id=game.game_id, session=game.session)]

        return self.core.execute(actor, "announce_last_game", decide)

    def announce_megabingo(self, actor: Actor, date: str, time: str) -> Deferred[list[Record]]:
        """Announce a megabingo's date and time at least 10 days ahead, its fund as the least it pays (R90).

        The megabingo pays its whole fund as it stands at that game; the announcement gives
        the fund now as the minimum - less what the sale of a game under way set aside,
        which that game's refund would take back - so that the game always pays at least
        what was announced.  From now to the game the boards and the kiosks show the date,
        the time and the amount (R90.2).
        """

        def decide(now: int) -> list[JournalRecord]:
            if not self.rules.megabingo:
                raise GameModuleError(N_("the hall's prize rules fund no megabingo"))
            try:
                day = datetime.date.fromisoformat(date)
            except (TypeError, ValueError):
                raise GameModuleError(N_("a megabingo date is YYYY-MM-DD, not {date!r}"), date=date) from None
            at = _text(time, "the megabingo's time")
            today = self.session.local_date(now)  # the hall's day, in its configured time zone
            if (day - today).days < MEGABINGO_NOTICE_DAYS:
                raise GameModuleError(
                    N_("a megabingo is announced at least {least} days ahead (R90); {day} is {days} day(s) after "
                       "today ({today})"),
                    least=MEGABINGO_NOTICE_DAYS, day=day.isoformat(), days=(day - today).days, today=today.isoformat(),
                )
            pending = self.state.megabingo
            if pending is not None and datetime.date.fromisoformat(pending.date) >= today:
                raise GameModuleError(N_("a megabingo is already announced for {date}"), date=pending.date)
            fund = self.ledger.balance(MEGABINGO)
            minimum = fund - self._megabingo_at_stake()
            if minimum <= 0:
                if fund > minimum:
                    raise GameModuleError(
                        N_("the megabingo's fund holds {fund}, {at_stake} of it from the game under way: a megabingo "
                           "is announced once its fund holds money (R90)"),
                        fund=Cents(fund), at_stake=Cents(fund - minimum))
                raise GameModuleError(
                    N_("the megabingo's fund holds {fund}: a megabingo is announced once its fund holds money (R90)"),
                    fund=Cents(fund))
            return [
                MegabingoAnnounced(date=day.isoformat(), time=at, amount_cents=minimum,
                                   announced_on=today.isoformat(), fund_cents=fund)
            ]

        return self.core.execute(actor, "announce_megabingo", decide)

    def _megabingo_at_stake(self) -> int:
        """What the game under way set aside for the megabingo at its sale's close, while its refund could take it back."""
        game = self.state.current
        if game is None or game.over or game.settlement is None:
            return 0
        return game.settlement.contributions.get(MEGABINGO, 0)

    def megabingo_announcement(self) -> dict[str, object] | None:
        """The megabingo announced and not yet played, with its fund now (R90.2): what boards and kiosks show."""
        announced = self.state.megabingo
        if announced is None:
            return None
        return {"date": announced.date, "time": announced.time, "minimum_cents": announced.amount_cents,
                "fund_cents": self.ledger.balance(MEGABINGO), "announced_on": announced.announced_on}

    def contribute_to_pot(self, actor: Actor, pot: str, amount_cents: int) -> Deferred[list[Record]]:
        """The operator pays into the superbingo, grand superbingo or jackpot (R89.5, R91.9).

        Taken from the house's share (the ruling of R89.5), within the daily and monthly limits.
        """

        def decide(now: int) -> list[JournalRecord]:
            session = self.session.require_open()
            if pot not in OPERATOR_POTS:
                raise GameModuleError(N_("the operator pays into {pots}, not {pot!r}"), pots=", ".join(OPERATOR_POTS),
                                      pot=pot)
            amount = _whole(amount_cents, "an amount in cents")
            if amount <= 0:
                raise GameModuleError(N_("a contribution is a positive number of cents, not {amount}"), amount=amount)
            day, month = session.date, session.date[:7]
            contribution = operator_contribution(
                pot, amount, self.pots(),
                self.state.operator_superbingo.get(day, 0), self.state.operator_jackpot.get(month, 0),
            )
            credits = tuple(Leg(POT_ACCOUNTS[level], cents) for level, cents in contribution.credits.items())
            posting = Posting((Leg("house", amount),), credits, f"operator:{pot}", Reference(event_seq=self.core.seq + 1))
            self.ledger.check([posting])
            return [
                OperatorContribution(pot=pot, amount_cents=amount, date=day, month=month),
                *posting_records([posting]),
            ]

        return self.core.execute(actor, "contribute_to_pot", decide)

    def recover_jackpot_contribution(self, actor: Actor, amount_cents: int) -> Deferred[list[Record]]:
        """The operator takes back ``amount_cents`` of what it contributed to the jackpot and players have
        not won, within a calendar year from the day after each contribution (R91.9).

        Between sessions only: the day's audit export starts from the pot levels at the
        session's verification, and no announced jackpot changes under the players' eyes.
        The unwon contributions are counted as :class:`protocol.settlement.OperatorJackpot`
        says; the money leaves the accumulated jackpot first, then the reserve, back to the
        house.  The jackpot's bank account then holds more than its funds: the cashier
        takes the surplus back to the operator (``withdraw_jackpot_surplus``, R91.11).
        """

        def decide(now: int) -> list[JournalRecord]:
            sessions = self.session.state
            if sessions.current is not None:
                raise GameModuleError(
                    N_("session {session} is under way: the operator takes back its jackpot contributions between "
                       "sessions, after the closing and before the next verification (R91.9)"),
                    session=sessions.current.number)
            verification = sessions.last_verification
            if verification is not None and verification.get("passed"):
                raise GameModuleError(
                    N_("the system was verified for the session of {date}: the operator takes back its jackpot "
                       "contributions between sessions, after the closing and before the next verification (R91.9)"),
                    date=verification["date"])
            amount = _whole(amount_cents, "an amount in cents")
            if amount <= 0:
                raise GameModuleError(N_("the operator takes back a positive number of cents, not {amount}"),
                                      amount=amount)
            day = self.session.local_date(now).isoformat()
            try:
                recovery = jackpot_recovery(self.state.jackpot_contributions, self.pots(), day, amount)
            except LimitExceeded as error:
                raise GameModuleError(str(error)) from None
            debits = tuple(
                Leg(account, cents)
                for account, cents in ((JACKPOT, recovery.from_accumulated), (RESERVE, recovery.from_reserve))
                if cents
            )
            posting = Posting(debits, (Leg("house", amount),), "operator:jackpot taken back",
                              Reference(event_seq=self.core.seq + 1))
            self.ledger.check([posting])
            return [
                JackpotContributionRecovered(
                    amount_cents=amount, date=day, accumulated_cents=recovery.from_accumulated,
                    reserve_cents=recovery.from_reserve, contributions=recovery.taken,
                    recoverable_cents=recovery.recoverable_before,
                ),
                *posting_records([posting]),
            ]

        return self.core.execute(actor, "recover_jackpot_contribution", decide)

    def jackpot_contributions_picture(self, now_ms: int) -> dict[str, object]:
        """The operator's jackpot contributions players have not won, and what may be taken back today (R91.9)."""
        day = self.session.local_date(now_ms).isoformat()
        contributions = self.state.jackpot_contributions
        return {
            "day": day,
            "recoverable_cents": min(contributions.recoverable(day), jackpot_funds(self.pots())),
            "contributions": [
                {"date": c.date, "unwon_cents": c.unwon_cents, "until": recovery_last_day(c.date),
                 "recoverable": c.recoverable_on(day)}
                for c in contributions.contributions
            ],
        }
