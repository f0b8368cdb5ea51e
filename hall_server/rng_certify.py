"""Certification of the random ball generator (R92.10): a run, its tests and a signed report.

The run draws from the production generator through the hall's own path: the games
module is given a ball source factory (``RandomBallGenerator`` unless a blower draws)
and calls it with the balls already drawn, ``()`` for a new game, then ``draw()`` 90
times to draw a game to the end.  A run of ``--draws N`` does exactly that for
``ceil(N / 90)`` games, so the sample is whole games and holds at least N balls.

The tests (:mod:`protocol.rng_stats` says how each is referred):

* ball level: first-ball frequencies, ball by position, consecutive pairs, serial
  correlation of the choices;
* bit level, on the 86 exactly uniform bits each game's choices give
  (:func:`protocol.rng_stats.choice_bits`): the NIST SP 800-22 tests of the PyPI
  package ``nistrng`` that are sound (:data:`NIST_TESTS`; the others are listed with
  the reason they are left out), and Debian's ``dieharder`` on the same bits as a raw
  file (:data:`DIEHARDER_TESTS`), each test with as many p-samples as the file holds
  without dieharder rewinding it: a test the file cannot feed ten times is reported
  as not run, never run on reused bytes.

Decision: family-wise significance ``alpha`` (default 0.01, 99% confidence), Bonferroni
over every test run, and within a test that gives several p-values, Bonferroni over
those (:func:`protocol.rng_stats.decide`).

The report (JSON and PDF, in the manner of a GLI-19 / 25 CFR 547.14 RNG report:
generator identification, sample, method, results, verdict) is signed like the
minutes, with the hall's Ed25519 journal key (``<file>.sig``, raw 64 bytes), beside the
public key, the draws (one byte per ball, game after game) and the bits dieharder read.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import platform
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import asdict, dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable, Sequence
from xml.sax.saxutils import escape

import numpy as np
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol import balls as balls_module
from protocol.balls import BallSource, RandomBallGenerator
from protocol.cards import BALLS
from protocol.errors import DomainError
from protocol.rng_stats import BITS_PER_GAME, MIN_GAMES, Outcome, Verdict, ball_tests, choice_bits, decide
from server_kit.keys import public_pem
from server_kit.reports.signing import SIGNATURE_SUFFIX, sign

DEFAULT_ALPHA = 0.01
MIN_DRAWS = MIN_GAMES * BALLS
MAX_DRAWS = 10**9
REPORT_STEM = "rng-certification"
DRAWS_FILE = "rng-draws.bin"
BITS_FILE = "rng-bits.bin"
PUBLIC_KEY_FILE = "hall-journal.pub.pem"

#: The nistrng tests run, with the SP 800-22 rev. 1a section each implements.
NIST_TESTS = {
    "monobit": "2.1 frequency (monobit)",
    "frequency_within_block": "2.2 frequency within a block",
    "runs": "2.3 runs",
    "longest_run_ones_in_a_block": "2.4 longest run of ones in a block",
    "binary_matrix_rank": "2.5 binary matrix rank",
    "dft": "2.6 discrete Fourier transform (spectral)",
    "serial": "2.11 serial",
    "approximate_entropy": "2.12 approximate entropy",
    "cumulative sums": "2.13 cumulative sums",
}
#: The SP 800-22 tests left out, and why: each was run on kernel CSPRNG bytes and gave
#: p-values no fair source gives, so its verdict would say nothing about the generator.
NIST_LEFT_OUT = {
    "2.7 non-overlapping template matching": "nistrng picks one template at random and gave p = 1.0 on every "
                                             "sequence of kernel CSPRNG bits tried",
    "2.8 overlapping template matching": "nistrng gave p = 0 on every sequence of 2 x 10^6 kernel CSPRNG bits "
                                         "tried (it needs 1,028,016 bits)",
    "2.9 Maurer's universal statistical": "nistrng gave p > 0.99 on every sequence of 10^6 kernel CSPRNG bits tried",
    "2.10 linear complexity": "nistrng gave p = 0 on kernel CSPRNG bits, in 40 s per 10^6 bits",
    "2.14 random excursions": "nistrng gave p = 0 on every sequence of kernel CSPRNG bits tried",
    "2.15 random excursions variant": "nistrng reports the statistic |xi(x) - J| / sqrt(2J(4|x| - 2)) where the "
                                      "p-value (its erfc) belongs, and skips the states never visited",
}


@dataclass(frozen=True)
class DieharderTest:
    number: int
    name: str
    tsamples: int
    #: Bytes one p-sample reads at ``tsamples``, measured with file_input_raw, with a margin.
    bytes_per_psample: int


#: The dieharder tests run: each gave p-values of a fair source on kernel CSPRNG bytes at its
#: ``tsamples``.  Left out: diehard_count_1s_str and _byt (-d 8, 9), calibrated for their
#: default 256,000 samples, gave p = 0 there at 10,000; diehard_bitstream, diehard_squeeze
#: and the dab_* tests need megabytes to gigabytes for one p-sample.
DIEHARDER_TESTS = (
    DieharderTest(100, "sts_monobit", 10_000, 90_000),
    DieharderTest(101, "sts_runs", 10_000, 90_000),
    DieharderTest(102, "sts_serial", 10_000, 90_000),
    DieharderTest(15, "diehard_runs", 10_000, 90_000),
    DieharderTest(1, "diehard_operm5", 10_000, 90_000),
    DieharderTest(11, "diehard_2dsphere", 8_000, 110_000),
    DieharderTest(12, "diehard_3dsphere", 4_000, 75_000),
    DieharderTest(0, "diehard_birthdays", 100, 170_000),
    DieharderTest(2, "diehard_rank_32x32", 1_000, 150_000),
    DieharderTest(203, "rgb_lagged_sum", 10_000, 90_000),
    DieharderTest(204, "rgb_kstest_test", 10_000, 90_000),
)
#: The fewest p-samples a dieharder test's final Kolmogorov-Smirnov p-value is taken over.
MIN_PSAMPLES = 10
MAX_PSAMPLES = 100

_DIEHARDER_LINE = re.compile(r"^\s*(\w+)\|\s*(\d+)\|\s*(\d+)\|\s*(\d+)\|\s*([0-9.eE+-]+)\|\s*(\w+)\s*$")
_REWOUND = re.compile(r"rewound (\d+) times")

BallSourceFactory = Callable[[Sequence[int]], BallSource]
Dieharder = Callable[[list[str]], str]


class CertificationError(DomainError):
    """A certification that cannot be run as asked: the request or the tools at fault."""


@dataclass(frozen=True)
class NotRun:
    battery: str
    name: str
    reason: str


@dataclass
class Certification:
    """What a run found: everything the report shows."""

    generator: dict[str, str]
    sample: dict[str, Any]
    method: dict[str, Any]
    results: list[Outcome]
    not_run: list[NotRun]
    verdict: Verdict
    timing_s: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "bingo-rng-certification/1",
            "generator": self.generator,
            "sample": self.sample,
            "method": self.method,
            "results": [
                {"battery": r.battery, "test": r.name, "statistic": r.statistic, "p_values": list(r.p_values),
                 "p_value": r.p_value, "reference": r.reference, "detail": r.detail,
                 "passed": r.p_value >= self.verdict.threshold}
                for r in self.results
            ],
            "not_run": [asdict(n) for n in self.not_run],
            "verdict": {
                "passed": self.verdict.passed, "alpha": self.verdict.alpha, "tests": self.verdict.tests,
                "threshold": self.verdict.threshold, "failed": list(self.verdict.failed),
            },
            "timing_s": self.timing_s,
        }


# --- The sample ----------------------------------------------------------------------------


def games_for(draws: int) -> int:
    """Whole games holding at least ``draws`` balls; :class:`CertificationError` out of range."""
    if isinstance(draws, bool) or not isinstance(draws, int):
        raise CertificationError(f"--draws is a whole number of balls, not {draws!r}")
    if not MIN_DRAWS <= draws <= MAX_DRAWS:
        raise CertificationError(
            f"--draws must be {MIN_DRAWS:,} to {MAX_DRAWS:,} balls, not {draws:,}: below {MIN_DRAWS:,} "
            f"({MIN_GAMES} games) a cell of the position and pair tables expects fewer than 5 draws"
        )
    return math.ceil(draws / BALLS)


#: Told of each step of a certification: ``(what is being done, steps done, steps in all)``.
Progress = Callable[[str, int, int], None]
#: The draw counts as this many steps of the progress (told every hundredth of the games).
DRAW_STEPS = 100


def no_progress(stage: str, done: int, total: int) -> None:
    """A certification nobody watches."""


def steps_in_all() -> int:
    """The steps :func:`certify` tells: the draw's, the ball tests, each NIST and each dieharder test."""
    return DRAW_STEPS + 1 + len(NIST_TESTS) + len(DIEHARDER_TESTS)


