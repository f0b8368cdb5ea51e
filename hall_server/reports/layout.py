"""The minutes laid out as reports: titled tables of typed cells, before any rendering.

A :class:`Report` is what the PDF and the CSV of one report both print, table by
table and column by column, so the two cannot disagree on a field.  Money stays
integer cents (:class:`Cents`) until a rendering formats it; a column holding cents has
a key ending in ``_cents``.  Times are the hall's local time, with the journal record
number beside them for the exact reference.

Every builder lays its report out in a :class:`Wording`: the data's (English, ISO times)
for the CSV, the hall's language (:func:`hall_server.reports.printed.wording`) for the PDF.

The first table of every report, ``journal``, names the records the report was made
from (R77.3): an inspector ties the report to the journal by them.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Iterable, Mapping, Sequence

from hall_server.reports.minutes import (
    BookEntry,
    GameMinutes,
    JointGameMinutes,
    MonthCount,
    SessionMinutes,
    VirtualCard,
)
from server_kit.reports.document import DATA, Cell, Cents, Column, JournalRange, Report, Table, Wording


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


def _journal(kind: str, subject: str, span: JournalRange, hall_name: str, timezone: tzinfo, wording: Wording) -> Table:
    t = wording.t
    return _fields(
        "journal",
        t("Report and journal"),
        [
            ("report", t("Report"), kind),
            ("subject", t("Of"), subject),
            ("hall", t("Hall"), hall_name),
            ("time_zone", t("Times in"), str(timezone)),
            ("journal_first_seq", t("From journal record"), span.first_seq),
            ("journal_last_seq", t("To journal record"), span.last_seq),
            ("journal_last_hash", t("Hash of the last record"), span.last_hash),
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
        [series, labels.get(series, ""), percent, Cents(price), Cents(stake), len(group),
         card_ranges(c.card_number for c in group),
         _words(sorted({c.terminal_id or "-" for c in group})), Cents(stake * len(group))]
        for (series, price, stake, percent), group in sorted(groups.items())
    ]


def game_tables(game: GameMinutes, timezone: tzinfo, prefix: str = "", wording: Wording = DATA) -> list[Table]:
    """The minutes of one game (R77.1, R83.3-4, R89.6, R90.4, R91.10) as tables."""
    t = wording.t

    def lead(title: str) -> str:  # in a session's minutes, each game's tables say whose they are
        return t("Game {number}: {title}", number=game.number, title=title) if prefix else title

    virtual_stakes = sum(c.stake_cents for c in game.virtual_cards)
    virtual = {f"{c.series}-{c.card_number}" for c in game.virtual_cards}
    return [
        _fields(
            f"{prefix}game", lead(t("Game {game}", game=game.game_id)),
            [
                ("game_id", t("Game"), game.game_id),
                ("session", t("Session"), game.session),
                ("game_number", t("Game number"), game.number),
                ("opened", t("Sale opened"), wording.moment(game.opened_ms, timezone)),
                ("card_set", t("Card set"), game.card_set),
                ("face_value_cents", t("Face value (card price)"), Cents(game.price_cents)),
                ("first_card", t("First card on sale"), game.first_card),
                ("series_in_play", t("Series in play"), _words(s.series for s in game.series)),
                ("state", t("State"), t(game.state)),
                ("last_game", t("Announced as the session's last game"), t("yes") if game.last_game else t("no")),
                ("physical_cards", t("Physical cards sold"), game.physical_cards),
                ("virtual_cards", t("Virtual cards sold"), len(game.virtual_cards)),
                ("cards_sold", t("Cards sold (announced at the close)"), game.cards_sold),
                ("physical_collection_cents", t("Collected on physical cards"),
                 Cents(sum(s.amount_cents for s in game.series))),
                ("virtual_collection_cents", t("Collected on virtual cards"), Cents(virtual_stakes)),
                ("collection_cents", t("Total collected"), Cents(game.stakes_cents)),
                ("line_prize_cents", t("Line prize"), _cents(game.line_cents)),
                ("bingo_prize_cents", t("Bingo prize"), _cents(game.bingo_cents)),
                ("carry_line_cents", t("of which carried into the line"), Cents(game.carry_line_cents)),
                ("carry_bingo_cents", t("of which carried into the bingo"), Cents(game.carry_bingo_cents)),
                ("boost_line_cents", t("of which from the jackpot reserve, line (R91.7)"),
                 Cents(game.boost_line_cents)),
                ("boost_bingo_cents", t("of which from the jackpot reserve, bingo (R91.7)"),
                 Cents(game.boost_bingo_cents)),
                ("prizes_paid_cents", t("Prizes paid"), Cents(game.prizes_paid_cents)),
                ("refunded_cards", t("Cards refunded"), game.refunded_cards),
                ("refunded_cents", t("Refunded"), Cents(game.refunded_cents)),
                ("house_cents", t("House share"), _cents(game.house_cents)),
                ("tax_base_cents", t("Tax base (R98)"), _cents(game.tax_base_cents)),
                ("tax_cents", t("Tax (R98)"), _cents(game.tax_cents)),
                ("balls_drawn", t("Balls drawn"), len(game.drawn)),
            ],
        ),
        _table(
            f"{prefix}series", lead(t("Series in play and physical cards sold")),
            [("series", t("Series")), ("card_set", t("Card set")), ("face_value_cents", t("Face value")),
             ("opened_as", t("Opened as")), ("first_card", t("First card")), ("last_card", t("Last card")),
             ("cards", t("Cards")), ("amount_cents", t("Collected"))],
            [[s.series, s.card_set, Cents(s.face_value_cents), t("second series") if s.second else t("first series"),
              s.first, s.last, s.count, Cents(s.amount_cents)] for s in game.series],
        ),
        _table(
            f"{prefix}paper_sales", lead(t("Paper sales by seller")),
            [("seq", t("Record")), ("time", t("Time")), ("seller", t("Seller")), ("series", t("Series")),
             ("first_card", t("First card")), ("last_card", t("Last card")), ("cards", t("Cards")),
             ("amount_cents", t("Amount"))],
            [[s.seq, wording.moment(s.time_ms, timezone), s.seller, s.series, s.first, s.last, s.count,
              Cents(s.amount_cents)]
             for s in game.paper_sales],
        ),
        _table(
            f"{prefix}virtual_cards", lead(t("Virtual cards sold, by stake percentage")),
            [("series", t("Series")), ("series_label", t("Shown as")), ("stake_percent", t("Stake")),
             ("price_cents", t("Card price")),
             ("stake_cents", t("Stake per card")), ("cards", t("Cards")), ("card_numbers", t("Card numbers")),
             ("terminals", t("Terminals")), ("amount_cents", t("Collected"))],
            _virtual_groups(game.virtual_cards, game.virtual_labels),
        ),
        _table(
            f"{prefix}pots", lead(t("Pots: accumulated values, collection and payout")),
            [("pot", t("Pot")), ("in_play", t("In play")), ("level_at_draw_cents", t("Accumulated at the draw")),
             ("collected_cents", t("Collected from this game")), ("paid_cents", t("Paid in this game")),
             ("moved_cents", t("Moved by the reserve")), ("level_after_cents", t("Accumulated after the game"))],
            [[t(pot.removeprefix("pot:")), t(line.in_play or "no"), _cents(line.level_at_draw_cents),
              Cents(line.collected_cents), Cents(line.paid_cents), Cents(line.moved_cents),
              _cents(line.level_after_cents)] for pot, line in game.pots.items()],
        ),
        _table(
            f"{prefix}winners", lead(t("Winning cards at each prize")),
            [("seq", t("Record")), ("prize", t("Prize")), ("ball_order", t("On ball no.")), ("ball", t("Ball")),
             ("card", t("Winning card"))],
            [[w.seq, t(w.pattern), w.order, w.ball, w.card] for w in game.winners],
        ),
        _table(
            f"{prefix}prizes", lead(t("Prizes paid")),
            [("seq", t("Record")), ("prize", t("Prize")), ("ball_order", t("Won on ball no.")), ("ball", t("Ball")),
             ("amount_cents", t("Prize amount")), ("card", t("Winning card")), ("paid_cents", t("Paid to the card")),
             ("carried_cents", t("Carried")), ("paid_from", t("Paid from"))],
            [[p.seq, t(p.prize), p.order, p.ball, Cents(p.amount_cents), card, Cents(cents),
              Cents(p.carry_cents), t("player's account") if card in virtual else t(p.paid_from)]
             for p in game.prizes for card, cents in p.payments],
        ),
        _table(
            f"{prefix}claims_rejected", lead(t("Claims rejected")),
            [("seq", t("Record")), ("card", t("Card")), ("ball_order", t("After ball no.")), ("reason", t("Reason"))],
            [[c.seq, c.card, c.order, c.reason] for c in game.rejected],
        ),
        _table(
            f"{prefix}cards_refused", lead(t("Cards refused as invalid (R82.8)")),
            [("seq", t("Record")), ("card", t("Card")), ("ball_order", t("After ball no.")),
             ("refused_by", t("Refused by")),
             ("reason", t("Reason"))],
            [[c.seq, c.card, c.order, c.refused_by, c.reason] for c in game.refused],
        ),
        _table(
            f"{prefix}balls_corrected", lead(t("Misread balls corrected (R85.5)")),
            [("seq", t("Record")), ("ball_order", t("Ball no.")), ("misread", t("Announced")), ("ball", t("Drawn")),
             ("signed_by", t("Signed by")), ("reason", t("Reason"))],
            [[c.seq, c.order, c.misread, c.ball, _words(c.signed_by), c.reason] for c in game.corrections],
        ),
        _table(
            f"{prefix}draw", lead(t("Balls drawn in order, with prizes and pots")),
            [("seq", t("Record")), ("time", t("Time")), ("ball_order", t("Ball no.")), ("ball", t("Ball")),
             ("event", t("Event")), ("cards", t("Cards")), ("amount_cents", t("Amount")), ("detail", t("Detail"))],
            [[e.seq, wording.moment(e.time_ms, timezone), e.order, e.ball, t(e.event), _words(e.cards),
              _cents(e.amount_cents), t(e.detail) if e.detail else ""] for e in game.draw],
        ),
    ]


def game_report(game: GameMinutes, *, hall_name: str, timezone: tzinfo, wording: Wording = DATA) -> Report:
    t = wording.t
    return Report(
        "game", game.game_id, t("{hall} - minutes of game {game}", hall=hall_name, game=game.game_id),
        game.journal_range,
        (_journal(t("game minutes"), game.game_id, game.journal_range, hall_name, timezone, wording),
         *game_tables(game, timezone, wording=wording)),
        stem=f"minutes-game-{game.game_id}",
    )


# --- Games played with the partner hall (R3.5.b) --------------------------------------------


def _pooled(game: JointGameMinutes) -> tuple[Cents | None, Cents | None, Cents | None]:
    """Both rooms' sales and the line and bingo prizes of a joint game's pool (None before it is known)."""
    pool = game.pool
    if pool is None:
        return None, None, None
    return Cents(pool.sales_cents), Cents(pool.line_cents), Cents(pool.bingo_cents)


def joint_tables(game: JointGameMinutes, timezone: tzinfo, prefix: str = "", wording: Wording = DATA) -> list[Table]:
    """The minutes of a game played with the partner hall: both rooms' sales, the main hall's balls,
    the winners of both rooms and who paid what (R77.1, R83.3-4)."""
    t = wording.t

    def lead(title: str) -> str:
        return (t("Game with {partner} {game}: {title}", partner=game.partner, game=game.game_id, title=title)
                if prefix else title)

    pooled_cents, line_cents, bingo_cents = _pooled(game)
    rooms = [(game.main, t("main hall")), (game.annex, t("annex"))]
    return [
        _fields(
            f"{prefix}game", lead(t("Game with the partner hall {game}", game=game.game_id)),
            [
                ("game_id", t("Game"), game.game_id),
                ("main", t("Main hall (its draw)"), game.main),
                ("annex", t("Annex"), game.annex),
                ("this_hall", t("This hall"), game.here),
                ("opened", t("Opened"), wording.moment(game.opened_ms, timezone)),
                ("face_value_cents", t("Face value (card price)"), Cents(game.price_cents)),
                ("line_bp", t("Line, basis points of both rooms' sales"), game.line_bp),
                ("bingo_bp", t("Bingo, basis points of both rooms' sales"), game.bingo_bp),
                ("state", t("State"), t(game.state)),
                ("cards_clash", t("This room sold nothing: its cards clash with the partner's (R82.6)"),
                 game.clash or t("no")),
                ("physical_cards", t("Physical cards sold in this room"), sum(s.count for s in game.paper_sales)),
                ("virtual_cards", t("Virtual cards sold in this room"), len(game.virtual_cards)),
                ("collection_cents", t("Collected in this room"), Cents(game.own_sales_cents)),
                ("pool_sales_cents", t("Collected in both rooms"), pooled_cents),
                ("line_prize_cents", t("Line prize"), line_cents),
                ("bingo_prize_cents", t("Bingo prize"), bingo_cents),
                ("paid_here_cents", t("Prizes paid by this hall"), Cents(game.paid_here_cents)),
                ("carried_cents", t("Carried by the main hall to its next game (R88.5)"), Cents(game.carry_cents)),
                ("owed_to_partner_cents", t("Owed to the partner (negative: owed by it)"),
                 _cents(game.owed_to_partner_cents)),
                ("house_cents", t("House share of this room's sales"), _cents(game.house_cents)),
                ("tax_cents", t("Tax on this room's sales (R98)"), _cents(game.tax_cents)),
                ("balls_drawn", t("Balls drawn by the main hall"), len(game.drawn)),
            ],
        ),
        _table(
            f"{prefix}rooms", lead(t("Sales of both rooms")),
            [("hall", t("Hall")), ("room", t("Room")), ("cards", t("Cards sold")), ("amount_cents", t("Collected"))],
            [[hall, room, game.sales[hall][0] if hall in game.sales else None,
              _cents(game.sales[hall][1] if hall in game.sales else None)] for hall, room in rooms],
        ),
        _table(
            f"{prefix}paper_sales", lead(t("Paper sales of this room, by seller")),
            [("seq", t("Record")), ("time", t("Time")), ("seller", t("Seller")), ("series", t("Series")),
             ("first_card", t("First card")), ("last_card", t("Last card")), ("cards", t("Cards")),
             ("amount_cents", t("Amount"))],
            [[s.seq, wording.moment(s.time_ms, timezone), s.seller, s.series, s.first, s.last, s.count,
              Cents(s.amount_cents)]
             for s in game.paper_sales],
        ),
        _table(
            f"{prefix}virtual_cards", lead(t("Virtual cards sold in this room, by stake percentage")),
            [("series", t("Series")), ("series_label", t("Shown as")), ("stake_percent", t("Stake")),
             ("price_cents", t("Card price")), ("stake_cents", t("Stake per card")), ("cards", t("Cards")),
             ("card_numbers", t("Card numbers")), ("terminals", t("Terminals")), ("amount_cents", t("Collected"))],
            _virtual_groups(game.virtual_cards, game.virtual_labels),
        ),
        _table(
            f"{prefix}winners", lead(t("Winning cards of both rooms, with the ball they won on")),
            [("seq", t("Record")), ("prize", t("Prize")), ("ball_order", t("On ball no.")), ("ball", t("Ball")),
             ("hall", t("Hall")), ("card", t("Card")), ("terminal", t("Terminal"))],
            [[w.seq, t(w.pattern), w.order, w.ball, w.hall, w.card,
              w.terminal or t("paper card")] for w in game.winners],
        ),
        _table(
            f"{prefix}prizes", lead(t("Prizes: each winning card's share and who paid it")),
            [("prize", t("Prize")), ("ball_order", t("Won on ball no.")), ("ball", t("Ball")),
             ("amount_cents", t("Prize amount")),
             ("hall", t("Hall")), ("card", t("Winning card")), ("paid_cents", t("Share")), ("paid_by", t("Paid by"))],
            [[t(x.prize), x.order, x.ball, Cents(x.amount_cents), x.hall, x.card, Cents(x.cents), x.paid_by]
             for x in game.payments],
        ),
        _table(
            f"{prefix}claims_rejected", lead(t("Claims rejected in this room")),
            [("seq", t("Record")), ("card", t("Card")), ("ball_order", t("After ball no.")), ("reason", t("Reason"))],
            [[c.seq, c.card, c.order, c.reason] for c in game.rejected],
        ),
        _table(
            f"{prefix}draw", lead(t("The main hall's balls in order, with the prizes")),
            [("seq", t("Record")), ("time", t("Time")), ("ball_order", t("Ball no.")), ("ball", t("Ball")),
             ("event", t("Event")),
             ("cards", t("Cards")), ("amount_cents", t("Amount")), ("detail", t("Detail"))],
            [[e.seq, wording.moment(e.time_ms, timezone), e.order, e.ball, t(e.event), _words(e.cards),
              _cents(e.amount_cents),
              t(e.detail) if e.detail else ""] for e in game.draw],
        ),
    ]


def joint_report(game: JointGameMinutes, *, hall_name: str, timezone: tzinfo, wording: Wording = DATA) -> Report:
    t = wording.t
    return Report(
        "game", game.game_id,
        t("{hall} - minutes of game {game} with {partner}", hall=hall_name, game=game.game_id, partner=game.partner),
        game.journal_range,
        (_journal(t("game minutes"), game.game_id, game.journal_range, hall_name, timezone, wording),
         *joint_tables(game, timezone, wording=wording)),
        stem=f"minutes-game-{game.game_id}",
    )


# --- Sessions -------------------------------------------------------------------------------


def _witnessed(entry: BookEntry, wording: Wording) -> str:
    """A complaint's room chief (R75.5), or that none has confirmed it yet; blank for other entries."""
    if entry.kind != "complaint":
        return ""
    return entry.witness or wording.t("NOT YET CONFIRMED by the room chief")


