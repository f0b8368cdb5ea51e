"""``bingo cards``: card sets, series and virtual libraries.

Every command that changes the database does so in one transaction: a refused import
leaves nothing behind.  Files are written beside their destination and renamed into
place only once the database has accepted the cards.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import click

from hall_server.cli.context import Hall
from protocol.money import format_cents

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from protocol.cardfile import CardFile

pass_hall = click.make_pass_decorator(Hall, ensure=True)
key_file_option = click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Card security code key (default: var/keys/card-code.key or $BINGO_CARD_KEY_FILE).",
)


@contextlib.contextmanager
def progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` that becomes ``path`` only if the block succeeds."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def read_checked(path: Path, key: bytes | None = None) -> CardFile:
    from protocol.cardfile import read_card_file

    with progress(f"Checking {path.name}", _line_count(path)) as update, path.open(
        newline="", encoding="utf-8"
    ) as stream:
        return read_card_file(stream, code_key=key, progress=update)


def _line_count(path: Path) -> int:
    with path.open("rb") as stream:
        return max(0, sum(chunk.count(b"\n") for chunk in iter(lambda: stream.read(1 << 20), b"")) - 1)


@click.group()
def cards() -> None:
    """Card sets, series and virtual card libraries."""


@cards.command()
def counts() -> None:
    """Print the exact number of valid layouts, cards and strips."""
    from protocol import strips

    click.echo(f"layouts: {strips.layout_count():,}")
    cards_total = strips.card_count()
    click.echo(f"cards:   {cards_total:,} ({cards_total:.3e})")
    strips_total = strips.strip_count()
    click.echo(f"strips:  {strips_total:,} ({strips_total:.4e})")


@cards.command("new-library")
@click.option("--count", "count", type=click.IntRange(min=6), required=True, help="Cards (a multiple of 6).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--series", default=None, help="Virtual series label (default: V<next>).")
@click.option("--name", default=None, help="Library name (default: the series label).")
@key_file_option
@pass_hall
def new_library(
    hall: Hall, count: int, out: Path, series: str | None, name: str | None, key_file: Path | None
) -> None:
    """Generate a virtual library of COUNT distinct cards from whole uniform strips."""
    from hall_server.store import cards as store
    from protocol.cardfile import card_codes, write_card_file
    from protocol.cards import CARDS_PER_STRIP
    from protocol.library import build_distinct_strips
    from server_kit.keys import load_card_key

    if count % CARDS_PER_STRIP:
        raise click.BadParameter(f"{count} is not a multiple of 6 (a library is whole strips)", param_hint="--count")
    engine = hall.engine
    series = series or f"V{len(store.list_libraries(engine)) + 1}"
    name = name or series
    key = load_card_key(key_file or hall.card_key_path, create=True)
    excluded = store.registered_prints(engine)
    with progress("Generating strips", count) as update:
        cells = build_distinct_strips(count // CARDS_PER_STRIP, excluded, progress=update)
    ids = [store.library_card_id(series, k) for k in range(1, count + 1)]
    codes = card_codes(key, ids, cells)
    strip_labels = [store.library_strip_label(series, k) for k in range(1, count + 1)]
    with replacing(out) as partial:
        with partial.open("w", encoding="utf-8", newline="") as stream:
            write_card_file(stream, ids, strip_labels, cells, codes)
        store.add_library(engine, name, series, cells, codes)
    click.echo(f"library {name}: {count} cards in {count // 6} strips, series {series}, written to {out}")
    click.echo(f"security codes made with the key in {key_file or hall.card_key_path}")


@cards.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path, exists=True))
@key_file_option
@click.option("--no-codes", is_flag=True, help="Do not check the security codes.")
@pass_hall
def verify(hall: Hall, file: Path, key_file: Path | None, no_codes: bool) -> None:
    """Check a card file: format, valid cards, whole strips, duplicates and codes."""
    from protocol.cardfile import check_codes
    from protocol.cards import CARDS_PER_STRIP
    from server_kit.keys import load_card_key

    cardfile = read_checked(file)
    checked = 0
    if cardfile.codes is not None and any(cardfile.codes) and not no_codes:
        checked = check_codes(cardfile, load_card_key(key_file or hall.card_key_path))
    whole = sum(1 for s in cardfile.strips if s) // CARDS_PER_STRIP
    click.echo(
        f"{file}: {len(cardfile)} valid cards, {whole} complete strips, no duplicates"
        + (f", {checked} security codes correct" if checked else "")
    )


@cards.command("new-set")
@click.option("--name", required=True, help="Name of the card set.")
@click.option("--count", type=click.IntRange(min=6), required=True, help="Cards (a multiple of 6).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write the set's card file.")
@pass_hall
def new_set(hall: Hall, name: str, count: int, out: Path | None) -> None:
    """Generate a physical card set of COUNT distinct cards for printing."""
    from hall_server.store import cards as store
    from protocol.cardfile import write_card_file
    from protocol.cards import CARDS_PER_STRIP
    from protocol.library import build_distinct_strips

    if count % CARDS_PER_STRIP:
        raise click.BadParameter(f"{count} is not a multiple of 6 (a set is generated in whole strips)", param_hint="--count")
    engine = hall.engine
    with progress("Generating strips", count) as update:
        cells = build_distinct_strips(count // CARDS_PER_STRIP, store.registered_prints(engine), progress=update)
    strip_labels = [str((k - 1) // CARDS_PER_STRIP + 1) for k in range(1, count + 1)]
    if out is None:
        store.add_card_set(engine, name, cells, strip_labels, "generated")
    else:
        with replacing(out) as partial:
            with partial.open("w", encoding="utf-8", newline="") as stream:
                write_card_file(stream, [str(k) for k in range(1, count + 1)], strip_labels, cells)
            store.add_card_set(engine, name, cells, strip_labels, "generated")
    click.echo(f"card set {name}: {count} cards" + (f", written to {out}" if out else ""))


@cards.command("import-set")
@click.option("--name", required=True, help="Name of the card set.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path, exists=True))
@pass_hall
def import_set(hall: Hall, name: str, file: Path) -> None:
    """Import a physical card set from a printer's card file (card_id = card number)."""
    from hall_server.store import cards as store
    from protocol.cardfile import CardFileError

    cardfile = read_checked(file)
    for index, card_id in enumerate(cardfile.ids):
        if card_id != str(index + 1):
            raise CardFileError(
                cardfile.line_of(index),
                f"card_id is {card_id!r}; a set's cards are numbered 1, 2, 3, ... in order",
            )
    store.add_card_set(hall.engine, name, cardfile.cells, cardfile.strips, "imported")
    click.echo(f"card set {name}: {len(cardfile)} cards imported from {file}")