def draw_sample(factory: BallSourceFactory, games: int, progress: Progress = no_progress) -> np.ndarray:
    """``games`` whole games from ``factory``, each a new source drawn 90 times: ``(games, 90)`` uint8."""
    sample = np.empty((games, BALLS), dtype=np.uint8)
    told = 0
    for game in range(games):
        source = factory(())
        sample[game] = [source.draw() for _ in range(BALLS)]
        step = (game + 1) * DRAW_STEPS // games
        if step > told:
            told = step
            progress(f"drawing {games:,} games", step, steps_in_all())
    return sample


def identify(factory: BallSourceFactory) -> dict[str, str]:
    """The generator as the report names it: code, its source's hash, the entropy beneath it."""
    module = sys.modules.get(getattr(factory, "__module__", ""), balls_module)
    source = Path(getattr(module, "__file__", "") or balls_module.__file__ or "")
    digest = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else "unknown"
    try:
        software = version("bingo-hall")
    except PackageNotFoundError:  # run from a source tree: the generator is named by its file's hash
        software = "source tree"
    described = {
        "algorithm": "draw without replacement: each ball uniform among those left, "
                     "index = secrets.randbelow(balls left)",
        "entropy": "Python secrets (SystemRandom, rejection sampling) over os.urandom: the kernel CSPRNG "
                   "(getrandom(2))",
        "seeded": "no: the generator keeps no seed or random state",
    } if factory is RandomBallGenerator else {"algorithm": "not the production generator: see its source"}
    return {
        "name": f"{factory.__module__}.{getattr(factory, '__qualname__', repr(factory))}",
        "source_file": source.name,
        "source_sha256": digest,
        "software": f"bingo-hall {software}",
        **described,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
    }


