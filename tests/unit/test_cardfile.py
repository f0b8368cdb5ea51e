"""The card file format (FORMATS.md section 1) and the security code (R92.9)."""

import io

import numpy as np
import pytest

from protocol.cardfile import (
    CardFileError,
    card_code,
    card_codes,
    read_card_file,
    write_card_file,
)
from protocol.library import build_distinct_strips
from protocol.strips import sample_strips

KEY = bytes(range(32))


def make_file(strip_count: int = 2, codes: bool = True) -> str:
    cells = sample_strips(strip_count).reshape(-1, 27)
    ids = [f"V9-{k}" for k in range(1, len(cells) + 1)]
    strips = [f"S{(k - 1) // 6 + 1}" for k in range(1, len(cells) + 1)]
    out = io.StringIO()
    write_card_file(out, ids, strips, cells, card_codes(KEY, ids, cells) if codes else None)
    return out.getvalue()


def read(text: str, key: bytes | None = KEY):
    return read_card_file(io.StringIO(text), code_key=key)


def edit(text: str, line: int, column: int, value: str) -> str:
    lines = text.splitlines()
    fields = lines[line - 1].split(",")
    fields[column] = value
    lines[line - 1] = ",".join(fields)
    return "\n".join(lines) + "\n"


@pytest.mark.req("R82.9-12", "R92.9")
def test_a_written_library_reads_back_identically() -> None:
    text = make_file()
    cards = read(text)
    assert len(cards) == 12 and cards.ids[0] == "V9-1" and cards.strips[6] == "S2"
    again = io.StringIO()
    write_card_file(again, cards.ids, cards.strips, cards.cells, cards.codes)
    assert again.getvalue() == text


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: "", "line 1: the file is empty"),
        (lambda t: t.replace("card_id", "id", 1), "line 1: the header must be"),
        (lambda t: t + "V9-99,S3,1\n", "line 14: 3 fields, the header has 30"),
        (lambda t: edit(t, 3, 0, "V9-1"), "line 3: card_id 'V9-1' already appears on line 2"),
        (lambda t: edit(t, 2, 0, " "), "line 2: card_id is empty"),
        (lambda t: edit(t, 4, 5, "1.5"), "line 4: r1c4 is '1.5', not a number 0-90"),
        (lambda t: edit(t, 4, 5, "-3"), "line 4: r1c4 is '-3', not a number 0-90"),
        (lambda t: edit(t, 4, 5, "95"), "line 4: r1c4 is 95, not a number 0-90"),
        (lambda t: edit(t, 5, 29, "ABC"), "line 5: code 'ABC' is not lowercase hexadecimal"),
    ],
)
def test_malformed_lines_are_named(mutate, message: str) -> None:
    with pytest.raises(CardFileError) as error:
        read(mutate(make_file()))
    assert str(error.value).startswith(message)


@pytest.mark.req("R82.1")
def test_an_invalid_card_is_named_with_its_line_and_fault() -> None:
    text = make_file()
    lines = text.splitlines()
    fields = lines[6].split(",")
    cells = [int(x) for x in fields[2:29]]
    first = next(i for i, v in enumerate(cells) if v)
    fields[2 + first] = "0"  # the row now has four numbers
    lines[6] = ",".join(fields)
    with pytest.raises(CardFileError, match=r"line 7: card V9-6: row 1 holds 4 numbers"):
        read("\n".join(lines) + "\n")


def test_a_broken_strip_is_named() -> None:
    text = make_file(codes=False)
    short = "\n".join(text.splitlines()[:-1]) + "\n"
    with pytest.raises(CardFileError, match=r"line 8: strip 'S2' has 5 cards"):
        read(short, None)
    swapped = text.splitlines()
    swapped[2], swapped[8] = swapped[8].replace("S2", "S1"), swapped[2].replace("S1", "S2")
    with pytest.raises(CardFileError, match=r"line 2: strip 'S1' does not hold 1..90 once"):
        read("\n".join(swapped) + "\n", None)
    lines = text.splitlines()
    lines.insert(4, lines.pop(9))  # a card of S2 among the cards of S1
    with pytest.raises(CardFileError, match=r"strip 'S\d' (continues here|has \d cards)"):
        read("\n".join(lines) + "\n", None)


@pytest.mark.req("R82.9-12")
def test_a_duplicated_card_is_named_with_both_lines() -> None:
    text = make_file(codes=False)
    lines = text.splitlines()
    copy = lines[3].split(",")
    copy[0], copy[1] = "X-1", ""
    lines.append(",".join(copy))
    with pytest.raises(CardFileError, match=r"line 14: card X-1 has the same numbers as card V9-3 on line 4"):
        read("\n".join(lines) + "\n", None)


@pytest.mark.req("R92.9")
def test_a_forged_or_moved_code_is_refused() -> None:
    text = make_file()
    read(text)
    with pytest.raises(CardFileError, match="line 3: card V9-2: the security code does not match"):
        read(edit(text, 3, 29, card_code(KEY, "V9-3", bytes(27))))
    with pytest.raises(CardFileError, match="line 2: card V9-1: the security code does not match"):
        read(text, key=b"another key of 32 bytes........")
    # The code covers the identifier: the same cells under another number do not verify.
    cells = bytes(range(27))
    assert card_code(KEY, "V9-1", cells) != card_code(KEY, "V9-2", cells)
    assert len(card_code(KEY, "V9-1", cells)) == 16


@pytest.mark.req("R82.9-12")
def test_libraries_avoid_excluded_cards_and_repeat_none() -> None:
    from protocol.cards import duplicate_pairs, fingerprints

    physical = sample_strips(5).reshape(-1, 27)
    excluded = fingerprints(physical)
    library = build_distinct_strips(20, excluded)
    assert library.shape == (120, 27)
    both = np.concatenate([fingerprints(physical), fingerprints(library)])
    assert duplicate_pairs(both) == []


@pytest.mark.req("R82.9-12")
def test_a_strip_that_repeats_a_card_is_replaced_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force the sampler to offer a strip holding an excluded card first."""
    import protocol.library as library

    excluded_strip = sample_strips(1)
    real = library.sample_strips
    offered = []

    def rigged(count, random_bytes):
        offered.append(count)
        batch = real(count, random_bytes)
        if len(offered) == 1:
            batch[0] = excluded_strip[0]
        return batch

    monkeypatch.setattr(library, "sample_strips", rigged)
    from protocol.cards import fingerprints

    cells = library.build_distinct_strips(3, fingerprints(excluded_strip.reshape(-1, 27)))
    assert offered == [3, 1], "the first batch, then one strip to replace the bad one"
    assert not (cells[:6] == excluded_strip[0]).all()
