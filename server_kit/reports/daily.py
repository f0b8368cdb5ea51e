"""The daily report (:class:`protocol.daily.DailyReport`) laid out as the tables of a :class:`Report`.

The same tables for a hall and for the central server, so the regulator reads one
format (``docs/reports.md`` lists every field):

* ``journal`` - the records the report was made from, and the day's last record's hash;
* ``report`` - who made it, for which day, in which time zone;
* ``totals`` - the day's games, cards sold, prizes paid and collection (R83.5);
* ``games`` - every game with the running totals after it (R83.5, R95.4 c);
* ``balls`` - every game's balls in the order drawn (R95.4 b);
* ``cards`` - every purchase: series, first and last card, value, where (R95.4 a, c, d);
* ``terminals`` - what each terminal and seller sold (R95.4 d);
* ``prizes`` - every prize with its amount, payment and carry (R95.4 e);
* ``winners`` - every winning card, its hall and terminal, its payment (R95.4 b, f);
* ``large_wins`` - the winning cards paid 15,000 EUR or more, with the date by which
  each is reported (R75.6);
* ``machines`` - a hall's video bingo machines: plays, stakes, prizes, jackpots, credit
  in and out, gross gaming revenue and the machines' tax (R3.5.d, R98);
* ``payout`` - the prizes paid against the collection, as percentages beside the 70%
  minimum, and what the sales set aside in the pots (R88.1);
* ``pots`` - every pot's balance at the day's start and end, and what went in and out
  (R88.1: the money parked in pots, in plain sight).
"""

from __future__ import annotations

import datetime
from datetime import tzinfo
from pathlib import Path
from typing import Iterable, Sequence

from protocol.audit.report import AuditReport, report_name
from protocol.daily import LARGE_WIN_DAYS, CardWin, DailyReport
from server_kit.audit_folder import is_day
from server_kit.reports.cms import CMS_SUFFIX, ReportSigner, write_signed_folder
from server_kit.reports.document import Cell, Cents, Column, JournalRange, Report, ReportError, Table

KIND = "daily"
#: The file names of a daily report: ``report.json``, ``report.csv``, ``report.pdf``.
STEM = "report"


#: Where a server keeps the reports it writes by itself, in its folder; its feed sends them from there.
REPORTS_FOLDER = "reports"


def day_folder(home: Path, day: str) -> Path:
    """The folder of ``day``'s report written at the close: ``reports/daily-YYYY-MM-DD``."""
    return home / REPORTS_FOLDER / f"daily-{day}"


def audit_report_folder(home: Path, day: str) -> Path:
    """The folder of ``day``'s audit export written at the close: ``reports/audit-YYYY-MM-DD``."""
    return home / REPORTS_FOLDER / report_name(day)


def write_audit_report(home: Path, report: AuditReport, signer: ReportSigner) -> Path:
    """Write ``report`` (the day's audit export, or its refusal; or, too big for the feed, a refusal that
    says so) signed into its folder under ``reports/``."""
    return write_signed_folder(report.fitted().files(), audit_report_folder(home, report.segment.day), signer)


def table_of(key: str, title: str, columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Cell]]) -> Table:
    return Table(key, title, tuple(Column(k, t) for k, t in columns), tuple(tuple(row) for row in rows))


def fields_of(key: str, title: str, fields: Sequence[tuple[str, str, Cell]]) -> Table:
    return Table(key, title, tuple(Column(k, t) for k, t, _ in fields), (tuple(v for _, _, v in fields),),
                 vertical=True)


