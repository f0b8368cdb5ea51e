"""Rewrite the record types section of docs/journal.md from the declarations in protocol/records.

    .venv/bin/python scripts/journal_record_types.py

Run it after declaring or changing a record type; tests/protocol/test_records_docs.py
fails until the document shows the declarations of today.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.records.catalogue import rewrite  # noqa: E402 (after the path is set)

DOC = ROOT / "docs" / "journal.md"

if __name__ == "__main__":
    DOC.write_text(rewrite(DOC.read_text(encoding="utf-8")), encoding="utf-8")
