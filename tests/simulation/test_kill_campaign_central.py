"""The kill campaign of the central server (R93.6, R93.8, R96.4, R85.9, R92.5e): ten ``kill -9`` of
the single central server during sales and draws (``test_kill_campaign.py`` says what each run
checks); a file of its own, so it runs beside the halls' campaign rather than after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.simulation.test_kill_campaign import check_campaign

pytestmark = [pytest.mark.integration]


@pytest.mark.req("R93.6", "R93.8", "R96.4", "R85.9", "R92.10")
@pytest.mark.campaign
@pytest.mark.timeout(1200)
def test_kill_campaign_of_the_central_server_every_purchase_confirmed_once_or_refused_free_no_prize_twice(
    tmp_path: Path,
) -> None:
    """Ten kill -9 of the central server during sales and draws; each restart declares the game under way
    not played, every stake returned (R92.5e)."""
    check_campaign(tmp_path, "central")
