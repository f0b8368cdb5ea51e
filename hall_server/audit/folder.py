"""The hall's export folder: the four files of :mod:`server_kit.audit_folder`, from a :class:`DayExport`.

``journal.jsonl`` holds one record a line in the canonical form the journal signs;
:func:`verify_segment` checks a run of them as an inspector's own script would
(:mod:`server_kit.audit_folder` says how).
"""

from __future__ import annotations

from pathlib import Path

from protocol.audit.hall_day import DayExport
from server_kit import audit_folder
from server_kit.audit_folder import (
    FILES,
    JOURNAL,
    PUBLIC_KEY,
    RESULT,
    SCENARIO,
    check_out_folder,
    journal_line,
    read_journal,
    verify_segment,
)


def write_export(export: DayExport, public_key_pem: bytes, out: Path) -> None:
    """Write the day's four files into ``out`` (new or empty), all of them or none."""
    audit_folder.write_export(export.scenario, export.result, export.records, public_key_pem, out)


__all__ = [
    "FILES",
    "JOURNAL",
    "PUBLIC_KEY",
    "RESULT",
    "SCENARIO",
    "check_out_folder",
    "journal_line",
    "read_journal",
    "verify_segment",
    "write_export",
]
