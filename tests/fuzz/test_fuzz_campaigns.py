"""Fuzz campaigns: every parser and endpoint fed 10^5 generated inputs; none crashes, none
answers 500 or ``internal``, and no rejected input changes the journal or a balance
(findings 6, 13 and the campaigns of the security review).

These run the CLEAN profile: every input class but those that once crashed code under
test; ``test_fuzz_findings.py`` holds those crashes as fixed inputs and runs the FULL
profile campaign of every target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import strategies as st

from tests.fuzz.campaign import JSON_VALUES, campaign
from tests.fuzz.generators import CLEAN
from tests.fuzz.targets import TARGETS, Harness, scratch_folder

pytestmark = [
    pytest.mark.campaign,
    pytest.mark.timeout(900),
    # Twisted's own 404 and 405 pages warn of their deprecation once a request: 10^5 times here.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.server"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.resource"),
]

SPLICES = {
    "cardfile": st.text(max_size=30),
    "replay": JSON_VALUES,
    "blower": st.binary(max_size=120),
    "terminal_messages": JSON_VALUES,
    "channel": JSON_VALUES,
    "http": JSON_VALUES,
    "kiosk": JSON_VALUES,
}


@pytest.fixture
def folder() -> Iterator[Path]:
    with scratch_folder("fuzz-") as name:
        yield Path(name)


def harness(name: str, folder: Path) -> Harness:
    return TARGETS[name](folder, CLEAN)


def test_the_card_file_parser_refuses_every_bad_file_with_its_error(folder: Path) -> None:
    """``read_card_file``: only ``CardFileError``, naming the line, for any file near a valid one."""
    campaign(harness("cardfile", folder), SPLICES["cardfile"])


def test_the_replay_refuses_every_bad_scenario_with_its_error(folder: Path) -> None:
    """``replay_json``: only ``ReplayError`` for any scenario near the documented examples."""
    campaign(harness("replay", folder), SPLICES["replay"])


def test_the_blower_link_survives_any_line_noise_and_forged_frames(folder: Path) -> None:
    """Frames, the decoder, the link and the payloads: only ``FrameError``; refused frames change
    nothing in the link."""
    campaign(harness("blower", folder), SPLICES["blower"])


def test_the_terminal_message_decoder_refuses_every_bad_message_with_its_error(folder: Path) -> None:
    campaign(harness("terminal_messages", folder), SPLICES["terminal_messages"])


def test_the_command_channel_answers_every_request_and_a_refusal_changes_nothing(folder: Path) -> None:
    """``parse_request`` and ``submit`` as every role: no fault, no ``internal``, and a refused
    request leaves the journal and every balance exact."""
    campaign(harness("channel", folder), SPLICES["channel"])


def test_the_console_http_endpoints_never_answer_500_and_a_refusal_changes_nothing(folder: Path) -> None:
    """``/login``, ``/api/command``, ``/api/state`` and the rest over an in-memory transport."""
    campaign(harness("http", folder), SPLICES["http"])


# The kiosk's campaign, the longest, is a file of its own (``test_fuzz_campaign_kiosk.py``): the
# suite's workers run it beside these instead of after them.
