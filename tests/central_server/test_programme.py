"""The programme on the command core (R88.5, R94.3): the in-memory journal, a test clock, no reactor.

The central module, the prize terms and the programme run on one core as in the server;
halls buy through the module's hall commands.  A process killed between a game's end and
the next game's scheduling is a writer that stops committing: a new core on the same
journal is the restarted process.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from twisted.internet import defer, task

from central_server import audit
from protocol.audit.central_rebuild import rebuild
from central_server.domain.errors import BadArgument, CentralError, ConfigError, NotNow
from central_server.domain.export import result as result_of, scenario
from central_server.domain.programme import ChainBroken, Hours, ProgrammeConfig, Wait, check_links
from central_server.module import CentralModule, game_record
from central_server.programme import ProgrammeRunner
from central_server.terms import NOTICE_MS, PrizeTerms
from protocol.patterns import BINGO, LINE, pattern_to_dict
from protocol.records.central import CentralGameClosed, CentralGameNotPlayed, CentralGameScheduled
from protocol.records import seal_entries
from server_kit.audit_folder import write_export
from protocol.audit.check import CENTRAL, ExportFault
from server_kit.audit_verify import verify_export
from server_kit.core import CommandCore, run_inline
from server_kit.journal.fake import FakeJournal
from server_kit.keys import public_pem
from tests.central.conftest import LIBRARY
from tests.central_server.test_module import result


#: 2026-05-28 20:26:40 UTC.
START_S = 1_780_000_000.0
HALLS = ("hall-1", "hall-2")


def template(line_bp: int = 2000, bingo_bp: int = 5000, line_carry: int = 0) -> dict[str, Any]:
    return {
        "halls": list(HALLS), "price_cents": 100, "max_price_cents": 200, "sale_window_ms": 10_000,
        "ball_interval_ms": 1_000, "series_label": "V1", "series_cards": len(LIBRARY),
        "prizes": [{"pattern": pattern_to_dict(LINE), "basis_points": line_bp, "carry_in_cents": line_carry},
                   {"pattern": pattern_to_dict(BINGO), "basis_points": bingo_bp}],
    }  # fmt: skip


class Writer:
    """The database writer: commits at once, until the process "dies" (nothing commits after that)."""

    def __init__(self) -> None:
        self.dead = False

    def __call__(self, function: Any, *args: Any) -> defer.Deferred[Any]:
        if self.dead:
            return defer.Deferred()  # the commit never happens: the process was killed
        return run_inline(function, *args)


class Central:
    """One central server process's core on ``journal``: the module, the terms, the programme."""

    def __init__(self, journal: FakeJournal, clock: task.Clock, programme: ProgrammeConfig | None,
                 timezone: str = "UTC") -> None:
        self.journal = journal
        self.clock = clock
        self.writer = Writer()
        self.core = CommandCore(journal, clock, self.writer)
        self.module = CentralModule(self.core, {"V1": LIBRARY}, clock)
        self.terms = PrizeTerms(self.core)
        self.runner = ProgrammeRunner(self.core, self.module, self.terms, clock, programme, timezone)
        self.core.recover()
        self.module.start_timers()
        result(self.runner.start())
        self.bought: set[str] = set()

    def stop(self) -> None:
        self.module.stop_timers()
        self.runner.stop()

    def scheduled(self) -> list[CentralGameScheduled]:
        out = []
        for r in self.journal.records():
            if r.type == CentralGameScheduled.type:
                event = game_record(r)
                assert isinstance(event, CentralGameScheduled)
                out.append(event)
        return out

    def ends(self) -> dict[str, dict[str, int]]:
        return {r.payload["game_id"]: dict(r.payload["carries"]) for r in self.journal.records()
                if r.type in (CentralGameClosed.type, CentralGameNotPlayed.type)}

    def buy_in_open_sales(self) -> None:
        """Each game on sale gets a few purchases from both halls, all at partial stakes: a prize won is
        shared whole among its winning cards by their stakes (R93.13), so nothing is left to carry."""
        for game_id, game in self.module.games.items():
            if game.phase != "selling" or game_id in self.bought:
                continue
            self.bought.add(game_id)
            for k in range(8):
                hall = HALLS[k % 2]
                result(self.module.hall_command("buy_cards", {
                    "request_id": f"{game_id}.{k}", "game_id": game_id, "hall_id": hall, "terminal_id": f"t{k}",
                    "player_ref": f"p{k}", "card_count": 4, "stake_pct": (50, 33, 25, 10)[k % 4],
                }, hall))  # fmt: skip

    def run(self, until: Any, *, seconds: float = 2_000, buy: bool = True) -> None:
        """Advance the clock half a second at a time until ``until()``; fail after ``seconds``."""
        for _ in range(int(seconds * 2)):
            if until():
                return
            if buy:
                self.buy_in_open_sales()
            self.clock.advance(0.5)
        raise AssertionError(f"not reached in {seconds} s of the test clock")

    def over(self, game_id: str) -> bool:
        game = self.module.games.get(game_id)
        return game is not None and game.phase in ("closed", "not_played")


