"""``bingo cards`` end to end on a real SQLite database and real files."""

import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner

from hall_server.cli import main
from hall_server.i18n import DEFAULT_LANGUAGE, money, translate
from hall_server.store import cards as store
from hall_server.store.database import MIGRATIONS, is_current, open_database
from server_kit.db.database import alembic_config, create
from tests.reports.conftest import pdf_strings

pytestmark = pytest.mark.integration
BINGO = Path(sys.executable).parent / "bingo"


@pytest.fixture
def hall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BINGO_HOME", str(tmp_path / "var"))
    monkeypatch.delenv("BINGO_CARD_KEY_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "var").mkdir()  # a typed --db names a folder that exists
    url = f"sqlite:///{tmp_path / 'var' / 'hall.sqlite3'}"
    runner = CliRunner()

    def run(*args: str, ok: bool = True):
        result = runner.invoke(main, ["--db", url, *args])
        assert "Traceback" not in result.output
        if ok:
            assert result.exit_code == 0, result.output
        else:
            assert result.exit_code != 0, result.output
        return result

    run.url = url
    run.engine = lambda: open_database(url)
    return run


def test_migrations_match_the_models(tmp_path: Path) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    assert is_current(engine)
    config = alembic_config(MIGRATIONS)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.check(config)  # raises if the models drifted from the migrations


def test_the_database_is_sqlite_in_wal_mode(tmp_path: Path) -> None:
    engine = create(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


@pytest.mark.req("R82.9-12", "R92.9")
def test_a_new_library_is_written_registered_and_verifies(hall, tmp_path: Path) -> None:
    result = hall("cards", "new-library", "--count", "600", "--out", "lib.csv")
    assert "library V1: 600 cards in 100 strips" in result.output
    assert (tmp_path / "var" / "keys" / "card-code.key").stat().st_mode & 0o777 == 0o600
    verified = hall("cards", "verify", "lib.csv")
    assert "600 valid cards, 100 complete strips, no duplicates, 600 security codes correct" in verified.output
    assert store.count_cards(hall.engine())["library_cards"] == 600
    hall("cards", "export", "--library", "V1", "--out", "again.csv")
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "lib.csv").read_bytes()


@pytest.mark.req("R82.9-12")
def test_a_library_is_disjoint_from_the_physical_sets(hall, tmp_path: Path) -> None:
    hall("cards", "new-set", "--name", "blue", "--count", "120", "--out", "blue.csv")
    hall("cards", "new-library", "--count", "120", "--out", "lib.csv")
    refused = hall("cards", "import-set", "--name", "copy", "lib.csv", ok=False)
    assert "card_id is 'V1-1'" in refused.output
    # A printer's file that repeats a virtual card is refused and leaves nothing behind.
    lines = (tmp_path / "lib.csv").read_text().splitlines()
    printer = ["card_id,strip," + ",".join(lines[0].split(",")[2:29])]
    for k, line in enumerate(lines[1:7], start=1):
        printer.append(f"{k},1," + ",".join(line.split(",")[2:29]))
    (tmp_path / "printer.csv").write_text("\n".join(printer) + "\n")
    before = store.count_cards(hall.engine())
    refused = hall("cards", "import-set", "--name", "red", "printer.csv", ok=False)
    assert "card 1 of the new set has the same numbers as virtual card V1-1" in refused.output
    assert store.count_cards(hall.engine()) == before


@pytest.mark.req("R82.1", "R82.6", "R82.9-12")
def test_a_set_with_series_prints_a_pdf_sheet(hall, tmp_path: Path) -> None:
    hall("cards", "new-set", "--name", "blue", "--count", "60")
    hall("cards", "add-series", "--set", "blue", "--series", "101", "--price", "150")
    hall("cards", "add-series", "--set", "blue", "--series", "102", "--price", "150", "--cards", "30")
    listing = hall("cards", "list").output
    assert "series 101: 60 cards at 1.50 EUR" in listing and "series 102: 30 cards" in listing
    clash = hall("cards", "add-series", "--set", "blue", "--series", "9001", "--price", "150", ok=False).output
    assert "series 9001 is the number the terminals' virtual cards are played under" in clash
    assert "series 9001" not in hall("cards", "list").output
    hall("cards", "export-pdf", "--series", "102", "--first", "1", "--last", "7", "--out", "s.pdf")
    pdf = (tmp_path / "s.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") >= 2
    shown = [text.replace("\xa0", " ") for text in pdf_strings(pdf)]  # in the hall's language (hall.toml's default)
    for k in range(1, 8):
        assert translate(DEFAULT_LANGUAGE, "Set {set}   Series {series}   Card {number} of {size}", set="blue",
                         series=102, number=k, size=30) in shown
    value = translate(DEFAULT_LANGUAGE, "Value {amount}", amount=money(150, DEFAULT_LANGUAGE))
    assert value.replace("\xa0", " ") in shown


@pytest.mark.parametrize(
    "args, message",
    [
        (("cards", "new-library", "--count", "601", "--out", "x.csv"), "601 is not a multiple of 6"),
        (("cards", "add-series", "--set", "nope", "--series", "1", "--price", "100"), "no card set named 'nope'"),
        (("cards", "export-pdf", "--series", "9", "--out", "x.pdf"), "there is no series 9"),
        (("cards", "export", "--library", "nope", "--out", "x.csv"), "no library named 'nope'"),
        (("cards", "verify", "missing.csv"), "does not exist"),
    ],
)
def test_bad_commands_get_one_clear_line(hall, tmp_path: Path, args, message: str) -> None:
    result = hall(*args, ok=False)
    assert message in result.output
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.pdf").exists()


def test_a_refused_library_leaves_no_file_and_no_rows(hall, tmp_path: Path) -> None:
    hall("cards", "new-library", "--count", "60", "--out", "a.csv", "--series", "V7")
    before = store.count_cards(hall.engine())
    refused = hall("cards", "new-library", "--count", "60", "--out", "b.csv", "--series", "V7", "--name", "other", ok=False)
    assert "virtual series 'V7' is already used" in refused.output
    assert not (tmp_path / "b.csv").exists()
    assert list(tmp_path.glob(".*partial")) == []
    assert store.count_cards(hall.engine()) == before


@pytest.mark.req("R92.9")
def test_the_real_command_exits_non_zero_on_a_wrong_code(hall, tmp_path: Path) -> None:
    hall("cards", "new-library", "--count", "12", "--out", "lib.csv")
    text = (tmp_path / "lib.csv").read_text().splitlines()
    text[5] = text[5][:-16] + "0123456789abcdef"
    (tmp_path / "forged.csv").write_text("\n".join(text) + "\n")
    env = {"BINGO_HOME": str(tmp_path / "var"), "PATH": "/usr/bin:/bin"}
    good = subprocess.run([BINGO, "cards", "verify", "lib.csv"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    bad = subprocess.run([BINGO, "cards", "verify", "forged.csv"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines()[-1] == (
        "Error: line 6: card V1-5: the security code does not match (a forged or altered card, or the wrong key)"
    )
    no_key = subprocess.run(
        [BINGO, "cards", "verify", "lib.csv"], cwd=tmp_path, env={**env, "BINGO_HOME": "/nonexistent"},
        capture_output=True, text=True,
    )
    assert no_key.returncode == 1 and "no card code key at" in no_key.stderr
    assert "Traceback" not in bad.stderr + no_key.stderr
