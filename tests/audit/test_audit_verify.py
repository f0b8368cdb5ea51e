"""``bingo audit verify DIR``: an audit export checked with nothing but its four files (R92.3, R95.3, R83.4).

Two hall days played through the real hall modules (pots carried from the first day
into the second, a megabingo announced on the first for the second) and a central
server's network game played over mutual TLS are exported with ``bingo audit export``
and verified; then each kind of tampering is made on a copy of an export and found,
named in one line: the file, the record's ``seq`` or the game and field at fault.
"""

from __future__ import annotations

import datetime
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from central_server.audit import export_day
from central_server.config import load_config
from hall_server.cli import main
from protocol.cards import Card
from protocol.chain import seal
from server_kit.audit_folder import journal_line, read_journal
from tests.audit.conftest import POT_RULES, fast_folder, new_clock
from tests.audit.halls import (
    ADMIN,
    CHIEF,
    LIBRARY_CELLS,
    Contribution,
    GamePlan,
    Purchase,
    play_game,
    stored_hall,
)
from tests.central_server.conftest import start_central, stop_central
from tests.central_server.support import until
from tests.hall.conftest import result

DAY_1, DAY_2 = "2026-12-01", "2026-12-02"


@dataclass
class Exports:
    root: Path
    day_1: Path
    day_2: Path


def verify(folder: Path) -> Result:
    """``bingo audit verify FOLDER`` with no hall around it: no ``BINGO_HOME``, another working folder."""
    return CliRunner().invoke(main, ["audit", "verify", str(folder)], env={"BINGO_HOME": None, "BINGO_DB": None})


@pytest.fixture(scope="module")
def exports() -> Iterator[Exports]:
    root = fast_folder()
    home = root / "hall"
    home.mkdir()
    hall = stored_hall(home, new_clock(), POT_RULES)
    hall.prepare()
    hall.open_day(DAY_1)
    result(hall.games.contribute_to_pot(ADMIN, "jackpot", 40_000))
    play_game(hall, GamePlan(paper=8, purchases=[Purchase(0, 0, 3, 50), Purchase(1, 1, 2, 100)],
                             superbingo_limit=42, seed=11))
    play_game(hall, GamePlan(paper=5, contributions=[Contribution("superbingo", 500, "selling")], refund=True))
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(2, 0, 1, 7)], jackpot_threshold=42, quick=True, seed=3,
                             last=True))
    result(hall.games.announce_megabingo(CHIEF, DAY_2, "21:00"))
    hall.close_day()
    hall.open_day(DAY_2)
    play_game(hall, GamePlan(paper=6, purchases=[Purchase(0, 1, 4, 25)], megabingo=True, seed=5))
    play_game(hall, GamePlan(paper=7, purchases=[Purchase(1, 0, 2, 100)], superbingo_limit=60, seed=8, last=True))
    hall.close_day()
    made = Exports(root, root / "day-1", root / "day-2")
    for day, out in ((DAY_1, made.day_1), (DAY_2, made.day_2)):
        done = CliRunner().invoke(main, ["audit", "export", "--day", day, "--out", str(out)],
                                  env={"BINGO_HOME": str(home)})
        assert done.exit_code == 0, done.output
    shutil.rmtree(home)  # the inspector has the files, not the hall
    yield made
    shutil.rmtree(root, ignore_errors=True)


def copy(export: Path, name: str) -> Path:
    target = export.parent / name
    shutil.copytree(export, target)
    return target


def faulted(folder: Path, expected: str, status: int = 1) -> str:
    done = verify(folder)
    assert done.exit_code == status, done.output
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.endswith("\n"), done.stderr
    assert expected in done.stderr, done.stderr
    return done.stderr


def lines_of(folder: Path) -> list[str]:
    return (folder / "journal.jsonl").read_text().splitlines()


def write_lines(folder: Path, lines: list[str]) -> None:
    (folder / "journal.jsonl").write_text("\n".join(lines) + "\n")


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


def save(folder: Path, name: str, data: Any) -> None:
    (folder / name).write_text(json.dumps(data, indent=2) + "\n")


def seqs(folder: Path) -> list[int]:
    return [r.seq for r in read_journal(folder / "journal.jsonl")]


# --- A real day verifies ------------------------------------------------------------------


