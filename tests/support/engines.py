"""Which database engines a piece of code let go (``Engine.dispose``), for the tests of a refused start."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine


def watch_disposals(monkeypatch: pytest.MonkeyPatch) -> list[Engine]:
    """The engines disposed of from now on (each still disposed of), in order, until the test ends."""
    disposed: list[Engine] = []
    dispose = Engine.dispose

    def watched(engine: Engine, *args: Any, **kwargs: Any) -> None:
        disposed.append(engine)
        dispose(engine, *args, **kwargs)

    monkeypatch.setattr(Engine, "dispose", watched)
    return disposed


def failing(message: str) -> Any:
    """A stand-in for a part of the start-up that raises ``RuntimeError(message)``."""
    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError(message)
    return fail