def daily_report(day: DailyReport) -> Report:
    """The tables of ``day``'s report, in the order the PDF prints them."""
    who = "hall" if day.origin == "hall" else "central server"
    title = f"Daily report of {day.day} - {who} {day.server}"
    totals = day.totals()
    journal = fields_of("journal", "Journal records", [
        ("journal_first_seq", "First record", day.first_seq),
        ("journal_last_seq", "Last record of the day", day.last_seq),
        ("journal_last_hash", "Its hash", day.last_hash),
    ])
    report = fields_of("report", "Report", [
        ("day", "Day", day.day),
        ("origin", "Made by", who),
        ("server", "Server", day.server),
        ("timezone", "Time zone", day.timezone),
    ])
    summary = fields_of("totals", "Totals of the day (R83.5)", [
        ("games", "Games", totals.games if totals else 0),
        ("cards_sold", "Cards sold", totals.cards_sold if totals else 0),
        ("prizes_paid_cents", "Prizes paid", Cents(totals.prizes_paid_cents if totals else 0)),
        ("collection_cents", "Collection", Cents(totals.collection_cents if totals else 0)),
        ("machines_revenue_cents", "Machines' gross gaming revenue (R98)", Cents(day.machines_revenue_cents())),
        ("machines_tax_cents", "Machines' tax, 10% of it (R98)", Cents(day.machines_tax_cents())),
    ])
    games = table_of("games", "Games and running totals (R83.5, R95.4 c)", [
        ("game_id", "Game"), ("state", "State"), ("price_cents", "Card price"),
        ("cards_sold", "Cards sold"), ("collection_cents", "Collection"), ("prizes_paid_cents", "Prizes paid"),
        ("refunded_cards", "Cards refunded"), ("refunded_cents", "Refunded"), ("total_games", "Games so far"),
        ("total_cards_sold", "Cards so far"), ("total_prizes_paid_cents", "Prizes so far"),
        ("total_collection_cents", "Collection so far"),
    ], [
        (row.game.game_id, row.game.state, Cents(row.game.price_cents), row.game.cards_sold,
         Cents(row.game.collection_cents), Cents(row.game.prizes_paid_cents), row.game.refunded_cards,
         Cents(row.game.refunded_cents), row.games, row.cards_sold, Cents(row.prizes_paid_cents),
         Cents(row.collection_cents))
        for row in day.running_totals()
    ])
    balls = table_of("balls", "Balls of each game in the order drawn (R95.4 b)", [
        ("game_id", "Game"), ("ball_count", "Balls"), ("balls", "In the order drawn"),
    ], [(game.game_id, len(game.balls), " ".join(map(str, game.balls))) for game in day.games])
    cards = table_of("cards", "Cards bought (R95.4 a, c, d)", [
        ("game_id", "Game"), ("kind", "Kind"), ("series", "Series"), ("first", "First card"), ("last", "Last card"),
        ("count", "Cards"), ("value_cents", "Value of a card"), ("stake_pct", "Stake %"),
        ("amount_cents", "Paid"), ("hall", "Hall"), ("where", "Terminal or seller"), ("refunded", "Refunded"),
    ], [
        (c.game_id, c.kind, c.series, c.first, c.last, c.count, Cents(c.value_cents), c.stake_pct,
         Cents(c.amount_cents), c.hall, c.where, "yes" if c.refunded else "no")
        for c in day.cards
    ])
    terminals = table_of("terminals", "Where the cards were played (R95.4 d)", [
        ("hall", "Hall"), ("kind", "Kind"), ("where", "Terminal or seller"), ("games", "Games"),
        ("cards", "Cards"), ("amount_cents", "Paid"),
    ], [(t.hall, t.kind, t.where, t.games, t.cards, Cents(t.amount_cents)) for t in day.terminals()])
    prizes = table_of("prizes", "Prizes of the day (R95.4 e)", [
        ("game_id", "Game"), ("prize", "Prize"), ("ball_count", "Won on ball"), ("amount_cents", "Amount"),
        ("paid_cents", "Paid"), ("carry_cents", "Carried on"), ("winners", "Winning cards"),
    ], [
        (p.game_id, p.prize, p.ball_count, Cents(p.amount_cents), Cents(p.paid_cents), Cents(p.carry_cents),
         p.winners)
        for p in day.prizes
    ])
    winners = table_of("winners", "Winning cards, and the halls and terminals where prizes were won (R95.4 b, f)", [
        ("game_id", "Game"), ("prize", "Prize"), ("card", "Card"), ("ball_count", "Won on ball"),
        ("ball", "Ball"), ("paid_cents", "Paid"), ("hall", "Hall"), ("where", "Terminal"),
    ], [
        (w.game_id, w.prize, w.card_id, w.ball_count, w.ball, Cents(w.paid_cents), w.hall, w.where)
        for w in day.wins
    ])
    large = large_wins_table([(day.day, win) for win in day.large_wins()])
    machines = table_of("machines", "Video bingo machines: the day's plays and tax base (R3.5.d, R98)", [
        ("machine", "Machine"), ("plays", "Plays"), ("stakes_cents", "Stakes"), ("prizes_cents", "Prizes"),
        ("jackpot_contributions_cents", "To jackpots"), ("jackpot_payouts_cents", "Jackpots won"),
        ("credits_in_cents", "Credit in"), ("credits_out_cents", "Credit out"),
        ("gross_revenue_cents", "Gross gaming revenue"),
    ], [
        (m.machine, m.plays, Cents(m.stakes_cents), Cents(m.prizes_cents), Cents(m.jackpot_contributions_cents),
         Cents(m.jackpot_payouts_cents), Cents(m.credits_in_cents), Cents(m.credits_out_cents),
         Cents(m.gross_revenue_cents))
        for m in day.machines
    ])
    payout = day.payout()
    paid = fields_of("payout", "Prizes paid against the collection (R88.1)", [
        ("collection_cents", "Collection", Cents(payout.collection_cents)),
        ("prizes_paid_cents", "Prizes paid (line, bingo and the pots' prizes)", Cents(payout.prizes_paid_cents)),
        ("pot_prizes_paid_cents", "Of which paid by the pots", Cents(payout.pot_prizes_paid_cents)),
        ("pots_set_aside_cents", "Set aside in the pots from the day's sales", Cents(payout.set_aside_cents)),
        ("paid_pct", "Prizes paid / collection", payout.paid_pct),
        ("with_pots_pct", "Line and bingo paid and set aside in the pots / collection", payout.with_pots_pct),
        ("minimum_pct", "Minimum: prizes and the pots' shares of each game's collection (R88.1)", payout.minimum_pct),
    ])
    pots = table_of("pots", "Every pot's balance: money set aside for prizes, not yet paid (R88.1)", [
        ("pot", "Pot"), ("opening_cents", "At the day's start"), ("paid_in_cents", "In"),
        ("paid_out_cents", "Out"), ("closing_cents", "At the day's end"),
    ], [
        (pot.pot, Cents(pot.opening_cents), Cents(pot.paid_in_cents), Cents(pot.paid_out_cents),
         Cents(pot.closing_cents))
        for pot in day.pots
    ])
    return Report(
        kind=KIND,
        subject=day.day,
        title=title,
        journal_range=JournalRange(day.first_seq, day.last_seq, day.last_hash),
        tables=(journal, report, summary, paid, pots, games, balls, cards, terminals, prizes, winners, large, machines),
        stem=STEM,
    )


