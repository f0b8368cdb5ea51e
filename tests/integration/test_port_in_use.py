"""A hall server that cannot have its port exits non-zero with a clear message, under ``twist`` and ``bingo``.

Before, the process stayed up serving nothing: whoever started it (a person, a service
manager) saw a running hall that no console could reach.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password

pytestmark = pytest.mark.integration
REPOSITORY = Path(__file__).resolve().parents[2]
_HASH = hash_password("a long enough staff passphrase")


def config_on(folder: Path, port: int) -> Path:
    text = default_config_text("Busy hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=port)
    text = text.replace("generate_strips = 100", "generate_strips = 10").replace("card_count = 600", "card_count = 60")
    path = folder / "hall.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("runner", ["bingo", "twist"])
def test_a_port_already_in_use_ends_the_process_with_status_1(runner: str, tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        config = config_on(tmp_path, port)
        if runner == "bingo":
            command = [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve",
                       "--config", str(config)]
        else:
            command = [sys.executable, "-m", "twisted", "bingo-hall", "--config", str(config)]
        env = {**os.environ, "BINGO_HOME": str(tmp_path), "PYTHONPATH": str(REPOSITORY)}
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
