"""Time zones for tests of a live hall that read the wall clock.

A hall's day turns at its midnight: the people present leave the count, the jackpot's
contributions start a new day.  A test that compares a live server's picture across
minutes of real time would see that turn if it ran across midnight, and fail for it
alone.  Such a test runs its hall in a zone where it is midday now, twelve hours from
either midnight.
"""

from __future__ import annotations

import time


def midday_zone(now_s: float | None = None) -> str:
    """The IANA name of a fixed-offset zone whose local hour is 12 at ``now_s`` (UTC seconds).

    The ``Etc/GMT`` zones name their offset with the opposite sign: ``Etc/GMT-3`` is UTC+3.
    They run from UTC-12 (``Etc/GMT+12``) to UTC+14; the offsets used here, -11 to +12, are
    all among them.
    """
    hour = time.gmtime(time.time() if now_s is None else now_s).tm_hour
    offset = (12 - hour + 11) % 24 - 11  # -11..+12
    if offset == 0:
        return "Etc/GMT"
    return f"Etc/GMT{-offset:+d}"
