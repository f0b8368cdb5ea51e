"""What fuzzing found, each as a fixed input that once crashed code under test and is now
refused with its error, and the FULL profile campaign of each target, which makes every
input class (deep nesting, lone surrogates, values too long for an error message,
non-UTF-8 files and headers, HEAD requests).

The 10^5 inputs a target the suite feeds are the CLEAN campaigns of
``test_fuzz_campaigns.py``; the FULL campaigns here add the input classes that once
crashed, :data:`FULL_INPUTS` each, and ``bench/fuzz.py`` runs them at 10^6.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from tests.fuzz.campaign import JSON_VALUES, campaign
from tests.fuzz.generators import FULL
from tests.fuzz.targets import (
    TARGETS, CardFileHarness, ChannelHarness, HttpHarness, KioskHarness, TerminalMessagesHarness,
    scratch_folder,
)

pytestmark = [
    pytest.mark.campaign,
    pytest.mark.timeout(900),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.server"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:twisted.web.resource"),
]

DEEP = 5_000
#: The inputs of each FULL campaign of the suite (the 10^6 run is ``bench/fuzz.py``).
FULL_INPUTS = 20_000
CARD_FILE = CardFileHarness().files[0]


@pytest.fixture
def folder() -> Iterator[Path]:
    with scratch_folder("fuzz-pending-") as name:
        yield Path(name)


def kiosk_signed_in(folder: Path) -> KioskHarness:
    """The kiosk harness with a connection that said hello and signed in."""
    kiosk = KioskHarness(folder, FULL)
    kiosk.connect("T1", kiosk.hut.accounts[0])
    return kiosk


# --- Fixed inputs --------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    CARD_FILE.replace(",6,", ",\xff,", 1).encode("latin-1"),  # a file that is not UTF-8
    CARD_FILE.replace(",6,", "," + "9" * 5000 + ",", 1).encode(),  # a cell past 4300 digits
], ids=["not-utf8", "5000-digit-cell"])
def test_a_card_file_the_parser_cannot_read_is_refused_with_its_error(data: bytes) -> None:
    assert CardFileHarness().feed(data) == "rejected"


def test_a_deeply_nested_terminal_message_is_malformed() -> None:
    assert TerminalMessagesHarness(FULL).feed("[" * 2000 + "]" * 2000) == "rejected"


@pytest.mark.parametrize("message", [
    "[" * 2000 + "]" * 2000,
    json.dumps({"v": 1, "seq": ["x" * 400, 10**100], "type": "sync"}),  # the error would quote 500+ characters
    '{"v": 1, "seq": 4, "type": "sync", "\\udced": 2}',  # the refusal names a lone surrogate
    '{"v": 1, "seq": 4, "type": "buy", "account": "\\udced", "quantity": 5, "stake_pct": 100}',
], ids=["deep", "long-error", "surrogate-key", "surrogate-account"])
def test_the_kiosk_answers_every_bad_message_with_an_error_and_journals_it(folder: Path, message: str) -> None:
    kiosk = kiosk_signed_in(folder)
    message = message.replace('"seq": 4', f'"seq": {kiosk.session.inbound.last + 1}')
    assert kiosk.feed(message) == "rejected"


def test_a_hello_whose_token_is_not_unicode_is_refused(folder: Path) -> None:
    kiosk = KioskHarness(folder, FULL)
    kiosk.connect(None, None)
    assert kiosk.feed('{"v": 1, "seq": 1, "type": "hello", "terminal": "T1", "token": "a\\udced z"}') == "rejected"


@pytest.mark.parametrize("body", [
    b"[" * DEEP + b"]" * DEEP,
    json.dumps({"id": "r1", "command": "admit_visitor",
                "args": {"name": "\ud800", "document": "X1", "birth_date": "1980-01-01"}}).encode(),
], ids=["deep", "surrogate-name"])
def test_the_command_channel_answers_malformed_not_internal(folder: Path, body: bytes) -> None:
    channel = ChannelHarness(folder, FULL)
    admission = next(i for i, a in enumerate(channel.hut.actors) if a.role.value == "admission")
    assert channel.feed((admission, body)) == "rejected"


@pytest.mark.parametrize("method, path, content_type, body", [
    ("POST", "/login", b"application/json", b"[" * DEEP + b"]" * DEEP),
    ("POST", "/api/command", b"application/json", b"[" * DEEP + b"]" * DEEP),
    ("HEAD", "/api/command", b"application/json", b""),
    ("HEAD", "/logout", b"application/json", b""),
    ("POST", "/login", b"tex\xb7t/plain", b"{}"),  # a header that is not UTF-8
    ("POST", "/api/command", b"application/\xffjson", b"{}"),
], ids=["login-deep", "command-deep", "head-command", "head-logout", "login-latin1-header",
        "command-latin1-header"])
def test_the_console_answers_4xx_not_500(folder: Path, method: str, path: str, content_type: bytes,
                                         body: bytes) -> None:
    http = HttpHarness(folder, FULL)
    head = (f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nCookie: bingo_session={http.cookies[0]}\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    assert http.feed(head + b"Content-Type: " + content_type + b"\r\n\r\n" + body) == "rejected"


# --- The FULL profile campaigns --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cardfile", "terminal_messages", "channel", "http", "kiosk"])
def test_the_full_campaign_finds_nothing(folder: Path, name: str) -> None:
    campaign(TARGETS[name](folder, FULL), JSON_VALUES, FULL_INPUTS)
