"""``bingo replay`` as users run it: exit status, stdout, stderr, and the documented examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hall_server.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
BINGO = Path(sys.executable).parent / "bingo"
EXAMPLE_NAMES = ["replay-shared-prize", "replay-jackpot", "replay-claim-pause"]


def invoke(*args: str, stdin: str | None = None):  # -> click.testing.Result
    return CliRunner().invoke(main, ["replay", *args], input=stdin)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_documented_examples_print_the_documented_output(name: str) -> None:
    """Each example's output file is exactly what the command prints, and the doc shows both."""
    result = invoke(str(EXAMPLES / f"{name}.json"))
    assert result.exit_code == 0, result.stderr
    expected = (EXAMPLES / f"{name}.out.json").read_text()
    assert result.stdout == expected
    assert result.stderr == ""
    doc = (ROOT / "docs" / "replay.md").read_text()
    assert (EXAMPLES / f"{name}.json").read_text().strip() in doc
    assert expected.strip() in doc


@pytest.mark.integration
def test_the_installed_command_replays_a_file_and_stdin() -> None:
    """The real ``bingo`` entry point: exit 0 and the JSON, from a path and from ``-``."""
    source = EXAMPLES / "replay-shared-prize.json"
    expected = (EXAMPLES / "replay-shared-prize.out.json").read_text()
    by_path = subprocess.run([BINGO, "replay", source], capture_output=True, text=True, check=False)
    assert (by_path.returncode, by_path.stdout, by_path.stderr) == (0, expected, "")
    by_stdin = subprocess.run(
        [BINGO, "replay", "-"], input=source.read_text(), capture_output=True, text=True, check=False
    )
    assert (by_stdin.returncode, by_stdin.stdout) == (0, expected)


@pytest.mark.integration
def test_the_installed_command_exits_2_with_one_line_naming_the_field(tmp_path: Path) -> None:
    data = json.loads((EXAMPLES / "replay-shared-prize.json").read_text())
    data["sessions"][0]["games"][1]["cards"][1]["stake_pct"] = 0.5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    run = subprocess.run([BINGO, "replay", bad], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == (
        "session 2026-12-01, game 2, field cards[1].stake_pct: "
        "must be a JSON integer, got the non-integer number 0.5\n"
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["rules"].update(line_bp=True), "rules.line_bp: must be a JSON integer, got true\n"),
        (lambda d: d["rules"].update(bingo_bp=4999),
         "rules: line, bingo and pot contributions total 6999 basis points of sales; prizes must "
         "take at least 7000 (70%, R88.1, R94.1)\n"),
        (lambda d: d["sessions"][0]["games"][0]["draw"].__setitem__(16, 7),
         "session 2026-12-01, game 1, field draw[16]: 7 was already drawn as draw[0]\n"),
        (lambda d: [c.update(id="P\nX") for c in d["sessions"][0]["games"][0]["cards"][:2]],
         "session 2026-12-01, game 1, field cards[1].id: \"P\\nX\" is already the id of cards[0]\n"),
    ],
)
def test_invalid_input_exits_2_with_one_line_on_stderr_and_nothing_on_stdout(edit, message: str) -> None:
    data = json.loads((EXAMPLES / "replay-shared-prize.json").read_text())
    edit(data)
    result = invoke("-", stdin=json.dumps(data))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1


def test_a_missing_file_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    result = invoke(str(missing))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"{missing}: cannot be read: No such file or directory\n"
