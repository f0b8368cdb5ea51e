"""The hall session: verification, counts with witnesses, signatures, ball set (R84, R77.1, R83)."""

import pytest

from hall_server.hall.roles import Role
from hall_server.hall.session import CHECKS, SessionError, SessionModule
from server_kit.core import Actor, CommandCore, NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result

ADMIN = Actor("ines", Role.ADMINISTRATOR)
CHIEF = Actor("rui", Role.ROOM_CHIEF)
SELLER = Actor("ana", Role.SELLER_CALLER)
ALL_BALLS = list(range(1, 91))
PASSED = dict.fromkeys(CHECKS)


def verify_passed(session: SessionModule, date: str = "2026-12-01") -> None:
    """The pre-session verification through the server's own path, with checks that pass.

    A hall built for a test has no verification of its own; it is given checks that
    find nothing wrong (``PASSED``).
    """
    if session.verifier is None:
        session.verifier = lambda now: dict(PASSED)
    result(session.run_verification(ADMIN, date))


def open_session(session: SessionModule) -> None:
    verify_passed(session)
    result(session.count_balls(CHIEF, "opening", ALL_BALLS, ["Marta Soler (public)"]))
    result(session.sign_opening(ADMIN))
    result(session.sign_opening(CHIEF))


@pytest.mark.req("R84.1", "R84.2", "R77.1", "R92.5e")
def test_a_session_opens_after_verification_a_whole_count_and_both_signatures(core: CommandCore) -> None:
    session = SessionModule(core)
    open_session(session)
    assert session.is_open
    opened = session.state.current
    assert opened.opening_signatures == {"administrator": "ines", "room_chief": "rui"}
    assert opened.counts[0].witnesses == ("Marta Soler (public)",)


@pytest.mark.req("R84.1", "R92.5e")
def test_a_failed_verification_is_recorded_and_blocks_the_opening(core: CommandCore, journal: Journal) -> None:
    session = SessionModule(core, lambda now: {**PASSED, "clock": "off by 9 minutes"})
    result(session.run_verification(ADMIN, "2026-12-01"))
    with pytest.raises(SessionError, match="has not passed its verification"):
        result(session.count_balls(CHIEF, "opening", ALL_BALLS, ["a player"]))
    (record,) = list(journal.records())
    assert record.type == "system_verified" and record.payload["passed"] is False
    assert record.payload["results"]["clock"] == "off by 9 minutes"


@pytest.mark.req("R84.1", "R77.1")
@pytest.mark.parametrize("date", ["hello", "2026-13-01", "2026-02-30", "01/12/2026", " 2026-12-01", None, 20261201])
def test_a_verification_for_a_date_that_is_not_one_is_refused_and_records_nothing(
    core: CommandCore, journal: Journal, date: object
) -> None:
    session = SessionModule(core, lambda now: dict(PASSED))
    with pytest.raises(SessionError, match="a session's date is YYYY-MM-DD"):
        result(session.run_verification(ADMIN, date))  # type: ignore[arg-type]
    assert list(journal.records()) == []
    verify_passed(session)  # and the right date is still taken
    assert [r.type for r in journal.records()] == ["system_verified"]


@pytest.mark.req("R84.1", "R77.1")
def test_a_session_may_not_be_dated_before_the_last_one(core: CommandCore) -> None:
    session = SessionModule(core)
    open_session(session)
    for stage in ("closing",):
        result(session.count_balls(CHIEF, stage, ALL_BALLS, ["Marta Soler (public)"]))
    result(session.sign_closing(CHIEF))
    result(session.sign_closing(ADMIN))
    with pytest.raises(SessionError, match="before the last session's \\(2026-12-01\\)"):
        result(session.run_verification(ADMIN, "2026-11-30"))


@pytest.mark.req("R84.2")
def test_a_count_missing_a_ball_blocks_the_signatures(core: CommandCore) -> None:
    session = SessionModule(core)
    verify_passed(session)
    result(session.count_balls(CHIEF, "opening", ALL_BALLS[:-1] + [3], ["a player"]))
    assert session.state.current.counts[0].missing == (90,)
    assert session.state.current.counts[0].repeated == (3,)
    with pytest.raises(SessionError, match="did not find the 90 balls once each"):
        result(session.sign_opening(ADMIN))
    with pytest.raises(SessionError, match="at least one member of the public"):
        result(session.count_balls(CHIEF, "opening", ALL_BALLS, []))
    result(session.count_balls(CHIEF, "opening", ALL_BALLS, ["a player"]))
    result(session.sign_opening(ADMIN))
    with pytest.raises(SessionError, match="already signed"):
        result(session.sign_opening(ADMIN))


