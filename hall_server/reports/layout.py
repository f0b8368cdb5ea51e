"""The minutes laid out as reports: titled tables of typed cells, before any rendering.

A :class:`Report` is what the PDF and the CSV of one report both print, table by
table and column by column, so the two cannot disagree on a field.  Money stays
integer cents (:class:`Cents`) until a rendering formats it; a column holding cents has
a key ending in ``_cents``.  Times are the hall's local time, with the journal record
number beside them for the exact reference.

The first table of every report, ``journal``, names the records the report was made
from (R77.3): an inspector ties the report to the journal by them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Iterable, Mapping, Sequence

from hall_server.reports.minutes import (
    BookEntry,
    GameMinutes,
    JointGameMinutes,
    MonthCount,
    SessionMinutes,
    VirtualCard,
)
from server_kit.reports.document import Cell, Cents, Column, JournalRange, Report, Table


def _table(key: str, title: str, columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Cell]],
           vertical: bool = False) -> Table:
    cols = tuple(Column(k, t) for k, t in columns)
    body = tuple(tuple(row) for row in rows)
    for row in body:
        assert len(row) == len(cols), f"table {key}: a row of {len(row)} cells for {len(cols)} columns"
    return Table(key, title, cols, body, vertical)


def _fields(key: str, title: str, fields: Sequence[tuple[str, str, Cell]]) -> Table:
    return _table(key, title, [(k, t) for k, t, _ in fields], [[v for _, _, v in fields]], vertical=True)


def _cents(value: int | None) -> Cents | None:
    return None if value is None else Cents(value)


def _time(time_ms: int, timezone: tzinfo) -> str:
    return datetime.fromtimestamp(time_ms / 1000, timezone).strftime("%Y-%m-%d %H:%M:%S")


def _words(values: Iterable[object]) -> str:
    return " ".join(str(v) for v in values)


def stake_percent(stake_cents: int, price_cents: int) -> str:
    """The share of the price staked, to the hundredth of a percent (rounded down)."""
    if price_cents <= 0:
        return "-"
    basis_points = stake_cents * 10_000 // price_cents
    return f"{basis_points // 100}.{basis_points % 100:02d}%"


def card_ranges(numbers: Iterable[int]) -> str:
    """``[1, 2, 3, 7, 9, 10]`` -> ``1-3 7 9-10``."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _journal(kind: str, subject: str, span: JournalRange, hall_name: str, timezone: tzinfo) -> Table:
    return _fields(
        "journal",
        "Report and journal",
        [
            ("report", "Report", kind),
            ("subject", "Of", subject),
            ("hall", "Hall", hall_name),
            ("time_zone", "Times in", str(timezone)),
            ("journal_first_seq", "From journal record", span.first_seq),
            ("journal_last_seq", "To journal record", span.last_seq),
            ("journal_last_hash", "Hash of the last record", span.last_hash),
        ],
    )


# --- Games ------------------------------------------------------------------------------------


def _virtual_groups(cards: Sequence[VirtualCard], labels: Mapping[int, str]) -> list[list[Cell]]:
    """Virtual cards by series and stake percentage (R83.4): count, card numbers, stakes."""
    groups: dict[tuple[int, int, int, str], list[VirtualCard]] = {}
    for card in cards:
        percent = (f"{card.stake_percent}%" if card.stake_percent is not None
                   else stake_percent(card.stake_cents, card.price_cents))
        groups.setdefault((card.series, card.price_cents, card.stake_cents, percent), []).append(card)
    return [
        [series, labels.get(series, ""), percent, Cents(price), Cents(stake), len(group), card_ranges(c.card_number for c in group),
         _words(sorted({c.terminal_id or "-" for c in group})), Cents(stake * len(group))]
        for (series, price, stake, percent), group in sorted(groups.items())
    ]


