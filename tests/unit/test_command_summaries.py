"""Every command the console lists under "All commands" is summed up in the reader's language:
each summary a hall module registers is an ``N_("...")`` template of the console's catalog,
translated in each language (docs/languages.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hall_server import i18n

REPO = Path(__file__).resolve().parents[2]
FIELDS = ["name", "handler", "params", "summary"]


def summaries() -> list[tuple[str, int, ast.expr]]:
    """Where each ``CommandSpec`` of the hall's packages gets its summary: (file, line, the expression)."""
    found = []
    for path in sorted((REPO / "hall_server").rglob("*.py")):
        where = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text(), where)):
            if (isinstance(node, ast.For) and isinstance(node.target, ast.Tuple) and isinstance(node.iter, ast.Tuple)
                    and [getattr(e, "id", None) for e in node.target.elts] == FIELDS):
                found += [(where, row.lineno, row.elts[3]) for row in node.iter.elts if isinstance(row, ast.Tuple)]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CommandSpec" and len(node.args) == 4:
                if not isinstance(node.args[3], ast.Name):  # the loops' CommandSpec(name, handler, params, summary)
                    found.append((where, node.lineno, node.args[3]))
    return found


def template(expression: ast.expr) -> str | None:
    """The text of ``N_("...")``; None for any other expression."""
    if (isinstance(expression, ast.Call) and getattr(expression.func, "id", None) == "N_"
            and len(expression.args) == 1 and isinstance(expression.args[0], ast.Constant)
            and isinstance(expression.args[0].value, str)):
        return expression.args[0].value
    return None


SUMMARIES = summaries()


def test_every_command_summary_is_a_template_of_the_console_catalog() -> None:
    assert len(SUMMARIES) > 80, "the hall registers more commands than were found: the search is broken"
    plain = [f"{where}:{line}" for where, line, expression in SUMMARIES if template(expression) is None]
    assert not plain, "summaries the console cannot translate (write them N_(\"...\")): " + ", ".join(plain)


@pytest.mark.parametrize("language", ["ca", "es", "fr"])
def test_every_command_summary_is_translated(language: str) -> None:
    catalog = i18n.domain_catalog(language, "console")
    texts = {template(expression) for _, _, expression in SUMMARIES} - {None}
    untranslated = sorted(text for text in texts if text is not None and not (
        (message := catalog.get(text)) is not None and message.string and not message.fuzzy))
    assert not untranslated, f"{language}: " + "; ".join(untranslated)