@pytest.mark.req("R92.3", "R95.3", "R83.4")
def test_a_hall_days_export_verifies_with_nothing_but_its_files(exports: Exports) -> None:
    for day, folder in ((DAY_1, exports.day_1), (DAY_2, exports.day_2)):
        done = verify(folder)
        assert done.exit_code == 0, done.output
        records = list(read_journal(folder / "journal.jsonl"))
        recorded = load(folder, "result.json")
        totals = recorded["totals"]
        prizes = sum(len(g["prizes"]) for g in recorded["games"])
        assert done.stdout.splitlines() == [
            f"{folder}: verified (hall export of {day}): {len(records)} journal records, seq {records[0].seq} to "
            f"{records[-1].seq}, signed and chained; {len(recorded['games'])} game(s), {prizes} prize(s); sales "
            f"{totals['sales_cents'] // 100}.{totals['sales_cents'] % 100:02d} EUR, paid "
            f"{totals['paid_cents'] // 100}.{totals['paid_cents'] % 100:02d} EUR, tax "
            f"{totals['tax_cents'] // 100}.{totals['tax_cents'] % 100:02d} EUR; scenario.json and result.json are "
            "what the records say, and the replay of the scenario is the result"
        ]
    # The second day opens on the pots the first left, and plays a megabingo announced on the first.
    opening = load(exports.day_2, "scenario.json")["opening"]
    assert opening["superbingo"] > 0 and opening["jackpot_accumulated"] > 0
    assert load(exports.day_2, "scenario.json")["sessions"][0]["games"][0]["megabingo_announced"] is not None


# --- The journal segment: each tampering named by its record ------------------------------


@pytest.mark.req("R92.3", "R83.4")
def test_a_records_payload_altered_is_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "altered")
    lines = lines_of(folder)
    victim = next(i for i, line in enumerate(lines) if '"collection_cents":' in line)
    forged = json.loads(lines[victim])
    forged["payload"]["collection_cents"] += 100
    lines[victim] = json.dumps(forged)
    write_lines(folder, lines)
    faulted(folder, f"journal.jsonl record {forged['seq']}: its content does not match its hash (altered)")


@pytest.mark.req("R92.3", "R83.4")
def test_a_record_removed_is_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "removed")
    lines = lines_of(folder)
    numbers = seqs(folder)
    write_lines(folder, [*lines[:10], *lines[11:]])
    faulted(folder, f"journal.jsonl record {numbers[11]}: does not follow record {numbers[9]}")


@pytest.mark.req("R92.3", "R83.4")
def test_a_record_inserted_is_named(exports: Exports) -> None:
    """A record made to fit the chain (its seq, its link, its own hash) but not signed by the journal's key."""
    folder = copy(exports.day_2, "inserted")
    records = list(read_journal(folder / "journal.jsonl"))
    lines = lines_of(folder)
    forged = seal(Ed25519PrivateKey.generate(), records[20], records[20].time_ms, "operator_contribution",
                  {"pot": "jackpot", "amount_cents": 1})
    write_lines(folder, [*lines[:21], journal_line(forged), *lines[21:]])
    faulted(folder, f"journal.jsonl record {forged.seq}: its signature does not verify (altered or forged)")


@pytest.mark.req("R92.3", "R83.4")
def test_two_records_swapped_are_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "swapped")
    lines = lines_of(folder)
    numbers = seqs(folder)
    lines[30], lines[31] = lines[31], lines[30]
    write_lines(folder, lines)
    faulted(folder, f"journal.jsonl record {numbers[31]}: does not follow record {numbers[29]}")


@pytest.mark.req("R92.3", "R83.4")
def test_a_signature_byte_flipped_is_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "flipped")
    lines = lines_of(folder)
    record = json.loads(lines[40])
    signature = bytearray.fromhex(record["signature"])
    signature[7] ^= 0x01
    record["signature"] = signature.hex()
    lines[40] = json.dumps(record)
    write_lines(folder, lines)
    faulted(folder, f"journal.jsonl record {record['seq']}: its signature does not verify (altered or forged)")