def game_tables(game: GameMinutes, timezone: tzinfo, prefix: str = "") -> list[Table]:
    """The minutes of one game (R77.1, R83.3-4, R89.6, R90.4, R91.10) as tables."""
    lead = f"Game {game.number}: " if prefix else ""
    virtual_stakes = sum(c.stake_cents for c in game.virtual_cards)
    virtual = {f"{c.series}-{c.card_number}" for c in game.virtual_cards}
    return [
        _fields(
            f"{prefix}game", f"{lead}Game {game.game_id}",
            [
                ("game_id", "Game", game.game_id),
                ("session", "Session", game.session),
                ("game_number", "Game number", game.number),
                ("opened", "Sale opened", _time(game.opened_ms, timezone)),
                ("card_set", "Card set", game.card_set),
                ("face_value_cents", "Face value (card price)", Cents(game.price_cents)),
                ("first_card", "First card on sale", game.first_card),
                ("series_in_play", "Series in play", _words(s.series for s in game.series)),
                ("state", "State", game.state),
                ("last_game", "Announced as the session's last game", "yes" if game.last_game else "no"),
                ("physical_cards", "Physical cards sold", game.physical_cards),
                ("virtual_cards", "Virtual cards sold", len(game.virtual_cards)),
                ("cards_sold", "Cards sold (announced at the close)", game.cards_sold),
                ("physical_collection_cents", "Collected on physical cards",
                 Cents(sum(s.amount_cents for s in game.series))),
                ("virtual_collection_cents", "Collected on virtual cards", Cents(virtual_stakes)),
                ("collection_cents", "Total collected", Cents(game.stakes_cents)),
                ("line_prize_cents", "Line prize", _cents(game.line_cents)),
                ("bingo_prize_cents", "Bingo prize", _cents(game.bingo_cents)),
                ("carry_line_cents", "of which carried into the line", Cents(game.carry_line_cents)),
                ("carry_bingo_cents", "of which carried into the bingo", Cents(game.carry_bingo_cents)),
                ("boost_line_cents", "of which from the jackpot reserve, line (R91.7)", Cents(game.boost_line_cents)),
                ("boost_bingo_cents", "of which from the jackpot reserve, bingo (R91.7)",
                 Cents(game.boost_bingo_cents)),
                ("prizes_paid_cents", "Prizes paid", Cents(game.prizes_paid_cents)),
                ("refunded_cards", "Cards refunded", game.refunded_cards),
                ("refunded_cents", "Refunded", Cents(game.refunded_cents)),
                ("house_cents", "House share", _cents(game.house_cents)),
                ("tax_base_cents", "Tax base (R98)", _cents(game.tax_base_cents)),
                ("tax_cents", "Tax (R98)", _cents(game.tax_cents)),
                ("balls_drawn", "Balls drawn", len(game.drawn)),
            ],
        ),
        _table(
            f"{prefix}series", f"{lead}Series in play and physical cards sold",
            [("series", "Series"), ("card_set", "Card set"), ("face_value_cents", "Face value"),
             ("opened_as", "Opened as"), ("first_card", "First card"), ("last_card", "Last card"),
             ("cards", "Cards"), ("amount_cents", "Collected")],
            [[s.series, s.card_set, Cents(s.face_value_cents), "second series" if s.second else "first series",
              s.first, s.last, s.count, Cents(s.amount_cents)] for s in game.series],
        ),
        _table(
            f"{prefix}paper_sales", f"{lead}Paper sales by seller",
            [("seq", "Record"), ("time", "Time"), ("seller", "Seller"), ("series", "Series"),
             ("first_card", "First card"), ("last_card", "Last card"), ("cards", "Cards"),
             ("amount_cents", "Amount")],
            [[s.seq, _time(s.time_ms, timezone), s.seller, s.series, s.first, s.last, s.count, Cents(s.amount_cents)]
             for s in game.paper_sales],
        ),
        _table(
            f"{prefix}virtual_cards", f"{lead}Virtual cards sold, by stake percentage",
            [("series", "Series"), ("series_label", "Shown as"), ("stake_percent", "Stake"),
             ("price_cents", "Card price"),
             ("stake_cents", "Stake per card"), ("cards", "Cards"), ("card_numbers", "Card numbers"),
             ("terminals", "Terminals"), ("amount_cents", "Collected")],
            _virtual_groups(game.virtual_cards, game.virtual_labels),
        ),
        _table(
            f"{prefix}pots", f"{lead}Pots: accumulated values, collection and payout",
            [("pot", "Pot"), ("in_play", "In play"), ("level_at_draw_cents", "Accumulated at the draw"),
             ("collected_cents", "Collected from this game"), ("paid_cents", "Paid in this game"),
             ("moved_cents", "Moved by the reserve"), ("level_after_cents", "Accumulated after the game")],
            [[pot.removeprefix("pot:"), line.in_play or "no", _cents(line.level_at_draw_cents),
              Cents(line.collected_cents), Cents(line.paid_cents), Cents(line.moved_cents),
              _cents(line.level_after_cents)] for pot, line in game.pots.items()],
        ),
        _table(
            f"{prefix}winners", f"{lead}Winning cards at each prize",
            [("seq", "Record"), ("prize", "Prize"), ("ball_order", "On ball no."), ("ball", "Ball"),
             ("card", "Winning card")],
            [[w.seq, w.pattern, w.order, w.ball, w.card] for w in game.winners],
        ),
        _table(
            f"{prefix}prizes", f"{lead}Prizes paid",
            [("seq", "Record"), ("prize", "Prize"), ("ball_order", "Won on ball no."), ("ball", "Ball"),
             ("amount_cents", "Prize amount"), ("card", "Winning card"), ("paid_cents", "Paid to the card"),
             ("carried_cents", "Carried"), ("paid_from", "Paid from")],
            [[p.seq, p.prize, p.order, p.ball, Cents(p.amount_cents), card, Cents(cents),
              Cents(p.carry_cents), "player's account" if card in virtual else p.paid_from]
             for p in game.prizes for card, cents in p.payments],
        ),
        _table(
            f"{prefix}claims_rejected", f"{lead}Claims rejected",
            [("seq", "Record"), ("card", "Card"), ("ball_order", "After ball no."), ("reason", "Reason")],
            [[c.seq, c.card, c.order, c.reason] for c in game.rejected],
        ),
        _table(
            f"{prefix}cards_refused", f"{lead}Cards refused as invalid (R82.8)",
            [("seq", "Record"), ("card", "Card"), ("ball_order", "After ball no."), ("refused_by", "Refused by"),
             ("reason", "Reason")],
            [[c.seq, c.card, c.order, c.refused_by, c.reason] for c in game.refused],
        ),
        _table(
            f"{prefix}balls_corrected", f"{lead}Misread balls corrected (R85.5)",
            [("seq", "Record"), ("ball_order", "Ball no."), ("misread", "Announced"), ("ball", "Drawn"),
             ("signed_by", "Signed by"), ("reason", "Reason")],
            [[c.seq, c.order, c.misread, c.ball, _words(c.signed_by), c.reason] for c in game.corrections],
        ),
        _table(
            f"{prefix}draw", f"{lead}Balls drawn in order, with prizes and pots",
            [("seq", "Record"), ("time", "Time"), ("ball_order", "Ball no."), ("ball", "Ball"),
             ("event", "Event"), ("cards", "Cards"), ("amount_cents", "Amount"), ("detail", "Detail")],
            [[e.seq, _time(e.time_ms, timezone), e.order, e.ball, e.event, _words(e.cards),
              _cents(e.amount_cents), e.detail] for e in game.draw],
        ),
    ]


