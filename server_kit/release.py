"""The release this process runs: its one version, read from the installed package's metadata.

The version is written once, in ``pyproject.toml``; the servers name it in their hello
to each other (``bingo-hall 0.2.0``) and the release manifest records it.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

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
