"""``bingo reqs``: every requirement of REGULATION.md and the tests that prove it.

A test proves a requirement by carrying ``@pytest.mark.req("R82.5")`` (on the test,
its class or its module) or by naming it (``test_R82_5_...``).  A range such as
``R82.9-12`` stands for R82.9, R82.10, R82.11 and R82.12, in the regulation and in
markers alike.  The tests are collected by pytest itself, so parametrised tests and
class or module markers count exactly as pytest sees them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable

import click

from protocol.errors import DomainError

REPOSITORY = Path(__file__).resolve().parents[2]
ID = re.compile(r"\bR(\d+)((?:\.\d+)?)((?:\.?[a-z])?)(?:-(\d+))?\b")
NAMED = re.compile(r"R(\d+)(?:_(\d+))?")


class ReqsError(DomainError):
    pass


def expand(text: str) -> list[str]:
    """The requirement IDs written in ``text``, ranges expanded, in order of appearance."""
    out: list[str] = []
    for article, paragraph, letter, upto in ID.findall(text):
        if upto and paragraph and not letter:
            first = int(paragraph[1:])
            out.extend(f"R{article}.{n}" for n in range(first, int(upto) + 1))
        else:
            out.append(f"R{article}{paragraph}{letter}")
    return out


def requirement_ids(spec: str) -> list[str]:
    """Every requirement ID the regulation text mentions, once each, in order."""
    seen: dict[str, None] = {}
    for identifier in expand(spec):
        seen.setdefault(identifier)
    return list(seen)


def find_spec(explicit: Path | None) -> Path:
    if explicit is not None:
        if not explicit.is_file():
            raise ReqsError(f"{explicit} is not a file; --spec names REGULATION.md")
        return explicit
    candidates: list[Path] = []
    if os.environ.get("BINGO_SPEC"):
        candidates.append(Path(os.environ["BINGO_SPEC"]))
    candidates += [
        REPOSITORY.parent / "shared" / "spec" / "REGULATION.md",
        REPOSITORY / "spec" / "REGULATION.md",
    ]
    for path in candidates:
        if path.is_file():
            return path
    raise ReqsError(
        "REGULATION.md not found; pass --spec PATH (it is looked for in ../shared/spec/ "
        "beside the repository and in $BINGO_SPEC)"
    )


class _Collector:
    """pytest plugin that records the requirement IDs of every collected test."""

    def __init__(self) -> None:
        self.proofs: dict[str, list[str]] = defaultdict(list)
        self.tests = 0

    def pytest_collection_modifyitems(self, items: Iterable) -> None:  # noqa: N802 (pytest hook)
        for item in items:
            self.tests += 1
            ids: list[str] = []
            for marker in item.iter_markers("req"):
                for arg in marker.args:
                    ids.extend(expand(str(arg)))
            for article, paragraph in NAMED.findall(item.name):
                ids.append(f"R{article}.{paragraph}" if paragraph else f"R{article}")
            for identifier in dict.fromkeys(ids):
                self.proofs[identifier].append(item.nodeid)


def collect(tests: Path) -> _Collector:
    import pytest

    collector = _Collector()
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = pytest.main(
            # Collection only: no reactor plugin, which cannot nest inside a running pytest.
            [
                "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:twisted",
                "--rootdir", str(tests.parent), str(tests),
            ],
            plugins=[collector],
        )
    if status not in (0, 5):
        raise ReqsError(f"pytest could not collect the tests:\n{output.getvalue()[-2000:]}")
    return collector


@click.command()
@click.option("--spec", type=click.Path(dir_okay=False, path_type=Path), default=None, help="REGULATION.md to read.")
@click.option("--tests", type=click.Path(file_okay=False, path_type=Path), default=REPOSITORY / "tests", show_default=True)
@click.option("--missing", is_flag=True, help="List only the requirements with no test.")
@click.option("-v", "--verbose", is_flag=True, help="List every proving test.")
def reqs(spec: Path | None, tests: Path, missing: bool, verbose: bool) -> None:
    """List every requirement ID of REGULATION.md with the tests that prove it."""
    ids = requirement_ids(find_spec(spec).read_text(encoding="utf-8"))
    collector = collect(tests)
    untested = 0
    for identifier in ids:
        proofs = collector.proofs.get(identifier, [])
        untested += not proofs
        if missing and proofs:
            continue
        if not proofs:
            click.echo(f"{identifier:<9} no test")
        elif verbose:
            click.echo(f"{identifier:<9} {len(proofs)} test(s)")
            for nodeid in proofs:
                click.echo(f"            {nodeid}")
        else:
            shown = ", ".join(p.split("::", 1)[-1] for p in proofs[:2])
            more = f" and {len(proofs) - 2} more" if len(proofs) > 2 else ""
            click.echo(f"{identifier:<9} {len(proofs)} test(s): {shown}{more}")
    unknown = sorted(set(collector.proofs) - set(ids))
    if unknown:
        click.echo(f"marked but not in the regulation: {', '.join(unknown)}")
    click.echo(
        f"{len(ids)} requirement IDs, {len(ids) - untested} with tests, {untested} with no test "
        f"({collector.tests} tests collected)"
    )
