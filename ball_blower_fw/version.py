"""Firmware version and the image hash the hall server checks against its approved list.

The hash covers the files of the board image, each as ``path``, a newline, its length
in 4 big-endian bytes and its bytes, in the order of ``IMAGE_FILES``.  The board
computes it at boot from the files it runs; the hall server computes the same from a
release tree to build the approved list (``hall_server.blower.approval``).
"""

import hashlib

FIRMWARE_VERSION = (1, 0, 0)

IMAGE_FILES = (
    "ball_blower_fw/__init__.py",
    "ball_blower_fw/board.py",
    "ball_blower_fw/hardware.py",
    "ball_blower_fw/logic.py",
    "ball_blower_fw/main.py",
    "ball_blower_fw/version.py",
    "protocol/blower_frames.py",
    "protocol/blower_link.py",
    "protocol/blower_messages.py",
)


def image_hash(root: str) -> bytes:
    """SHA-256 over the image files found under ``root`` (``/lib`` on the board)."""
    digest = hashlib.sha256()
    for path in IMAGE_FILES:
        with open(root + "/" + path, "rb") as f:
            content = f.read()
        digest.update(path.encode() + b"\n")
        digest.update(len(content).to_bytes(4, "big"))
        digest.update(content)
    return digest.digest()
