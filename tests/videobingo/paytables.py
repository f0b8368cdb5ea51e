"""Paytables for the video bingo tests: the documented examples and small hand-made ones."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

from protocol.videobingo.paytable import Paytable, load_paytable, parse_paytable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "protocol" / "videobingo" / "paytables"
#: The paytables shipped with the release (protocol/videobingo/paytables/NAME.json, NAME.out.json).
EXAMPLE_NAMES = ("vb-formats-example", "vb-classic-3x5", "vb-grand-4x5")


def example(name: str) -> Paytable:
    return load_paytable((EXAMPLES / f"{name}.json").read_bytes())


def example_data(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def document(
    patterns: list[tuple[str, list[tuple[int, int]], int]],
    *,
    rows: int,
    columns: int,
    pool: int = 60,
    balls: int = 30,
    cards_max: int = 4,
    min_rtp_bp: int = 8000,
    name: str = "test",
) -> dict[str, Any]:
    """A paytable's JSON object from ``(name, cells, pays)`` triples."""
    return {
        "format": "bingo-vb-paytable/1",
        "name": name,
        "pool": pool,
        "balls": balls,
        "rows": rows,
        "columns": columns,
        "cards_max": cards_max,
        "min_rtp_bp": min_rtp_bp,
        "patterns": [
            {"name": n, "cells": [list(cell) for cell in cells], "pays": pays}
            for n, cells, pays in copy.deepcopy(patterns)
        ],
    }


def paytable(
    patterns: list[tuple[str, list[tuple[int, int]], int]],
    *,
    rows: int,
    columns: int,
    pool: int = 60,
    balls: int = 30,
    **rest: Any,
) -> Paytable:
    """A validated paytable; ``pool`` may be below the format's 20 (for brute force only).

    The paytable is validated with a pool of at least 20 and then given its small pool,
    so that every draw of it can be enumerated.
    """
    big_pool = max(pool, 20, rows * columns)
    data = document(patterns, rows=rows, columns=columns, pool=big_pool, balls=min(balls, big_pool - 1), **rest)
    return dataclasses.replace(parse_paytable(data), pool=pool, balls=balls)


def grid(rows: int, columns: int) -> list[tuple[int, int]]:
    return [(r, c) for r in range(rows) for c in range(columns)]


def row(r: int, columns: int) -> list[tuple[int, int]]:
    return [(r, c) for c in range(columns)]


def column(c: int, rows: int) -> list[tuple[int, int]]:
    return [(r, c) for r in range(rows)]