def clock_at(seconds: float = START_S) -> task.Clock:
    clock = task.Clock()
    clock.advance(seconds)
    return clock


def carried_in(event: CentralGameScheduled) -> dict[str, int]:
    return {p["pattern"]["name"]: p["carry_in_cents"] for p in event.config["prizes"]}


def test_the_programme_plays_its_games_one_after_another_each_carrying_in_what_the_last_carried_out() -> None:
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template(line_carry=14), opens_after_ms=3_000,
                                                                 games=3))
    central.run(lambda: len(central.scheduled()) == 3 and central.over(central.scheduled()[-1].game_id))
    games = central.scheduled()
    ends = central.ends()
    assert [g.game_id for g in games] == ["net-2026-05-28-1", "net-2026-05-28-2", "net-2026-05-28-3"]
    assert carried_in(games[0]) == {"line": 14, "bingo": 0} and games[0].after_game is None
    for before, after in zip(games, games[1:]):
        assert after.after_game == before.game_id
        assert dict(after.carries_taken or {}) == ends[before.game_id] == carried_in(after)
    # Partial stakes leave nothing: each prize is paid whole to its winners by stake (R93.13); the first
    # game's 14 cents carried in were part of its line, paid with it.
    assert all(sum(carries.values()) == 0 for carries in ends.values()), ends
    # Each sale opened opens_after_ms after its game's scheduling record, itself at the end of the game before.
    records = list(central.journal.records())
    at = {r.payload["game_id"]: r.time_ms for r in records if r.type == "central_game_scheduled"}
    opened = {r.payload["game_id"]: r.payload["opened_at_ms"] for r in records if r.type == "central_sale_opened"}
    ended_at = {r.payload["game_id"]: r.time_ms for r in records if r.type == "central_game_closed"}
    for before, after in zip(games, games[1:]):
        assert at[after.game_id] == ended_at[before.game_id]
        assert 3_000 <= opened[after.game_id] - at[after.game_id] <= 3_500  # the test clock moves by half seconds
    assert check_links([(g, ends[g.game_id]) for g in games]) == tuple(g.game_id for g in games)
    # Its three games played, the programme waits; the chain's carries wait with it.
    central.clock.advance(600)
    assert len(central.scheduled()) == 3
    assert result(central.runner.step()) == Wait("the programme has played its 3 game(s)")


def test_killed_between_a_game_s_end_and_the_next_one_s_scheduling_the_restart_schedules_it_once() -> None:
    journal, clock = FakeJournal(), clock_at()
    programme = ProgrammeConfig(template(), opens_after_ms=3_000)
    first = Central(journal, clock, programme)
    game_id = first.scheduled()[0].game_id

    def kill_at_the_end(record: Any) -> None:
        if record.type == CentralGameClosed.type:
            first.writer.dead = True  # the close is committed; nothing after it will be

    first.core.observers.insert(0, kill_at_the_end)
    first.run(lambda: first.writer.dead)
    clock.advance(1)  # the programme decides the next game, but its commit never comes
    assert [g.game_id for g in first.scheduled()] == [game_id]
    assert first.module.games.keys() > {game_id}, "the dead process had decided the next game"
    first.stop()
    carries = first.ends()[game_id]
    # The process started again on the journal the kill left: the next game is scheduled now, once.
    second = Central(journal, clock, programme)
    after = second.scheduled()
    assert [g.game_id for g in after] == [game_id, "net-2026-05-28-2"]
    assert after[1].after_game == game_id and dict(after[1].carries_taken or {}) == carries == carried_in(after[1])
    result(second.runner.step())
    result(second.runner.step())
    second.stop()
    third = Central(journal, clock, programme)  # and again: nothing is scheduled twice
    assert [g.game_id for g in third.scheduled()] == [game_id, "net-2026-05-28-2"]
    third.run(lambda: third.module.games["net-2026-05-28-2"].phase == "selling")
    assert len(third.scheduled()) == 2


