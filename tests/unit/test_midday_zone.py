"""The zone a wall-clock test runs its hall in is at midday, whatever the hour in UTC."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from tests.support.clock import midday_zone


@pytest.mark.parametrize("hour", range(24))
def test_the_zone_chosen_at_any_hour_is_at_midday(hour: int) -> None:
    now = datetime(2026, 12, 6, hour, 59, tzinfo=timezone.utc)
    local = now.astimezone(ZoneInfo(midday_zone(now.timestamp())))
    assert (local.hour, local.minute) == (12, 59)
