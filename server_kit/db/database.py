"""Opening a server's database and bringing its schema up to date with Alembic.

SQLite is opened in WAL mode with full fsync and a busy timeout of
:data:`~server_kit.db.faults.SQLITE_BUSY_TIMEOUT_S`, and no connection is made to its
files once one of them is immutable; any SQLAlchemy URL (PostgreSQL
included: ``postgresql://`` means psycopg 3) can be given instead.  Each server keeps
its own migrations (an Alembic script location such as ``"hall_server:migrations"``)
and they are applied on every open, so a fresh machine needs nothing but the command.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from protocol.errors import DomainError
from server_kit.db.faults import SQLITE_BUSY_TIMEOUT_S, sqlite_files_fault, sqlite_immutable_fault


class DatabaseError(DomainError):
    """The database URL cannot be opened; the message says why and what to type."""


def _sqlite_files_mutable(path: str):  # type: ignore[no-untyped-def]
    """A ``do_connect`` hook: no connection is made to SQLite files marked immutable.

    SQLite maps the ``-shm`` file into memory; touching that mapping once the file is
    immutable ends the process with SIGBUS, and a log line never comes.  A connection
    refused here is a storage fault named for staff instead.
    """

    def check(dialect, record, arguments, parameters) -> None:  # type: ignore[no-untyped-def]
        fault = sqlite_immutable_fault(path)
        if fault is not None:
            raise fault

    return check


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # FULL: a commit is on disk before it returns, so nothing is announced that a power
    # cut could take back (WAL with NORMAL survives a killed process, not a power cut).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def _shown(url: str) -> str:
    """``url`` as it may be shown to a person: never with its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url)


def with_driver(url: str) -> str:
    """``url`` with the driver the project installs: ``postgresql://`` means psycopg 3."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url.removeprefix(plain)
    return url


def create(url: str, create_folder: bool = True) -> Engine:
    """An engine for ``url``; for SQLite WAL is switched on.

    ``create_folder``: make a SQLite file's folder when it is missing (the embedded
    default under ``var/``); a URL the user typed names a folder that must exist, so a
    typo cannot scatter databases over the file system.
    """
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if create_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise DatabaseError(f"cannot open {_shown(url)}: the folder {path.parent} does not exist")
    sqlite = url.startswith("sqlite:///")
    try:
        # The busy timeout (the driver's ``timeout``): see server_kit.db.faults.SQLITE_BUSY_TIMEOUT_S.
        engine = create_engine(with_driver(url), connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S} if sqlite else {})
    except NoSuchModuleError:
        scheme = url.split(":", 1)[0]
        raise DatabaseError(
            f"cannot open {_shown(url)}: {scheme!r} is not a database this system knows; "
            "use sqlite:///PATH or postgresql+psycopg://USER@HOST/NAME"
        ) from None
    except ArgumentError:
        raise DatabaseError(
            f"cannot open {_shown(url)}: not a database URL; "
            "use sqlite:///PATH or postgresql+psycopg://USER@HOST/NAME"
        ) from None
    except ImportError as error:
        raise DatabaseError(f"cannot open {_shown(url)}: its driver is not installed ({error.name})") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        if engine.url.database not in (None, "", ":memory:"):
            event.listen(engine, "do_connect", _sqlite_files_mutable(str(engine.url.database)))
    return engine


def check_sqlite_files(url: str) -> None:
    """Before a start creates anything: a SQLite ``url``'s folder exists, and its files can be written.

    Raises :class:`DatabaseError` naming the folder that is missing (a typed folder is never
    made) or the file that cannot be written (read-only, immutable, another owner: SQLite
    maps the ``-shm`` file, and writing through the mapping of an immutable file ends the
    process with SIGBUS).  Any other URL passes: its server is asked when it is opened.
    """
    parsed = make_url(url) if url.startswith("sqlite:") else None
    if parsed is None or not parsed.database or parsed.database == ":memory:":
        return
    database = Path(parsed.database)
    if not database.parent.is_dir():
        raise DatabaseError(f"cannot open {_shown(url)}: the folder {database.parent} does not exist (create it, or "
                            "correct the URL: a folder that is typed is never created)")
    fault = sqlite_immutable_fault(database) or sqlite_files_fault(database, space=False)
    if fault is not None:
        raise DatabaseError(f"cannot open {_shown(url)}: {fault.detail}")


def alembic_config(migrations: str) -> Config:
    """The Alembic configuration of the migrations at ``migrations`` (a script location)."""
    config = Config()
    config.set_main_option("script_location", migrations)
    return config


def upgrade(engine: Engine, migrations: str, revision: str = "head") -> None:
    """Apply every migration of ``migrations`` not yet applied, up to ``revision``."""
    config = alembic_config(migrations)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def is_current(engine: Engine, migrations: str) -> bool:
    """Whether the database's schema is at the head of ``migrations``."""
    head = ScriptDirectory.from_config(alembic_config(migrations)).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head


def open_database(url: str, migrations: str, create_folder: bool = True) -> Engine:
    """The database at ``url``, migrated to the head of ``migrations``."""
    engine = create(url, create_folder)
    try:
        upgrade(engine, migrations)
    except OperationalError as error:
        engine.dispose()
        reason = str(error.orig).strip().splitlines()[0] if error.orig is not None else "it did not answer"
        raise DatabaseError(f"cannot open {_shown(url)}: {reason}") from None
    return engine


def sqlite_files(url: str) -> list[Path]:
    """The files of the SQLite database at ``url`` (the database, its WAL, shared memory and rollback
    journal), for the start that keeps them private; none for another database, whose files are its
    own server's."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return []
    database = Path(parsed.database)
    return [database.with_name(database.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
