"""The central domain and the hall-central schemas stay pure (STYLE.md 1, DESIGN.md)."""

from pathlib import Path

import pytest

from tests.unit.test_architecture import imported_modules

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("twisted", "sqlalchemy", "alembic", "serial", "click", "reportlab", "os", "time", "random",
             "datetime", "socket", "threading", "hall_server", "terminals", "server_kit")
PURE = sorted((ROOT / "central_server" / "domain").rglob("*.py")) + [ROOT / "protocol" / "central_messages.py"]


@pytest.mark.parametrize("path", PURE, ids=lambda p: p.name)
def test_the_central_domain_imports_no_framework_clock_or_randomness(path: Path) -> None:
    """No I/O framework, no database, no clock and no randomness in the central domain."""
    bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN)
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}"


def test_the_schemas_import_only_the_shared_domain() -> None:
    modules = imported_modules(ROOT / "protocol" / "central_messages.py")
    assert all(m.split(".")[0] in ("__future__", "collections", "dataclasses", "functools", "re", "typing", "protocol") for m in modules), modules
