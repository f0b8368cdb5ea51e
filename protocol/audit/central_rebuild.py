"""A central server's export of network games rebuilt from its records alone (``bingo audit verify``,
which hands a central export to ``bingo central audit-verify``, and the regulator's receiver).

An independent reading of the ``central_*`` game records (``protocol/records/central.py``),
written to FORMATS.md section 3 and ``docs/audit.md`` ("On the central server"), not
the central server's own game model (which needs the whole card library to replay
its detections):

* the games are those scheduled and ended inside the segment, in the order scheduled;
  those of the programme's chain must chain (R88.5): each takes exactly the carries of the
  game of the chain before it, prize by prize (a carry whose prize it does not play goes
  to its bingo), or the day is a fault;
  one declared not played (R96.2) or whose sale closed with no card in play is left out,
  as the export leaves it out; the segment runs from the first record of the first of
  them to the record that ended the last;
* ``scenario.json``: the first game's shares and carries as the rules and the opening
  (every later game plays the same shares and starts with the carries the one before
  it left), in the version the records make: ``bingo-replay/4`` when the games play
  other patterns than the line and the bingo (``rules.patterns``, ``opening.carry_NAME``),
  ``bingo-replay/3`` when cards were refunded after a sale's close (its tax net of
  them; an export of version 2 written before, which taxed the whole collection, is
  rebuilt in version 2), otherwise the export's own version (version 2 when it names none known), with
  ``rules.sharing`` ``by_stake`` in version 2 when the games' sales closed sharing each prize
  whole by stake (``central_sale_closed.sharing``, R93.13), the hall's way for games of a
  journal written before that rule; per game the price, every card assigned and not refunded in the order
  assigned (``HALL/V1-13``, at its purchase's stake) and the balls in the order drawn;
  the cards a failed terminal's refund took out after the close (``central_stake_returned``
  paid by the house, R96.3) as ``refunded_after_close``, each at its purchase's stake;
* ``result.json``: per game the ``central_sale_closed`` sales, the tax on them (R98; net of the
  house's refunds after the close in versions 3 and 4), the
  bingo's ball count as the balls drawn, per pattern its ``central_prize_won`` (ball,
  amount, carry) and every ``central_card_won`` payment (a prize nobody won, in a game
  left with no card in play, at ball 0 carrying its whole amount), the carries of the
  game's close, and what the house paid back after the close.

The numbers on each card are the scenario's (the journal names cards by number): a
card number of the series holds the same numbers wherever it appears.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from protocol.audit.check import JOURNAL, SCENARIO, ExportFault, ExportFiles, Rebuilt
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import parse
from protocol.records.central import (
    GAME_RECORDS,
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralSaleClosed,
    CentralStakeReturned,
)
from protocol.patterns import PatternError, pattern_from_dict
from protocol.replay import (
    FIRST_INPUT_FORMAT,
    INPUT_FORMAT,
    NUMBERED_FORMATS,
    PATTERN_NAMES as PATTERNS,
    VERSIONS,
    day_sharing,
    day_stamp,
    network_day_format,
    pattern_rule,
)
from protocol.settlement import BY_STAKE
from protocol.settlement import tax_cents
from protocol.settlement.tax import tax_base_after_refunds

#: The pot levels a network game does not play: always 0 in its result.
NO_POTS = ("superbingo", "grand_superbingo", "megabingo", "jackpot_accumulated", "jackpot_reserve")


@dataclass
class _Game:
    game_id: str
    scheduled_seq: int
    price_cents: int
    series_label: str
    shares: dict[str, tuple[int, int]]  # pattern -> (basis points, carry in), in the order of announcement
    #: Each of the other patterns' entry of ``rules.patterns`` (name, share, shape), in the order of announcement.
    extras: list[dict[str, Any]] = field(default_factory=list)
    purchases: list[CentralPurchaseConfirmed] = field(default_factory=list)
    refunded: set[int] = field(default_factory=set)
    #: The house's refunds after the close (R96.3): each card as ``(hall, number, stake percent)``, and the cents.
    house_refunded: list[tuple[str, int, int]] = field(default_factory=list)
    house_refunded_cents: int = 0
    sale: CentralSaleClosed | None = None
    balls: list[int] = field(default_factory=list)
    prizes: dict[str, CentralPrizeWon] = field(default_factory=dict)
    winners: list[CentralCardWon] = field(default_factory=list)
    end: CentralGameClosed | CentralGameNotPlayed | None = None
    end_seq: int = 0
    scheduled: CentralGameScheduled | None = None  # says where the game stands in the chain

    @property
    def names(self) -> tuple[str, ...]:
        """The line, the bingo, then the other patterns in their order of announcement."""
        return (*PATTERNS, *(str(extra["name"]) for extra in self.extras))

    @property
    def cards_in_play(self) -> int:
        return sum(p.card_count for p in self.purchases) - len(self.refunded)

    def card_id(self, hall: str, number: int) -> str:
        return f"{hall}/{self.series_label}-{number}"


def _scheduled(event: CentralGameScheduled, seq: int) -> _Game:
    config = event.config
    shares = {}
    extras = []
    for prize in config["prizes"]:
        name = str(prize["pattern"]["name"])
        shares[name] = (int(prize["basis_points"]), int(prize.get("carry_in_cents", 0)))
        if name not in PATTERNS:
            try:
                extras.append(pattern_rule(pattern_from_dict(prize["pattern"]), shares[name][0]))
            except PatternError as error:
                raise ValueError(f"a pattern it can play: {error}") from None
    return _Game(event.game_id, seq, int(config["price_cents"]), str(config["series_label"]), shares,
                 extras, scheduled=event)


def _games(records: tuple[Record, ...]) -> dict[str, _Game]:
    games: dict[str, _Game] = {}
    for stored in records:
        if stored.type not in GAME_RECORDS:
            continue
        try:
            event = parse(stored)
        except DomainError as error:
            raise ExportFault(f"{JOURNAL} record {stored.seq}: {error}") from None
        if isinstance(event, CentralGameScheduled):
            try:
                games[event.game_id] = _scheduled(event, stored.seq)
            except (KeyError, TypeError, ValueError) as error:
                raise ExportFault(f"{JOURNAL} record {stored.seq}: the game's configuration lacks {error}") from None
            continue
        game = games.get(str(stored.payload.get("game_id")))
        if game is None:
            continue  # a game scheduled before the segment, not one of the export's
        if isinstance(event, CentralPurchaseConfirmed):
            game.purchases.append(event)
        elif isinstance(event, CentralStakeReturned):
            game.refunded.update(event.card_numbers)
            if event.paid_by == "house":
                pct = next((p.stake_pct for p in game.purchases
                            if (p.hall_id, p.request_id) == (event.hall_id, event.purchase_request_id)), None)
                if pct is None:
                    raise ExportFault(f"{JOURNAL} record {stored.seq}: returns the stakes of purchase "
                                      f"{event.purchase_request_id} of {event.hall_id}, which the segment does not hold")
                game.house_refunded.extend((event.hall_id, number, pct) for number in event.card_numbers)
                game.house_refunded_cents += event.amount_cents
        elif isinstance(event, CentralSaleClosed):
            game.sale = event
        elif isinstance(event, CentralBallDrawn):
            game.balls.append(event.ball)
        elif isinstance(event, CentralPrizeWon):
            game.prizes[event.pattern] = event
        elif isinstance(event, CentralCardWon):
            game.winners.append(event)
        elif isinstance(event, (CentralGameClosed, CentralGameNotPlayed)):
            game.end, game.end_seq = event, stored.seq
    return games


def _played(files: ExportFiles) -> tuple[list[_Game], list[str]]:
    """The games played to their end in the segment, and the chain of the ended ones."""
    records = files.records
    games = _games(records)
    ended = [g for g in games.values() if g.end is not None]
    if not ended:
        raise ExportFault(f"{JOURNAL}: no network game is both scheduled and ended in the segment")
    first = min(g.scheduled_seq for g in ended)
    last = max(g.end_seq for g in ended)
    for record in records:
        if not first <= record.seq <= last:
            raise ExportFault(
                f"{JOURNAL} record {record.seq}: is outside the day's segment (from record {first}, the first "
                f"record of game {next(g.game_id for g in ended if g.scheduled_seq == first)}, to record {last}, "
                "the end of the last game)"
            )
    chain = _check_chain(ended)
    played = []
    for game in ended:
        if isinstance(game.end, CentralGameNotPlayed):
            continue
        if game.sale is None or game.sale.cards_in_play == 0:
            continue
        if "bingo" not in game.prizes and game.cards_in_play:
            raise ExportFault(f"{JOURNAL}: network game {game.game_id} is in the segment, but the export refuses it: "
                              "it was not played to its bingo")
        played.append(game)
    if not played:
        raise ExportFault(f"{JOURNAL}: no network game of the segment was played to its end")
    return played, chain


def _check_chain(ended: list[_Game]) -> list[str]:
    """The games of the chain among ``ended`` (in the order scheduled); a fault where the carries do not chain.

    Each game of the chain follows the one before it and takes exactly its carries out; a
    prize carries in the carry of the prize of the same name, and the bingo also every carry
    whose prize the game does not play (R88.5).  The first may follow a game of the day
    before, whose carries only its own record says.
    """
    chain: list[str] = []
    previous: _Game | None = None
    for game in ended:
        event = game.scheduled
        if event is None or event.chain is None:
            continue
        where = f"{JOURNAL} record {game.scheduled_seq}: network game {game.game_id}"
        if event.after_game is None:
            if previous is not None:
                raise ExportFault(f"{where} starts a chain of its own after {previous.game_id}, whose carries no game "
                                  "takes: the day's carries do not chain (R88.5)")
        else:
            taken = {str(k): int(v) for k, v in (event.carries_taken or {}).items()}
            if previous is not None:
                assert previous.end is not None
                before = {str(k): int(v) for k, v in previous.end.carries.items()}
                if event.after_game != previous.game_id:
                    raise ExportFault(f"{where} follows {event.after_game}, but the game of the chain before it is "
                                      f"{previous.game_id}: the day's carries do not chain (R88.5)")
                if taken != before:
                    raise ExportFault(f"{where} took the carries {taken} of {previous.game_id}, which carried out "
                                      f"{before}: the day's carries do not chain (R88.5)")
            carried_in = {name: carry for name, (_, carry) in game.shares.items()}
            due = {name: taken.get(name, 0) for name in carried_in}
            due["bingo"] = due.get("bingo", 0) + sum(cents for name, cents in taken.items() if name not in carried_in)
            if carried_in != due:
                raise ExportFault(f"{where} carries in {carried_in}; the carries it took, {taken}, make {due}: the "
                                  "day's carries do not chain (R88.5)")
        previous = game
        chain.append(game.game_id)
    return chain


def _sharing(games: list[_Game]) -> str:
    """How the games shared their prizes (R93.13: ``by_stake``, version 2's ``rules.sharing``; ``hall``
    before that rule); a fault for a day holding games of both rules."""
    by_stake = [g.sale is not None and g.sale.sharing == BY_STAKE for g in games]
    sharing = day_sharing(by_stake)
    if sharing is None:
        raise ExportFault(
            f"{JOURNAL}: network game {games[by_stake.index(True)].game_id} shares its prizes by stake (R93.13) "
            f"and network game {games[by_stake.index(False)].game_id}, of the same day, by the earlier rule with "
            "carries; the replay format plays one rule a day"
        )
    return sharing


def _shares(game: _Game) -> dict[str, Any]:
    shares: dict[str, Any] = {"line_bp": game.shares["line"][0], "bingo_bp": game.shares["bingo"][0]}
    if game.extras:
        shares["patterns"] = game.extras
    return shares


def _rules_and_opening(games: list[_Game]) -> tuple[dict[str, Any], dict[str, int]]:
    rules = _shares(games[0])
    carries = opening = {f"carry_{name}": games[0].shares[name][1] for name in games[0].names}
    for game in games:
        if _shares(game) != rules:
            raise ExportFault(f"{JOURNAL}: network game {game.game_id} plays other shares than the day's first game")
        given = {f"carry_{name}": game.shares[name][1] for name in game.names}
        if given != carries:
            raise ExportFault(
                f"{JOURNAL}: network game {game.game_id} started with the carries {given}, but the game before it "
                f"left {carries}"
            )
        assert game.end is not None
        carries = {f"carry_{name}": int(game.end.carries[name]) for name in game.names}
    return rules, opening


class _Layouts:
    """The numbers of each card of the series, from the scenario's cards (``HALL/V1-13``)."""

    def __init__(self, scenario: Mapping[str, Any]) -> None:
        self.rows: dict[str, tuple[str, Any]] = {}  # V1-13 -> first id, rows
        for session in scenario["sessions"]:
            for game in session["games"]:
                for card in game["cards"]:
                    card_id = str(card["id"])
                    label = card_id.partition("/")[2] or card_id
                    known = self.rows.setdefault(label, (card_id, card["rows"]))
                    if known[1] != card["rows"]:
                        raise ExportFault(
                            f"{SCENARIO}: cards {known[0]} and {card_id} hold different numbers, though both are "
                            f"card {label} of the central library"
                        )

    def of(self, label: str) -> Any:
        found = self.rows.get(label)
        return None if found is None else found[1]


