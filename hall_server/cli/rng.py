"""``bingo rng``: certification of the random ball generator (R92.10).

``bingo rng certify --draws N`` draws at least N balls, as whole games, from the
production generator through the hall's own path, runs the ball-level and bit-level
tests (``docs/rng.md``) and writes a signed report.  Exit status: 0 when every test
passes, 1 when one fails, 2 when the request cannot be carried out (bad input, a
missing tool or key).
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import click

from hall_server.cli.context import Hall
from protocol.errors import DomainError

if TYPE_CHECKING:
    from protocol.balls import BallSource

#: The ball source certified; ``None``: the one the hall draws with, ``RandomBallGenerator``,
#: imported when a certification runs (the tests put a biased one here).
GENERATOR: Callable[[Sequence[int]], BallSource] | None = None


class BadRequest(click.ClickException):
    """A certification that could not be run: exit status 2, not the 1 of a failed test."""

    exit_code = 2


class ProgressShown:
    """Where a certification stands, on stderr (its results go to stdout): a bar on a terminal,
    one line a step elsewhere (a log, CI)."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.done = 0

    def __enter__(self) -> "ProgressShown":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.render_finish()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            click.echo(f"rng certify: [{done:>3}/{total}] {stage}", err=True)
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="rng certify", file=sys.stderr, show_pos=True,
                                         item_show_func=lambda item: item)
        self.bar.update(done - self.done, stage)
        self.done = done


@click.group()
def rng() -> None:
    """The random ball generator (R92.10): certification runs and their signed reports."""


@rng.command("certify")
@click.option("--draws", type=int, required=True, metavar="N",
              help="Balls to draw, as whole games of 90 (at least 40,500).")
@click.option("--out", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the report, its signatures, the draws and the bits (default var/rng/<time>).")
@click.option("--alpha", type=float, default=0.01, show_default=True,
              help="Family-wise significance level (Bonferroni over the tests).")
@click.option("--key", "key_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The Ed25519 key that signs the report (default: the hall's journal key).")
@click.make_pass_decorator(Hall, ensure=True)
def certify_command(hall: Hall, draws: int, folder: Path | None, alpha: float, key_file: Path | None) -> None:
    """Draw N balls from the production generator, test them and write a signed report."""
    now = datetime.now(timezone.utc)
    if folder is None:
        folder = hall.home / "rng" / now.strftime("%Y%m%dT%H%M%SZ")
    try:
        # Imported here: the statistics need scipy and nistrng (the rng extra), which the
        # other commands do without.
        from hall_server.rng_certify import certify, write_report
    except ImportError as error:
        raise BadRequest(f"{error}; install the rng extra: pip install 'bingo-hall[rng]'") from None
    from protocol.balls import RandomBallGenerator
    from server_kit.keys import load_journal_key

    try:
        key = load_journal_key(key_file or hall.journal_key_path)
        with ProgressShown() as progress:
            certification = certify(draws, folder, factory=GENERATOR or RandomBallGenerator, alpha=alpha,
                                    clock=lambda: datetime.now(timezone.utc), timer=time.monotonic,
                                    progress=progress)
        written = write_report(certification, folder, key)
    except (DomainError, OSError) as error:
        raise BadRequest(str(error)) from None
    sample, verdict = certification.sample, certification.verdict
    click.echo(f"{certification.generator['name']} (source SHA-256 {certification.generator['source_sha256'][:16]}...)")
    click.echo(f"sample: {sample['balls']:,} balls in {sample['games']:,} games, {sample['bits']:,} bits; "
               f"{certification.timing_s['total']:.1f} s")
    for result in certification.results:
        mark = "pass" if result.p_value >= verdict.threshold else "FAIL"
        click.echo(f"  {mark}  {result.battery:<15} {result.name:<42} p = {result.p_value:.4g}")
    for skipped in certification.not_run:
        click.echo(f"  --    {skipped.battery:<15} {skipped.name:<42} not run: {skipped.reason}")
    click.echo(f"verdict: {'PASS' if verdict.passed else 'FAIL'} ({verdict.tests} tests, alpha {verdict.alpha}, "
               f"each at p >= {verdict.threshold:.3g})")
    for path in written:
        click.echo(f"  {path} (signature {path.name}.sig)")
    if not verdict.passed:
        raise SystemExit(1)
