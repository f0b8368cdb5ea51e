"""The release this process runs: its one version, read from the installed package's metadata.

The version is written once, in ``pyproject.toml``; the servers name it in their hello
to each other (``bingo-hall 0.2.0``) and the release manifest records it.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType

#: The distribution the system is installed as.
DISTRIBUTION = "bingo-hall"


def release_version() -> str:
    """The installed release's version (``0+unknown`` when the system runs from an uninstalled tree)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


#: What a server says it runs, e.g. in the hall's hello to the central server.
SOFTWARE = f"{DISTRIBUTION} {release_version()}"


def source_fingerprint(*packages: ModuleType) -> str:
    """The release's version and the source of ``packages``, hashed: what a server's checkpoints are bound
    to, so that a checkpoint is never restored into other code than the code that wrote it."""
    digest = hashlib.sha256(SOFTWARE.encode())
    for package in packages:
        folder = Path(package.__file__ or "").parent
        for source in sorted(folder.rglob("*.py")):
            digest.update(source.relative_to(folder.parent).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()
