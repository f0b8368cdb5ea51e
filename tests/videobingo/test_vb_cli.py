"""``bingo vb rtp`` as users run it: the output of FORMATS.md section 4, exit 0 / 3 / 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from math import gcd
from pathlib import Path

import pytest
from click.testing import CliRunner

from hall_server.cli import main
from tests.videobingo.faults import FAULTS, RAW_FAULTS
from tests.videobingo.paytables import EXAMPLE_NAMES, EXAMPLES, ROOT, document, example_data

BINGO = Path(sys.executable).parent / "bingo"
KEYS = ["format", "name", "rtp", "rtp_percent", "min_rtp_bp", "meets_minimum", "patterns"]


def invoke(*args: str, stdin: bytes | None = None):  # -> click.testing.Result
    return CliRunner().invoke(main, ["vb", "rtp", *args], input=stdin)


def write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "paytable.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def fraction(text: str) -> Fraction:
    numerator, denominator = (int(part) for part in text.split("/"))
    assert denominator >= 1 and gcd(numerator, denominator) == 1, f"{text} is not in lowest terms"
    return Fraction(numerator, denominator)


@pytest.mark.req("R2.2.b")
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_documented_examples_print_the_documented_output(name: str) -> None:
    """Each example's ``.out.json`` is exactly what the command prints, and the doc shows both."""
    result = invoke(str(EXAMPLES / f"{name}.json"))
    expected = (EXAMPLES / f"{name}.out.json").read_text()
    assert result.stdout == expected
    assert result.exit_code == (0 if json.loads(expected)["meets_minimum"] else 3)
    assert result.stderr == ""
    doc = (ROOT / "docs" / "video-bingo.md").read_text()
    assert expected.strip() in doc


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_the_output_is_one_line_of_the_format(name: str) -> None:
    data = example_data(name)
    out = invoke(str(EXAMPLES / f"{name}.json")).stdout
    assert out.endswith("\n") and out.count("\n") == 1 and out.isascii()
    result = json.loads(out)
    assert list(result) == KEYS
    assert (result["format"], result["name"], result["min_rtp_bp"]) == ("bingo-vb-rtp/1", data["name"], data["min_rtp_bp"])
    rtp = fraction(result["rtp"])
    assert re.fullmatch(r"[0-9]+\.[0-9]{2}", result["rtp_percent"])
    assert abs(Fraction(result["rtp_percent"]) - rtp * 100) <= Fraction(1, 200)
    assert result["meets_minimum"] is (rtp >= Fraction(data["min_rtp_bp"], 10000))
    assert [list(p) for p in result["patterns"]] == [["name", "pays", "probability"]] * len(data["patterns"])
    assert [(p["name"], p["pays"]) for p in result["patterns"]] == [(p["name"], p["pays"]) for p in data["patterns"]]
    assert rtp == sum(p["pays"] * fraction(p["probability"]) for p in result["patterns"])


@pytest.mark.req("R2.2.b")
def test_exit_0_at_exactly_the_minimum_and_3_just_below(tmp_path: Path) -> None:
    """One cell paying 1 on 16 balls of 20 returns exactly 80%; on 15 balls, 75%."""
    exact = document([("cell", [(0, 0)], 1)], rows=1, columns=1, pool=20, balls=16, min_rtp_bp=8000)
    result = invoke(write(tmp_path, json.dumps(exact)))
    assert result.exit_code == 0
    assert json.loads(result.stdout)["rtp"] == "4/5"
    assert json.loads(result.stdout)["rtp_percent"] == "80.00"
    below = document([("cell", [(0, 0)], 1)], rows=1, columns=1, pool=20, balls=15, min_rtp_bp=8000)
    result = invoke(write(tmp_path, json.dumps(below)))
    assert result.exit_code == 3
    out = json.loads(result.stdout)  # the result is still printed
    assert (out["rtp"], out["rtp_percent"], out["meets_minimum"]) == ("3/4", "75.00", False)
    assert result.stderr == ""


def test_rtp_percent_rounds_half_up(tmp_path: Path) -> None:
    """One cell paying 1, one ball of 32: 1/32 = 3.125% is shown as 3.13."""
    table = document([("cell", [(0, 0)], 1)], rows=1, columns=1, pool=32, balls=1, min_rtp_bp=0)
    out = json.loads(invoke(write(tmp_path, json.dumps(table))).stdout)
    assert (out["rtp"], out["rtp_percent"]) == ("1/32", "3.13")


