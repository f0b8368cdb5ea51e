"""The central server's docs say what the code does: tables printed from it, examples that parse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from central_server.domain.config import NetworkGameConfig
from central_server.domain.game import render_table
from protocol import central_messages as m

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROTOCOL = (DOCS / "central-protocol.md").read_text(encoding="utf-8")
GAME = (DOCS / "network-game.md").read_text(encoding="utf-8")


def json_blocks(text: str) -> list:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.S)]


def test_the_lifecycle_table_in_the_docs_is_the_code_s() -> None:
    assert render_table() in GAME


def test_the_configuration_example_is_a_valid_configuration() -> None:
    (example,) = json_blocks(GAME)
    config = NetworkGameConfig.from_dict(example)
    assert config.patterns.names == ("line", "four_corners", "bingo")


@pytest.mark.req("R92.5")
def test_every_message_has_its_tables_and_a_golden_example_that_parses() -> None:
    examples = json_blocks(PROTOCOL)
    seen = set()
    for example in examples:
        message = m.MESSAGES[example["message"]]
        seen.add(message.name)
        assert m.check_arguments(message, example["arguments"]) == example["arguments"]
        if "error" in example:
            assert example["error"] in message.errors
        else:
            assert m.check_answer(message, example["answer"]) == example["answer"]
    assert seen == set(m.MESSAGES)
    for message in m.MESSAGES.values():
        assert f"### `{message.name}`" in PROTOCOL
        assert m.render_fields(message.arguments) in PROTOCOL, message.name
        if message.answer:
            assert m.render_fields(message.answer) in PROTOCOL, message.name
    for records in (m.CREDIT, m.WINNER, m.PRIZE_SHARE, m.PRIZE_AMOUNT, m.CARRY):
        assert m.render_fields(records.fields) in PROTOCOL


def test_every_error_and_refusal_is_listed_with_its_message() -> None:
    for error in m.ERRORS.values():
        assert f"| `{error.code}` | {'yes' if error.fatal else 'no'} | {error.message} |" in PROTOCOL
    for code, text in m.REFUSALS.items():
        assert f"| `{code}` | {text} |" in PROTOCOL