@cards.command("add-series")
@click.option("--set", "set_name", required=True, help="The card set the series prints.")
@click.option("--series", "number", type=int, required=True, help="Series number.")
@click.option("--price", "price", type=int, required=True, help="Face value in cents.")
@click.option("--cards", "card_count", type=int, default=None, help="Cards in the series (default: the whole set).")
@pass_hall
def add_series(hall: Hall, set_name: str, number: int, price: int, card_count: int | None) -> None:
    """Register a numbered series of a card set with its face value."""
    from hall_server.store import cards as store

    info = store.add_series(hall.engine, set_name, number, price, card_count)
    click.echo(
        f"series {info.number} of set {info.card_set}: cards 1-{info.card_count} at {format_cents(info.face_value_cents)}"
    )


@cards.command()
@click.option("--set", "set_name", default=None, help="Export this card set.")
@click.option("--library", default=None, help="Export this virtual library (with codes).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@pass_hall
def export(hall: Hall, set_name: str | None, library: str | None, out: Path) -> None:
    """Write a card set or a library as a card file (CSV)."""
    from hall_server.store import cards as store
    from protocol.cardfile import write_card_file

    if (set_name is None) == (library is None):
        raise click.UsageError("name exactly one of --set and --library")
    with replacing(out) as partial, partial.open("w", encoding="utf-8", newline="") as stream:
        if set_name is not None:
            strip_labels, cells = store.set_cards(hall.engine, set_name)
            write_card_file(stream, [str(k) for k in range(1, len(cells) + 1)], strip_labels, cells)
        else:
            lib = store.library_cards(hall.engine, library or "")
            write_card_file(stream, lib.ids, lib.strips, lib.cells, lib.codes)
            cells = lib.cells
    click.echo(f"{len(cells)} cards written to {out}")


@cards.command("export-pdf")
@click.option("--series", "number", type=int, required=True, help="Series to print.")
@click.option("--first", type=int, default=1, show_default=True)
@click.option("--last", type=int, default=None, help="Last card (default: the series' last).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@pass_hall
def export_pdf(hall: Hall, number: int, first: int, last: int | None, out: Path) -> None:
    """Print cards of a series as a PDF sheet, six cards a page (R82.1)."""
    from hall_server.printing import card_sheet_pdf
    from hall_server.store import cards as store

    series = store.find_series(hall.engine, number)
    last = series.card_count if last is None else last
    if not 1 <= first <= last <= series.card_count:
        raise click.BadParameter(
            f"cards {first}-{last} are not within series {number}'s 1-{series.card_count}", param_hint="--first/--last"
        )
    _, cells = store.set_cards(hall.engine, series.card_set)
    with replacing(out) as partial:
        pages = card_sheet_pdf(
            partial,
            set_name=series.card_set,
            series=series.number,
            face_value_cents=series.face_value_cents,
            series_size=series.card_count,
            numbers=list(range(first, last + 1)),
            cells=cells[first - 1 : last],
            language=hall.language(),
        )
    click.echo(f"cards {first}-{last} of series {number}: {pages} page(s) written to {out}")


def last_sold(engine: Engine) -> dict[int, int]:
    """The last card sold of each series, from the journal's sales (the hall records sales there, not in the series table)."""
    from protocol.records import declared
    from protocol.records.sale import PaperCardsSold
    from server_kit.journal import table as journal_table

    sold: dict[int, int] = {}
    for record in journal_table.read(engine):
        # Only the sales are parsed: the rest of the journal is passed over by its type's name.
        if record.type == PaperCardsSold.type and isinstance(sale := declared(record), PaperCardsSold):
            sold[sale.series] = max(sold.get(sale.series, 0), sale.last)
    return sold


@cards.command("list")
@pass_hall
def list_cards(hall: Hall) -> None:
    """Show the card sets with their series, and the virtual libraries."""
    from hall_server.store import cards as store

    engine = hall.engine
    sets = store.list_sets(engine)
    libraries = store.list_libraries(engine)
    sold = last_sold(engine)
    click.echo(f"{len(sets)} card set(s)")
    for card_set in sets:
        click.echo(f"  {card_set.name}: {card_set.size} cards ({card_set.source})")
        for s in card_set.series:
            click.echo(
                f"    series {s.number}: {s.card_count} cards at {format_cents(s.face_value_cents)}, "
                f"last sold {max(s.last_sold, sold.get(s.number, 0)) or '-'}"
            )
    click.echo(f"{len(libraries)} virtual librar{'y' if len(libraries) == 1 else 'ies'}")
    for lib in libraries:
        click.echo(f"  {lib.name}: {lib.size} cards, series {lib.series}")
    total = sum(s.size for s in sets) + sum(lib.size for lib in libraries)
    click.echo(f"{total} registered cards in all")