# --- The bit batteries ---------------------------------------------------------------------


def nist_tests(bits: np.ndarray, progress: Progress = no_progress) -> tuple[list[Outcome], list[NotRun]]:
    """The :data:`NIST_TESTS` eligible at ``len(bits)``, each given its own copy of the bits."""
    try:
        from nistrng import SP800_22R1A_BATTERY
    except ImportError:
        raise CertificationError("the NIST tests need the Python package nistrng (pip install nistrng)") from None
    sequence = bits.astype(np.int64)
    results, not_run = [], []
    for number, (key, title) in enumerate(NIST_TESTS.items(), 1):
        progress(f"NIST SP 800-22: {title}", DRAW_STEPS + number, steps_in_all())
        test = SP800_22R1A_BATTERY[key]
        # nistrng's tests rewrite their input in place (0 -> -1): each gets a fresh copy.
        if not test.is_eligible(sequence.copy()):
            not_run.append(NotRun("NIST SP 800-22", title, f"nistrng needs more than {bits.size:,} bits"))
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            outcome, _ = test.run(sequence.copy())
        p_values = tuple(float(p) for p in np.atleast_1d(np.asarray(outcome._score_list, dtype=float)))
        results.append(Outcome(title, "NIST SP 800-22", None, p_values,
                                  f"nistrng {type(test).__name__}", {"bits": int(bits.size)}))
    for title, reason in NIST_LEFT_OUT.items():
        not_run.append(NotRun("NIST SP 800-22", title, f"left out: {reason}"))
    return results, not_run