def game_report(game: GameMinutes, *, hall_name: str, timezone: tzinfo) -> Report:
    return Report(
        "game", game.game_id, f"{hall_name} - minutes of game {game.game_id}", game.journal_range,
        (_journal("game minutes", game.game_id, game.journal_range, hall_name, timezone),
         *game_tables(game, timezone)),
        stem=f"minutes-game-{game.game_id}",
    )


# --- Games played with the partner hall (R3.5.b) --------------------------------------------


def joint_tables(game: JointGameMinutes, timezone: tzinfo, prefix: str = "") -> list[Table]:
    """The minutes of a game played with the partner hall: both rooms' sales, the main hall's balls,
    the winners of both rooms and who paid what (R77.1, R83.3-4)."""
    lead = f"Game with {game.partner} {game.game_id}: " if prefix else ""
    pool = game.pool or {}
    rooms = [(game.main, "main hall"), (game.annex, "annex")]
    return [
        _fields(
            f"{prefix}game", f"{lead}Game with the partner hall {game.game_id}",
            [
                ("game_id", "Game", game.game_id),
                ("main", "Main hall (its draw)", game.main),
                ("annex", "Annex", game.annex),
                ("this_hall", "This hall", game.here),
                ("opened", "Opened", _time(game.opened_ms, timezone)),
                ("face_value_cents", "Face value (card price)", Cents(game.price_cents)),
                ("line_bp", "Line, basis points of both rooms' sales", game.line_bp),
                ("bingo_bp", "Bingo, basis points of both rooms' sales", game.bingo_bp),
                ("state", "State", game.state),
                ("cards_clash", "This room sold nothing: its cards clash with the partner's (R82.6)",
                 game.clash or "no"),
                ("physical_cards", "Physical cards sold in this room", sum(s.count for s in game.paper_sales)),
                ("virtual_cards", "Virtual cards sold in this room", len(game.virtual_cards)),
                ("collection_cents", "Collected in this room", Cents(game.own_sales_cents)),
                ("pool_sales_cents", "Collected in both rooms", _cents(pool.get("sales_cents"))),
                ("line_prize_cents", "Line prize", _cents(pool.get("line_cents"))),
                ("bingo_prize_cents", "Bingo prize", _cents(pool.get("bingo_cents"))),
                ("paid_here_cents", "Prizes paid by this hall", Cents(game.paid_here_cents)),
                ("carried_cents", "Carried by the main hall to its next game (R88.5)", Cents(game.carry_cents)),
                ("owed_to_partner_cents", "Owed to the partner (negative: owed by it)",
                 _cents(game.owed_to_partner_cents)),
                ("house_cents", "House share of this room's sales", _cents(game.house_cents)),
                ("tax_cents", "Tax on this room's sales (R98)", _cents(game.tax_cents)),
                ("balls_drawn", "Balls drawn by the main hall", len(game.drawn)),
            ],
        ),
        _table(
            f"{prefix}rooms", f"{lead}Sales of both rooms",
            [("hall", "Hall"), ("room", "Room"), ("cards", "Cards sold"), ("amount_cents", "Collected")],
            [[hall, room, game.sales[hall][0] if hall in game.sales else None,
              _cents(game.sales[hall][1] if hall in game.sales else None)] for hall, room in rooms],
        ),
        _table(
            f"{prefix}paper_sales", f"{lead}Paper sales of this room, by seller",
            [("seq", "Record"), ("time", "Time"), ("seller", "Seller"), ("series", "Series"),
             ("first_card", "First card"), ("last_card", "Last card"), ("cards", "Cards"), ("amount_cents", "Amount")],
            [[s.seq, _time(s.time_ms, timezone), s.seller, s.series, s.first, s.last, s.count, Cents(s.amount_cents)]
             for s in game.paper_sales],
        ),
        _table(
            f"{prefix}virtual_cards", f"{lead}Virtual cards sold in this room, by stake percentage",
            [("series", "Series"), ("series_label", "Shown as"), ("stake_percent", "Stake"),
             ("price_cents", "Card price"), ("stake_cents", "Stake per card"), ("cards", "Cards"),
             ("card_numbers", "Card numbers"), ("terminals", "Terminals"), ("amount_cents", "Collected")],
            _virtual_groups(game.virtual_cards, game.virtual_labels),
        ),
        _table(
            f"{prefix}winners", f"{lead}Winning cards of both rooms, with the ball they won on",
            [("seq", "Record"), ("prize", "Prize"), ("ball_order", "On ball no."), ("ball", "Ball"),
             ("hall", "Hall"), ("card", "Card"), ("terminal", "Terminal")],
            [[w.seq, w.pattern, w.order, w.ball, w.hall, w.card, w.terminal or "paper card"] for w in game.winners],
        ),
        _table(
            f"{prefix}prizes", f"{lead}Prizes: each winning card's share and who paid it",
            [("prize", "Prize"), ("ball_order", "Won on ball no."), ("ball", "Ball"), ("amount_cents", "Prize amount"),
             ("hall", "Hall"), ("card", "Winning card"), ("paid_cents", "Share"), ("paid_by", "Paid by")],
            [[x.prize, x.order, x.ball, Cents(x.amount_cents), x.hall, x.card, Cents(x.cents), x.paid_by]
             for x in game.payments],
        ),
        _table(
            f"{prefix}claims_rejected", f"{lead}Claims rejected in this room",
            [("seq", "Record"), ("card", "Card"), ("ball_order", "After ball no."), ("reason", "Reason")],
            [[c.seq, c.card, c.order, c.reason] for c in game.rejected],
        ),
        _table(
            f"{prefix}draw", f"{lead}The main hall's balls in order, with the prizes",
            [("seq", "Record"), ("time", "Time"), ("ball_order", "Ball no."), ("ball", "Ball"), ("event", "Event"),
             ("cards", "Cards"), ("amount_cents", "Amount"), ("detail", "Detail")],
            [[e.seq, _time(e.time_ms, timezone), e.order, e.ball, e.event, _words(e.cards), _cents(e.amount_cents),
              e.detail] for e in game.draw],
        ),
    ]


