"""The card file (FORMATS.md section 1): reading, checking and writing.

A card file is CSV with the header ``card_id,strip,r1c1,...,r3c9[,code]``.  Reading
checks, in this order, one class of fault at a time: the format of every line, the
validity of every card, the completeness of every strip, duplicates (two cards with
the same 15 numbers), and - when the caller passes a key - the security codes.  The
first fault of the first failing class is raised as :class:`CardFileError`, naming
the line; nothing is returned, so nothing half-read can be stored.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

import numpy as np

from protocol.cards import (
    CARDS_PER_STRIP,
    CELLS,
    CardError,
    cell_name,
    check_cells,
    duplicate_pairs,
    fingerprints,
    invalid_rows,
)
from protocol.errors import N_, DomainError, Template

CELL_COLUMNS = [cell_name(i) for i in range(CELLS)]
HEADER = ["card_id", "strip", *CELL_COLUMNS]
HEADER_WITH_CODE = [*HEADER, "code"]
FIRST_DATA_LINE = 2  # line 1 is the header

_HEX = re.compile(r"[0-9a-f]+")
_FULL_STRIP = (np.uint64(2**64 - 1), np.uint64(2**26 - 1))

#: Hex digits of a security code (64 bits of HMAC-SHA256).
CODE_LENGTH = 16

_NOT_UTF8 = N_("line {line}: not UTF-8 text: a card file is CSV text (FORMATS.md section 1)")
#: A cell's text (``'x'``) or its value above 90 (``95``: an int's repr is its digits).
_NOT_A_NUMBER = N_("line {line}: {column} is {value!r}, not a number 0-90")


class CardFileError(DomainError):
    """A card file that cannot be accepted; the message names the line.

    Given a catalog template (``N_("line {line}: ...")``, the line among its params), the
    message is that template filled (``docs/languages.md``, "The refusals to staff"), and
    ``reason`` what follows ``line N: ``; given a plain ``reason`` (a sentence wrapped around
    another English one), the message is ``line N: reason``, in English only.
    """

    def __init__(self, line: int | None, reason: str, **params: Any) -> None:
        self.line = line
        if isinstance(reason, Template):
            super().__init__(reason, **params, **({} if line is None else {"line": line}))
            self.reason = str(self).removeprefix(f"line {line}: ")
        else:
            self.reason = reason
            super().__init__(f"line {line}: {reason}" if line is not None else reason)


@dataclass(frozen=True)
class CardFile:
    """The cards of a file, in file order."""

    ids: list[str]
    strips: list[str]
    cells: np.ndarray  # (n, 27) uint8
    codes: list[str] | None  # None when the file has no code column

    def __len__(self) -> int:
        return len(self.ids)

    def line_of(self, index: int) -> int:
        return index + FIRST_DATA_LINE


# --- Security codes (R92.9) --------------------------------------------------------


def card_code(key: bytes, card_id: str, cells: bytes) -> str:
    """The security code of a virtual card: a MAC over its identifier and its 27 cells.

    The identifier of a library card is ``SERIES-NUMBER``, so the code binds series,
    number and layout; without the key nobody can compute it.
    """
    message = b"bingo-card-code/1\0" + card_id.encode("utf-8") + b"\0" + cells
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:CODE_LENGTH]


def card_codes(key: bytes, ids: Iterable[str], cells: np.ndarray) -> list[str]:
    return [card_code(key, card_id, row.tobytes()) for card_id, row in zip(ids, cells)]


# --- Reading -------------------------------------------------------------------------


def _parse_lines(stream: TextIO, progress: Callable[[int], None] | None) -> CardFile:
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        raise CardFileError(1, N_("line {line}: the file is empty; expected the header card_id,strip,r1c1,..."))
    except csv.Error as error:
        raise CardFileError(1, f"not valid CSV: {error}") from None
    except UnicodeDecodeError:
        raise CardFileError(1, _NOT_UTF8) from None
    if header not in (HEADER, HEADER_WITH_CODE):
        raise CardFileError(
            1, N_("line {line}: the header must be card_id,strip,r1c1,...,r3c9 with an optional code column")
        )
    width = len(header)
    has_code = width == len(HEADER_WITH_CODE)
    ids: list[str] = []
    strips: list[str] = []
    codes: list[str] = []
    rows: list[list[int]] = []
    seen: dict[str, int] = {}
    line = 1
    try:
        for line, fields in enumerate(reader, start=FIRST_DATA_LINE):
            if progress is not None and line % 10000 == 0:
                progress(10000)
            if len(fields) != width:
                raise CardFileError(
                    line, N_("line {line}: {fields} fields, the header has {width}"), fields=len(fields), width=width
                )
            card_id = fields[0]
            if not card_id.strip():
                raise CardFileError(line, N_("line {line}: card_id is empty"))
            if card_id in seen:
                raise CardFileError(
                    line, N_("line {line}: card_id {card_id!r} already appears on line {first}"),
                    card_id=card_id, first=seen[card_id],
                )
            seen[card_id] = line
            cells = fields[2 : 2 + CELLS]
            for index, text in enumerate(cells):
                if not text.isdigit() or not text.isascii() or len(text) > 2:
                    raise CardFileError(line, _NOT_A_NUMBER, column=CELL_COLUMNS[index], value=text)
            values = [int(text) for text in cells]
            if max(values) > 90:
                index = next(i for i, v in enumerate(values) if v > 90)
                raise CardFileError(line, _NOT_A_NUMBER, column=CELL_COLUMNS[index], value=values[index])
            if has_code:
                code = fields[-1]
                if code and not _HEX.fullmatch(code):
                    raise CardFileError(
                        line, N_("line {line}: code {code!r} is not lowercase hexadecimal"), code=code
                    )
                codes.append(code)
            ids.append(card_id)
            strips.append(fields[1])
            rows.append(values)
    except csv.Error as error:
        raise CardFileError(line + 1, f"not valid CSV: {error}") from None
    except UnicodeDecodeError:
        raise CardFileError(line + 1, _NOT_UTF8) from None
    if not ids:
        raise CardFileError(None, N_("the file holds no cards"))
    cells_array = np.array(rows, dtype=np.uint8).reshape(-1, CELLS)
    return CardFile(ids, strips, cells_array, codes if has_code else None)


def check_validity(cards: CardFile) -> None:
    bad = invalid_rows(cards.cells)
    if len(bad):
        index = int(bad[0])
        try:
            check_cells([int(v) for v in cards.cells[index]])
        except CardError as error:
            raise CardFileError(cards.line_of(index), f"card {cards.ids[index]}: {error}") from None
        raise AssertionError("the vectorised and the plain card checks disagree")


def strip_groups(strips: list[str]) -> list[tuple[int, int]]:
    """(first index, length) of each run of consecutive lines with the same strip value.

    Lines with an empty strip are single cards and form no group.
    """
    groups: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(strips) + 1):
        if index == len(strips) or strips[index] != strips[start]:
            if strips[start]:
                groups.append((start, index - start))
            start = index
    return groups


def check_strips(cards: CardFile, prints: np.ndarray) -> None:
    groups = strip_groups(cards.strips)
    named: dict[str, int] = {}
    for start, length in groups:
        value = cards.strips[start]
        if value in named:
            raise CardFileError(
                cards.line_of(start),
                N_("line {line}: strip {strip!r} continues here, but its cards must be consecutive "
                   "(it started on line {first})"),
                strip=value, first=named[value],
            )
        named[value] = cards.line_of(start)
        if length != CARDS_PER_STRIP:
            raise CardFileError(
                cards.line_of(start),
                N_("line {line}: strip {strip!r} has {count} cards, a strip has {size}"),
                strip=value, count=length, size=CARDS_PER_STRIP,
            )
    whole = [start for start, _ in groups]
    if not whole:
        return
    starts = np.array(whole)
    block = prints[starts[:, None] + np.arange(CARDS_PER_STRIP)]  # (s, 6, 2)
    union = np.bitwise_or.reduce(block, axis=1)
    bad = np.flatnonzero((union[:, 0] != _FULL_STRIP[0]) | (union[:, 1] != _FULL_STRIP[1]))
    if len(bad):
        start = int(starts[bad[0]])
        missing = [
            n
            for n in range(1, 91)
            if not int(union[bad[0], (n - 1) // 64]) >> ((n - 1) % 64) & 1
        ]
        raise CardFileError(
            cards.line_of(start),
            N_("line {line}: strip {strip!r} does not hold 1..90 once: {missing} missing"),
            strip=cards.strips[start], missing=", ".join(map(str, missing)),
        )


def check_duplicates(cards: CardFile, prints: np.ndarray) -> None:
    pairs = duplicate_pairs(prints)
    if pairs:
        first, later = pairs[0]
        raise CardFileError(
            cards.line_of(later),
            N_("line {line}: card {card} has the same numbers as card {other} on line {other_line}"),
            card=cards.ids[later], other=cards.ids[first], other_line=cards.line_of(first),
        )


def check_codes(cards: CardFile, key: bytes) -> int:
    """Verify every present code; returns how many were checked."""
    if cards.codes is None:
        return 0
    checked = 0
    for index, (card_id, code) in enumerate(zip(cards.ids, cards.codes)):
        if not code:
            continue
        expected = card_code(key, card_id, cards.cells[index].tobytes())
        if not hmac.compare_digest(expected, code):
            raise CardFileError(
                cards.line_of(index),
                N_("line {line}: card {card}: the security code does not match (a forged or altered "
                   "card, or the wrong key)"),
                card=card_id,
            )
        checked += 1
    return checked


def read_card_file(
    stream: TextIO,
    *,
    code_key: bytes | None = None,
    progress: Callable[[int], None] | None = None,
) -> CardFile:
    """Read and check a card file; raises :class:`CardFileError` on the first fault."""
    cards = _parse_lines(stream, progress)
    check_validity(cards)
    prints = fingerprints(cards.cells)
    check_strips(cards, prints)
    check_duplicates(cards, prints)
    if code_key is not None:
        check_codes(cards, code_key)
    return cards


# --- Writing -------------------------------------------------------------------------


def _cell_text(cells: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The 27 cells of every card as ``n,n,...,n`` text, all rows in one buffer.

    Returns the buffer and the offsets of each row in it.  Built with numpy: each cell
    becomes tens digit, units digit and a comma, and the tens of numbers below 10 and
    each row's last comma are dropped with one mask.
    """
    values = cells.astype(np.uint8)
    text = np.empty(values.shape + (3,), dtype=np.uint8)
    text[..., 0] = ord("0") + values // 10
    text[..., 1] = ord("0") + values % 10
    text[..., 2] = ord(",")
    keep = np.ones(text.shape, dtype=bool)
    keep[..., 0] = values >= 10
    keep[:, -1, 2] = False
    lengths = keep.sum(axis=(1, 2))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return text[keep].tobytes(), offsets


def write_card_file(
    stream: TextIO,
    ids: list[str],
    strips: list[str],
    cells: np.ndarray,
    codes: list[str] | None = None,
    *,
    chunk: int = 50_000,
) -> None:
    """Write cards in the card file format (one header line, one card a line)."""
    stream.write(",".join(HEADER_WITH_CODE if codes is not None else HEADER) + "\n")
    for start in range(0, len(ids), chunk):
        stop = min(start + chunk, len(ids))
        text, offsets = _cell_text(cells[start:stop])
        body = text.decode("ascii")
        if codes is None:
            lines = [
                f"{ids[i]},{strips[i]},{body[offsets[j]:offsets[j + 1]]}\n"
                for j, i in enumerate(range(start, stop))
            ]
        else:
            lines = [
                f"{ids[i]},{strips[i]},{body[offsets[j]:offsets[j + 1]]},{codes[i]}\n"
                for j, i in enumerate(range(start, stop))
            ]
        stream.write("".join(lines))