def test_a_pattern_never_paid_has_probability_0(tmp_path: Path) -> None:
    """A superset paying less than its own subset is never the pattern paid."""
    table = document(
        [("pair", [(0, 0), (0, 1)], 5), ("row", [(0, 0), (0, 1), (0, 2)], 2)], rows=1, columns=3, min_rtp_bp=0
    )
    out = json.loads(invoke(write(tmp_path, json.dumps(table))).stdout)
    assert out["patterns"][1]["probability"] == "0/1"


def test_huge_pays_are_exact(tmp_path: Path) -> None:
    table = document([("cell", [(0, 0)], 10**40)], rows=1, columns=1, pool=20, balls=10, min_rtp_bp=10000)
    out = json.loads(invoke(write(tmp_path, json.dumps(table))).stdout)
    assert out["rtp"] == f"{10**40 // 2}/1"
    assert out["rtp_percent"] == f"{10**40 * 50}.00"
    assert out["patterns"][0]["pays"] == 10**40


def test_standard_input_with_a_dash() -> None:
    source = EXAMPLES / "vb-classic-3x5.json"
    result = invoke("-", stdin=source.read_bytes())
    assert (result.exit_code, result.stdout) == (0, (EXAMPLES / "vb-classic-3x5.out.json").read_text())


def assert_refused(result, message: str) -> None:
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
def test_each_fault_exits_2_with_one_line_naming_the_field(fault, tmp_path: Path) -> None:
    assert_refused(invoke(write(tmp_path, fault.text())), fault.message)


@pytest.mark.parametrize(("raw", "message"), [f[1:] for f in RAW_FAULTS], ids=[f[0] for f in RAW_FAULTS])
def test_a_file_that_is_no_paytable_object_exits_2(raw: bytes, message: str, tmp_path: Path) -> None:
    assert_refused(invoke(write(tmp_path, raw)), message)


def test_a_file_far_too_large_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as big:
        big.truncate(1 << 30)  # a sparse gigabyte of zero bytes
    assert_refused(invoke(str(path)), "(file): is larger than 1048576 bytes")


@pytest.mark.parametrize("which", ["missing", "directory"])
def test_an_unreadable_file_exits_2_naming_it(which: str, tmp_path: Path) -> None:
    path = tmp_path / "nothing.json" if which == "missing" else tmp_path
    result = invoke(str(path))
    assert_refused(result, f"{path}: cannot be read: ")


def test_too_entangled_patterns_exit_2_naming_patterns(tmp_path: Path) -> None:
    cells = [(r, c) for r in range(9) for c in range(9)]
    pairs = [(f"pair {i}", [cells[i], cells[(i * 37 + 11) % 81]], 1 + i % 5) for i in range(81)]
    table = document([p for p in pairs if p[1][0] != p[1][1]], rows=9, columns=9, pool=99, balls=50)
    assert_refused(invoke(write(tmp_path, json.dumps(table))), "patterns: the ")


@pytest.mark.integration
def test_the_installed_command_prints_the_result_and_its_exit_status() -> None:
    """The real ``bingo`` entry point, from a path and from ``-``: 0 when the minimum is met, 3 when not."""
    for name, status in (("vb-classic-3x5", 0), ("vb-formats-example", 3)):
        source = EXAMPLES / f"{name}.json"
        expected = (EXAMPLES / f"{name}.out.json").read_text()
        by_path = subprocess.run([BINGO, "vb", "rtp", source], capture_output=True, text=True, check=False)
        assert (by_path.returncode, by_path.stdout, by_path.stderr) == (status, expected, "")
        by_stdin = subprocess.run(
            [BINGO, "vb", "rtp", "-"], input=source.read_text(), capture_output=True, text=True, check=False
        )
        assert (by_stdin.returncode, by_stdin.stdout) == (status, expected)


@pytest.mark.integration
def test_the_installed_command_exits_2_with_one_line_naming_the_field(tmp_path: Path) -> None:
    data = example_data("vb-classic-3x5")
    data["patterns"][3]["pays"] = 2.5
    run = subprocess.run([BINGO, "vb", "rtp", write(tmp_path, json.dumps(data))], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == "patterns[3].pays: must be a JSON integer, got the non-integer number 2.5\n"
