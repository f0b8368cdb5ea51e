"""The failover campaign (R92.6), its first shard: ten node kills, a pause, a central kill (``campaign.py``)."""

from __future__ import annotations

import pytest

from tests.replica.campaign import play_shard

pytestmark = [pytest.mark.integration]


@pytest.mark.req("R92.6", "R93.6", "R93.8", "R85.9", "R92.10")
@pytest.mark.campaign
@pytest.mark.timeout(3600)
def test_r92_6_failover_campaign_nothing_confirmed_is_lost_or_doubled_no_ball_changed_no_prize_paid_twice() -> None:
    play_shard(seed=11, first_moment=0)