def test_triggers_that_come_together_schedule_one_game() -> None:
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template(), opens_after_ms=3_000))
    central.run(lambda: central.over("net-2026-05-28-1"), buy=False)
    steps = [central.runner.step() for _ in range(3)]
    assert len(central.scheduled()) == 2
    assert [type(result(s)).__name__ for s in steps] == ["Wait", "Wait", "Wait"]  # the close's own trigger was first


def test_outside_its_hours_the_programme_waits_for_them_and_numbers_the_games_of_the_new_day() -> None:
    late = datetime.datetime(2026, 12, 3, 23, 50, tzinfo=datetime.timezone.utc).timestamp()
    programme = ProgrammeConfig(template(), opens_after_ms=3_000, hours=Hours.parse("10:00-23:30"))
    central = Central(FakeJournal(), clock_at(late), programme)
    assert central.scheduled() == []
    central.clock.advance(10 * 3600 + 9 * 60)  # 09:59 the next day
    assert central.scheduled() == []
    central.clock.advance(61)
    (first,) = central.scheduled()
    assert first.game_id == "net-2026-12-04-1"


def test_the_chain_s_games_are_numbered_in_the_central_server_s_time_zone() -> None:
    # 2026-05-28 20:26:40 UTC is already the 29th in Tokyo.
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template()), timezone="Asia/Tokyo")
    assert [g.game_id for g in central.scheduled()] == ["net-2026-05-29-1"]


def operator(central: Central, name: str, **arguments: Any) -> dict[str, Any]:
    return result(central.module.operator_command(name, arguments, "olga"))


def test_the_operator_pauses_adds_a_one_off_game_and_resumes_each_journaled_with_their_name() -> None:
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template(), opens_after_ms=3_000, games=10))
    assert operator(central, "operator_pause_programme", reason="the regulator's visit") == {
        "state": "paused", "last_game": "net-2026-05-28-1"}
    paused = [r for r in central.journal.records() if r.type == "central_programme_paused"]
    assert [r.payload["actor"] for r in paused] == [{"name": "olga", "role": "operator"}]
    central.run(lambda: central.over("net-2026-05-28-1"))
    central.clock.advance(60)
    assert len(central.scheduled()) == 1, "paused: no game of the programme"
    status = operator(central, "operator_programme")
    assert status["state"] == "paused" and status["last_phase"] == "closed"
    assert {c["pattern"]: c["carry_cents"] for c in status["carries"]} == central.ends()["net-2026-05-28-1"]
    assert status["waiting_for"] == "the programme is paused (the regulator's visit)"
    # A one-off game, at another price, with the chain's carries.
    answer = operator(central, "operator_schedule_game", game_id="gala", price_cents=150, opens_after_ms=1_000)
    assert answer["status"] == "scheduled" and answer["after_game"] == "net-2026-05-28-1"
    assert {c["pattern"]: c["carry_cents"] for c in answer["carries"]} == central.ends()["net-2026-05-28-1"]
    gala = central.scheduled()[-1]
    assert gala.chain == "operator" and gala.actor is None  # stamps are stripped from the game's record
    stamped = [r for r in central.journal.records() if r.type == "central_game_scheduled"][-1]
    assert stamped.payload["actor"] == {"name": "olga", "role": "operator"}
    assert central.module.games["gala"].config.price_cents == 150
    # While it plays, a second one-off is queued after it.
    queued = operator(central, "operator_schedule_game")
    assert queued == {"game_id": "net-2026-05-28-2", "status": "queued", "after_game": "gala"}
    with pytest.raises(NotNow, match="already waits"):
        operator(central, "operator_schedule_game")
    central.run(lambda: len(central.scheduled()) == 3)
    assert central.scheduled()[-1].after_game == "gala"
    central.run(lambda: central.over("net-2026-05-28-2"))
    assert operator(central, "operator_resume_programme") == {"state": "running", "next_game": "net-2026-05-28-3"}
    with pytest.raises(NotNow, match="nothing to resume"):
        operator(central, "operator_resume_programme")
    ends = central.ends()
    games = central.scheduled()
    assert check_links([(g, ends[g.game_id]) for g in games[:-1]]) == tuple(g.game_id for g in games[:-1])


