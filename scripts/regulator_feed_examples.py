"""Rewrite the golden examples of docs/regulator-feed.md from regulator/examples.py.

    .venv/bin/python scripts/regulator_feed_examples.py

tests/regulator/test_feed_format.py fails until the document shows the bytes of today.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from regulator.examples import rewrite  # noqa: E402 (after the path is set)

DOC = ROOT / "docs" / "regulator-feed.md"

if __name__ == "__main__":
    DOC.write_text(rewrite(DOC.read_text(encoding="utf-8")), encoding="utf-8")
