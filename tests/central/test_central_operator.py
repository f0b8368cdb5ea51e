"""The operator's commands (protocol/central_operator.py) fit AMP like every message of the protocol (R96.2)."""

from __future__ import annotations

import pytest
from twisted.protocols import amp

from protocol import central_messages as m
from protocol.central_operator import OPERATOR_MESSAGES
from server_kit.amp.commands import amp_command
from tests.central.test_central_messages import widest


@pytest.mark.parametrize("message", OPERATOR_MESSAGES.values(), ids=lambda msg: msg.name)
def test_every_operator_command_becomes_an_amp_command_whose_widest_values_fit_and_round_trip(message: m.Message) -> None:
    command = amp_command(message)
    for fields, make, parse in (
        (message.arguments, command.makeArguments, command.parseArguments),
        (message.answer, command.makeResponse, command.parseResponse),
    ):
        values = {f.name: widest(f) for f in fields}
        box = make(values, None)
        for key, value in box.items():
            assert len(value) <= m.MAX_VALUE_BYTES, (message.name, key)
        box.serialize()  # raises TooLong past the cap
        assert parse(amp.AmpBox(box), None) == values


def test_the_operators_commands_are_the_operators_and_share_no_name_with_the_halls() -> None:
    assert all(message.sender == "operator" for message in OPERATOR_MESSAGES.values())
    assert not set(OPERATOR_MESSAGES) & set(m.MESSAGES)
    assert all(set(message.errors) <= set(m.ERRORS) for message in OPERATOR_MESSAGES.values())
    # An operator's refusal leaves the connection open, but a replicated central server's standby's,
    # which closes every connection: the operator is to command the active process.
    assert not any(m.ERRORS[code].fatal for message in OPERATOR_MESSAGES.values() for code in message.errors
                   if code != "standby")
    assert all("standby" in message.errors for message in OPERATOR_MESSAGES.values())
