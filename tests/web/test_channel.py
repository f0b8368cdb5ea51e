"""The command channel: every request is checked before a command runs, and a refused
request changes nothing (bad input on every endpoint, R80 roles)."""

import pytest
from twisted.internet import defer

from hall_server.hall.roles import Role
from server_kit.core import Actor
from server_kit.web.channel import ChannelError, SeenRequests, parse_request
from tests.web.conftest import WebHall, journal_length

ADMIN = Actor("admin", Role.ADMINISTRATOR)
CASHIER = Actor("carla", Role.CASHIER)


def answer_of(deferred: defer.Deferred) -> dict:
    out: list = []
    deferred.addBoth(out.append)
    assert out, "the answer did not come inline"
    return out[0]


def submit(hall: WebHall, actor: Actor, text: str, seen: SeenRequests | None = None) -> dict:
    return answer_of(hall.hub.channel.submit(actor, parse_request(text), seen or SeenRequests()))


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"command": "x", "args": {}}', "id of 1-64"),
        ('{"id": "a b", "command": "x"}', "id of 1-64"),
        ('{"id": "r1", "args": {}}', "names its command"),
        ('{"id": "r1", "command": "x", "args": []}', "args is a JSON object"),
        ('{"id": "r1", "command": "x", "sneaky": 1}', "unknown request field"),
        ('"' + "x" * (1024 * 1024 + 10) + '"', "at most"),
    ],
)
def test_a_malformed_request_is_refused_before_anything_runs(text: str, fragment: str) -> None:
    with pytest.raises(ChannelError, match=fragment) as caught:
        parse_request(text)
    assert caught.value.code == "malformed"


def test_an_unknown_command_is_named(web_hall: WebHall) -> None:
    answer = submit(web_hall, ADMIN, '{"id": "r1", "command": "print_money", "args": {}}')
    assert answer["error"] == {"code": "unknown_command", "message": "there is no command 'print_money'"}


@pytest.mark.req("R80")
def test_a_role_outside_its_remit_is_refused_and_nothing_is_journaled(web_hall: WebHall) -> None:
    text = '{"id": "r1", "command": "run_verification", "args": {"date": "2026-11-29"}}'
    answer = submit(web_hall, CASHIER, text)
    assert answer["ok"] is False and answer["error"]["code"] == "not_allowed"
    assert "carla (cashier) may not run verification" in answer["error"]["message"]
    assert journal_length(web_hall) == 0


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({}, "missing argument(s): date"),
        ({"date": "2026-11-29", "extra": 1}, "unknown argument(s): extra"),
        ({"date": 20261129}, "date is str, not 20261129"),
        ({"date": ["2026-11-29"]}, 'date is str, not ["2026-11-29"]'),
    ],
)
def test_wrong_arguments_are_refused_with_the_argument_named(web_hall: WebHall, args: dict, fragment: str) -> None:
    import json

    answer = submit(web_hall, ADMIN, json.dumps({"id": "r1", "command": "run_verification", "args": args}))
    assert answer["error"]["code"] == "bad_arguments" and fragment in answer["error"]["message"]
    assert journal_length(web_hall) == 0


@pytest.mark.req("R84.2")
@pytest.mark.parametrize(
    "balls, fragment",
    [
        ([1, True, 3], "balls_present[1] is int, not true"),
        ([1, 2.5], "balls_present[1] is int, not 2.5"),
        ([1, 2**60], "out of range"),
        ("1-90", "balls_present is list[int]"),
    ],
)
def test_list_items_are_checked_one_by_one(web_hall: WebHall, balls: object, fragment: str) -> None:
    import json

    rosa = Actor("rosa", Role.ROOM_CHIEF)
    text = json.dumps({"id": "r1", "command": "count_balls",
                       "args": {"stage": "opening", "balls_present": balls, "witnesses": ["A. Public"]}})
    answer = submit(web_hall, rosa, text)
    assert answer["error"]["code"] == "bad_arguments" and fragment in answer["error"]["message"]