def test_a_one_off_game_sent_again_with_its_request_id_is_scheduled_once_even_after_a_restart() -> None:
    """The operator's tool lost the answer and sends the request again: the same game is the answer."""
    journal, programme = FakeJournal(), ProgrammeConfig(template(), hours=Hours.parse("10:00-12:00"))
    central = Central(journal, clock_at(), programme)  # 20:26: outside the hours, the programme schedules nothing
    assert central.scheduled() == []
    first = operator(central, "operator_schedule_game", request_id="olga-1")
    assert first["game_id"] == "net-2026-05-28-1" and first["status"] == "scheduled"
    assert operator(central, "operator_schedule_game", request_id="olga-1") == {**first, "repeated": True}
    assert [g.game_id for g in central.scheduled()] == ["net-2026-05-28-1"]
    queued = operator(central, "operator_schedule_game", request_id="olga-2")
    assert queued == {"game_id": "net-2026-05-28-2", "status": "queued", "after_game": "net-2026-05-28-1"}
    assert operator(central, "operator_schedule_game", request_id="olga-2") == {**queued, "repeated": True}, \
        "a repeat of the queued one is its answer, not a refusal for the one-off waiting"
    stamped = [r.payload["actor"] for r in journal.records() if r.type in ("central_game_scheduled",
                                                                            "central_game_queued")]
    assert stamped == [{"name": "olga", "role": "operator", "request": "olga-1"},
                       {"name": "olga", "role": "operator", "request": "olga-2"}]
    before = list(journal.records())
    central.stop()
    again = Central(journal, central.clock, programme)  # restarted: the ids are folded from the journal
    assert operator(again, "operator_schedule_game", request_id="olga-1")["game_id"] == "net-2026-05-28-1"
    assert operator(again, "operator_schedule_game", request_id="olga-2")["game_id"] == "net-2026-05-28-2"
    assert list(journal.records()) == before, "nothing more is scheduled or queued"


@pytest.mark.parametrize(("name", "arguments", "error", "message"), [
    ("operator_pause_programme", {}, BadArgument, "reason"),
    ("operator_pause_programme", {"reason": 7}, BadArgument, "reason"),
    ("operator_pause_programme", {"reason": " "}, BadArgument, "say why"),
    ("operator_schedule_game", {"price_cents": 500}, ConfigError, "maximum price"),
    ("operator_schedule_game", {"price_cents": -1}, BadArgument, "price_cents"),
    ("operator_schedule_game", {"sale_window_ms": 5}, ConfigError, "sale_window_ms"),
    ("operator_schedule_game", {"game_id": "net-2026-05-28-1"}, NotNow, "already a network game"),
    ("operator_schedule_game", {"game_id": "a b"}, BadArgument, "game_id"),
    ("operator_schedule_game", {"colour": "red"}, BadArgument, "colour"),
    ("operator_resume_programme", {}, NotNow, "nothing to resume"),
])
def test_an_operator_command_with_bad_arguments_is_refused_with_a_code_and_nothing_changes(
    name: str, arguments: dict[str, Any], error: type[CentralError], message: str
) -> None:
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template()))
    before = list(central.journal.records())
    with pytest.raises(error, match=message) as refused:
        operator(central, name, **arguments)
    assert refused.value.code in ("bad_argument", "bad_config", "not_now")
    assert list(central.journal.records()) == before


def test_without_a_programme_its_commands_are_refused_and_nothing_is_scheduled() -> None:
    central = Central(FakeJournal(), clock_at(), None)
    assert central.scheduled() == []
    assert operator(central, "operator_programme")["configured"] is False
    for name, arguments in (("operator_pause_programme", {"reason": "x"}), ("operator_resume_programme", {}),
                            ("operator_schedule_game", {})):
        with pytest.raises(NotNow, match="no programme"):
            operator(central, name, **arguments)
    assert list(central.journal.records()) == []


@pytest.mark.req("R94.3")
def test_a_change_of_percentages_in_the_template_waits_five_days_while_the_programme_plays_the_terms_in_force() -> None:
    journal, clock = FakeJournal(), clock_at()
    first = Central(journal, clock, ProgrammeConfig(template(), opens_after_ms=3_000))
    first.run(lambda: first.over("net-2026-05-28-1"), buy=False)
    first.stop()
    # The template's bingo goes to 55%: notified now, in force five days later.
    changed = ProgrammeConfig(template(bingo_bp=5500), opens_after_ms=3_000)
    second = Central(journal, clock, changed)
    notices = [r for r in journal.records() if r.type == "prize_terms_notified"]
    assert len(notices) == 2 and notices[-1].payload["applies_from_ms"] == notices[-1].time_ms + NOTICE_MS
    second.run(lambda: len(second.scheduled()) == 3, buy=False)
    game = second.scheduled()[-1]  # scheduled after the notice, before the new terms apply
    assert [p["basis_points"] for p in game.config["prizes"]] == [2000, 5000], "the terms in force until then"
    second.stop()
    clock.advance(NOTICE_MS / 1000)
    third = Central(journal, clock, changed)
    third.run(lambda: third.over(game.game_id), buy=False)
    third.run(lambda: len(third.scheduled()) == 4, buy=False)
    assert [p["basis_points"] for p in third.scheduled()[-1].config["prizes"]] == [2000, 5500]
    assert len([r for r in journal.records() if r.type == "prize_terms_notified"]) == 2


