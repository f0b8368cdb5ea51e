"""The terminal of ``./run.sh`` (``bingo hall serve``) is not flooded: the web port's access log,
a line for every request (each stylesheet, each 401), is written at debug level, shown only with
``--log-level debug``."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.waiting import wait_until
from tests.web.conftest import HallProcess

pytestmark = pytest.mark.integration

STATIC = "/static/common.js"
REFUSED = "/api/state"  # 401 without a sign-in


def fetch(hall: HallProcess, path: str) -> int:
    try:
        with urllib.request.urlopen(hall.base + path, context=hall.tls_context(), timeout=30) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def access_lines(hall: HallProcess) -> list[str]:
    return [line for line in hall.output.decode(errors="replace").splitlines()
            if f'"GET {STATIC} ' in line or f'"GET {REFUSED} ' in line]


def test_the_run_sh_terminal_is_not_flooded_by_the_access_log(tmp_path: Path) -> None:
    """At the default level a static file and a 401 write no line; the server's own lines still show."""
    hall = HallProcess(tmp_path).start()
    try:
        assert fetch(hall, STATIC) == 200 and fetch(hall, REFUSED) == 401
    finally:
        hall.stop()
    # Stopped: everything the server wrote is in, up to its last line.
    wait_until(lambda: b"Main loop terminated" in hall.output, 30, "the hall's last log line",
               seen=lambda: hall.output[-400:])
    assert access_lines(hall) == [], access_lines(hall)
    assert b"Caller console at" in hall.output


def test_log_level_debug_shows_the_access_log(tmp_path: Path) -> None:
    hall = HallProcess(tmp_path, args=("--log-level", "debug")).start()
    try:
        assert fetch(hall, STATIC) == 200 and fetch(hall, REFUSED) == 401
        lines = wait_until(lambda: len(access_lines(hall)) == 2 and access_lines(hall), 30,
                           "an access-log line for each request", seen=lambda: hall.output[-800:])
    finally:
        hall.stop()
    assert '" 200 ' in lines[0] and '" 401 ' in lines[1], lines
    # Each line is stamped with the wall clock's date (the reactor's clock is monotonic, its epoch no date).
    years = {time.strftime("%Y", time.gmtime(time.time() - lag)) for lag in (0, 120)}  # a new year's eve run
    assert all(any(f"/{year}:" in line for year in years) for line in lines), lines
