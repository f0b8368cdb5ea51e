"""docs/journal.md lists exactly the declared record types, with the fields they declare."""

from __future__ import annotations

import re
from pathlib import Path


from protocol.records import GROUPS, REGISTRY
from protocol.records.catalogue import catalogue_markdown, group_types

DOC = Path(__file__).resolve().parents[2] / "docs" / "journal.md"


def test_the_journal_doc_lists_exactly_the_registered_types() -> None:
    listed = re.findall(r"^#### `([a-z_]+)` \(version \d+\)$", DOC.read_text(), flags=re.MULTILINE)
    assert sorted(listed) == sorted(REGISTRY), "run: python scripts/journal_record_types.py"
    assert len(listed) == len(set(listed))


def test_the_journal_doc_shows_the_declarations_of_today() -> None:
    assert catalogue_markdown() in DOC.read_text(), (
        "docs/journal.md has fallen behind protocol/records: run python scripts/journal_record_types.py"
    )


def test_every_type_belongs_to_one_group_of_the_doc() -> None:
    grouped = [cls.type for group in GROUPS for cls in group_types(group)]
    assert sorted(grouped) == sorted(REGISTRY)