def exported_day(central: Central, out: Path, records: list[Any] | None = None) -> Path:
    """The day's export of the games played on ``central`` (all of them), as ``bingo audit export`` writes it;
    with ``records``, their segment in place of the journal's (the scenario and result stay the games')."""
    kept = list(central.journal.records())
    games, spans, _ = audit.rebuilt_games(kept, {"V1": LIBRARY})
    ended = [g for g in games if g in spans]
    first, last = min(spans[g][0].seq for g in ended), max(spans[g][1].seq for g in ended)
    played = [games[g] for g in ended]
    write_export(scenario("2026-05-28", played, LIBRARY), result_of("2026-05-28", played),
                 [r for r in (records or kept) if first <= r.seq <= last], public_pem(central.journal.key), out)
    return out


def resealed(central: Central, change: Any) -> list[Any]:
    """The journal's records with ``change(type, payload)`` applied, sealed again with its own key:
    a journal signed and linked as the server writes one, whose carries were decided wrongly."""
    records: list[Any] = []
    for record in central.journal.records():
        type, payload = record.type, change(record.type, dict(record.payload))
        records += seal_entries(central.journal.key, records[-1] if records else None, record.time_ms, [(type, payload)])
    return records


@pytest.mark.req("R88.4-5", "R96.4")
def test_the_audit_export_shows_the_chain_and_a_day_whose_carries_do_not_chain_is_a_fault(tmp_path: Path) -> None:
    central = Central(FakeJournal(), clock_at(), ProgrammeConfig(template(line_carry=5), opens_after_ms=3_000,
                                                                 games=3))
    central.run(lambda: len(central.scheduled()) == 3 and central.over(central.scheduled()[-1].game_id))
    ids = [g.game_id for g in central.scheduled()]
    verified = verify_export(exported_day(central, tmp_path / "good"), {CENTRAL: rebuild})
    assert verified.notes == (f"the carries chain through 3 game(s) of the programme ({' -> '.join(ids)})",)
    _, _, scheduled = audit.rebuilt_games(list(central.journal.records()), {"V1": LIBRARY})
    ends = central.ends()
    assert check_links([(scheduled[g], ends[g]) for g in ids]) == tuple(ids)

    # The second game took other carries than the first carried out (and carried them in): not the chain.
    def other_carries(type: str, payload: dict[str, Any]) -> dict[str, Any]:
        if type == "central_game_scheduled" and payload["game_id"] == ids[1]:
            taken = {k: v + 1 for k, v in payload["carries_taken"].items()}
            payload["carries_taken"] = taken
            payload["config"] = {**payload["config"], "prizes": [
                {**p, "carry_in_cents": taken[p["pattern"]["name"]]} for p in payload["config"]["prizes"]]}
        return payload

    forged = resealed(central, other_carries)
    with pytest.raises(ExportFault, match=f"network game {ids[1]} took the carries .* of {ids[0]}, which carried out "
                                          ".*: the day's carries do not chain"):
        verify_export(exported_day(central, tmp_path / "forged", forged), {CENTRAL: rebuild})
    _, _, scheduled = audit.rebuilt_games(forged, {"V1": LIBRARY})
    with pytest.raises(ChainBroken, match=f"network game {ids[1]} took the carries"):
        check_links([(scheduled[g], ends[g]) for g in ids])

    # The third game's bingo carried in a cent more than it took.
    def a_cent_more(type: str, payload: dict[str, Any]) -> dict[str, Any]:
        if type == "central_game_scheduled" and payload["game_id"] == ids[2]:
            payload["config"] = {**payload["config"], "prizes": [
                {**p, "carry_in_cents": p["carry_in_cents"] + (p["pattern"]["name"] == "bingo")}
                for p in payload["config"]["prizes"]]}
        return payload

    with pytest.raises(ExportFault, match=f"network game {ids[2]} carries in .*; the carries it took, .* make"):
        verify_export(exported_day(central, tmp_path / "cent", resealed(central, a_cent_more)), {CENTRAL: rebuild})
