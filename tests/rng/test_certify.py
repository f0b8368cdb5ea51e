"""``bingo rng certify``: the production generator through the hall's path, a signed report,
and a biased generator put in its place fails (R92.10)."""

from __future__ import annotations

import importlib
import json
import secrets
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization

from hall_server.cli import main
from hall_server.rng_certify import (
    DIEHARDER_TESTS,
    DieharderTest,
    certify,
    dieharder_tests,
    draw_sample,
    run_dieharder,
    steps_in_all,
)
from protocol.balls import RandomBallGenerator
from server_kit.keys import load_journal_key
from server_kit.reports.signing import verify

#: The suite's family-wise level: a fair generator fails a run with probability at most
#: this, so the suite fails once in ten thousand runs rather than once in a hundred (0.01).
SUITE_ALPHA = "0.0001"
needs_dieharder = pytest.mark.skipif(shutil.which("dieharder") is None, reason="dieharder is not installed")


class ModuloBiasedGenerator(RandomBallGenerator):
    """The classic fault: seven random bits reduced modulo the balls left, so low indices win."""

    def draw(self) -> int:
        ball = self._pool.pop(secrets.randbits(7) % len(self._pool))
        self._drawn.append(ball)
        return ball


class StickyGenerator(RandomBallGenerator):
    """Fair ball by ball on average, but one draw in five takes the same rank as the last one."""

    last = 0

    def draw(self) -> int:
        index = secrets.randbelow(len(self._pool))
        if secrets.randbelow(5) == 0:
            index = min(StickyGenerator.last, len(self._pool) - 1)
        StickyGenerator.last = index
        ball = self._pool.pop(index)
        self._drawn.append(ball)
        return ball


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BINGO_HOME", str(tmp_path / "home"))
    load_journal_key(tmp_path / "home" / "keys" / "journal-signing.pem", create=True)
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(main, ["rng", "certify", *args])
    return outcome.exit_code, outcome.output


def test_the_sample_is_whole_games_drawn_by_the_halls_own_generator() -> None:
    sample = draw_sample(RandomBallGenerator, 3)
    assert sample.shape == (3, 90)
    assert all(sorted(game) == list(range(1, 91)) for game in sample.tolist())


@pytest.mark.req("R92.10")
@pytest.mark.campaign
@needs_dieharder
def test_a_run_of_100000_draws_passes_and_writes_a_signed_report(home: Path) -> None:
    out = home / "report"
    status, output = run("--draws", "100000", "--out", str(out), "--alpha", SUITE_ALPHA)
    assert status == 0, output
    assert "verdict: PASS" in output
    report = json.loads((out / "rng-certification.json").read_bytes())
    assert report["generator"]["name"] == "protocol.balls.RandomBallGenerator"
    assert "secrets.randbelow" in report["generator"]["algorithm"]
    assert len(report["generator"]["source_sha256"]) == 64
    assert report["sample"]["games"] == 1112 and report["sample"]["balls"] == 100_080
    assert report["sample"]["bits"] == 1112 * 86
    assert (out / "rng-draws.bin").stat().st_size == 100_080
    tests = {r["test"]: r for r in report["results"]}
    for name in ("first ball frequencies", "ball by position frequencies", "consecutive pairs",
                 "serial correlation of choices (lag 1)", "2.1 frequency (monobit)", "2.11 serial"):
        assert tests[name]["passed"] and 0 <= tests[name]["p_value"] <= 1
    assert report["verdict"] == {"passed": True, "alpha": 0.0001, "tests": len(tests),
                                 "threshold": 0.0001 / len(tests), "failed": []}
    # dieharder cannot be fed 10 p-samples from 12 KB: said so, not run on reused bytes.
    assert {n["name"] for n in report["not_run"] if n["battery"] == "dieharder"} == {t.name for t in DIEHARDER_TESTS}
    public = serialization.load_pem_public_key((out / "hall-journal.pub.pem").read_bytes())
    for name in ("rng-certification.json", "rng-certification.pdf"):
        data = (out / name).read_bytes()
        verify(public, data, (out / f"{name}.sig").read_bytes(), name)  # type: ignore[arg-type]
    assert (out / "rng-certification.pdf").read_bytes().startswith(b"%PDF")
    checked_by_bingo = CliRunner().invoke(main, ["minutes", "verify", str(out / "rng-certification.pdf"),
                                                 "--public-key", str(out / "hall-journal.pub.pem")])
    assert checked_by_bingo.exit_code == 0 and "signature verified" in checked_by_bingo.output
    if shutil.which("openssl"):
        checked = subprocess.run(
            ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(out / "hall-journal.pub.pem"), "-rawin",
             "-in", str(out / "rng-certification.pdf"), "-sigfile", str(out / "rng-certification.pdf.sig")],
            capture_output=True, text=True)
        assert "Signature Verified Successfully" in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.req("R92.10")