@pytest.mark.req("R80")
def test_staff_act_only_within_their_role(core: CommandCore, journal: Journal) -> None:
    session = SessionModule(core)
    with pytest.raises(NotAllowed, match=r"ana \(seller caller\) may not count balls"):
        result(session.count_balls(SELLER, "opening", ALL_BALLS, ["x"]))
    with pytest.raises(NotAllowed):
        result(session.sign_opening(SELLER))
    assert list(journal.records()) == []


@pytest.mark.req("R84.3")
def test_ten_players_may_ask_for_an_extra_check(core: CommandCore) -> None:
    session = SessionModule(core)
    open_session(session)
    nine = [f"player {n}" for n in range(9)]
    with pytest.raises(SessionError, match="at least 10 different players; 9 signed"):
        result(session.request_extra_check(CHIEF, nine, "ball 7 looks chipped"))
    with pytest.raises(SessionError, match="give its reasons"):
        result(session.request_extra_check(CHIEF, nine + ["player 9"], " "))
    result(session.request_extra_check(CHIEF, nine + ["player 9"], "ball 7 looks chipped"))
    result(session.count_balls(CHIEF, "extra", ALL_BALLS, ["player 0"]))
    assert session.state.extra_checks[0]["complaint"] == "ball 7 looks chipped"


@pytest.mark.req("R83.1-2")
def test_the_ball_set_warns_then_blocks_at_2000_games_until_replaced(core: CommandCore) -> None:
    session = SessionModule(core)
    session.state.ball_set_games = 1_899
    assert session.ball_set_warning() is None
    session.state.ball_set_games = 1_900
    assert "must be replaced at 2000" in session.ball_set_warning()
    session.state.ball_set_games = 2_000
    with pytest.raises(SessionError, match="must be replaced after 2000"):
        session.require_ball_set_usable()
    result(session.replace_ball_set(CHIEF, "set-2", "2,000 games played"))
    assert session.state.ball_set == "set-2" and session.state.ball_set_games == 0
    session.require_ball_set_usable()
    assert session.state.ball_set_history[0]["games_played"] == 2_000


@pytest.mark.req("R77.1", "R84.2", "R96.4")
def test_closing_needs_a_count_and_both_signatures_and_the_state_rebuilds(core: CommandCore, journal: Journal, clock) -> None:
    session = SessionModule(core)
    open_session(session)
    with pytest.raises(SessionError, match="count the balls at closing"):
        result(session.sign_closing(ADMIN))
    result(session.count_balls(CHIEF, "closing", ALL_BALLS, ["a player"]))
    result(session.sign_closing(CHIEF))
    assert session.is_open
    result(session.sign_closing(ADMIN))
    assert not session.is_open and session.state.current is None
    # A new core over the same journal rebuilds exactly the same state.
    again = SessionModule(CommandCore(journal, clock, core.run_blocking))
    again.core.recover()
    assert again.state == session.state
    assert journal.verify() == 9


@pytest.mark.req("R84.1", "R92.5e")
def test_a_fault_worded_from_the_catalog_is_journaled_in_english_with_its_template_for_the_console(
        core: CommandCore, journal: Journal) -> None:
    """The clock's fault keeps its catalog template beside its English text: the administrator's
    console says it in Catalan (``I18n.said``); a fault with no template reads as written."""
    from hall_server import i18n
    from server_kit.verification import check_clock

    fault = check_clock(lambda: 1_000, journal)
    session = SessionModule(core, lambda now: {**PASSED, "clock": fault, "links": "the link is down"})
    result(session.run_verification(ADMIN, "2026-12-01"))
    (record,) = list(journal.records())
    p = record.payload
    assert p["results"]["clock"] == "the server clock stands before this software's release; set the clock"
    assert p["said"] == {"clock": {"message": p["results"]["clock"], "parts": {}}}, "only the worded fault"
    assert p["results"]["links"] == "the link is down"
    said = p["said"]["clock"]
    assert i18n.translate("ca", said["message"], **said["parts"]) == (
        "el rellotge del servidor és anterior a la publicació d'aquest programari; poseu-lo en hora")