def run_dieharder(arguments: list[str]) -> str:
    """dieharder's output (stdout and stderr) for ``arguments``."""
    executable = shutil.which("dieharder")
    if executable is None:
        raise CertificationError("dieharder is not installed (Debian package dieharder; scripts/system-deps.sh)")
    done = subprocess.run([executable, *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    return done.stdout


def dieharder_tests(
    path: Path, size: int, run: Dieharder = run_dieharder, tests: Sequence[DieharderTest] = DIEHARDER_TESTS,
    progress: Progress = no_progress,
) -> tuple[list[Outcome], list[NotRun]]:
    """Each of ``tests`` on the raw file ``path`` of ``size`` bytes, never rewound."""
    results, not_run = [], []
    for number, test in enumerate(tests, 1):
        progress(f"dieharder: {test.name}", DRAW_STEPS + 1 + len(NIST_TESTS) + number, steps_in_all())
        psamples = min(MAX_PSAMPLES, size // test.bytes_per_psample)
        while psamples >= MIN_PSAMPLES:
            output = run(["-g", "201", "-f", str(path), "-d", str(test.number), "-t", str(test.tsamples),
                          "-p", str(psamples)])
            rewound = _REWOUND.search(output)
            if rewound is None:
                break
            psamples //= 2  # the file ran out: fewer p-samples, never reused bytes
        else:
            needed = MIN_PSAMPLES * test.bytes_per_psample
            not_run.append(NotRun("dieharder", test.name,
                                  f"needs about {needed:,} bytes for {MIN_PSAMPLES} p-samples of "
                                  f"{test.tsamples:,}; the sample gives {size:,}"))
            continue
        lines = [m for m in map(_DIEHARDER_LINE.match, output.splitlines()) if m is not None]
        if not lines:
            raise CertificationError(f"dieharder gave no result for {test.name}: {output.strip()[-300:]}")
        p_values = tuple(float(m[5]) for m in lines)
        results.append(Outcome(
            test.name, "dieharder", None, p_values,
            f"dieharder -d {test.number}: Kolmogorov-Smirnov over {psamples} p-samples of {test.tsamples:,}",
            {"psamples": psamples, "tsamples": test.tsamples, "assessments": [m[6] for m in lines]},
        ))
    return results, not_run


# --- The run -------------------------------------------------------------------------------


def certify(
    draws: int,
    out: Path,
    *,
    factory: BallSourceFactory = RandomBallGenerator,
    alpha: float = DEFAULT_ALPHA,
    clock: Callable[[], datetime],
    timer: Callable[[], float],
    dieharder: Dieharder = run_dieharder,
    progress: Progress = no_progress,
) -> Certification:
    """Draw the sample, run every test and decide; writes the draws and the bits into ``out``.

    ``progress`` is told of each step as it starts (the whole run takes minutes)."""
    games = games_for(draws)
    if not 0 < alpha <= 0.5:
        raise CertificationError(f"--alpha is a significance level above 0 and at most 0.5, not {alpha}")
    out.mkdir(parents=True, exist_ok=True)
    started, t0 = clock(), timer()
    sample = draw_sample(factory, games, progress)
    t_draw = timer()
    progress("the ball tests", DRAW_STEPS + 1, steps_in_all())
    results = ball_tests(sample)
    bits = choice_bits(sample)
    t_balls = timer()
    nist, not_run = nist_tests(bits, progress)
    t_nist = timer()
    packed = np.packbits(bits).tobytes()
    (out / DRAWS_FILE).write_bytes(sample.tobytes())
    (out / BITS_FILE).write_bytes(packed)
    harder, harder_not_run = dieharder_tests(out / BITS_FILE, len(packed), dieharder, progress=progress)
    t_end = timer()
    progress("done", steps_in_all(), steps_in_all())
    results += nist + harder
    not_run += harder_not_run
    verdict = decide(results, alpha)
    return Certification(
        generator=identify(factory),
        sample={
            "draws_requested": draws,
            "games": games,
            "balls": games * BALLS,
            "definition": f"a draw is one ball; the sample is ceil(draws / {BALLS}) whole games, each a new "
                          f"generator drawn to its {BALLS}th ball, as the hall draws a game",
            "bits": int(bits.size),
            "bits_definition": f"{BITS_PER_GAME} bits per game: of each draw with m balls left, the low v bits "
                               "of its rank among them (ascending), 2^v the largest power of two dividing m; "
                               "exactly uniform and independent for a fair generator",
            "draws_file": DRAWS_FILE,
            "draws_sha256": hashlib.sha256(sample.tobytes()).hexdigest(),
            "bits_file": BITS_FILE,
            "bits_sha256": hashlib.sha256(packed).hexdigest(),
            "started": started.isoformat(timespec="seconds"),
            "finished": clock().isoformat(timespec="seconds"),
        },
        method={
            "alpha": alpha,
            "rule": f"family-wise significance {alpha} ({(1 - alpha):.0%} confidence), Bonferroni over the "
                    "tests run: a test passes when its p-value is at least alpha / tests; a test giving several "
                    "p-values takes the smallest times their number",
            "tail": "upper tail for the chi-square tests, two-sided for the serial correlation, NIST's p-values as "
                    "the standard defines them; dieharder's final p-values fail when small only (over few "
                    "p-samples its Kolmogorov-Smirnov approximation leans towards 1; its own assessment is "
                    "kept in the JSON)",
        },
        results=results,
        not_run=not_run,
        verdict=verdict,
        timing_s={"draw": round(t_draw - t0, 3), "ball_tests": round(t_balls - t_draw, 3),
                  "nist": round(t_nist - t_balls, 3), "dieharder": round(t_end - t_nist, 3),
                  "total": round(t_end - t0, 3)},
    )


# --- The report ----------------------------------------------------------------------------


def report_json(certification: Certification) -> bytes:
    return (json.dumps(certification.to_json(), indent=2, sort_keys=True) + "\n").encode()


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 1e-4 else f"{value:.2e}"


def report_pdf(certification: Certification, signer: str) -> bytes:
    """The report as a PDF (reportlab, A4): identification, sample, method, results, verdict."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from server_kit.reports import fonts
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = fonts.style_sheet()
    small = styles["BodyText"].clone("small", fontSize=7.5, leading=9)
    body = styles["BodyText"].clone("body", fontSize=8.5, leading=11)

    def grid(rows: list[list[str]], widths: list[float], header: bool = True) -> Table:
        table = Table([[Paragraph(escape(str(c)), small) for c in row] for row in rows], colWidths=widths,
                      repeatRows=1 if header else 0, hAlign="LEFT")
        style = [("GRID", (0, 0), (-1, -1), 0.25, colors.grey), ("VALIGN", (0, 0), (-1, -1), "TOP")]
        if header:
            style.append(("BACKGROUND", (0, 0), (-1, 0), colors.whitesmoke))
        table.setStyle(TableStyle(style))
        return table

    data = certification.to_json()
    verdict = data["verdict"]
    story: list[Any] = [
        Paragraph("Random ball generator certification", styles["Title"]),
        Paragraph(f"Verdict: <b>{'PASS' if verdict['passed'] else 'FAIL'}</b> - {verdict['tests']} tests at "
                  f"family-wise significance {verdict['alpha']} (each at p &ge; {verdict['threshold']:.3g})"
                  + ("" if verdict["passed"] else f"; failed: {escape(', '.join(verdict['failed']))}"), body),
        Spacer(1, 3 * mm),
        Paragraph("1. Generator identification", styles["Heading3"]),
        grid([[k.replace("_", " "), v] for k, v in data["generator"].items()], [35 * mm, 145 * mm], header=False),
        Paragraph("2. Sample", styles["Heading3"]),
        grid([[k.replace("_", " "), f"{v:,}" if isinstance(v, int) else str(v)] for k, v in data["sample"].items()],
             [35 * mm, 145 * mm], header=False),
        Paragraph("3. Method", styles["Heading3"]),
        grid([[k, str(v)] for k, v in data["method"].items()], [35 * mm, 145 * mm], header=False),
        Paragraph("4. Results", styles["Heading3"]),
        grid([["battery", "test", "statistic", "p-values", "p", "result", "referred to"]]
             + [[r["battery"], r["test"], "-" if r["statistic"] is None else f"{r['statistic']:.4g}",
                 str(len(r["p_values"])), _p(r["p_value"]), "pass" if r["passed"] else "FAIL", r["reference"]]
                for r in data["results"]],
             [22 * mm, 42 * mm, 16 * mm, 12 * mm, 15 * mm, 11 * mm, 62 * mm]),
        Paragraph("5. Tests not run", styles["Heading3"]),
        grid([["battery", "test", "why"]] + [[n["battery"], n["name"], n["reason"]] for n in data["not_run"]],
             [25 * mm, 45 * mm, 110 * mm]),
        Paragraph("6. Signature", styles["Heading3"]),
        Paragraph(escape(signer), body),
    ]
    out = io.BytesIO()
    document = SimpleDocTemplate(out, pagesize=A4, leftMargin=15 * mm, rightMargin=15 * mm, topMargin=15 * mm,
                                 bottomMargin=15 * mm, title="Random ball generator certification",
                                 subject=f"rng-certification {data['sample']['draws_sha256']}", author="",
                                 creator="bingo rng certify", pageCompression=0, invariant=1)
    document.build(story)
    return out.getvalue()


def key_fingerprint(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def write_report(certification: Certification, out: Path, key: Ed25519PrivateKey) -> list[Path]:
    """The JSON and the PDF, each with its detached signature, and the public key; the paths written."""
    signer = (f"Each file of this report is signed with the hall's Ed25519 journal key (SHA-256 of the public "
              f"key {key_fingerprint(key)}): the signature is the file's name with {SIGNATURE_SUFFIX}, checked "
              f"with openssl pkeyutl -verify -pubin -inkey {PUBLIC_KEY_FILE} -rawin -in FILE -sigfile "
              f"FILE{SIGNATURE_SUFFIX}")
    written = []
    for name, data in ((f"{REPORT_STEM}.json", report_json(certification)),
                       (f"{REPORT_STEM}.pdf", report_pdf(certification, signer))):
        path = out / name
        path.write_bytes(data)
        path.with_name(name + SIGNATURE_SUFFIX).write_bytes(sign(key, data))
        written.append(path)
    (out / PUBLIC_KEY_FILE).write_bytes(public_pem(key))
    return written
