"""What the tests with real central and hall processes share: a hall's configuration linked to a central server."""

from __future__ import annotations

from hall_server.config import DEFAULT_STAFF, default_config_text
from tests.web.conftest import _HASH


def hall_toml(hall_id: str, central_port: int) -> str:
    """A small hall (10 strips) serving its terminals with its ``server`` certificate, linked to the central server."""
    text = default_config_text(f"Hall {hall_id}", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    text = text.replace('server_name = "hall-server"', f'server_name = "{hall_id}"')
    text = text.replace('language = "ca"', 'language = "en"')  # the browser tests read the screens in English
    return text + f"""
[central]
host = "127.0.0.1"
port = {central_port}
hall_id = "{hall_id}"
server_name = "localhost"
"""
