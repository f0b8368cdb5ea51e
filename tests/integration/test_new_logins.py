"""New staff passwords reach the person who started the hall, once, and never a log.

Started without a terminal (as a service manager starts it, its output going to a log),
the hall writes them to a file only its user can read and logs only where that file is.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hall_server.config import check_password, load_config
from tests.support.waiting import START, WAIT, wait_until

pytestmark = pytest.mark.integration
REPOSITORY = Path(__file__).resolve().parents[2]


def test_a_first_start_without_a_terminal_keeps_the_passwords_out_of_the_log(tmp_path: Path) -> None:
    env = {**os.environ, "BINGO_HOME": str(tmp_path), "PYTHONPATH": str(REPOSITORY)}
    command = [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--port", "0"]
    # A new session has no controlling terminal: /dev/tty cannot be opened, as under a service manager.
    server = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    lines: list[bytes] = []
    assert server.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(server.stdout.readline, b"")), daemon=True)
    reader.start()
    try:
        wait_until(lambda: b"Caller console at" in b"".join(lines), START, "the hall to start",
                   seen=lambda: b"".join(lines).decode(errors="replace")[-2000:])
    finally:
        server.terminate()
        server.wait(timeout=WAIT)
        reader.join(timeout=WAIT)
    output = b"".join(lines)
    logins = tmp_path / "new-staff-logins.txt"
    assert stat.S_IMODE(logins.stat().st_mode) == 0o600
    passwords = dict(re.findall(r"^\s+(\w+)\s+.*password: (\S+)$", logins.read_text(), re.MULTILINE))
    config = load_config(tmp_path / "hall.toml")
    assert len(passwords) == len(config.staff) >= 6
    for member in config.staff:
        assert check_password(passwords[member.name], member.password_hash)
        assert passwords[member.name].encode() not in output, "a password reached the log"
    assert str(logins).encode() in output