def joint_report(game: JointGameMinutes, *, hall_name: str, timezone: tzinfo) -> Report:
    return Report(
        "game", game.game_id, f"{hall_name} - minutes of game {game.game_id} with {game.partner}", game.journal_range,
        (_journal("game minutes", game.game_id, game.journal_range, hall_name, timezone),
         *joint_tables(game, timezone)),
        stem=f"minutes-game-{game.game_id}",
    )


# --- Sessions -------------------------------------------------------------------------------


def _witnessed(entry: BookEntry) -> str:
    """A complaint's room chief (R75.5), or that none has confirmed it yet; blank for other entries."""
    if entry.kind != "complaint":
        return ""
    return entry.witness or "NOT YET CONFIRMED by the room chief"


def session_report(session: SessionMinutes, *, hall_name: str, timezone: tzinfo) -> Report:
    """The session's minutes (R77.1-2, R83.5): opening, every game, incidents, closing, summary."""
    subject = str(session.number)
    if session.closed_seq is not None:
        state = "closed"
    elif session.opened_seq is not None:
        state = "open"
    else:
        state = "opening"
    summary = session.summary()
    last = summary[-1] if summary else None
    tables = [
        _journal("session minutes", f"session {session.number} of {session.date}", session.journal_range,
                 hall_name, timezone),
        _fields(
            "session", f"Session {session.number}",
            [
                ("session", "Session", session.number),
                ("date", "Date", session.date),
                ("state", "State", state),
                ("ball_set", "Ball set at opening", session.ball_set),
                ("opened_seq", "Opened in record", session.opened_seq),
                ("closed_seq", "Closed in record", session.closed_seq),
            ],
        ),
        _table(
            "verification", "Verification before the session (R84.1, R92.5e)",
            [("seq", "Record"), ("time", "Time"), ("by", "By"), ("check", "Check"), ("result", "Result")],
            [[v.seq, _time(v.time_ms, timezone), v.by, check, "passed" if fault is None else f"fault: {fault}"]
             for v in session.verifications for check, fault in v.results],
        ),
        _table(
            "ball_counts", "Ball counts and witnesses (R84.2-4)",
            [("seq", "Record"), ("time", "Time"), ("stage", "Stage"), ("ball_set", "Ball set"),
             ("counted", "Counted"), ("missing", "Missing"), ("repeated", "Repeated"),
             ("witnesses", "Witnesses"), ("room_chief", "Room chief")],
            [[c.seq, _time(c.time_ms, timezone), c.stage, c.ball_set, c.counted, _words(c.missing) or "none",
              _words(c.repeated) or "none", "; ".join(c.witnesses), c.room_chief] for c in session.counts],
        ),
        _table(
            "signatures", "Opening and closing signatures (R77.1), with the signers' class I licences (R79)",
            [("seq", "Record"), ("time", "Time"), ("act", "Signs the"), ("role", "Role"), ("signer", "Signer"),
             ("licence", "Licence")],
            [[s.seq, _time(s.time_ms, timezone), s.act, s.role.replace("_", " "), s.signer, s.licence or "not named"]
             for s in session.signatures],
        ),
        _table(
            "summary", "Daily summary with running totals (R83.5)",
            [("game_number", "Game"), ("game_id", "Game id"), ("state", "State"),
             ("face_value_cents", "Face value"), ("cards", "Cards sold"), ("refunded_cards", "Refunded"),
             ("collection_cents", "Collected"),
             ("prizes_paid_cents", "Prizes paid"), ("total_games", "Games so far"),
             ("total_cards", "Cards so far"), ("total_prizes_paid_cents", "Prizes paid so far"),
             ("total_collection_cents", "Collected so far")],
            [[r.game.number, r.game.game_id, r.game.state, Cents(r.game.price_cents),
              r.game.physical_cards + len(r.game.virtual_cards), r.game.refunded_cards, Cents(r.game.stakes_cents),
              Cents(r.game.prizes_paid_cents), r.total_games, r.total_cards, Cents(r.total_prizes_paid_cents),
              Cents(r.total_collection_cents)] for r in summary],
        ),
        _fields(
            "totals", "Session totals (R83.5)",
            [
                ("games", "Games", len(session.games)),
                ("cards_sold", "Cards sold", last.total_cards if last else 0),
                ("prizes_paid_cents", "Prizes paid", Cents(last.total_prizes_paid_cents if last else 0)),
                ("collection_cents", "Collected", Cents(last.total_collection_cents if last else 0)),
                ("refunded_cents", "Refunded", Cents(sum(g.refunded_cents for g in session.games))),
                ("tax_cents", "Tax (R98)", Cents(sum(g.tax_cents or 0 for g in session.games))),
            ],
        ),
    ]
    for game in session.games:
        tables += game_tables(game, timezone, prefix=f"game_{game.number}.")
    if session.joint_games:
        tables.append(_table(
            "joint_games", "Games played with the partner hall (R3.5.b)",
            [("game_id", "Game"), ("partner", "Partner hall"), ("this_hall_is", "This hall is"), ("state", "State"),
             ("cards", "Cards sold here"), ("collection_cents", "Collected here"),
             ("partner_collection_cents", "Collected by the partner"), ("line_prize_cents", "Line prize"),
             ("bingo_prize_cents", "Bingo prize"), ("paid_here_cents", "Paid by this hall"),
             ("owed_to_partner_cents", "Owed to the partner"), ("tax_cents", "Tax here (R98)")],
            [[j.game_id, j.partner, "the main hall" if j.here == j.main else "the annex", j.state,
              sum(s.count for s in j.paper_sales) + len(j.virtual_cards), Cents(j.own_sales_cents),
              _cents(j.sales[j.partner][1] if j.partner in j.sales else None),
              _cents((j.pool or {}).get("line_cents")), _cents((j.pool or {}).get("bingo_cents")),
              Cents(j.paid_here_cents), _cents(j.owed_to_partner_cents), _cents(j.tax_cents)]
             for j in session.joint_games],
        ))
        for index, joint in enumerate(session.joint_games, start=1):
            tables += joint_tables(joint, timezone, prefix=f"joint_{index}.")
    tables += [
        _table(
            "incidents", "Incidents and complaints (R75.4, R75.5, R77.2, R84.3)",
            [("seq", "Record"), ("time", "Time"), ("kind", "Kind"), ("number", "No."),
             ("recorded_by", "Recorded by"), ("people", "People"), ("text", "Text"),
             ("room_chief", "Written before the room chief")],
            [[e.seq, _time(e.time_ms, timezone), e.kind, e.number, f"{e.recorded_by} ({e.role.replace('_', ' ')})",
              "; ".join(e.people), e.text, _witnessed(e)] for e in session.book],
        ),
        _table(
            "ball_sets", "Ball sets replaced (R83.2)",
            [("seq", "Record"), ("time", "Time"), ("by", "By"), ("text", "Replacement")],
            [[e.seq, _time(e.time_ms, timezone), e.recorded_by, e.text] for e in session.ball_sets],
        ),
        _table(
            "operator_contributions", "Operator contributions to pots (R89.5, R91.9)",
            [("seq", "Record"), ("time", "Time"), ("pot", "Pot"), ("amount_cents", "Amount"), ("by", "By")],
            [[m.seq, _time(m.time_ms, timezone), m.pot, Cents(m.amount_cents), m.by] for m in session.pot_movements],
        ),
        _table(
            "jackpot_bank", "The jackpot's bank account: deposits and withdrawals (R91.11)",
            [("seq", "Record"), ("time", "Time"), ("kind", "Kind"), ("counterpart", "From / to"),
             ("amount_cents", "Amount"), ("reference", "Bank reference"), ("due_before_cents", "Due before"),
             ("funds_cents", "Jackpot funds"), ("bank_after_cents", "Account after"), ("by", "By")],
            [[m.seq, _time(m.time_ms, timezone), m.kind, m.counterpart, Cents(m.amount_cents), m.reference,
              Cents(m.due_before_cents), Cents(m.funds_cents), Cents(m.bank_after_cents), m.by]
             for m in session.jackpot_bank],
        ),
        _fields(
            "jackpot_at_close", "The jackpot at the closing (R91.11)",
            [
                ("funds_cents", "Jackpot funds (accumulated and reserve)", _cents(session.jackpot_funds_at_close_cents)),
                ("bank_cents", "In its bank account", _cents(session.jackpot_bank_at_close_cents)),
            ],
        ),
    ]
    return Report("session", subject, f"{hall_name} - minutes of session {session.number} ({session.date})",
                  session.journal_range, tuple(tables), stem=f"minutes-session-{session.number}")