def report_by(day: str) -> str:
    """The last day to report a large win of ``day`` to the regulator (R75.6: within 30 days)."""
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=LARGE_WIN_DAYS)).isoformat()


def large_wins_table(wins: Sequence[tuple[str, CardWin]]) -> Table:
    """The wins of 15,000 EUR or more of ``(day, win)``, each with the day it is reported by (R75.6)."""
    return table_of("large_wins", "Wins of 15,000 EUR or more, to report within 30 days (R75.6)", [
        ("day", "Day"), ("game_id", "Game"), ("prize", "Prize"), ("card", "Card"), ("paid_cents", "Paid"),
        ("hall", "Hall"), ("where", "Terminal"), ("report_by", "Report by"),
    ], [(d, w.game_id, w.prize, w.card_id, Cents(w.paid_cents), w.hall, w.where, report_by(d)) for d, w in wins])


def checked_day(day: str, today: datetime.date) -> str:
    """``day`` if it is a date ``YYYY-MM-DD`` no later than ``today`` (the server's date), else one clear error."""
    if not is_day(day):
        raise ReportError(f"--day is a date, YYYY-MM-DD, not {day!r}")
    if datetime.date.fromisoformat(day) > today:
        raise ReportError(f"--day {day} is in the future: today is {today.isoformat()}")
    return day


def day_start_ms(day: str, timezone: tzinfo) -> int:
    """The first millisecond of ``day`` in ``timezone``."""
    start = datetime.date.fromisoformat(day)
    return int(datetime.datetime.combine(start, datetime.time(), timezone).timestamp() * 1000)


def day_end_ms(day: str, timezone: tzinfo) -> int:
    """The first millisecond after ``day`` in ``timezone``: a record before it was written by the day's end."""
    following = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    return int(datetime.datetime.combine(following, datetime.time(), timezone).timestamp() * 1000)


def written_lines(day: DailyReport, written: Sequence[Path]) -> list[str]:
    """What a daily report command prints: the day, the journal's last record, the files, the check."""
    lines = [f"daily report of {day.day}: {len(day.games)} game(s), up to journal record {day.last_seq} "
             f"(hash {day.last_hash or 'none: the journal is empty'})"]
    lines += [f"  {path} (signature {path.name}{CMS_SUFFIX})" for path in written]
    lines.append(f"verify: openssl cms -verify -binary -inform DER -in {written[0]}{CMS_SUFFIX} -content {written[0]} "
                 "-CAfile ca.pem -purpose any")
    return lines
