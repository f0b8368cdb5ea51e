"""The shape of the code that DESIGN.md and STYLE.md ask for, checked on every run."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("twisted", "sqlalchemy", "alembic", "serial", "click", "reportlab")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "protocol").rglob("*.py")), ids=lambda p: p.name)
def test_the_shared_domain_imports_no_framework(path: Path) -> None:
    """Rules are pure: protocol/ imports nothing from the I/O frameworks (STYLE.md 1)."""
    bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in FRAMEWORKS)
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}"


@pytest.mark.parametrize("path", sorted((ROOT / "protocol").rglob("*.py")), ids=lambda p: p.name)
def test_the_shared_domain_imports_no_server(path: Path) -> None:
    bad = sorted(
        m for m in imported_modules(path)
        if m.split(".")[0] in ("hall_server", "central_server", "terminals")
    )
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}"
