"""Loopback ports for the processes a local set starts: free now, outside the kernel's ephemeral range, reserved.

``bingo central cluster``, ``bingo central simulate``, the failover drill and the tests
start many servers on loopback, each on a port chosen before it starts.  A port the
kernel hands out for ``bind(0)`` comes from its ephemeral range, the one every outgoing
connection takes its own port from: between the choice and the server's start, a
connection of another process (a hall to its central server, Patroni to etcd) may take
it, and two sets started at once may choose the same.  So the ports come from below the
ephemeral range (Linux: ``/proc/sys/net/ipv4/ip_local_port_range``), and each is
reserved by a file named after it in ``<temp>/bingo-ports`` holding the reserving
process's pid: a port reserved by a live process is not chosen again; a dead process's
reservation is taken over.
"""

from __future__ import annotations

import os
import random
import socket
import tempfile
from pathlib import Path

#: The lowest port chosen (above the registered services most machines run).
LOW = 20_000
#: Linux's default ephemeral range starts here; the machine's own start is read when it is known.
EPHEMERAL_LOW = 32_768
RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
TRIES = 2_000


def _ephemeral_low() -> int:
    try:
        return int(RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return EPHEMERAL_LOW


def listenable(port: int) -> bool:
    """Whether a server could listen on loopback ``port`` now (connections in TIME_WAIT do not count)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting to be reaped is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _holder(path: Path) -> int | None:
    try:
        return int(path.read_text() or "0") or None
    except (OSError, ValueError):
        return None


def reservations() -> Path:
    """The folder of the reservations (every user may reserve there; each file is its reserver's)."""
    folder = Path(tempfile.gettempdir()) / "bingo-ports"
    folder.mkdir(exist_ok=True)
    try:
        os.chmod(folder, 0o1777)
    except PermissionError:
        pass  # another user made it, with these rights
    return folder


def reserve_port(folder: Path | None = None) -> int:
    """A loopback TCP port nobody listens on, below the ephemeral range, reserved for this process
    (in ``folder``, by default :func:`reservations`)."""
    if folder is None:
        folder = reservations()
    high = max(LOW + 1_000, _ephemeral_low())
    chooser = random.SystemRandom()
    for _ in range(TRIES):
        port = chooser.randrange(LOW, high)
        path = folder / str(port)
        try:
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(path)
            if holder is not None and alive(holder):
                continue
            try:
                path.unlink()  # a dead process's reservation, or a file being written: choose again
            except OSError:
                pass
            continue
        with os.fdopen(handle, "w") as file:
            file.write(str(os.getpid()))
        if listenable(port):
            return port
        path.unlink()  # somebody listens there without a reservation: give it back and choose again
    raise OSError(f"no free loopback port between {LOW} and {high} after {TRIES} tries")
