"""The kiosk's fuzz campaign: the player terminal's message path fed 10^5 generated messages (the
CLEAN profile, as the other targets of ``test_fuzz_campaigns.py``); none crashes, each is
answered, and a refused message changes nothing but its refusal record.  A file of its own, the
longest campaign, so that the suite runs it beside the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.campaign import campaign
from tests.fuzz.test_fuzz_campaigns import SPLICES, folder, harness  # noqa: F401 (folder: a fixture)

pytestmark = [
    pytest.mark.campaign,
    pytest.mark.timeout(900),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.server"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.resource"),
]


def test_the_kiosk_message_path_answers_every_message_and_a_refusal_changes_nothing(folder: Path) -> None:
    """``TerminalSession`` on a hall with a sale open: a refused message adds at most its refusal
    record to the journal and leaves every balance exact."""
    campaign(harness("kiosk", folder), SPLICES["kiosk"])
