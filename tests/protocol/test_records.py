"""The journal's record declarations: every type built, refused and written through one registry."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import events
from protocol.chain import Record
from protocol.records import REGISTRY, ActorStamp, JournalRecord, RecordError, build, declared, parse, seal_entries
from protocol.records.base import record
from protocol.records.game import BallDrawn
from protocol.records.sale import CardSold


ACTOR = {"name": "sam", "role": "seller_caller"}
BALL = {"type": "ball_drawn", "game_id": "2026-12-01-s1-g1", "ball": 17, "ball_count": 1,
        "entered_by": None, "completed_line": [], "completed_bingo": [], "actor": ACTOR}


def refusal(type: str, payload: Any) -> str:
    with pytest.raises(RecordError) as caught:
        build(type, payload)
    return str(caught.value)


def test_a_record_builds_from_its_payload_and_writes_it_back_unchanged() -> None:
    built = build("ball_drawn", BALL)
    assert isinstance(built, BallDrawn) and isinstance(built, events.BallDrawn)
    assert built.ball == 17 and built.actor == ActorStamp("sam", "seller_caller")
    assert built.to_payload() == BALL


def test_a_record_constructed_in_code_gives_the_payload_the_journal_stores() -> None:
    sold = CardSold(game_id="g", series=1, card_number=7, price_cents=100, stake_cents=50,
                    account="player:1", terminal_id="T1", stake_pct=50)
    assert sold.to_payload() == {
        "type": "card_sold", "game_id": "g", "series": 1, "card_number": 7, "price_cents": 100,
        "stake_cents": 50, "account": "player:1", "terminal_id": "T1", "stake_pct": 50,
    }
    paper = dataclasses.replace(sold, account="cash:sam", terminal_id=None, stake_pct=None)
    assert "stake_pct" not in paper.to_payload(), "an optional field at its default is left out, as writers did"


def test_an_undeclared_type_is_refused() -> None:
    assert refusal("ball_drwan", {}) == "a 'ball_drwan' record: no such record type is declared (protocol/records)"


def test_a_missing_field_is_refused_by_name() -> None:
    assert refusal("session_opened", {"session": 1}) == "a 'session_opened' record: date: is missing"


def test_an_extra_key_is_refused_not_dropped() -> None:
    message = refusal("session_opened", {"session": 1, "date": "2026-12-01", "dtae": "x"})
    assert message.startswith("a 'session_opened' record: dtae: is not a field of this record type")


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("ball", True, "ball: is a whole number, not true"),
        ("ball", 17.0, "ball: is a whole number, not the non-integer number 17.0"),
        ("ball", "17", 'ball: is a whole number, not the string "17"'),
        ("game_id", None, "game_id: is text, not null"),
        ("completed_line", "1-7", 'completed_line: is an array, not the string "1-7"'),
        ("completed_line", [7], "completed_line[0]: is text, not 7"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_refused_naming_the_field(field: str, value: Any, said: str) -> None:
    assert refusal("ball_drawn", {**BALL, field: value}) == f"a 'ball_drawn' record: {said}"


def test_a_domain_events_own_rules_hold_in_its_record() -> None:
    assert "outside 1-90" in refusal("ball_drawn", {**BALL, "ball": 91})


def test_nested_objects_are_checked_to_the_key() -> None:
    assert refusal("ball_drawn", {**BALL, "actor": {"name": "sam"}}) == "a 'ball_drawn' record: actor.role: is missing"
    assert refusal("ball_drawn", {**BALL, "actor": {**ACTOR, "rol": "x"}}).startswith(
        "a 'ball_drawn' record: actor.rol: is not a field"
    )
    posting = {"debits": [["cash:sam", 100]], "credits": [["stakes:g", 100]], "reason": "sale:paper",
               "reference": {"game_id": "g", "card": None, "event_seq": "3"}}
    assert refusal("posting", posting) == "a 'posting' record: reference.event_seq: is a whole number, not the string \"3\""
    assert refusal("posting", {**posting, "debits": [["cash:sam"]]}) == (
        "a 'posting' record: debits[0]: is an array of 2 values, not 1"
    )


def test_a_record_of_an_event_repeats_its_type() -> None:
    assert refusal("ball_drawn", {k: v for k, v in BALL.items() if k != "type"}) == (
        "a 'ball_drawn' record: type: must repeat the record type, not null"
    )


def test_a_stored_record_that_does_not_parse_is_named_by_its_seq() -> None:
    stored = Record(57, 0, "ball_drawn", {**BALL, "ball": "17"}, "0" * 64, "", "")
    with pytest.raises(RecordError) as caught:
        parse(stored)
    assert str(caught.value) == 'record 57 (ball_drawn): ball: is a whole number, not the string "17"'
    assert caught.value.seq == 57 and caught.value.field == "ball"


def test_a_key_python_cannot_name_is_kept_as_written() -> None:
    switched = build("blower_switched", {"to": "reserve", "from": "main", "balls_drawn": 12})
    assert switched.to_payload() == {"to": "reserve", "from": "main", "balls_drawn": 12}


def test_records_are_frozen() -> None:
    built = build("system_verified", {"date": "2026-12-01", "results": {"clock": None}, "passed": True})
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.passed = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        built.results["clock"] = "late"  # type: ignore[index]
    assert isinstance(build("balls_counted", {
        "stage": "opening", "ball_set": "A", "counted": 90, "missing": [], "repeated": [],
        "witnesses": ["ana"], "room_chief": "rosa"}).witnesses, tuple)


# --- versions ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Renamed(JournalRecord):
    """A type at version 2: version 1 called ``amount`` ``cents``."""

    type: ClassVar[str] = "test_version_two"
    version: ClassVar[int] = 2
    amount: int

    @classmethod
    def upgrade(cls, payload: dict[str, Any], version: int) -> dict[str, Any]:
        payload = dict(payload)
        payload["amount"] = payload.pop("cents")
        return payload


@pytest.fixture
def version_two() -> Any:
    record(_Renamed)
    yield _Renamed
    del REGISTRY[_Renamed.type]


def test_version_one_carries_no_version_key_and_refuses_one() -> None:
    assert "v" not in build("session_opened", {"session": 1, "date": "2026-12-01"}).to_payload()
    assert refusal("session_opened", {"session": 1, "date": "2026-12-01", "v": 1}).startswith(
        "a 'session_opened' record: v: is a version above 1"
    )
    assert refusal("session_opened", {"session": 1, "date": "2026-12-01", "v": 2}) == (
        "a 'session_opened' record: version 2 is not known (this software reads up to 1)"
    )


def test_a_later_version_is_written_with_v_and_reads_its_older_form(version_two: Any) -> None:
    assert version_two(amount=5).to_payload() == {"amount": 5, "v": 2}
    assert build("test_version_two", {"amount": 5, "v": 2}) == version_two(amount=5)
    assert build("test_version_two", {"cents": 5}) == version_two(amount=5), "absent v is version 1"


def test_a_type_name_is_declared_once() -> None:
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Again(JournalRecord):
        type: ClassVar[str] = "ball_drawn"

    with pytest.raises(TypeError, match="two record classes are named 'ball_drawn'"):
        record(Again)


# --- every type ---------------------------------------------------------------------------


def test_every_type_is_registered_under_its_own_name() -> None:
    assert len(REGISTRY) >= 36
    for name, cls in REGISTRY.items():
        assert cls.type == name and dataclasses.is_dataclass(cls) and issubclass(cls, JournalRecord)


@given(st.sampled_from(sorted(REGISTRY)), st.dictionaries(st.text(max_size=8), st.integers() | st.none() | st.text()))
def test_build_never_fails_any_other_way_than_a_record_error(type: str, payload: dict[str, Any]) -> None:
    try:
        built = build(type, payload)
    except RecordError:
        return
    assert build(type, built.to_payload()) == built


@pytest.mark.req("R92.3")
def test_a_record_of_an_event_stamped_keeps_the_events_fields() -> None:
    """The core stamps each record a decision emits: a record holding a domain event keeps its
    fields in the event's slots, which the stamped copy carries too."""
    drawn = BallDrawn(game_id="g1", ball=11, ball_count=1).stamped(ActorStamp("ines", "caller"))
    assert drawn.to_payload() == build("ball_drawn", {
        "type": "ball_drawn", "game_id": "g1", "ball": 11, "ball_count": 1, "actor": {"name": "ines", "role": "caller"},
    }).to_payload()
    assert (drawn.ball, drawn.who.name) == (11, "ines")


def test_a_sealed_record_keeps_the_declared_record_it_was_made_from() -> None:
    made = BallDrawn(game_id="g1", ball=11, ball_count=1)
    (sealed,) = seal_entries(None, None, 1_000, [made])
    assert declared(sealed) is made
    read_back = Record(**{f.name: getattr(sealed, f.name) for f in dataclasses.fields(Record)})
    assert declared(read_back) == made and declared(read_back) is declared(read_back)
