"""The approved firmware list: which (version, image hash) the hall accepts from a blower.

A blower announces both in its HELLO; one not on the list is never used (software
integrity).  ``image_hash_of_tree`` computes the hash of a release tree the same way the
board does at boot, to add a release to the list.
"""

from dataclasses import dataclass, field
from pathlib import Path

from ball_blower_fw.version import FIRMWARE_VERSION, image_hash


@dataclass(frozen=True)
class ApprovedFirmware:
    """Accepted firmware releases, as ``{(major, minor, patch): {sha256 hex, ...}}``."""

    releases: dict[tuple[int, int, int], frozenset[str]] = field(default_factory=dict)

    def approves(self, version: tuple[int, int, int], digest: bytes) -> bool:
        release = (version[0], version[1], version[2])  # a list read from JSON names the same release
        return digest.hex() in self.releases.get(release, frozenset())

    def with_release(self, version: tuple[int, int, int], digest: bytes) -> "ApprovedFirmware":
        releases = dict(self.releases)
        releases[version] = releases.get(version, frozenset()) | {digest.hex()}
        return ApprovedFirmware(releases)


def image_hash_of_tree(root: Path) -> bytes:
    """The image hash of the firmware files under ``root`` (a repository or release)."""
    return image_hash(str(root))


def approved_from_tree(root: Path) -> ApprovedFirmware:
    """An approved list holding exactly the firmware release found under ``root``."""
    return ApprovedFirmware().with_release(FIRMWARE_VERSION, image_hash_of_tree(root))
