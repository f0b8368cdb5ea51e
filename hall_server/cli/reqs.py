"""``bingo reqs``: every requirement of REGULATION.md and the tests that prove it.

A test proves a requirement by carrying ``@pytest.mark.req("R82.5")`` (on the test or
its class) or by naming it (``test_R82_5_...``).  The requirements are the IDs written
in REGULATION.md, each exactly as written: ``R82.9-12`` is one requirement, proved by
a test that names ``R82.9-12``; nothing is expanded, so naming R82.10 proves nothing and
is an error, like any ID the regulation does not write (the command lists them and
exits with status 1).  A mark for a whole module (``pytestmark``) proves nothing: it
sits on every test of the file, including the ones that do not assert the rule, so
each test names what it proves itself (the command says how many files carry one).
The tests are read from their source, not run or imported, so the command works where
the test tools are not installed (after ``./run.sh``); a parametrised test counts once.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import click

from hall_server.cli.context import spec_from_environment
from protocol.errors import DomainError

REPOSITORY = Path(__file__).resolve().parents[2]
ID = re.compile(r"\bR\d+(?:\.\d+)?(?:\.?[a-z])?(?:-\d+)?\b")
#: An ID in a test's name: ``test_R82_5_...`` is R82.5, ``test_R87_a_...`` R87.a when the regulation has it.
NAMED = re.compile(r"(?<![A-Za-z0-9])R(\d+)(?:_(\d+))?(?:_?([a-z])(?=_|$))?")


class ReqsError(DomainError):
    pass


def written_ids(text: str) -> list[str]:
    """The requirement IDs written in ``text``, each as written (a range is one ID), in order."""
    return ID.findall(text)


def requirement_ids(spec: str) -> list[str]:
    """Every requirement ID the regulation text writes, once each, in order."""
    return list(dict.fromkeys(written_ids(spec)))


def named_ids(name: str, known: set[str]) -> list[str]:
    """The IDs a test's name carries (``test_R85_6_...``); a letter after the number counts
    only when the regulation has that ID (``test_R87_a_line``), else it is a word (``_a_``)."""
    out: list[str] = []
    for article, paragraph, letter in NAMED.findall(name):
        plain = f"R{article}.{paragraph}" if paragraph else f"R{article}"
        lettered = f"{plain}{letter}" if paragraph else f"{plain}.{letter}"
        out.append(lettered if letter and lettered in known else plain)
    return out


def article_parts(identifier: str, ids: Iterable[str]) -> list[str]:
    """The paragraphs of an article the regulation names whole (``R92`` in a heading, "everything
    in R77"): the IDs written under it (``R92.1``, ``R92.5e``, ``R92.11-12``).  Such an article
    is proved when every one of its paragraphs is; a paragraph ID has none."""
    if "." in identifier or "-" in identifier:
        return []
    return [other for other in ids if other.startswith(identifier + ".")]


def find_spec(explicit: Path | None, named: Path | None = None) -> Path:
    """``--spec``, else ``named`` (``$BINGO_SPEC``, read by the CLI's context), else beside the repository."""
    if explicit is not None:
        if not explicit.is_file():
            raise ReqsError(f"{explicit} is not a file; --spec names REGULATION.md")
        return explicit
    candidates = [named] if named is not None else []
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


@dataclass
class Proofs:
    """The requirement IDs each test names, read from the test files' source."""

    #: The IDs the regulation writes: a name's letter is read against them.
    known: set[str] = field(default_factory=set)
    proofs: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    tests: int = 0
    #: The test files whose ``pytestmark`` names requirements (ignored).
    module_wide: list[str] = field(default_factory=list)

    def add(self, nodeid: str, name: str, marks: list[str]) -> None:
        self.tests += 1
        ids = [identifier for text in marks for identifier in written_ids(text)]
        # A mark's text that holds no ID at all is kept as written, so it is listed as unknown.
        ids += [text for text in marks if not written_ids(text)]
        ids += named_ids(name, self.known)
        for identifier in dict.fromkeys(ids):
            self.proofs[identifier].append(nodeid)


def _req_marks(node: ast.expr, named: dict[str, list[str]]) -> list[str]:
    """The ID strings of the ``pytest.mark.req(...)`` marks an expression stands for.

    ``node`` is a decorator, a ``pytestmark`` value (one mark or a list) or a name
    bound earlier in the module to such a mark.
    """
    if isinstance(node, (ast.List, ast.Tuple)):
        return [text for element in node.elts for text in _req_marks(element, named)]
    if isinstance(node, ast.Name):
        return named.get(node.id, [])
    if isinstance(node, ast.Call):
        if ast.unparse(node.func).endswith("mark.req"):
            return [text for argument in node.args for text in _mark_arguments(argument, named)]
        return _req_marks(node.func, named)  # ``pytest.mark.req(...)(StateMachine.TestCase)``
    return []


def _mark_arguments(argument: ast.expr, named: dict[str, list[str]]) -> list[str]:
    """The ID strings one argument of ``mark.req`` gives: a string, or ``*NAME`` for a
    module-level tuple of strings; anything else is kept as its source, which is no ID and
    so is listed as an error rather than silently proving nothing."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return [argument.value]
    if isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name):
        if argument.value.id in named:
            return named[argument.value.id]
    return [ast.unparse(argument)]


def _strings(node: ast.expr) -> list[str]:
    """The strings of a tuple or list of string literals (``REQUIREMENTS = ("R88.1", ...)``
    given to ``req(*REQUIREMENTS)``), else nothing."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return []
    texts = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return texts if len(texts) == len(node.elts) else []


def _is_test(name: str) -> bool:
    return name.startswith("test")


def read_proofs(tests: Path, known: Iterable[str] = ()) -> Proofs:
    """Every test under ``tests`` with the IDs it proves, without importing or running it.

    A test is a ``test*`` function (at module level or in a ``Test*`` class), or a
    module-level ``Test*``/``test*`` name bound to a marked state machine's test case.
    Marks count on the test and its class, not on its module (``pytestmark``, noted in
    :attr:`Proofs.module_wide`); a parametrised test counts once.  Reading the source
    keeps the command working where the test tools are not installed.
    """
    found = Proofs(known=set(known))
    for path in sorted(tests.rglob("test_*.py")):
        try:
            module = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError) as error:
            raise ReqsError(f"{path}: cannot be read as Python ({error})") from None
        where = path.relative_to(tests.parent).as_posix()
        named: dict[str, list[str]] = {}
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                marks = _req_marks(node.value, named)
                if target == "pytestmark":
                    if marks:
                        found.module_wide.append(where)
                elif _is_test(target) or target.startswith("Test"):
                    found.add(f"{where}::{target}", target, marks)
                else:
                    named[target] = marks or _strings(node.value)
        for node in module.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test(node.name):
                marks = [m for d in node.decorator_list for m in _req_marks(d, named)]
                found.add(f"{where}::{node.name}", node.name, marks)
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                class_marks = [m for d in node.decorator_list for m in _req_marks(d, named)]
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test(item.name):
                        marks = [m for d in item.decorator_list for m in _req_marks(d, named)]
                        found.add(
                            f"{where}::{node.name}::{item.name}", item.name, class_marks + marks
                        )
    return found


@click.command()
@click.option("--spec", type=click.Path(dir_okay=False, path_type=Path), default=None, help="REGULATION.md to read.")
@click.option("--tests", type=click.Path(file_okay=False, path_type=Path), default=REPOSITORY / "tests", show_default=True)
@click.option("--missing", is_flag=True, help="List only the requirements with no test.")
@click.option("-v", "--verbose", is_flag=True, help="List every proving test.")
def reqs(spec: Path | None, tests: Path, missing: bool, verbose: bool) -> None:
    """List every requirement ID of REGULATION.md with the tests that prove it."""
    ids = requirement_ids(find_spec(spec, spec_from_environment()).read_text(encoding="utf-8"))
    if not tests.is_dir():
        raise ReqsError(f"{tests} is not a folder; --tests names the test suite")
    collector = read_proofs(tests, ids)
    untested = 0
    for identifier in ids:
        proofs = collector.proofs.get(identifier, [])
        parts = article_parts(identifier, ids)
        if not proofs and parts and all(collector.proofs.get(part) for part in parts):
            if not missing:
                click.echo(f"{identifier:<9} proved by its {len(parts)} parts ({', '.join(parts[:3])}"
                           f"{' ...' if len(parts) > 3 else ''})")
            continue
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
    if collector.module_wide:
        click.echo(
            f"{len(collector.module_wide)} test file(s) name requirements for the whole module, "
            f"which proves nothing: {', '.join(collector.module_wide)}"
        )
    click.echo(
        f"{len(ids)} requirement IDs, {len(ids) - untested} with tests, {untested} with no test "
        f"({collector.tests} tests read)"
    )
    unknown = sorted(set(collector.proofs) - set(ids))
    for identifier in unknown:
        click.echo(f"error: {identifier} is not a requirement of the regulation, named by "
                   f"{', '.join(collector.proofs[identifier])}", err=True)
    if unknown:
        raise SystemExit(1)
