"""A server's log: plain lines for a person, JSON lines for a collector (``--log-format``)."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner
from twisted.logger import LogLevel, Logger, LogPublisher

from hall_server.cli import main
from server_kit.logs import log_observer


def _logged(format: str) -> str:
    stream = io.StringIO()
    publisher = LogPublisher(log_observer(stream, format))
    log = Logger(namespace="bingo.test", observer=publisher)
    log.info("Hall {hall} listening on port {port}", hall="hall-1", port=8443)
    log.debug("a detail nobody asked for")
    log.error("the journal does not verify")
    return stream.getvalue()


def test_json_lines_carry_each_events_level_namespace_and_fields() -> None:
    lines = _logged("json").split("\n")
    assert lines[-1] == ""
    events = [json.loads(line) for line in lines[:-1]]
    assert [e["log_level"]["name"] for e in events] == ["info", "error"]  # debug left out
    assert events[0]["log_namespace"] == "bingo.test" and events[0]["hall"] == "hall-1"
    assert events[0]["port"] == 8443 and isinstance(events[0]["log_time"], float)


def test_text_lines_read_as_a_person_would() -> None:
    text = _logged("text")
    assert "[bingo.test#info] Hall hall-1 listening on port 8443" in text
    assert "a detail nobody asked for" not in text
    assert "[bingo.test#error] the journal does not verify" in text


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="text, json"):
        log_observer(io.StringIO(), "xml", LogLevel.info)


@pytest.mark.parametrize("command", [["hall", "serve"], ["central", "serve"], ["regulator", "serve"]])
def test_every_serve_command_takes_the_log_format(command: list[str]) -> None:
    shown = CliRunner().invoke(main, [*command, "--help"])
    assert shown.exit_code == 0 and "--log-format [text|json]" in shown.output
    refused = CliRunner().invoke(main, [*command, "--log-format", "xml"])
    assert refused.exit_code == 2 and "'xml' is not one of 'text', 'json'" in refused.output
