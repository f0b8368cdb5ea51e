"""``bingo minutes``: signed reports an inspector checks with stock openssl (R77.3, R92.3)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hall_server.cli import main
from server_kit.keys import load_journal_key
from tests.reports.conftest import PlayedHall, csv_tables, pdf_strings

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command is not installed")


def bingo(hall: PlayedHall, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.setenv("BINGO_HOME", str(hall.home))
    return CliRunner().invoke(main, ["--db", hall.url, *args])


def openssl_verifies(folder: Path, file: Path) -> bool:
    done = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(folder / "hall-journal.pub.pem"), "-rawin",
         "-in", str(file), "-sigfile", f"{file}.sig"],
        capture_output=True, text=True, check=False,
    )
    return done.returncode == 0 and "Signature Verified Successfully" in done.stdout


@needs_openssl
@pytest.mark.req("R77.3", "R92.3", "R77.1")
def test_a_session_report_is_signed_so_openssl_verifies_it_and_fails_after_a_one_byte_change(
    hall_home: PlayedHall, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "minutes"
    run = bingo(hall_home, monkeypatch, "minutes", "session", "1", "--out", str(out))
    assert run.exit_code == 0, run.output
    pdf, csv = out / "minutes-session-1.pdf", out / "minutes-session-1.csv"
    span = hall_home.book.session(1).journal_range
    assert f"journal records {span.first_seq} to {span.last_seq}, last hash {span.last_hash}" in run.output
    for file in (pdf, csv):
        assert len((out / f"{file.name}.sig").read_bytes()) == 64
        assert openssl_verifies(out, file)
    # The report names the journal records it was made from, in both renderings.
    (journal,) = csv_tables(csv.read_bytes())["journal"]
    assert (journal["journal_first_seq"], journal["journal_last_seq"], journal["journal_last_hash"]) == (
        str(span.first_seq), str(span.last_seq), span.last_hash)
    assert span.last_hash in pdf_strings(pdf.read_bytes())

    run = bingo(hall_home, monkeypatch, "minutes", "verify", str(pdf))
    assert run.exit_code == 0 and "signature verified" in run.output
    assert f"this journal's record {span.last_seq} has the hash it names" in run.output
    run = bingo(hall_home, monkeypatch, "minutes", "verify", str(csv), "--public-key", str(out / "hall-journal.pub.pem"))
    assert run.exit_code == 0 and "signature verified" in run.output

    for file in (pdf, csv):
        data = bytearray(file.read_bytes())
        data[len(data) // 2] ^= 0x01
        file.write_bytes(bytes(data))
        assert not openssl_verifies(out, file)
        run = bingo(hall_home, monkeypatch, "minutes", "verify", str(file))
        assert run.exit_code == 1
        assert run.output.strip() == f"Error: the signature of {file} does not match: the file was changed, or another key signed it"


@needs_openssl
@pytest.mark.req("R77.3", "R77.4", "R83.3")
def test_game_and_month_reports_are_written_and_signed_too(
    hall_home: PlayedHall, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    game_id = hall_home.played.game_ids[1]
    assert bingo(hall_home, monkeypatch, "minutes", "game", game_id, "--out", str(tmp_path)).exit_code == 0
    assert bingo(hall_home, monkeypatch, "minutes", "month", "2026-12", "--out", str(tmp_path)).exit_code == 0
    for name in (f"minutes-game-{game_id}", "cards-sold-2026-12"):
        for suffix in (".pdf", ".csv"):
            assert openssl_verifies(tmp_path, tmp_path / f"{name}{suffix}")
    (month,) = csv_tables((tmp_path / "cards-sold-2026-12.csv").read_bytes())["month"]
    assert month["physical_cards"] == "90"


def test_a_report_made_from_another_journal_does_not_tie_to_this_one(
    hall_home: PlayedHall, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert bingo(hall_home, monkeypatch, "minutes", "month", "2027-01", "--out", str(tmp_path)).exit_code == 0
    csv = tmp_path / "cards-sold-2027-01.csv"
    # Re-signed with the hall's key, but naming a hash this journal's record does not have.
    text = csv.read_text()
    span = hall_home.book.month("2027-01").journal_range
    forged = text.replace(span.last_hash, "0" * 64).encode()
    csv.write_bytes(forged)
    key = load_journal_key(hall_home.home / "keys" / "journal-signing.pem")
    (tmp_path / "cards-sold-2027-01.csv.sig").write_bytes(key.sign(forged))
    run = bingo(hall_home, monkeypatch, "minutes", "verify", str(csv))
    assert run.exit_code == 1 and "made from a different journal" in run.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["game", "2026-12-01-s1-g9"], "there is no game '2026-12-01-s1-g9' in the journal; the last is 2027-01-04-s2-g1"),
        (["session", "7"], "there is no session 7 in the journal; it holds sessions 1 to 2"),
        (["month", "2026-11"], "no session was held in 2026-11; the journal holds sessions in 2026-12, 2027-01"),
        (["month", "december"], "a month is written YYYY-MM, not 'december'"),
    ],
)
def test_an_unknown_game_session_or_month_is_one_line_not_a_traceback(
    hall_home: PlayedHall, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], message: str
) -> None:
    run = bingo(hall_home, monkeypatch, "minutes", *args, "--out", str(tmp_path / "out"))
    assert run.exit_code == 1
    assert run.output == f"Error: {message}\n"
    assert not (tmp_path / "out").exists(), "nothing is written for a report that cannot be made"


def test_verifying_a_file_without_its_signature_says_so(
    hall_home: PlayedHall, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lone = tmp_path / "minutes.pdf"
    lone.write_bytes(b"%PDF-1.4\n")
    run = bingo(hall_home, monkeypatch, "minutes", "verify", str(lone))
    assert run.exit_code == 1 and run.output == f"Error: {lone} has no signature: {lone}.sig is missing\n"
    run = bingo(hall_home, monkeypatch, "minutes", "verify", str(tmp_path / "absent.pdf"))
    assert run.exit_code == 1 and run.output.startswith("Error: ") and "Traceback" not in run.output