@pytest.mark.req("R84.1", "R84.2")
def test_a_command_out_of_order_is_refused_by_the_hall_and_changes_nothing(web_hall: WebHall) -> None:
    import json

    rosa = Actor("rosa", Role.ROOM_CHIEF)
    text = json.dumps({"id": "r1", "command": "count_balls",
                       "args": {"stage": "opening", "balls_present": list(range(1, 91)), "witnesses": ["A. Public"]}})
    answer = submit(web_hall, rosa, text)
    assert answer["error"] == {
        "code": "refused", "message": "the system has not passed its verification for this session (R84.1)"
    }
    assert journal_length(web_hall) == 0 and web_hall.view.seq == 0


def test_a_request_is_carried_out_once_and_its_replay_gets_the_first_answer(web_hall: WebHall) -> None:
    import json

    seen = SeenRequests()
    text = json.dumps({"id": "r7", "command": "run_verification", "args": {"date": "2026-11-29"}})
    first = submit(web_hall, ADMIN, text, seen)
    assert first["ok"] and [r["type"] for r in first["records"]] == ["system_verified"]
    again = submit(web_hall, ADMIN, text, seen)
    assert again["ok"] and again["repeated"] and again["records"] == first["records"]
    assert journal_length(web_hall) == 1


def test_a_request_refused_then_sent_again_on_the_same_sign_in_is_refused_as_replayed(web_hall: WebHall) -> None:
    import json

    seen = SeenRequests()
    text = json.dumps({"id": "r8", "command": "count_balls",
                       "args": {"stage": "opening", "balls_present": list(range(1, 91)), "witnesses": ["A. Public"]}})
    rosa = Actor("rosa", Role.ROOM_CHIEF)
    assert submit(web_hall, rosa, text, seen)["error"]["code"] == "refused"
    again = submit(web_hall, rosa, text, seen)
    assert again["error"]["code"] == "replayed" and journal_length(web_hall) == 0


def test_remembered_request_ids_are_bounded() -> None:
    seen = SeenRequests(limit=3)
    for request_id in "abcd":
        seen.claim(request_id)
    seen.claim("a")  # forgotten: the oldest of more than three
    with pytest.raises(ChannelError):
        seen.claim("d")


@pytest.mark.req("R80")
def test_each_role_is_offered_only_its_own_commands(web_hall: WebHall) -> None:
    describe = web_hall.hub.channel.describe
    room_chief = {c["name"] for c in describe(Actor("rosa", Role.ROOM_CHIEF))}
    cashier = {c["name"] for c in describe(CASHIER)}
    assert "count_balls" in room_chief and "run_verification" in room_chief  # after a crash, too (R92.5e)
    assert "count_balls" not in cashier
    (count,) = [c for c in describe(Actor("rosa", Role.ROOM_CHIEF)) if c["name"] == "count_balls"]
    assert count["params"] == [{"name": "stage", "type": "str"}, {"name": "balls_present", "type": "list[int]"},
                               {"name": "witnesses", "type": "list[str]"}]


def test_N2_a_storage_fault_is_answered_storage_unavailable_with_the_fault_named_not_internal(
    web_hall: WebHall,
) -> None:
    from server_kit.db.faults import StorageUnavailable

    def full(records: object, extra: object = None) -> None:
        raise StorageUnavailable("disk full", "the database file /srv/hall/hall.sqlite3",
                                 "the disk holding /srv/hall/hall.sqlite3 is full")

    web_hall.journal.commit = full  # type: ignore[method-assign]
    text = '{"id": "r1", "command": "run_verification", "args": {"date": "2026-11-29"}}'
    answer = submit(web_hall, ADMIN, text)
    assert answer["ok"] is False and answer["error"]["code"] == "storage_unavailable"
    assert answer["error"]["message"].startswith("storage unavailable (disk full): the disk holding "
                                                 "/srv/hall/hall.sqlite3 is full")
    again = submit(web_hall, ADMIN, text.replace("r1", "r2"))  # refused before it is decided now
    assert again["error"]["code"] == "storage_unavailable" and journal_length(web_hall) == 0