@pytest.mark.campaign
@needs_dieharder
@pytest.mark.parametrize("generator, caught_by", [
    (ModuloBiasedGenerator, "first ball frequencies"),
    (StickyGenerator, "serial correlation of choices (lag 1)"),
])
def test_a_biased_generator_put_in_its_place_fails(
    home: Path, monkeypatch: pytest.MonkeyPatch, generator: type, caught_by: str
) -> None:
    # The package's attribute ``rng`` is the command group; the module is in sys.modules.
    monkeypatch.setattr(importlib.import_module("hall_server.cli.rng"), "GENERATOR", generator)
    out = home / "biased"
    status, output = run("--draws", "100000", "--out", str(out), "--alpha", SUITE_ALPHA)
    assert status == 1, output
    report = json.loads((out / "rng-certification.json").read_bytes())
    assert not report["verdict"]["passed"] and caught_by in report["verdict"]["failed"]
    assert report["generator"]["name"].endswith(generator.__name__)
    assert report["generator"]["algorithm"] == "not the production generator: see its source"
    assert "verdict: FAIL" in output
    assert (out / "rng-certification.pdf.sig").stat().st_size == 64  # a failed run is reported and signed too


@pytest.mark.parametrize("args, message", [
    (["--draws", "100"], "must be 40,500 to"),
    (["--draws", "-5"], "must be 40,500 to"),
    (["--draws", "many"], "is not a valid integer"),
    (["--draws", "100000", "--alpha", "2"], "--alpha is a significance level"),
    ([], "Missing option '--draws'"),
])
def test_a_request_that_cannot_be_carried_out_exits_2_and_says_why(home: Path, args: list[str], message: str) -> None:
    status, output = run(*args, "--out", str(home / "bad"))
    assert status == 2 and message in output, output
    assert not (home / "bad" / "rng-certification.json").exists()


def test_without_a_signing_key_nothing_is_reported_and_the_exit_is_2(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BINGO_HOME", str(tmp_path / "nowhere"))
    status, output = run("--draws", "40500", "--out", str(tmp_path / "r"))
    assert status == 2 and "no journal signing key" in output, output


def test_dieharder_is_given_fewer_p_samples_rather_than_reused_bytes(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def fake(arguments: list[str]) -> str:
        calls.append(arguments)
        psamples = int(arguments[arguments.index("-p") + 1])
        if psamples > 20:
            return "# The file file_input_raw was rewound 1 times\n"
        return f"         sts_monobit|   1|     10000|      {psamples}|0.51234567|  PASSED  \n"

    test = DieharderTest(100, "sts_monobit", 10_000, 10_000)
    results, not_run = dieharder_tests(tmp_path / "bits", 500_000, fake, [test, DieharderTest(0, "big", 100, 10**9)])
    assert [int(c[c.index("-p") + 1]) for c in calls] == [50, 25, 12]
    assert results[0].p_values == (0.51234567,) and results[0].detail["psamples"] == 12
    assert [n.name for n in not_run] == ["big"] and "needs about" in not_run[0].reason


@needs_dieharder
def test_the_real_dieharder_output_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bits"
    path.write_bytes(secrets.token_bytes(400_000))
    results, not_run = dieharder_tests(path, 400_000, run_dieharder, [DieharderTest(100, "sts_monobit", 1_000, 9_000)])
    assert not not_run and len(results) == 1
    assert results[0].detail["psamples"] == 44 and 0 <= results[0].p_values[0] <= 1


def test_certify_reads_its_clock_and_timer_only_through_what_it_is_given(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    ticks = iter(range(100))
    fixed = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    certification = certify(40_500, tmp_path, clock=lambda: fixed, timer=lambda: float(next(ticks)),
                            dieharder=lambda arguments: "")
    assert certification.sample["started"] == certification.sample["finished"] == "2026-12-01T10:00:00+00:00"
    assert certification.timing_s["total"] == 4.0


def test_a_certification_tells_each_step_as_it_starts_and_the_command_shows_it_on_stderr(home: Path) -> None:
    """The run takes minutes: the operator sees where it stands (the draw by hundredths, each
    test by name), on stderr, while the results go to stdout."""
    steps: list[tuple[str, int, int]] = []
    certify(40_500, home / "direct", clock=lambda: datetime.now(timezone.utc), timer=lambda: 0.0,
            dieharder=lambda arguments: "", progress=lambda *step: steps.append(step))
    total = steps_in_all()
    assert {t for _, _, t in steps} == {total}
    assert [d for _, d, _ in steps] == sorted(d for _, d, _ in steps)  # never backwards
    assert steps[0][0].startswith("drawing 450 games") and steps[-1] == ("done", total, total)
    assert any(stage.startswith("NIST SP 800-22: ") for stage, _, _ in steps)
    assert any(stage.startswith("dieharder: ") for stage, _, _ in steps)
    outcome = CliRunner().invoke(main, ["rng", "certify", "--draws", "40500", "--out", str(home / "cli"),
                                        "--alpha", SUITE_ALPHA])
    assert f"rng certify: [{total}/{total}] done" in outcome.stderr
    assert "rng certify:" not in outcome.stdout and "verdict:" in outcome.stdout
