"""Record types a test declares for itself: registered while the test runs, gone after.

The journal seals only declared records (protocol/records).  A test of the machinery
itself - the server kit's command loop with a made-up module, a view fed a record no
module writes yet - declares the types it journals with :func:`declared`, so they
never reach the registry the documentation is checked against.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from protocol.records import REGISTRY, JournalRecord
from protocol.records.base import record


@contextmanager
def declared(*types: type[JournalRecord]) -> Iterator[None]:
    """Register ``types`` for the duration of the ``with`` block."""
    for cls in types:
        record(cls)
    try:
        yield
    finally:
        for cls in types:
            del REGISTRY[cls.type]
