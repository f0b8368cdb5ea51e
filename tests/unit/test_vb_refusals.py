"""The video bingo machine's refusals in the player's language: every reason the hall gives a
refusal (``VbRefused(..., reason=...)``, journaled in English) has its sentence in the machine
screen's table (``vb.js``, ``REFUSALS``), which reads only the params the hall sends with it;
and the table holds no sentence for a reason the hall never gives."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "hall_server" / "terminal_gateway" / "static" / "vb.js"


@dataclass(frozen=True)
class Given:
    """A refusal the hall gives with a reason: where, the reason, the params it sends (None: not known here)."""

    where: str
    reason: str
    params: frozenset[str] | None


def _reasons(node: ast.expr | None) -> list[str]:
    """The reasons an expression can be: a constant, or the constants of ``a or "closed"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value else []
    if isinstance(node, ast.BoolOp):
        return [r for value in node.values for r in _reasons(value)]
    return []


@functools.cache
def given_reasons() -> tuple[Given, ...]:
    """Every refusal of the hall server's sources given with a reason (read once)."""
    found = []
    for path in sorted((REPO / "hall_server").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "VbRefused"
                                               or getattr(node.func, "attr", None) == "VbRefused"):
                reason = next((k.value for k in node.keywords if k.arg == "reason"),
                              node.args[2] if len(node.args) > 2 else None)
                names = [k.arg for k in node.keywords if k.arg not in ("reason", "template_params")]
                params = None if any(n is None for n in names) else frozenset(n for n in names if n)
                found += [Given(where, r, params) for r in _reasons(reason)]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Refusal" and len(node.args) > 1:
                # A check's refusal (protocol.errors.Refusal) the machine is given as it is: responsible play.
                found += [Given(where, r, frozenset(k.arg for k in node.keywords if k.arg)) for r in _reasons(node.args[1])]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_text" and len(node.args) > 3:
                found += [Given(where, r, frozenset({"limit"})) for r in _reasons(node.args[3])]  # machines.py's texts
            elif isinstance(node, ast.Dict) and path.name == "machines.py":
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value == "reason":
                        found += [Given(where, r, frozenset()) for r in _reasons(value)]
    return tuple(found)


def sentences() -> dict[str, set[str]]:
    """vb.js's REFUSALS: each reason with the params its sentence reads (``p.name``)."""
    text = SCRIPT.read_text()
    start = text.index("const REFUSALS = () => ({")
    table = text[start:text.index("\n});", start)]
    entries = re.split(r"^  (\w+): \(p?\) =>", table, flags=re.M)[1:]
    return {reason: set(re.findall(r"\bp\.(\w+)", body)) for reason, body in zip(entries[::2], entries[1::2])}


def test_every_reason_the_hall_gives_has_its_sentence_on_the_machines_screen() -> None:
    given, table = given_reasons(), sentences()
    assert len({g.reason for g in given}) >= 25 and len(table) >= 25  # the extraction sees them
    missing = sorted({f"{g.reason} ({g.where})" for g in given if g.reason not in table})
    assert not missing, f"reasons with no sentence in vb.js REFUSALS: {missing}"


def test_each_sentence_reads_only_the_params_its_refusals_send() -> None:
    table = sentences()
    wrong = [f"{g.where}: {g.reason} sends {sorted(g.params)}, vb.js reads {sorted(table[g.reason])}"
             for g in given_reasons() if g.reason in table and g.params is not None and not table[g.reason] <= g.params]
    assert not wrong, wrong


def test_the_table_holds_no_sentence_for_a_reason_never_given() -> None:
    given = {g.reason for g in given_reasons()}
    assert not set(sentences()) - given, f"vb.js REFUSALS for reasons the hall never gives: {set(sentences()) - given}"

