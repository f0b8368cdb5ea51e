"""Bulk inserts of a million rows without a million dictionaries.

SQLAlchemy's executemany with one dict a row costs about three times the driver's own
``executemany`` with tuples.  Where the driver takes positional parameters (SQLite's
``qmark``, ``format``) the rows go to it directly in chunks; other drivers get Core's
executemany, chunk by chunk, so memory stays bounded either way.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterable, Sequence

from sqlalchemy import Connection, TableClause, insert

CHUNK = 50_000


def bulk_insert(
    connection: Connection, table: TableClause, columns: Sequence[str], rows: Iterable[tuple]
) -> None:
    statement = insert(table)
    positional = connection.dialect.paramstyle in ("qmark", "format", "numeric")
    if positional:
        compiled = statement.compile(dialect=connection.dialect, column_keys=list(columns))
        sql = str(compiled)
        order = compiled.positiontup or list(columns)
        index = [list(columns).index(name) for name in order]
    iterator = iter(rows)
    while chunk := list(islice(iterator, CHUNK)):
        if positional:
            connection.exec_driver_sql(sql, [tuple(row[i] for i in index) for row in chunk])
        else:
            connection.execute(statement, [dict(zip(columns, row)) for row in chunk])
