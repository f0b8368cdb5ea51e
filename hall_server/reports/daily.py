"""The hall's daily report (R95.4 a-f, R83.5): its own games of one day, from the minutes book.

The day is a session date, as in the audit export (``docs/audit.md``): the games of
the sessions whose verification was recorded for that date.  Network games the hall
relays are the central server's, and in the central server's report.

The report's journal range runs from the first record of the day's first session to
the last record of its last session.  A day without a session is a valid report with
no games; it names the last record written by the end of that day (in the hall's time
zone) as both its first and its last record: what the journal held then.

The day's incidents and complaints (R75.4, R75.5, R77.2) are those of its sessions' minutes:
every refusal at the door, self-exclusion, failed terminal and fault, and each complaint with
the room chief who witnessed it.

The video bingo machines play outside the sessions: their lines are the calendar day
in the hall's time zone (every ``vb_play``, ``vb_credit_in`` and ``vb_credit_out``
written that day), and the journal range is widened to hold those records.

Who took each prize (R75.6) is folded by :mod:`hall_server.reports.large_wins`, and the
tax year to the end of the day (R98.2) by :mod:`hall_server.reports.yearly`.

Every pot's day (R88.1) is read from the ledger's postings: its balance before the
report's first record and after its last, and the credits and debits between; on a day
without a session the two balances are the pot's at the report's record, and nothing
went in or out.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import tzinfo
from typing import Sequence

from hall_server.reports.large_wins import beneficiary_prizes
from hall_server.reports.minutes import GameMinutes, MinutesBook, VirtualCard, build
from hall_server.reports.yearly import hall_year
from protocol.chain import Record
from protocol.daily import (
    PAPER,
    VIRTUAL,
    CardsBought,
    CardWin,
    DailyGame,
    DailyReport,
    IncidentLine,
    MachineDay,
    PotDay,
    PrizeLine,
)
from protocol.records import declared
from protocol.records.cashier import Posting
from protocol.records.videobingo import VbCreditIn, VbCreditOut, VbPlay
from protocol.settlement import POT_ACCOUNTS, POT_PRIZES
from server_kit.reports.daily import day_end_ms, day_start_ms

#: The records a machine's day is folded from.
MACHINE_RECORDS = (VbPlay, VbCreditIn, VbCreditOut)


def session_date(book: MinutesBook, closed_seq: int) -> str | None:
    """The date of the session whose ``session_closed`` record is ``closed_seq``, if there is one."""
    return next((s.date for s in book.sessions if s.closed_seq == closed_seq), None)


def hall_day(records: Sequence[Record], day: str, hall_name: str, timezone: tzinfo,
             book: MinutesBook | None = None) -> DailyReport:
    """The daily report of ``day`` from ``records``, the whole journal in order (``book``: their minutes, if made)."""
    book = book if book is not None else build(records)
    sessions = [s for s in book.sessions if s.date == day]
    games = [game for session in sessions for game in session.games]
    start, end = day_start_ms(day, timezone), day_end_ms(day, timezone)
    played = [r for r in records if start <= r.time_ms < end and isinstance(declared(r), MACHINE_RECORDS)]
    if sessions:
        first, last = sessions[0].journal_range, sessions[-1].journal_range
        span = (first.first_seq, last.last_seq, last.last_hash)
        if played and played[-1].seq > span[1]:
            span = (span[0], played[-1].seq, played[-1].hash)
    else:
        written = [r for r in records if r.time_ms < end]
        span = (written[-1].seq, written[-1].seq, written[-1].hash) if written else (0, 0, "")
    if played and played[0].seq < span[0]:
        span = (played[0].seq, span[1], span[2])
    return DailyReport(
        origin="hall",
        server=hall_name,
        day=day,
        timezone=str(timezone),
        games=tuple(_game(g) for g in games),
        cards=tuple(run for g in games for run in _cards(g, hall_name)),
        wins=tuple(win for g in games for win in _wins(g, hall_name)),
        prizes=tuple(
            PrizeLine(g.game_id, p.prize, p.order, p.amount_cents, p.paid_cents, p.carry_cents, len(p.payments))
            for g in games for p in g.prizes
        ),
        first_seq=span[0],
        last_seq=span[1],
        last_hash=span[2],
        machines=machine_days(played),
        beneficiary_prizes=beneficiary_prizes(records, day, timezone, book),
        year_to_date=hall_year(records, book, int(day[:4]), day, timezone),
        incidents=tuple(
            IncidentLine(e.seq, e.time_ms, e.kind, e.number, e.recorded_by, e.people, e.text,
                         e.witness if e.kind == "complaint" else "", e.said)
            for session in sessions for e in session.book
        ),
        pots=pot_days(records, span[0], span[1], bool(sessions)),
    )


def pot_days(records: Sequence[Record], first_seq: int, last_seq: int, played: bool) -> tuple[PotDay, ...]:
    """Every pot's day from the postings: before record ``first_seq`` and through ``last_seq`` (R88.1).

    ``played``: the day had a session; without one the pots are shown as they stood at
    ``last_seq``, with nothing in or out.
    """
    accounts = {account: name for name, account in POT_ACCOUNTS.items()}
    opening = dict.fromkeys(accounts, 0)
    paid_in = dict.fromkeys(accounts, 0)
    paid_out = dict.fromkeys(accounts, 0)
    start = first_seq if played else last_seq + 1
    for record in records:
        if record.seq > last_seq:
            break
        posting = declared(record)
        if not isinstance(posting, Posting):
            continue
        for side, legs in (("credits", posting.credits), ("debits", posting.debits)):
            for account, cents in legs:
                if account not in accounts:
                    continue
                if record.seq < start:  # a pot holds its credits less its debits
                    opening[account] += cents if side == "credits" else -cents
                elif side == "credits":
                    paid_in[account] += cents
                else:
                    paid_out[account] += cents
    return tuple(
        PotDay(name, opening[account], paid_in[account], paid_out[account],
               opening[account] + paid_in[account] - paid_out[account])
        for account, name in accounts.items()
    )


def machine_days(records: Sequence[Record]) -> tuple[MachineDay, ...]:
    """Each machine's plays and credit movements in ``records``, by machine id."""
    days: dict[str, MachineDay] = {}
    for record in records:
        event = declared(record)
        if not isinstance(event, MACHINE_RECORDS):
            continue
        was = days.get(event.machine) or MachineDay(event.machine, 0, 0, 0, 0, 0, 0, 0)
        if isinstance(event, VbPlay):
            now = replace(was, plays=was.plays + 1, stakes_cents=was.stakes_cents + event.stake_cents,
                          prizes_cents=was.prizes_cents + event.won_cents,
                          jackpot_contributions_cents=was.jackpot_contributions_cents + sum(event.contributions),
                          jackpot_payouts_cents=was.jackpot_payouts_cents + sum(j.cents for j in event.jackpots))
        elif isinstance(event, VbCreditIn):
            now = replace(was, credits_in_cents=was.credits_in_cents + event.amount)
        else:
            now = replace(was, credits_out_cents=was.credits_out_cents + event.amount)
        days[event.machine] = now
    return tuple(days[machine] for machine in sorted(days))


