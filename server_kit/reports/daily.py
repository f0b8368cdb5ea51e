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
* ``large_wins`` - each beneficiary whose prizes of one game (an account's: of the day)
  reach 15,000 EUR, with who they are, and ``large_win_prizes`` the prizes that make
  each sum (R75.6);
* ``machines`` - a hall's video bingo machines: plays, stakes, prizes, jackpots, credit
  in and out, gross gaming revenue (R3.5.d, R98);
* ``incidents`` - a hall's incidents of the day (refusals at the door with their ground,
  self-exclusions, failed terminals, faults, those recorded by hand) and its complaints
  with the room chief who witnessed each (R75.4, R75.5, R77.2);
* ``payout`` - the prizes paid against the collection, as percentages beside the 70%
  minimum, and what the sales set aside in the pots (R88.1);
* ``pots`` - every pot's balance at the day's start and end, and what went in and out
  (R88.1: the money parked in pots, in plain sight);
* ``tax`` - the tax year to the end of the day: the bingo stakes and the machines' gross
  gaming revenue, the tax of each, and the day's share of it (R98.2).
"""

from __future__ import annotations

import datetime
from datetime import tzinfo
from pathlib import Path
from typing import Iterable, Sequence
from zoneinfo import ZoneInfo

from protocol.audit.report import AuditReport, report_name
from protocol.daily import DailyReport, LargeWin
from protocol.settlement.tax import YearTax
from server_kit.audit_folder import is_day
from server_kit.reports.cms import CMS_SUFFIX, ReportSigner, write_signed_folder
from server_kit.reports.document import DATA, Cell, Cents, Column, JournalRange, Report, ReportError, Table, Wording

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


def daily_report(day: DailyReport, wording: Wording = DATA) -> Report:
    """The tables of ``day``'s report, in the order the PDF prints them, in ``wording`` (the data's: English)."""
    t = wording.t
    who = t("hall") if day.origin == "hall" else t("central server")
    title = t("Daily report of {day} - {who} {server}", day=wording.day(day.day), who=who, server=day.server)
    totals = day.totals()
    journal = fields_of("journal", t("Journal records"), [
        ("journal_first_seq", t("First record"), day.first_seq),
        ("journal_last_seq", t("Last record of the day"), day.last_seq),
        ("journal_last_hash", t("Its hash"), day.last_hash),
    ])
    report = fields_of("report", t("Report"), [
        ("day", t("Day"), wording.day(day.day)),
        ("origin", t("Made by"), who),
        ("server", t("Server"), day.server),
        ("timezone", t("Time zone"), day.timezone),
    ])
    summary = fields_of("totals", t("Totals of the day (R83.5)"), [
        ("games", t("Games"), totals.games if totals else 0),
        ("cards_sold", t("Cards sold"), totals.cards_sold if totals else 0),
        ("prizes_paid_cents", t("Prizes paid"), Cents(totals.prizes_paid_cents if totals else 0)),
        ("collection_cents", t("Collection"), Cents(totals.collection_cents if totals else 0)),
        ("machines_revenue_cents", t("Machines' gross gaming revenue (R98)"), Cents(day.machines_revenue_cents())),
    ])
    games = table_of("games", t("Games and running totals (R83.5, R95.4 c)"), [
        ("game_id", t("Game")), ("state", t("State")), ("price_cents", t("Card price")),
        ("cards_sold", t("Cards sold")), ("collection_cents", t("Collection")), ("prizes_paid_cents", t("Prizes paid")),
        ("refunded_cards", t("Cards refunded")), ("refunded_cents", t("Refunded")), ("total_games", t("Games so far")),
        ("total_cards_sold", t("Cards so far")), ("total_prizes_paid_cents", t("Prizes so far")),
        ("total_collection_cents", t("Collection so far")),
    ], [
        (row.game.game_id, t(row.game.state), Cents(row.game.price_cents), row.game.cards_sold,
         Cents(row.game.collection_cents), Cents(row.game.prizes_paid_cents), row.game.refunded_cards,
         Cents(row.game.refunded_cents), row.games, row.cards_sold, Cents(row.prizes_paid_cents),
         Cents(row.collection_cents))
        for row in day.running_totals()
    ])
    balls = table_of("balls", t("Balls of each game in the order drawn (R95.4 b)"), [
        ("game_id", t("Game")), ("ball_count", t("Balls")), ("balls", t("In the order drawn")),
    ], [(game.game_id, len(game.balls), " ".join(map(str, game.balls))) for game in day.games])
    cards = table_of("cards", t("Cards bought (R95.4 a, c, d)"), [
        ("game_id", t("Game")), ("kind", t("Kind")), ("series", t("Series")), ("first", t("First card")),
        ("last", t("Last card")),
        ("count", t("Cards")), ("value_cents", t("Value of a card")), ("stake_pct", t("Stake %")),
        ("amount_cents", t("Paid")), ("hall", t("Hall")), ("where", t("Terminal or seller")),
        ("refunded", t("Refunded")),
    ], [
        (c.game_id, t(c.kind), c.series, c.first, c.last, c.count, Cents(c.value_cents), c.stake_pct,
         Cents(c.amount_cents), c.hall, t(c.where), t("yes") if c.refunded else t("no"))
        for c in day.cards
    ])
    terminals = table_of("terminals", t("Where the cards were played (R95.4 d)"), [
        ("hall", t("Hall")), ("kind", t("Kind")), ("where", t("Terminal or seller")), ("games", t("Games")),
        ("cards", t("Cards")), ("amount_cents", t("Paid")),
    ], [(x.hall, t(x.kind), t(x.where), x.games, x.cards, Cents(x.amount_cents)) for x in day.terminals()])
    prizes = table_of("prizes", t("Prizes of the day (R95.4 e)"), [
        ("game_id", t("Game")), ("prize", t("Prize")), ("ball_count", t("Won on ball")), ("amount_cents", t("Amount")),
        ("paid_cents", t("Paid")), ("carry_cents", t("Carried on")), ("winners", t("Winning cards")),
    ], [
        (p.game_id, t(p.prize), p.ball_count, Cents(p.amount_cents), Cents(p.paid_cents), Cents(p.carry_cents),
         p.winners)
        for p in day.prizes
    ])
    winners = table_of("winners", t("Winning cards, and the halls and terminals where prizes were won (R95.4 b, f)"), [
        ("game_id", t("Game")), ("prize", t("Prize")), ("card", t("Card")), ("ball_count", t("Won on ball")),
        ("ball", t("Ball")), ("paid_cents", t("Paid")), ("hall", t("Hall")), ("where", t("Terminal")),
    ], [
        (w.game_id, t(w.prize), w.card_id, w.ball_count, w.ball, Cents(w.paid_cents), w.hall, t(w.where))
        for w in day.wins
    ])
    wins = [(day.day, win) for win in day.large_wins()]
    machines = table_of("machines", t("Video bingo machines: the day's plays and tax base (R3.5.d, R98)"), [
        ("machine", t("Machine")), ("plays", t("Plays")), ("stakes_cents", t("Stakes")), ("prizes_cents", t("Prizes")),
        ("jackpot_contributions_cents", t("To jackpots")), ("jackpot_payouts_cents", t("Jackpots won")),
        ("credits_in_cents", t("Credit in")), ("credits_out_cents", t("Credit out")),
        ("gross_revenue_cents", t("Gross gaming revenue")),
    ], [
        (m.machine, m.plays, Cents(m.stakes_cents), Cents(m.prizes_cents), Cents(m.jackpot_contributions_cents),
         Cents(m.jackpot_payouts_cents), Cents(m.credits_in_cents), Cents(m.credits_out_cents),
         Cents(m.gross_revenue_cents))
        for m in day.machines
    ])
    incidents = table_of("incidents", t("Incidents and complaints of the day (R75.4, R75.5, R77.2)"), [
        ("seq", t("Record")), ("time", t("Time")), ("kind", t("Kind")), ("number", t("No.")),
        ("recorded_by", t("Recorded by")), ("people", t("People")), ("text", t("Text")),
        ("room_chief", t("Complaint written before")),
    ], [
        (i.seq, wording.clock(i.time_ms, ZoneInfo(day.timezone)), t(i.kind), i.number, i.recorded_by,
         "; ".join(map(t, i.people)), wording.said(i.said, i.text),
         (i.room_chief or t("not yet confirmed by the room chief")) if i.kind == "complaint" else "")
        for i in day.incidents
    ])
    payout = day.payout()
    paid = fields_of("payout", t("Prizes paid against the collection (R88.1)"), [
        ("collection_cents", t("Collection"), Cents(payout.collection_cents)),
        ("prizes_paid_cents", t("Prizes paid (line, bingo and the pots' prizes)"), Cents(payout.prizes_paid_cents)),
        ("pot_prizes_paid_cents", t("Of which paid by the pots"), Cents(payout.pot_prizes_paid_cents)),
        ("pots_set_aside_cents", t("Set aside in the pots from the day's sales"), Cents(payout.set_aside_cents)),
        ("paid_pct", t("Prizes paid / collection"), payout.paid_pct),
        ("with_pots_pct", t("Line and bingo paid and set aside in the pots / collection"), payout.with_pots_pct),
        ("minimum_pct", t("Minimum: prizes and the pots' shares of each game's collection (R88.1)"),
         payout.minimum_pct),
    ])
    pots = table_of("pots", t("Every pot's balance: money set aside for prizes, not yet paid (R88.1)"), [
        ("pot", t("Pot")), ("opening_cents", t("At the day's start")), ("paid_in_cents", t("In")),
        ("paid_out_cents", t("Out")), ("closing_cents", t("At the day's end")),
    ], [
        (t(pot.pot), Cents(pot.opening_cents), Cents(pot.paid_in_cents), Cents(pot.paid_out_cents),
         Cents(pot.closing_cents))
        for pot in day.pots
    ])
    return Report(
        kind=KIND,
        subject=day.day,
        title=title,
        journal_range=JournalRange(day.first_seq, day.last_seq, day.last_hash),
        tables=(journal, report, summary, paid, pots, games, balls, cards, terminals, prizes, winners,
                large_wins_table(wins, wording), large_win_prizes_table(wins, wording), machines,
                tax_to_date_table(day.day, day.year_to_date, wording), incidents),
        stem=STEM,
    )


def large_wins_table(wins: Sequence[tuple[str, LargeWin]], wording: Wording = DATA) -> Table:
    """Each beneficiary of ``(day, large win)`` whose prizes reach 15,000 EUR (R75.6): who, over what, the sum."""
    t = wording.t
    return table_of("large_wins", t("Beneficiaries of 15,000 EUR or more in a game, or an account in a day (R75.6)"), [
        ("day", t("Day")), ("number", t("No.")), ("beneficiary_kind", t("Beneficiary")),
        ("beneficiary", t("Account or identity")),
        ("identity_record", t("Identity record")), ("visitor", t("Visitor")), ("game_id", t("Game (empty: the day)")),
        ("prizes", t("Prizes")), ("total_cents", t("Total")),
    ], [(wording.day(d), n, t(w.beneficiary.kind), w.beneficiary.ref, w.beneficiary.identity_seq, w.beneficiary.visitor,
         w.game_id or "", len(w.prizes), Cents(w.total_cents)) for n, (d, w) in enumerate(wins, start=1)])


def large_win_prizes_table(wins: Sequence[tuple[str, LargeWin]], wording: Wording = DATA) -> Table:
    """The prizes that make each sum of :func:`large_wins_table`, by its number (R75.6)."""
    t = wording.t
    return table_of("large_win_prizes", t("The prizes that make each sum (R75.6)"), [
        ("day", t("Day")), ("number", t("No.")), ("source", t("Where")), ("game_id", t("Game")), ("prize", t("Prize")),
        ("card", t("Card or station")), ("paid_cents", t("Paid")), ("record", t("Record")),
    ], [(wording.day(d), n, t(p.source), p.game_id, t(p.prize), p.card, Cents(p.cents), p.seq)
        for n, (d, w) in enumerate(wins, start=1) for p in w.prizes])


def tax_to_date_table(day: str, year: YearTax | None, wording: Wording = DATA) -> Table:
    """The tax year to the end of ``day`` and the day's share of it, for information (R98.2)."""
    t = wording.t
    share = year.share_of(day) if year is not None else None
    return fields_of("tax", t("The tax year to date (R98.2): 10% of the year's stakes and of the machines' revenue"), [
        ("year", t("Year"), year.year if year else None),
        ("bingo_stakes_to_date_cents", t("Bingo stakes, year to date"), Cents(year.bingo_stakes_cents if year else 0)),
        ("bingo_tax_to_date_cents", t("Bingo tax, year to date"), Cents(year.bingo_tax_cents if year else 0)),
        ("machines_revenue_to_date_cents", t("Machines' gross gaming revenue, year to date"),
         Cents(year.machines_revenue_cents if year else 0)),
        ("machines_tax_to_date_cents", t("Machines' tax, year to date (none while the revenue is negative)"),
         Cents(year.machines_tax_cents if year else 0)),
        ("bingo_stakes_cents", t("Bingo stakes of the day"), Cents(share.bingo_stakes_cents if share else 0)),
        ("bingo_share_cents", t("The day's share of the bingo tax"), Cents(share.bingo_share_cents if share else 0)),
        ("machines_revenue_cents", t("Machines' revenue of the day"),
         Cents(share.machines_revenue_cents if share else 0)),
        ("machines_share_cents", t("The day's share of the machines' tax"),
         Cents(share.machines_share_cents if share else 0)),
    ])


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