def rebuild(files: ExportFiles) -> Rebuilt:
    """The network games' scenario and result as the segment's records say them."""
    games, chain = _played(files)
    rules, opening = _rules_and_opening(games)
    version = _version(files, games)
    sessions = files.scenario["sessions"]
    date = sessions[0]["date"] if len(sessions) == 1 else ""
    session = day_stamp(date, version)
    layouts = _Layouts(files.scenario)
    scenario_games = []
    result_games = []
    total_sales = total_paid = total_tax = 0
    for number, game in enumerate(games, start=1):
        assert game.sale is not None and isinstance(game.end, CentralGameClosed)
        cards = []
        for p in game.purchases:
            for card in range(p.first_card, p.first_card + p.card_count):
                if card not in game.refunded:
                    label = f"{game.series_label}-{card}"
                    cards.append({"id": game.card_id(p.hall_id, card), "stake_pct": p.stake_pct,
                                  "rows": layouts.of(label)})
        facts: dict[str, Any] = {"game": number, "price_cents": game.price_cents, "cards": cards,
                                 "draw": list(game.balls)}
        if game.house_refunded:
            facts["refunded_after_close"] = [{"id": game.card_id(hall, card), "stake_pct": pct}
                                             for hall, card, pct in game.house_refunded]
        scenario_games.append(facts)
        prizes = {}
        for name in game.names:
            won = game.prizes.get(name)
            if won is None:  # no card left in play: nobody won it, it carries whole
                amount = int(game.sale.prize_amounts[name])
                prizes[name] = {"ball": 0, "amount_cents": amount, "carry_cents": amount, "paid": []}
                continue
            paid = sorted((game.card_id(w.hall_id, w.card_number), w.payment_cents)
                          for w in game.winners if w.pattern == name)
            prizes[name] = {"ball": won.ball_count, "amount_cents": won.amount_cents, "carry_cents": won.carry_cents,
                            "paid": [{"card": card, "cents": cents} for card, cents in paid]}
            total_paid += won.paid_cents
        sales = game.sale.sales_cents
        tax = tax_cents(tax_base_after_refunds(sales, game.house_refunded_cents) if version in NUMBERED_FORMATS
                        else sales)
        total_sales += sales
        total_tax += tax
        pots = {"carry_line": int(game.end.carries["line"]), "carry_bingo": int(game.end.carries["bingo"])}
        bingo = game.prizes.get("bingo")
        recorded: dict[str, Any] = {
            **session, "game": number, "sales_cents": sales, "tax_cents": tax,
            "balls_drawn": bingo.ball_count if bingo is not None else len(game.balls), "prizes": prizes,
        }  # fmt: skip
        if game.house_refunded:
            recorded["refunded_after_close_cents"] = game.house_refunded_cents
        extra_carries = {f"carry_{name}": int(game.end.carries[name]) for name in game.names[len(PATTERNS):]}
        result_games.append({**recorded, "pots": {**pots, **dict.fromkeys(NO_POTS, 0), **extra_carries}})
    shared: dict[str, Any] = dict(rules)
    if _sharing(games) == BY_STAKE:
        shared["sharing"] = BY_STAKE
    scenario = {"format": version, "rules": shared, "opening": opening,
                "sessions": [{**session, "games": scenario_games}]}
    result = {"format": VERSIONS[version][0], "games": result_games,
              "totals": {"sales_cents": total_sales, "paid_cents": total_paid, "tax_cents": total_tax}}
    notes = (f"the carries chain through {len(chain)} game(s) of the programme ({' -> '.join(chain)})",) if chain else ()
    return Rebuilt(scenario, result, tuple(game.game_id for game in games), notes)


def _version(files: ExportFiles, games: list[_Game]) -> str:
    """The replay format the records make of the day.

    Other patterns than the line and the bingo need ``bingo-replay/4``; cards refunded after a sale's close
    ``bingo-replay/3``, whose tax is net of them, unless the export says version 2: the central server wrote
    those days so before, taxing the whole collection, and they still verify.  Otherwise an export written in
    the first format is rebuilt in it (a network game has no pot, so both read it alike), except that games
    sharing by stake (R93.13) need version 2's ``rules.sharing``.
    """
    given = files.scenario.get("format")
    made = network_day_format(other_patterns=any(game.extras for game in games),
                              refunds_after_close=any(game.house_refunded for game in games) and given != INPUT_FORMAT)
    if made != INPUT_FORMAT:
        return made
    if _sharing(games) == BY_STAKE or given != FIRST_INPUT_FORMAT:
        return INPUT_FORMAT
    return FIRST_INPUT_FORMAT


__all__ = ["rebuild"]