# --- Months ---------------------------------------------------------------------------------


def month_report(count: MonthCount, *, hall_name: str, timezone: tzinfo) -> Report:
    """The month's physical and virtual cards sold (R77.4)."""
    tables = (
        _journal("monthly cards sold", count.month, count.journal_range, hall_name, timezone),
        _fields(
            "month", f"Cards sold in {count.month}",
            [
                ("month", "Month", count.month),
                ("sessions", "Sessions", len(count.sessions)),
                ("games", "Games", count.games),
                ("physical_cards", "Physical cards sold", count.physical),
                ("virtual_cards", "Virtual cards sold", count.virtual),
                ("cards", "Cards sold", count.physical + count.virtual),
                ("refunded_cards", "of which refunded (games not played)", count.refunded),
            ],
        ),
        _table(
            "sessions", "By session",
            [("session", "Session"), ("date", "Date"), ("games", "Games"), ("physical_cards", "Physical"),
             ("virtual_cards", "Virtual"), ("refunded_cards", "Refunded")],
            [[s.number, s.date, s.games, s.physical, s.virtual, s.refunded] for s in count.sessions],
        ),
        _table(
            "series", "By series",
            [("kind", "Cards"), ("series", "Series"), ("games", "Games"), ("cards", "Sold"),
             ("refunded_cards", "Refunded")],
            [[s.kind, s.series, s.games, s.cards, s.refunded] for s in count.series],
        ),
    )
    return Report("month", count.month, f"{hall_name} - cards sold in {count.month}", count.journal_range, tables,
                  stem=f"cards-sold-{count.month}")