def _game(game: GameMinutes) -> DailyGame:
    # As the session's daily summary counts (R83.5): a refunded game sold nothing that stayed sold.
    sold = 0 if game.refunded else game.physical_cards + len(game.virtual_cards) - game.refunded_cards
    return DailyGame(
        game_id=game.game_id,
        state=game.state,
        price_cents=game.price_cents,
        balls=tuple(game.drawn),
        cards_sold=sold,
        collection_cents=0 if game.refunded else game.stakes_cents,
        prizes_paid_cents=game.prizes_paid_cents,
        refunded_cards=game.refunded_cards,
        refunded_cents=game.refunded_cents,
        pots_set_aside_cents=sum(pot.collected_cents for pot in game.pots.values()),
        pot_prizes_paid_cents=sum(p.paid_cents for p in game.prizes if p.prize in POT_PRIZES),
    )


def _cards(game: GameMinutes, hall: str) -> list[CardsBought]:
    face_value = {s.series: s.face_value_cents for s in game.series}
    runs = [
        CardsBought(game.game_id, PAPER, str(sale.series), sale.first, sale.last,
                    face_value.get(sale.series, game.price_cents), sale.amount_cents, hall, sale.seller,
                    refunded=game.refunded)
        for sale in game.paper_sales
    ]
    open_run: tuple[VirtualCard, CardsBought] | None = None
    for card in game.virtual_cards:
        refunded = game.refunded or card.label in game.refunded_virtual
        where = card.terminal_id or card.account
        if open_run is not None:
            previous, run = open_run
            if (card.series, card.card_number, where, card.price_cents, card.stake_cents, refunded) == (
                previous.series, previous.card_number + 1, run.where, previous.price_cents, previous.stake_cents,
                run.refunded,
            ):
                run = CardsBought(run.game_id, VIRTUAL, run.series, run.first, card.card_number, run.value_cents,
                                  run.amount_cents + card.stake_cents, hall, where, run.stake_pct, refunded)
                runs[-1] = run
                open_run = (card, run)
                continue
        run = CardsBought(game.game_id, VIRTUAL, str(card.series), card.card_number, card.card_number,
                          card.price_cents, card.stake_cents, hall, where, card.stake_percent, refunded)
        runs.append(run)
        open_run = (card, run)
    return runs


def _wins(game: GameMinutes, hall: str) -> list[CardWin]:
    terminal = {card.label: card.terminal_id or card.account for card in game.virtual_cards}
    wins: list[CardWin] = []
    paid: set[tuple[str, str]] = set()
    for payment in game.prizes:
        for label, cents in payment.payments:
            series, _, number = label.partition("-")
            wins.append(CardWin(game.game_id, payment.prize, series, int(number), payment.order, payment.ball, cents,
                                hall, terminal.get(label, PAPER)))
            paid.add((payment.prize, label))
    for winner in game.winners:  # verified, not yet paid
        if (winner.pattern, winner.card) not in paid:
            series, _, number = winner.card.partition("-")
            wins.append(CardWin(game.game_id, winner.pattern, series, int(number), winner.order, winner.ball, 0,
                                hall, terminal.get(winner.card, PAPER)))
    return wins
