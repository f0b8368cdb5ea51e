"""A command's answer can reach the console before the pushes of the records it committed (the
answer and the pushes are separate messages on the socket): the answer is said at once in
the words the record's type gives, and again in full, from the records, once they are here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import PASSWORD, HallProcess
from tests.web.test_console_browser import VIEWPORT, browser, hall  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration


def test_an_answer_that_comes_before_its_records_is_said_again_in_full_once_they_come(
    browser: Any, hall: HallProcess, tmp_path: Path,
) -> None:
    page = browser.new_context(ignore_https_errors=True, viewport=VIEWPORT).new_page()
    page.set_default_timeout(WAIT * 1000)
    held: list[str] = []
    answers: list[dict[str, Any]] = []

    def route(socket: Any) -> None:
        # Between the page and the hall: every record pushed is held until the next answer has
        # gone to the page, so each answer arrives before the records it committed.
        server = socket.connect_to_server()
        socket.on_message(server.send)

        def from_server(message: str | bytes) -> None:
            kind = json.loads(message).get("type") if isinstance(message, str) else None
            if kind == "record":
                held.append(message)
                return
            socket.send(message)
            if kind == "answer":
                answers.append(json.loads(message))
                for record in held:
                    socket.send(record)
                held.clear()

        server.on_message(from_server)

    page.route_web_socket("**/ws", route)
    page.goto(hall.base + "/console")
    page.fill("#name", "admin")
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    page.wait_for_url("**/console")
    page.wait_for_selector("#link:not(.offline)")

    banned = tmp_path / "prohibidos.csv"
    banned.write_text("document,name,until\n12345678Z,Pere Roca,\n87654321X,\"Puig, Anna\",2027-01-31\n")
    page.click("#tab-commands")
    page.click('#commands button[data-command="import_banned_list"]')
    page.set_input_files("#command-fields input[type=file]", str(banned))
    wait_until(lambda: page.input_value('#command-fields [data-param="source"]') == "prohibidos.csv",
               what="the file's name in the source field")
    page.locator("#command-form button[type=submit]").press("Enter")
    # The answer came first (its record held back), then the record: the line says what was imported.
    page.wait_for_selector("#answer.ok:has-text('Banned list imported: 2 entries from prohibidos.csv')")
    (answer,) = [a for a in answers if a.get("records")]
    assert [r["type"] for r in answer["records"]] == ["banned_list_imported"]
