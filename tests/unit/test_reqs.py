"""``bingo reqs``: requirement IDs and the tests that prove them (DESIGN.md, Traceability)."""

from pathlib import Path

from click.testing import CliRunner, Result

from hall_server.cli import main
from hall_server.cli.reqs import named_ids, read_proofs, requirement_ids

SPEC = """# Rules
- **R2.2 / R82.1** 90 balls.
- **R82.9-12** A virtual card ... **R92.5e / R95.1** checks.
- **R87.a** Line. **R89 Superbingo** ... (R88.1, R94.1) and R3.5.d.
"""


def run(tmp_path: Path, source: str, *options: str) -> Result:
    """``bingo reqs`` over a suite of one test file holding ``source``, against SPEC."""
    (tmp_path / "spec.md").write_text(SPEC)
    tests = tmp_path / "suite"
    tests.mkdir(exist_ok=True)
    (tests / "test_sample.py").write_text("import pytest\n" + source)
    return CliRunner().invoke(
        main, ["reqs", *options, "--spec", str(tmp_path / "spec.md"), "--tests", str(tests)]
    )


def test_ids_are_read_as_written_in_order_once_each_and_a_range_is_one_id() -> None:
    assert requirement_ids(SPEC + "R2.2 again") == [
        "R2.2", "R82.1", "R82.9-12", "R92.5e", "R95.1", "R87.a", "R89", "R88.1", "R94.1", "R3.5.d",
    ]


def test_the_command_lists_proofs_and_gaps(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "@pytest.mark.req('R82.9-12', 'R2.2')\n"
        "def test_library():\n    pass\n"
        "def test_R87_a_line():\n    pass\n"
        "class TestSale:\n"
        "    @pytest.mark.req('R2.2')\n"
        "    @pytest.mark.parametrize('n', [1, 2, 3])\n"
        "    def test_sold(self, n):\n        pass\n",
    )
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.stdout.splitlines()
    assert "R2.2      2 test(s): test_library, TestSale::test_sold" in lines
    assert "R82.9-12  1 test(s): test_library" in lines
    assert "R87.a     1 test(s): test_R87_a_line" in lines
    assert "R88.1     no test" in lines
    assert lines[-1] == "10 requirement IDs, 3 with tests, 7 with no test (3 tests read)"
    assert result.stderr == ""
    missing = run(tmp_path, "@pytest.mark.req('R2.2')\ndef test_library():\n    pass\n", "--missing")
    assert missing.exit_code == 0
    assert "R2.2" not in missing.stdout and "R94.1     no test" in missing.stdout


def test_an_id_the_regulation_does_not_write_is_an_error_naming_the_test(tmp_path: Path) -> None:
    result = run(tmp_path, "@pytest.mark.req('R99.9', 'R2.2')\ndef test_other():\n    pass\n")
    assert result.exit_code == 1
    assert (
        "error: R99.9 is not a requirement of the regulation, named by suite/test_sample.py::test_other"
        in result.stderr.splitlines()
    )
    assert "R2.2      1 test(s): test_other" in result.stdout.splitlines()


def test_a_range_is_not_expanded_so_naming_one_id_inside_it_is_an_error(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "@pytest.mark.req('R82.10')\ndef test_one_rule_of_the_range():\n    pass\n"
        "def test_R82_11_by_name():\n    pass\n",
    )
    assert result.exit_code == 1
    errors = result.stderr.splitlines()
    assert any(line.startswith("error: R82.10 is not a requirement") for line in errors)
    assert any(line.startswith("error: R82.11 is not a requirement") for line in errors)
    assert "R82.9-12  no test" in result.stdout.splitlines()


def test_a_mark_for_the_whole_module_proves_nothing_and_the_file_is_named(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "pytestmark = [pytest.mark.integration, pytest.mark.req('R2.2')]\n"
        "def test_fonts_are_embedded():\n    pass\n",
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "R2.2      no test" in lines
    assert (
        "1 test file(s) name requirements for the whole module, which proves nothing: "
        "suite/test_sample.py" in lines
    )


def test_a_name_carries_ids_and_a_letter_counts_only_where_the_regulation_has_that_id() -> None:
    known = set(requirement_ids(SPEC))
    assert named_ids("test_R87_a_line_on_one_row", known) == ["R87.a"]
    assert named_ids("test_R92_5e_verification", known) == ["R92.5e"]
    assert named_ids("test_R82_1_a_card", known) == ["R82.1"]  # "_a_" is a word here
    assert named_ids("test_R89_superbingo", known) == ["R89"]
    assert named_ids("test_N5_cash_box_and_pentest_12", known) == []


def test_marks_are_read_from_the_source_a_starred_tuple_included_and_an_unreadable_one_is_an_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_source.py").write_text(
        "import pytest\nimport nowhere_installed\n"
        "REQUIREMENTS = ('R88.1', 'R94.1')\n"
        "LINE = pytest.mark.req('R87.a')\n"
        "@pytest.mark.req(*REQUIREMENTS)\ndef test_pots():\n    pass\n"
        "@LINE\ndef test_line():\n    pass\n"
        "@pytest.mark.req(computed())\ndef test_computed():\n    pass\n"
        "TestMachine = pytest.mark.req('R82.1')(Machine.TestCase)\n"
    )
    found = read_proofs(tmp_path, requirement_ids(SPEC))
    assert found.tests == 4
    assert found.proofs["R88.1"] == found.proofs["R94.1"] == [f"{tmp_path.name}/test_source.py::test_pots"]
    assert found.proofs["R87.a"] == [f"{tmp_path.name}/test_source.py::test_line"]
    assert found.proofs["R82.1"] == [f"{tmp_path.name}/test_source.py::TestMachine"]
    assert found.proofs["computed()"] == [f"{tmp_path.name}/test_source.py::test_computed"]


def test_a_missing_spec_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["reqs", "--spec", str(tmp_path / "nope.md"), "--tests", str(tmp_path)])
    assert result.exit_code == 1
    assert "Error: " in result.output and "Traceback" not in result.output


def test_an_article_named_whole_is_proved_only_when_every_paragraph_of_it_is(tmp_path: Path) -> None:
    """An article the regulation names whole (R92 in a heading over R92.1 and R92.5e) counts once
    each of its paragraphs has a test, and not before."""
    article = tmp_path / "article"
    article.mkdir()
    (article / "spec.md").write_text("## 6. Architecture (R92)\n- **R92.1** one. **R92.5e** two.\n")
    tests = article / "suite"
    tests.mkdir()

    def listed(source: str) -> list[str]:
        (tests / "test_sample.py").write_text("import pytest\n" + source)
        result = CliRunner().invoke(main, ["reqs", "--spec", str(article / "spec.md"), "--tests", str(tests)])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    half = listed("@pytest.mark.req('R92.1')\ndef test_one():\n    pass\n")
    assert "R92       no test" in half and half[-1].startswith("3 requirement IDs, 1 with tests, 2 with no test")
    whole = listed("@pytest.mark.req('R92.1', 'R92.5e')\ndef test_both():\n    pass\n")
    assert "R92       proved by its 2 parts (R92.1, R92.5e)" in whole
    assert whole[-1].startswith("3 requirement IDs, 3 with tests, 0 with no test")