def session_report(session: SessionMinutes, *, hall_name: str, timezone: tzinfo, wording: Wording = DATA) -> Report:
    """The session's minutes (R77.1-2, R83.5): opening, every game, incidents, closing, summary."""
    t = wording.t
    subject = str(session.number)
    if session.closed_seq is not None:
        state = t("closed")
    elif session.opened_seq is not None:
        state = t("open")
    else:
        state = t("opening")
    summary = session.summary()
    last = summary[-1] if summary else None
    tables = [
        _journal(t("session minutes"), t("session {number} of {date}", number=session.number,
                                          date=wording.day(session.date)),
                 session.journal_range, hall_name, timezone, wording),
        _fields(
            "session", t("Session {number}", number=session.number),
            [
                ("session", t("Session"), session.number),
                ("date", t("Date"), wording.day(session.date)),
                ("state", t("State"), state),
                ("ball_set", t("Ball set at opening"), session.ball_set),
                ("opened_seq", t("Opened in record"), session.opened_seq),
                ("closed_seq", t("Closed in record"), session.closed_seq),
            ],
        ),
        _table(
            "verification", t("Verification before the session (R84.1, R92.5e)"),
            [("seq", t("Record")), ("time", t("Time")), ("by", t("By")), ("check", t("Check")),
             ("result", t("Result"))],
            [[v.seq, wording.moment(v.time_ms, timezone), v.by, t(check),
              t("passed") if fault is None else t("fault: {fault}", fault=wording.said(v.said.get(check), fault))]
             for v in session.verifications for check, fault in v.results],
        ),
        _table(
            "ball_counts", t("Ball counts and witnesses (R84.2-4)"),
            [("seq", t("Record")), ("time", t("Time")), ("stage", t("Stage")), ("ball_set", t("Ball set")),
             ("counted", t("Counted")), ("missing", t("Missing")), ("repeated", t("Repeated")),
             ("witnesses", t("Witnesses")), ("room_chief", t("Room chief"))],
            [[c.seq, wording.moment(c.time_ms, timezone), t(c.stage), c.ball_set, c.counted,
              _words(c.missing) or t("none"),
              _words(c.repeated) or t("none"), "; ".join(c.witnesses), c.room_chief] for c in session.counts],
        ),
        _table(
            "signatures", t("Opening and closing signatures (R77.1), with the signers' class I licences (R79)"),
            [("seq", t("Record")), ("time", t("Time")), ("act", t("Signs the")), ("role", t("Role")),
             ("signer", t("Signer")),
             ("licence", t("Licence"))],
            [[s.seq, wording.moment(s.time_ms, timezone), t(s.act), t(s.role.replace("_", " ")), s.signer,
              s.licence or t("not named")]
             for s in session.signatures],
        ),
        _table(
            "summary", t("Daily summary with running totals (R83.5)"),
            [("game_number", t("Game")), ("game_id", t("Game id")), ("state", t("State")),
             ("face_value_cents", t("Face value")), ("cards", t("Cards sold")), ("refunded_cards", t("Refunded")),
             ("collection_cents", t("Collected")),
             ("prizes_paid_cents", t("Prizes paid")), ("total_games", t("Games so far")),
             ("total_cards", t("Cards so far")), ("total_prizes_paid_cents", t("Prizes paid so far")),
             ("total_collection_cents", t("Collected so far"))],
            [[r.game.number, r.game.game_id, t(r.game.state), Cents(r.game.price_cents),
              r.game.physical_cards + len(r.game.virtual_cards), r.game.refunded_cards, Cents(r.game.stakes_cents),
              Cents(r.game.prizes_paid_cents), r.total_games, r.total_cards, Cents(r.total_prizes_paid_cents),
              Cents(r.total_collection_cents)] for r in summary],
        ),
        _fields(
            "totals", t("Session totals (R83.5)"),
            [
                ("games", t("Games"), len(session.games)),
                ("cards_sold", t("Cards sold"), last.total_cards if last else 0),
                ("prizes_paid_cents", t("Prizes paid"), Cents(last.total_prizes_paid_cents if last else 0)),
                ("collection_cents", t("Collected"), Cents(last.total_collection_cents if last else 0)),
                ("refunded_cents", t("Refunded"), Cents(sum(g.refunded_cents for g in session.games))),
                ("tax_cents", t("Tax (R98)"), Cents(sum(g.tax_cents or 0 for g in session.games))),
            ],
        ),
    ]
    for game in session.games:
        tables += game_tables(game, timezone, prefix=f"game_{game.number}.", wording=wording)
    if session.joint_games:
        tables.append(_table(
            "joint_games", t("Games played with the partner hall (R3.5.b)"),
            [("game_id", t("Game")), ("partner", t("Partner hall")), ("this_hall_is", t("This hall is")),
             ("state", t("State")),
             ("cards", t("Cards sold here")), ("collection_cents", t("Collected here")),
             ("partner_collection_cents", t("Collected by the partner")), ("line_prize_cents", t("Line prize")),
             ("bingo_prize_cents", t("Bingo prize")), ("paid_here_cents", t("Paid by this hall")),
             ("owed_to_partner_cents", t("Owed to the partner")), ("tax_cents", t("Tax here (R98)"))],
            [[j.game_id, j.partner, t("the main hall") if j.here == j.main else t("the annex"), t(j.state),
              sum(s.count for s in j.paper_sales) + len(j.virtual_cards), Cents(j.own_sales_cents),
              _cents(j.sales[j.partner][1] if j.partner in j.sales else None),
              *_pooled(j)[1:],
              Cents(j.paid_here_cents), _cents(j.owed_to_partner_cents), _cents(j.tax_cents)]
             for j in session.joint_games],
        ))
        for index, joint in enumerate(session.joint_games, start=1):
            tables += joint_tables(joint, timezone, prefix=f"joint_{index}.", wording=wording)
    tables += [
        _table(
            "incidents", t("Incidents and complaints (R75.4, R75.5, R77.2, R84.3)"),
            [("seq", t("Record")), ("time", t("Time")), ("kind", t("Kind")), ("number", t("No.")),
             ("recorded_by", t("Recorded by")), ("people", t("People")), ("text", t("Text")),
             ("room_chief", t("Written before the room chief"))],
            [[e.seq, wording.moment(e.time_ms, timezone), t(e.kind), e.number,
              f"{e.recorded_by} ({t(e.role.replace('_', ' '))})", "; ".join(map(t, e.people)), wording.said(e.said, e.text),
              _witnessed(e, wording)] for e in session.book],
        ),
        _table(
            "ball_sets", t("Ball sets replaced (R83.2)"),
            [("seq", t("Record")), ("time", t("Time")), ("by", t("By")), ("text", t("Replacement"))],
            [[e.seq, wording.moment(e.time_ms, timezone), e.recorded_by, wording.said(e.said, e.text)]
             for e in session.ball_sets],
        ),
        _table(
            "operator_contributions", t("Operator contributions to pots (R89.5, R91.9)"),
            [("seq", t("Record")), ("time", t("Time")), ("pot", t("Pot")), ("amount_cents", t("Amount")),
             ("by", t("By"))],
            [[m.seq, wording.moment(m.time_ms, timezone), t(m.pot), Cents(m.amount_cents),
              m.by] for m in session.pot_movements],
        ),
        _table(
            "jackpot_bank", t("The jackpot's bank account: deposits and withdrawals (R91.11)"),
            [("seq", t("Record")), ("time", t("Time")), ("kind", t("Kind")), ("counterpart", t("From / to")),
             ("amount_cents", t("Amount")), ("reference", t("Bank reference")), ("due_before_cents", t("Due before")),
             ("funds_cents", t("Jackpot funds")), ("bank_after_cents", t("Account after")), ("by", t("By"))],
            [[m.seq, wording.moment(m.time_ms, timezone), t(m.kind), m.counterpart, Cents(m.amount_cents), m.reference,
              Cents(m.due_before_cents), Cents(m.funds_cents), Cents(m.bank_after_cents), m.by]
             for m in session.jackpot_bank],
        ),
        _fields(
            "jackpot_at_close", t("The jackpot at the closing (R91.11)"),
            [
                ("funds_cents", t("Jackpot funds (accumulated and reserve)"),
                 _cents(session.jackpot_funds_at_close_cents)),
                ("bank_cents", t("In its bank account"), _cents(session.jackpot_bank_at_close_cents)),
            ],
        ),
    ]
    return Report("session", subject, t("{hall} - minutes of session {number} ({date})", hall=hall_name,
                                        number=session.number, date=wording.day(session.date)),
                  session.journal_range, tuple(tables), stem=f"minutes-session-{session.number}")


