"""The known keys of a configuration file (server_kit/settings.py): the first unknown key, at
any depth, is refused with its path and the key that was meant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from server_kit.settings import ANY_NAME, VALUE, Schema, UnknownSetting, check_known, fields_of, table


@dataclass(frozen=True)
class Tls:
    enabled: bool
    require_client_certificate: bool = False


SCHEMA: Schema = {
    "hall": table("name", "timezone"),
    "tls": fields_of(Tls),
    "series": [table("number", "card_count")],
    "videobingo": {"seats": VALUE, "machine": [table("id", "stations")]},
    "senders": {ANY_NAME: table("journal_key", "report_signers")},
}


def refusal(data: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(UnknownSetting) as caught:
        check_known(data, SCHEMA)
    assert str(caught.value) == f"{caught.value.key}: {caught.value.reason}"
    return caught.value.key, caught.value.reason


def test_a_file_of_known_keys_passes() -> None:
    check_known({"hall": {"name": "x"}, "tls": {"enabled": True, "require_client_certificate": True},
                 "series": [{"number": 1}], "videobingo": {"machine": [{"id": "vb-1"}]},
                 "senders": {"hall:hall-1": {"journal_key": "k"}}}, SCHEMA)


@pytest.mark.parametrize("data, key, reason", [
    ({"tls": {"require_client_certficate": True}}, "tls.require_client_certficate",
     "is not a setting here; did you mean require_client_certificate?"),
    ({"hal": {"name": "x"}}, "hal", "is not a table here; did you mean hall?"),
    ({"databse": {"url": "x"}}, "databse", "is not a table here (known: hall, senders, series, tls, videobingo)"),
    ({"hall": {"tiemzone": "Europe/Madrid"}}, "hall.tiemzone", "is not a setting here; did you mean timezone?"),
    ({"series": [{"number": 1}, {"numbr": 2}]}, "series[1].numbr", "is not a setting here; did you mean number?"),
    ({"videobingo": {"machine": [{"id": "a", "Stations": 2}]}}, "videobingo.machine[0].Stations",
     "is not a setting here; did you mean stations?"),
    ({"senders": {"hall:hall-1": {"jurnal_key": "k"}}}, 'senders."hall:hall-1".jurnal_key',
     "is not a setting here; did you mean journal_key?"),
    ({"tls": {"colour": "red"}}, "tls.colour", "is not a setting here (known: enabled, require_client_certificate)"),
])
def test_an_unknown_key_at_any_depth_is_named_with_its_path_and_its_near_miss(
    data: dict[str, Any], key: str, reason: str
) -> None:
    assert refusal(data) == (key, reason)


def test_the_first_unknown_key_in_the_files_order_is_the_one_named() -> None:
    assert refusal({"hall": {"nmae": "x"}, "tls": {"enabeld": True}})[0] == "hall.nmae"


def test_a_value_of_the_wrong_kind_is_left_to_the_reader() -> None:
    """A number where a table belongs is the reader's to refuse: it says what the table should be."""
    check_known({"tls": 3, "series": {"number": 1}, "hall": {"name": {"first": "x"}}}, SCHEMA)


def test_a_tables_keys_come_from_its_dataclass_but_the_ones_left_out() -> None:
    assert fields_of(Tls) == {"enabled": None, "require_client_certificate": None}
    assert fields_of(Tls, but=("enabled",), extra=[table("a")]) == {"require_client_certificate": None,
                                                                    "extra": [{"a": None}]}