@pytest.mark.req("R92.3", "R83.4")
def test_a_replaced_public_key_is_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "other-key")
    (folder / "public-key.pem").write_bytes(Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    count = len(lines_of(folder))
    faulted(folder, f"public-key.pem verifies none of the {count} records of journal.jsonl: it is not the key that "
                    "signed the journal")


@pytest.mark.req("R92.3", "R83.4")
def test_the_genesis_link_is_only_the_first_records(exports: Exports) -> None:
    """A segment cut to start at record 1 by a forger would need the genesis link, which its first record lacks."""
    folder = copy(exports.day_2, "renumbered")
    lines = lines_of(folder)
    first = json.loads(lines[0])
    first["prev"] = "0" * 64
    lines[0] = json.dumps(first)
    write_lines(folder, lines)
    faulted(folder, f"journal.jsonl record {first['seq']}: its prev is not the SHA-256 hash of a record before it")


def test_records_past_the_days_session_are_named(exports: Exports) -> None:
    """The day's segment runs from its verification to its session's close: day 1's next record is not in it."""
    folder = copy(exports.day_1, "longer")
    following = list(read_journal(exports.day_2 / "journal.jsonl"))[0]
    write_lines(folder, [*lines_of(folder), journal_line(following)])
    faulted(folder, f"journal.jsonl record {following.seq}: is not in the day's segment")


# --- scenario.json and result.json against the records, then against the replay ----------


@pytest.mark.req("R92.3", "R95.3")
def test_a_changed_scenario_is_named_by_game_and_field(exports: Exports) -> None:
    folder = copy(exports.day_2, "scenario-stake")
    scenario = load(folder, "scenario.json")
    game = scenario["sessions"][0]["games"][0]
    card = next(c for c in game["cards"] if c["stake_pct"] == 25)
    card["stake_pct"] = 50
    save(folder, "scenario.json", scenario)
    faulted(folder, f"scenario.json: game 1 of {DAY_2}: cards.card {card['id']}.stake_pct is 50; the records say 25")

    folder = copy(exports.day_2, "scenario-draw")
    scenario = load(folder, "scenario.json")
    draw = scenario["sessions"][0]["games"][1]["draw"]
    draw[3], draw[4] = draw[4], draw[3]
    save(folder, "scenario.json", scenario)
    faulted(folder, f"scenario.json: game 2 of {DAY_2}: draw[3] is {draw[3]}; the records say {draw[4]}")

    folder = copy(exports.day_2, "scenario-opening")
    scenario = load(folder, "scenario.json")
    scenario["opening"]["carry_line"] += 10
    save(folder, "scenario.json", scenario)
    carry = scenario["opening"]["carry_line"]
    faulted(folder, f"scenario.json: opening.carry_line is {carry}; the records say {carry - 10} (record ")

    folder = copy(exports.day_2, "scenario-rules")
    scenario = load(folder, "scenario.json")
    scenario["rules"]["line_bp"] += 100
    save(folder, "scenario.json", scenario)
    faulted(folder, f"the records of journal.jsonl do not make the day of scenario.json ({DAY_2}): game {DAY_2}-s2-g1: "
                    "its sale closed with a line prize of ")
    assert "where scenario.json's rules give " in verify(folder).stderr

    folder = copy(exports.day_2, "scenario-card")
    scenario = load(folder, "scenario.json")
    cards = scenario["sessions"][0]["games"][1]["cards"]
    removed = cards.pop(2)
    save(folder, "scenario.json", scenario)
    faulted(folder, f"scenario.json: game 2 of {DAY_2}: cards[2] is card {cards[2]['id']}; the records say card "
                    f"{removed['id']} (a card removed, added or moved)")


@pytest.mark.req("R92.3", "R95.3")
def test_a_changed_prize_amount_in_the_result_is_named(exports: Exports) -> None:
    folder = copy(exports.day_2, "result-prize")
    recorded = load(folder, "result.json")
    paid = recorded["games"][1]["prizes"]["line"]["paid"][0]
    paid["cents"] += 100
    save(folder, "result.json", recorded)
    faulted(folder, f"result.json: game 2 of {DAY_2}: prizes.line.paid.card {paid['card']}.cents is {paid['cents']}; "
                    f"the records say {paid['cents'] - 100}")


@pytest.mark.req("R92.3", "R95.3")
def test_a_winning_card_whose_numbers_are_changed_is_found_by_the_replay(exports: Exports) -> None:
    """The journal names cards by number: a card's numbers in the scenario are held to the winners by the replay."""
    folder = copy(exports.day_2, "scenario-rows")
    scenario = load(folder, "scenario.json")
    games = scenario["sessions"][0]["games"]
    winners = load(folder, "result.json")["games"][0]["prizes"]["bingo"]["paid"]
    winner = winners[0]["card"]
    elsewhere = {c["id"] for g in games[1:] for c in g["cards"]}
    assert winner not in elsewhere, "the winner appears in one game only"
    in_use = {json.dumps(c["rows"]) for g in games for c in g["cards"]}
    other = next(rows for rows in ([list(r) for r in Card.from_cells(int(n) for n in cells).rows]
                                   for cells in LIBRARY_CELLS[::-1]) if json.dumps(rows) not in in_use)
    next(c for c in games[0]["cards"] if c["id"] == winner)["rows"] = other
    save(folder, "scenario.json", scenario)
    stderr = faulted(folder, f"result.json: game 1 of {DAY_2}: ")
    assert "the replay of scenario.json gives" in stderr  # the records agree with the file: the replay does not


# --- Files that cannot be read: exit status 2, the file named ------------------------------


def test_a_missing_file_is_named(exports: Exports) -> None:
    folder = copy(exports.day_1, "missing")
    (folder / "result.json").unlink()
    faulted(folder, f"{folder / 'result.json'} is missing", status=2)
    faulted(exports.root / "nowhere", f"{exports.root / 'nowhere'} is not a folder", status=2)


def test_malformed_json_is_named(exports: Exports) -> None:
    folder = copy(exports.day_1, "malformed")
    text = (folder / "scenario.json").read_text()
    (folder / "scenario.json").write_text(text[: len(text) // 2])
    faulted(folder, f"{folder / 'scenario.json'} is not valid JSON:", status=2)

    folder = copy(exports.day_1, "malformed-line")
    lines = lines_of(folder)
    lines[2] = lines[2][:-5]
    write_lines(folder, lines)
    faulted(folder, f"{folder / 'journal.jsonl'} line 3 is not valid JSON:", status=2)

    folder = copy(exports.day_1, "not-a-key")
    (folder / "public-key.pem").write_text("not a key\n")
    faulted(folder, f"{folder / 'public-key.pem'} is not a PEM public key", status=2)


# --- A central server's export --------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.req("R92.3", "R95.3", "R83.4")
@pytest_twisted.ensureDeferred
async def test_a_central_servers_export_verifies_and_a_changed_payment_is_named(tmp_path: Path) -> None:
    central = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}")
    try:
        one, two = await central.hall("hall-1"), await central.hall("hall-2")
        await central.open_sale()
        for n, (client, hall, count, pct) in enumerate([(one, "hall-1", 12, 100), (one, "hall-1", 6, 50),
                                                         (two, "hall-2", 9, 25)]):
            bought = await client.buy(f"r{n}", hall=hall, terminal=f"T{n}", player=f"p{n}", count=count, pct=pct)
            assert bought["status"] == "confirmed", bought
        await central.close_sale()
        while central.game.phase not in ("closed", "not_played"):
            await central.next_ball()
        await until(lambda: central.records("central_game_closed"), "the game's close to be journaled")
        (closed,) = central.records("central_game_closed")
        live = central.game
        # What the live game decided, to set beside the export should they ever differ.
        seen = {"balls": list(live.balls), "winners": [(w.card_number, w.pattern, w.ball_count) for w in live.winners],
                "purchases": [(p.hall_id, p.first_card, p.card_count, p.stake_pct) for p in live.purchases]}
    finally:
        await stop_central(central)
    day = datetime.datetime.fromtimestamp(closed.time_ms / 1000, datetime.timezone.utc).date().isoformat()
    out = tmp_path / "audit"
    export_day(load_config(tmp_path / "central" / "central.toml"), day, out)

    done = verify(out)
    if done.exit_code != 0:
        exported = load(out, "scenario.json")["sessions"][0]["games"][0]
        raise AssertionError(f"{done.output}\nlive: {seen}\nexported draw {exported['draw']}, "
                             f"cards {[c['id'] for c in exported['cards']]}")
    assert done.stdout.startswith(f"{out}: verified (central export of {day}): ")

    recorded = load(out, "result.json")
    paid = recorded["games"][0]["prizes"]["bingo"]["paid"][0]
    paid["cents"] += 1
    save(out, "result.json", recorded)
    faulted(out, f"result.json: game 1 of {day}: prizes.bingo.paid.card {paid['card']}.cents is {paid['cents']}; "
                 f"the records say {paid['cents'] - 1}")
    paid["cents"] -= 1
    save(out, "result.json", recorded)
    scenario = load(out, "scenario.json")
    cards = scenario["sessions"][0]["games"][0]["cards"]
    won = {p["card"] for prize in recorded["games"][0]["prizes"].values() for p in prize.get("paid", [])}
    # A winning card removed leaves a draw the replay cannot read at all (exit 2): remove one that won nothing.
    k = next(i for i, card in enumerate(cards[:-1]) if card["id"] not in won)
    removed = cards.pop(k)
    save(out, "scenario.json", scenario)
    faulted(out, f"scenario.json: game 1 of {day}: cards[{k}] is card {cards[k]['id']}; "
                 f"the records say card {removed['id']}")


