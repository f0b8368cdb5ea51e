"""The shape of the code that DESIGN.md and STYLE.md ask for, checked on every run.

The import rules of the layers (DESIGN.md):

* ``protocol/`` is the pure domain: it imports none of the other packages and no I/O
  framework, and no ``os``, ``time`` or ``random`` (randomness and time are passed in);
* ``server_kit/`` is what every server is built from: of the project's packages it
  imports only ``protocol/``;
* ``hall_server/``, ``central_server/`` and ``terminals/`` import ``server_kit/`` and
  ``protocol/`` but never each other;
* ``regulator/`` (the regulator's reference receiver of the real-time feed) is built
  from ``server_kit/`` and ``protocol/`` alone: it never imports a server;
* ``simulation/`` (``bingo central simulate``) starts hall servers as processes and
  never imports ``hall_server/``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("twisted", "sqlalchemy", "alembic", "serial", "click", "reportlab", "psycopg", "OpenSSL")
#: What the pure domain takes as parameters instead of importing (the draw and the strips
#: take the operating system's CSPRNG through ``secrets``, R92.10, and can be given another).
IMPURE = ("os", "time", "random", "socket", "subprocess", "threading")
PROJECT = ("protocol", "server_kit", "hall_server", "central_server", "terminals", "ball_blower_fw", "regulator")
SERVERS = ("hall_server", "central_server", "terminals", "regulator")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def roots(path: Path) -> set[str]:
    return {module.split(".")[0] for module in imported_modules(path)}


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", sources("protocol"), ids=shown)
def test_the_shared_domain_imports_no_framework_and_no_io(path: Path) -> None:
    """Rules are pure: protocol/ imports no I/O framework, no clock, no randomness (STYLE.md 1)."""
    bad = sorted(roots(path) & set(FRAMEWORKS + IMPURE))
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", sources("protocol"), ids=shown)
def test_the_shared_domain_imports_no_other_package_of_the_project(path: Path) -> None:
    bad = sorted(roots(path) & (set(PROJECT) - {"protocol"}))
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", sources("server_kit"), ids=shown)
def test_the_server_kit_imports_only_the_shared_domain(path: Path) -> None:
    """The kit holds no server's rules: of the project it may import protocol/ alone."""
    bad = sorted(roots(path) & (set(PROJECT) - {"protocol", "server_kit"}))
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", [p for server in SERVERS for p in sources(server)], ids=shown)
def test_a_server_imports_no_other_server(path: Path) -> None:
    """Servers share through server_kit/ and protocol/, never by importing each other."""
    own = path.relative_to(ROOT).parts[0]
    bad = sorted(roots(path) & (set(SERVERS) - {own}))
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", sources("simulation"), ids=shown)
def test_the_simulation_starts_hall_servers_by_their_command_line_and_never_imports_them(path: Path) -> None:
    """``bingo central simulate`` runs halls as processes: it reads what they journal, it imports no hall code."""
    bad = sorted(roots(path) & {"hall_server"})
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", sources("regulator"), ids=shown)
def test_the_regulator_is_built_from_the_kit_and_the_domain_alone(path: Path) -> None:
    """The reference receiver (R92.7) imports no server: what it checks, it checks on its own."""
    bad = sorted(roots(path) & (set(PROJECT) - {"protocol", "server_kit", "regulator"}))
    assert not bad, f"{shown(path)} imports {', '.join(bad)}"


def test_the_rules_see_every_package() -> None:
    """A rule over an empty folder would pass for nothing."""
    for package in ("protocol", "server_kit", *SERVERS, "simulation"):
        assert len(sources(package)) >= 2, package