# --- Months ---------------------------------------------------------------------------------


def month_report(count: MonthCount, *, hall_name: str, timezone: tzinfo, wording: Wording = DATA) -> Report:
    """The month's physical and virtual cards sold (R77.4)."""
    t = wording.t
    tables = (
        _journal(t("monthly cards sold"), count.month, count.journal_range, hall_name, timezone, wording),
        _fields(
            "month", t("Cards sold in {month}", month=count.month),
            [
                ("month", t("Month"), count.month),
                ("sessions", t("Sessions"), len(count.sessions)),
                ("games", t("Games"), count.games),
                ("physical_cards", t("Physical cards sold"), count.physical),
                ("virtual_cards", t("Virtual cards sold"), count.virtual),
                ("cards", t("Cards sold"), count.physical + count.virtual),
                ("refunded_cards", t("of which refunded (games not played)"), count.refunded),
            ],
        ),
        _table(
            "sessions", t("By session"),
            [("session", t("Session")), ("date", t("Date")), ("games", t("Games")), ("physical_cards", t("Physical")),
             ("virtual_cards", t("Virtual")), ("refunded_cards", t("Refunded"))],
            [[s.number, wording.day(s.date), s.games, s.physical, s.virtual, s.refunded] for s in count.sessions],
        ),
        _table(
            "series", t("By series"),
            [("kind", t("Cards")), ("series", t("Series")), ("games", t("Games")), ("cards", t("Sold")),
             ("refunded_cards", t("Refunded"))],
            [[t(s.kind), s.series, s.games, s.cards, s.refunded] for s in count.series],
        ),
    )
    return Report("month", count.month, t("{hall} - cards sold in {month}", hall=hall_name, month=count.month),
                  count.journal_range, tables,
                  stem=f"cards-sold-{count.month}")

