"""Loopback ports for local sets (``server_kit/ports.py``): below the ephemeral range, reserved, never chosen twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server_kit import ports


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "bingo-ports"
    made.mkdir()
    return made


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_ports_are_below_the_ephemeral_range_distinct_and_reserved_by_this_process(folder: Path) -> None:
    chosen = [ports.reserve_port(folder) for _ in range(200)]
    assert len(set(chosen)) == 200
    assert all(ports.LOW <= port < ports._ephemeral_low() for port in chosen)
    assert {int(p.name) for p in folder.iterdir()} == set(chosen)
    assert {p.read_text() for p in folder.iterdir()} == {str(os.getpid())}


def test_a_port_a_live_process_reserved_is_not_chosen_and_a_dead_ones_is_taken_over(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    low = 30_000
    monkeypatch.setattr(ports, "LOW", low)
    monkeypatch.setattr(ports, "_ephemeral_low", lambda: low + 1_000)
    monkeypatch.setattr(ports, "TRIES", 40_000)
    dead = _dead_pid()
    left = next(p for p in range(low + 500, low + 1_000) if ports.listenable(p))
    for port in range(low, low + 1_000):
        if port != left:
            (folder / str(port)).write_text(str(os.getppid()))  # a live process: the test runner's parent
    (folder / str(left)).write_text(str(dead))
    assert ports.reserve_port(folder) == left
    assert (folder / str(left)).read_text() == str(os.getpid())


def test_no_port_left_is_an_error_that_says_so(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "LOW", 30_000)
    monkeypatch.setattr(ports, "_ephemeral_low", lambda: 31_000)
    monkeypatch.setattr(ports, "TRIES", 50)
    for port in range(30_000, 31_000):
        (folder / str(port)).write_text(str(os.getppid()))
    with pytest.raises(OSError, match="no free loopback port between 30000 and 31000 after 50 tries"):
        ports.reserve_port(folder)
