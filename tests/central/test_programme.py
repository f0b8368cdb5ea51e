"""The programme's rules, pure: the chain of games, what each carries in (R88.5), when the next is due.

The property test plays random chains of random games, their template changing on the
way (a pattern dropped, one added, other shares), and holds the money of the whole
chain to the cent: sales + carries in = refunds + prizes + carries out + house, per game
and across the chain, and what one game carries out is what the next carries in.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from central_server.domain.config import NetworkGameConfig, PrizeShare, library_digest
from central_server.domain.errors import BadArgument, ConfigError, EventError, NotNow
from central_server.domain.money import check_conservation, money_of
from central_server.domain.programme import (
    BY_OPERATOR,
    BY_PROGRAMME,
    Chain,
    ChainBroken,
    Hours,
    Local,
    OneOff,
    ProgrammeConfig,
    Wait,
    chained_carries,
    check_links,
    next_id,
)
from protocol.patterns import BINGO, FOUR_CORNERS, LINE, TWO_LINES, pattern_to_dict
from protocol.records.central import (
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameQueued,
    CentralGameScheduled,
    CentralProgrammePaused,
    CentralProgrammeResumed,
)
from tests.central.conftest import HALLS, LIBRARY, Played
from tests.central.test_money import random_game


DIGEST = library_digest(LIBRARY)
DAY = Local("2026-12-03")


def template(patterns: tuple[tuple[Any, int], ...] = ((LINE, 2000), (BINGO, 5000)), **changes: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "halls": list(HALLS), "price_cents": 100, "max_price_cents": 200, "sale_window_ms": 60_000,
        "ball_interval_ms": 2_000, "series_label": "V1", "series_cards": len(LIBRARY),
        "prizes": [{"pattern": pattern_to_dict(p), "basis_points": bp} for p, bp in patterns],
    }  # fmt: skip
    settings.update(changes)
    return settings


def programme(**kwargs: Any) -> ProgrammeConfig:
    return ProgrammeConfig(template(), **kwargs)


def prizes_of(patterns: tuple[tuple[Any, int], ...] = ((LINE, 2000), (BINGO, 5000))) -> tuple[PrizeShare, ...]:
    return tuple(PrizeShare(p, bp) for p, bp in patterns)


def next_of(chain: Chain, prog: ProgrammeConfig | None, *, local: Local = DAY, now_ms: int = 0,
            prizes: tuple[PrizeShare, ...] | None = None) -> CentralGameScheduled | Wait:
    return chain.next_game(prog, now_ms=now_ms, local=local, prizes=prizes or prizes_of(), digest=DIGEST)


def ended(chain: Chain, game_id: str, carries: dict[str, int]) -> None:
    chain.apply(CentralGameClosed(game_id=game_id, closed_at_ms=1, carries=carries))


def carried_in(event: CentralGameScheduled) -> dict[str, int]:
    return {p["pattern"]["name"]: p["carry_in_cents"] for p in event.config["prizes"]}


# --- The carries ----------------------------------------------------------------------


def test_a_prize_takes_the_carry_of_the_prize_of_the_same_name_and_a_dropped_prize_s_goes_to_the_bingo() -> None:
    taken = {"line": 14, "four_corners": 120, "bingo": 3}
    assert chained_carries(taken, ["line", "bingo"]) == {"line": 14, "bingo": 123}
    assert chained_carries(taken, ["line", "two_lines", "four_corners", "bingo"]) == {
        "line": 14, "two_lines": 0, "four_corners": 120, "bingo": 3}
    assert sum(chained_carries(taken, ["line", "bingo"]).values()) == sum(taken.values())


def test_the_id_scheme_numbers_the_games_of_each_day_from_one() -> None:
    assert next_id("net", "2026-12-03", set()) == "net-2026-12-03-1"
    taken = {"net-2026-12-03-1", "net-2026-12-03-7", "net-2026-12-02-40", "other-2026-12-03-9", "net-2026-12-03-x"}
    assert next_id("net", "2026-12-03", taken) == "net-2026-12-03-8"
    assert next_id("net", "2026-12-04", taken) == "net-2026-12-04-1"


def test_hours_are_read_as_hh_mm_hh_mm_and_may_run_over_midnight() -> None:
    day = Hours.parse("10:00-23:30")
    assert (day.start, day.end, str(day)) == (600, 1410, "10:00-23:30")
    assert day.open_at(600) and day.open_at(1409) and not day.open_at(1410) and not day.open_at(599)
    night = Hours.parse("18:00-02:00")
    assert night.open_at(18 * 60) and night.open_at(60) and not night.open_at(120) and not night.open_at(12 * 60)
    for bad in ("10:00", "24:00-10:00", "10:00-10:00", "9:00-10:00", 1000, None):
        with pytest.raises(ConfigError, match="^hours: "):
            Hours.parse(bad)


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"id_prefix": "n t"}, "id_prefix", "may not hold"),
    ({"id_prefix": "x" * 41}, "id_prefix", "1 to 40 characters"),
    ({"opens_after_ms": -1}, "opens_after_ms", "0 to 86400000"),
    ({"games": 0}, "games", "1 or more"),
    ({"games": True}, "games", "1 or more"),
    ({"template": template(price_cents=300)}, "game.price_cents", "above the maximum price"),
    ({"template": template(((LINE, 2000), (BINGO, 4000)))}, "game.prizes", "at least 7000"),
    ({"template": template(((BINGO, 7000),))}, "game.prizes", "line"),
    ({"template": {**template(), "game_id": "x"}}, "game.game_id", "programme's to set"),
])
def test_a_programme_that_breaks_a_rule_is_refused_naming_the_field(changes: dict[str, Any], field: str,
                                                                     message: str) -> None:
    arguments: dict[str, Any] = {"template": template(), **changes}
    with pytest.raises(ConfigError, match=message) as refused:
        ProgrammeConfig(**arguments)
    assert refused.value.field == field


# --- The next game ----------------------------------------------------------------------


def test_the_chain_s_first_game_carries_in_what_the_template_says_and_each_next_one_what_the_last_carried_out() -> None:
    prog = ProgrammeConfig(template(prizes=[{"pattern": pattern_to_dict(LINE), "basis_points": 2000,
                                             "carry_in_cents": 14},
                                            {"pattern": pattern_to_dict(BINGO), "basis_points": 5000}]),
                           opens_after_ms=30_000)
    chain = Chain()
    first = next_of(chain, prog)
    assert isinstance(first, CentralGameScheduled)
    assert (first.game_id, first.chain, first.after_game, first.carries_taken) == (
        "net-2026-12-03-1", BY_PROGRAMME, None, None)
    assert carried_in(first) == {"line": 14, "bingo": 0} and first.opens_after_ms == 30_000
    chain.apply(first)
    assert next_of(chain, prog) == Wait("game net-2026-12-03-1 of the chain is under way")
    ended(chain, first.game_id, {"line": 3, "bingo": 907})
    second = next_of(chain, prog)
    assert isinstance(second, CentralGameScheduled)
    assert (second.game_id, second.after_game, dict(second.carries_taken or {})) == (
        "net-2026-12-03-2", first.game_id, {"line": 3, "bingo": 907})
    assert carried_in(second) == {"line": 3, "bingo": 907}
    NetworkGameConfig.from_dict(second.config)  # a game the domain plays
    # The record says as much, and the chain refuses a record that breaks it.
    chain.apply(second)
    with pytest.raises(EventError, match="each game's carries go to one game"):
        chain.apply(CentralGameScheduled(game_id="fork", config=second.config, chain=BY_PROGRAMME,
                                         after_game=first.game_id, carries_taken={"line": 3, "bingo": 907}))


def test_a_record_that_takes_other_carries_than_the_last_game_left_is_refused() -> None:
    chain = Chain()
    first = next_of(chain, programme())
    assert isinstance(first, CentralGameScheduled)
    chain.apply(first)
    ended(chain, first.game_id, {"line": 3, "bingo": 9})
    with pytest.raises(EventError, match="carried out"):
        chain.apply(CentralGameScheduled(game_id="b", config=first.config, chain=BY_PROGRAMME,
                                         after_game=first.game_id, carries_taken={"line": 3, "bingo": 8}))


def test_the_terms_in_force_decide_the_prizes_and_a_dropped_pattern_s_carry_goes_to_the_bingo() -> None:
    chain = Chain()
    corners = ((LINE, 1500), (FOUR_CORNERS, 1000), (BINGO, 5000))
    first = next_of(chain, programme(), prizes=prizes_of(corners))
    assert isinstance(first, CentralGameScheduled)
    assert [p["pattern"]["name"] for p in first.config["prizes"]] == ["line", "four_corners", "bingo"]
    chain.apply(first)
    ended(chain, first.game_id, {"line": 2, "four_corners": 450, "bingo": 1})
    second = next_of(chain, programme(), prizes=prizes_of(((LINE, 2000), (TWO_LINES, 500), (BINGO, 5000))))
    assert isinstance(second, CentralGameScheduled)
    assert carried_in(second) == {"line": 2, "two_lines": 0, "bingo": 451}


def test_a_game_not_played_is_followed_like_one_closed() -> None:
    chain = Chain()
    first = next_of(chain, programme())
    assert isinstance(first, CentralGameScheduled)
    chain.apply(first)
    chain.apply(CentralGameNotPlayed(game_id=first.game_id, declared_at_ms=1, reason="storm", declared_by="olga",
                                     carries={"line": 0, "bingo": 40}))
    second = next_of(chain, programme())
    assert isinstance(second, CentralGameScheduled) and carried_in(second) == {"line": 0, "bingo": 40}


def test_paused_limited_outside_its_hours_or_with_no_programme_the_chain_waits() -> None:
    chain = Chain()
    assert next_of(chain, None) == Wait("this central server has no programme ([programme] in central.toml)")
    chain.apply(*chain.pause("the regulator's visit"))
    assert next_of(chain, programme()) == Wait("the programme is paused (the regulator's visit)")
    with pytest.raises(NotNow, match="already paused"):
        chain.pause("again")
    chain.apply(*chain.resume())
    with pytest.raises(NotNow, match="nothing to resume"):
        chain.resume()
    waiting = next_of(chain, programme(), local=Local("2026-12-03", in_hours=False, hours_open_ms=5_000))
    assert waiting == Wait("outside the programme's hours", 5_000)
    prog = programme(games=1)
    first = next_of(chain, prog)
    assert isinstance(first, CentralGameScheduled)
    chain.apply(first)
    ended(chain, first.game_id, {"line": 0, "bingo": 0})
    assert next_of(chain, prog) == Wait("the programme has played its 1 game(s)")
    with pytest.raises(BadArgument, match="say why"):
        chain.pause("  ")


def test_a_one_off_game_is_scheduled_at_once_after_a_game_over_or_queued_after_one_under_way() -> None:
    chain = Chain()
    prog = programme()
    first = next_of(chain, prog)
    assert isinstance(first, CentralGameScheduled)
    chain.apply(first)
    chain.apply(*chain.pause("a special game next"))
    queued = chain.one_off(prog, OneOff("gala-1", {"price_cents": 150, "opens_after_ms": 1_000}), now_ms=0,
                           local=DAY, prizes=prizes_of(), digest=DIGEST)
    assert queued == CentralGameQueued(game_id="gala-1", after_game=first.game_id,
                                       settings={"price_cents": 150, "opens_after_ms": 1_000})
    chain.apply(queued)
    with pytest.raises(NotNow, match="already waits"):
        chain.one_off(prog, OneOff(), now_ms=0, local=DAY, prizes=prizes_of(), digest=DIGEST)
    ended(chain, first.game_id, {"line": 5, "bingo": 6})
    # Paused, the programme schedules nothing of its own; the operator's one-off goes first.
    gala = next_of(chain, prog)
    assert isinstance(gala, CentralGameScheduled)
    assert (gala.game_id, gala.chain, gala.after_game, gala.opens_after_ms) == ("gala-1", BY_OPERATOR, first.game_id, 1_000)
    assert gala.config["price_cents"] == 150 and carried_in(gala) == {"line": 5, "bingo": 6}
    chain.apply(gala)
    assert chain.queued is None and chain.programme_games == 1
    ended(chain, "gala-1", {"line": 1, "bingo": 2})
    assert next_of(chain, prog) == Wait("the programme is paused (a special game next)")
    now = chain.one_off(prog, OneOff(), now_ms=0, local=DAY, prizes=prizes_of(), digest=DIGEST)
    assert isinstance(now, CentralGameScheduled) and now.game_id == "net-2026-12-03-2" and now.after_game == "gala-1"


@pytest.mark.parametrize(("request_", "error", "message"), [
    (OneOff("net-2026-12-03-1"), NotNow, "already a network game"),
    (OneOff(None, {"price_cents": 201}), ConfigError, "maximum price"),
    (OneOff(None, {"sale_window_ms": 1}), ConfigError, "sale_window_ms"),
    (OneOff(None, {"opens_after_ms": 86_400_001}), ConfigError, "opens_after_ms"),
])
def test_a_one_off_game_that_breaks_a_rule_is_refused_with_the_reason(request_: OneOff, error: type, message: str) -> None:
    chain = Chain()
    chain.apply(CentralGameScheduled(game_id="net-2026-12-03-1", config={}))
    with pytest.raises(error, match=message):
        chain.one_off(programme(), request_, now_ms=0, local=DAY, prizes=prizes_of(), digest=DIGEST)
    with pytest.raises(NotNow, match="no programme"):
        chain.one_off(None, OneOff(), now_ms=0, local=DAY, prizes=prizes_of(), digest=DIGEST)


def test_a_one_off_game_takes_only_the_settings_it_may_choose() -> None:
    with pytest.raises(BadArgument, match="prizes is not a setting"):
        OneOff(None, {"prizes": 1})
    with pytest.raises(BadArgument, match="game_id"):
        OneOff("a b")


def test_a_journal_that_pauses_twice_or_queues_two_one_offs_is_refused() -> None:
    chain = Chain()
    chain.apply(CentralProgrammePaused(reason="x"))
    with pytest.raises(EventError, match="cannot follow a programme that is paused"):
        chain.apply(CentralProgrammePaused(reason="y"))
    chain.apply(CentralProgrammeResumed())
    chain.apply(CentralGameQueued(game_id="a", after_game="x", settings={}))
    with pytest.raises(EventError, match="still waits"):
        chain.apply(CentralGameQueued(game_id="b", after_game="x", settings={}))


# --- The chain of a day (the audit export) -------------------------------------------------


def chain_of(count: int) -> list[tuple[CentralGameScheduled, dict[str, int]]]:
    chain, out = Chain(), []
    for k in range(count):
        event = next_of(chain, programme())
        assert isinstance(event, CentralGameScheduled)
        chain.apply(event)
        carries = {"line": k, "bingo": 10 * k}
        ended(chain, event.game_id, carries)
        out.append((event, carries))
    return out


def test_a_day_whose_carries_chain_passes_and_one_that_does_not_is_named() -> None:
    day = chain_of(3)
    assert check_links(day) == ("net-2026-12-03-1", "net-2026-12-03-2", "net-2026-12-03-3")
    assert check_links(day[1:]) == ("net-2026-12-03-2", "net-2026-12-03-3")  # the first follows the day before
    with pytest.raises(ChainBroken, match="3 follows net-2026-12-03-2, but the game of the chain before it is net-2026-12-03-1,"):
        check_links([day[0], day[2]])
    altered = [day[0], (day[1][0], {"line": 1, "bingo": 11}), day[2]]
    with pytest.raises(ChainBroken, match="took the carries .* which carried out"):
        check_links(altered)
    event = day[1][0]
    config = dict(event.config)
    config["prizes"] = [dict(p, carry_in_cents=p["carry_in_cents"] + 1) for p in config["prizes"]]
    forged = CentralGameScheduled(game_id=event.game_id, config=config, chain=event.chain,
                                  after_game=event.after_game, carries_taken=event.carries_taken)
    with pytest.raises(ChainBroken, match="carries in"):
        check_links([day[0], (forged, day[1][1]), day[2]])
    first_again = CentralGameScheduled(game_id="z", config=day[0][0].config, chain=BY_PROGRAMME)
    with pytest.raises(ChainBroken, match="starts a chain of its own"):
        check_links([day[0], (first_again, {})])


# --- Money across the chain -------------------------------------------------------------

TEMPLATES = [
    ((LINE, 2000), (BINGO, 5000)),
    ((LINE, 1500), (TWO_LINES, 1000), (FOUR_CORNERS, 500), (BINGO, 4500)),
    ((LINE, 1800), (FOUR_CORNERS, 700), (BINGO, 5000)),
    ((LINE, 2500), (BINGO, 5000)),
]


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.req("R88.4-5", "R93.13", "R96.2", "R96.3")
def test_random_games_chained_by_the_programme_conserve_the_money_of_the_whole_chain_to_the_cent(seed: int) -> None:
    """sales + carries in = refunds + prizes + carries out + house, per game and across the chain."""
    rng = random.Random(seed)
    chain = Chain()
    first_carries = {"line": rng.randint(0, 300), "bingo": rng.randint(0, 300)}
    prog = ProgrammeConfig(template(prizes=[
        {"pattern": pattern_to_dict(LINE), "basis_points": 2000, "carry_in_cents": first_carries["line"]},
        {"pattern": pattern_to_dict(BINGO), "basis_points": 5000, "carry_in_cents": first_carries["bingo"]},
    ]))  # fmt: skip
    kept = 0  # sales - refunds - prizes - house over the chain: what its games kept back from players
    out: dict[str, int] = {}
    for n in range(rng.randint(2, 5)):
        terms = prizes_of(rng.choice(TEMPLATES)) if n else prizes_of()
        event = next_of(chain, prog, prizes=terms, now_ms=n)
        assert isinstance(event, CentralGameScheduled)
        if n:
            assert dict(event.carries_taken or {}) == out and sum(carried_in(event).values()) == sum(out.values())
        chain.apply(event)
        config = NetworkGameConfig.from_dict(event.config)
        played = random_game(rng, tuple((p.pattern, p.basis_points) for p in config.prizes),
                             {p.name: p.carry_in_cents for p in config.prizes}, event.game_id)
        money = money_of(played.events)
        check_conservation(money)
        t = money.totals
        kept += t.net_cents - money.house_cents
        out = dict(played.game.carries or {})
        chain.apply(next(e for e in played.events if isinstance(e, (CentralGameClosed, CentralGameNotPlayed))))
    assert kept == sum(out.values()) - sum(first_carries.values())


def test_a_played_game_s_config_comes_back_from_its_scheduling_record() -> None:
    chain = Chain()
    event = next_of(chain, programme())
    assert isinstance(event, CentralGameScheduled)
    played = Played(NetworkGameConfig.from_dict(event.config)).open()
    played.buy("r1", count=3, pct=50)
    played.close().draw_all(seed=3)
    assert played.game.carries is not None
