"""The hall's modules emit and fold only declared records (protocol/records), as the central server's do.

A decision hands the core instances of the declared classes - the core refuses anything
else (tests/hall/test_records_written.py) and mypy checks every ``decide`` for it - and a
fold reads the declared record (``protocol.records.declared``) by its class and typed
fields.  This test reads the source of ``hall_server`` and names any place that reads a
journal payload's keys or compares a record's type to a string instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HALL = ROOT / "hall_server"
#: Files whose ``payload`` is not a record's to fold: the journal panel's redacted copy (shown as it
#: is) and the blower's serial frames (bytes).
SHOWN_AS_IS = {"hall_server/web/redaction.py", "hall_server/blower/driver.py"}


def _payload_reads(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "payload":
            found.append((node.lineno, "a payload's key read"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "payload"):
            found.append((node.lineno, "a payload's key read"))
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "type":
            for right in node.comparators:
                literals = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
                if any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in literals):
                    found.append((node.lineno, "a record's type compared to a string"))
    return found


@pytest.mark.req("R92.3")
def test_no_hall_module_reads_a_payload_or_compares_a_type_to_a_string() -> None:
    faults = []
    for path in sorted(HALL.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in SHOWN_AS_IS:
            continue
        for line, what in _payload_reads(ast.parse(path.read_text(), name)):
            faults.append(f"{name}:{line}: {what}")
    assert not faults, "read the declared record instead (protocol.records.declared):\n" + "\n".join(faults)


def test_the_check_finds_what_it_looks_for() -> None:
    source = 'p = record.payload["amount"]\nq = record.payload.get("x")\nif record.type == "posting": pass\n'
    assert [line for line, _ in _payload_reads(ast.parse(source))] == [1, 2, 3]
