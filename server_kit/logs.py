"""Where a server's log goes: plain lines for a person at a terminal, JSON lines for a
log collector (``--log-format json``; the systemd units ask for it).

One event a line either way: ``twisted.logger``'s text observer, or its JSON observer
(each event as JSON, with ``log_level``, ``log_namespace``, ``log_time`` and the event's
own fields; ``twisted.logger.eventsFromJSONLogFile`` reads them back).  Every server's
``serve`` command calls :func:`begin_logging` once, before its service starts.
"""

from __future__ import annotations

import sys
from typing import IO, Any, cast

from twisted.logger import (
    FilteringLogObserver,
    ILogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    jsonFileLogObserver,
    textFileLogObserver,
)

#: The formats a server's log may be written in.
FORMATS = ("text", "json")
#: The levels a server's log may start at (``--log-level``): ``debug`` adds the web ports'
#: access log, a line for every request (server_kit/web/http.py).
LEVELS = ("debug", "info", "warn", "error")


def log_observer(stream: IO[str], format: str = "text", level: LogLevel = LogLevel.info) -> ILogObserver:
    """The observer writing events at ``level`` or above to ``stream`` in ``format``."""
    if format not in FORMATS:
        raise ValueError(f"the log format is one of {', '.join(FORMATS)}, not {format!r}")
    # JSON lines: no RFC 7464 record separator before each event, one event a line.
    writer = jsonFileLogObserver(stream, recordSeparator="") if format == "json" else textFileLogObserver(stream)
    return cast(ILogObserver, FilteringLogObserver(writer, [LogLevelFilterPredicate(defaultLogLevel=level)]))


def begin_logging(format: str = "text", stream: IO[str] | None = None, level: LogLevel | str = LogLevel.info) -> None:
    """Send the process's log to ``stream`` (standard output) in ``format``, from ``level`` up, from now on."""
    if isinstance(level, str) and level not in LEVELS:
        raise ValueError(f"the log level is one of {', '.join(LEVELS)}, not {level!r}")
    least = LogLevel.levelWithName(level) if isinstance(level, str) else level
    observer: Any = log_observer(stream or sys.stdout, format, least)
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)
