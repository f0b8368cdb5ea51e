"""The base of the records that hold a domain event of :mod:`protocol.events`.

Such a record *is* its event (the record class derives from the event class) plus
what the consoles need besides (the cards a ball completed, the ball a claim was
checked at, ...).  Its payload is the event's own dict form - which repeats the
record's type under ``"type"`` - with those extra fields and the actor stamp.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from protocol.events import Event, EventError
from protocol.records.base import JournalRecord


@dataclass(frozen=True, kw_only=True)
class EventRecord(JournalRecord):
    """A record holding a domain event; its checks include the event's own (ball range, cents)."""

    carries_type: ClassVar[bool] = True

    def event(self) -> Event:
        """The pure domain event inside this record (its extras and actor left out)."""
        cls = self.event_class()
        return cls(**{f.name: getattr(self, f.name) for f in fields(cls)})  # type: ignore[arg-type]

    @classmethod
    def event_class(cls) -> type[Event]:
        for base in cls.__mro__:
            if issubclass(base, Event) and not issubclass(base, EventRecord) and "type" in base.__dict__:
                return base
        raise TypeError(f"{cls.__name__} holds no domain event")  # a programming error

    def check(self) -> None:
        try:
            self.event()
        except EventError as error:
            raise self.refusal(str(error)) from None


def event_fields(cls: type[EventRecord]) -> set[str]:
    """The payload keys that belong to the record's domain event (the rest are extras)."""
    return {f.name for f in fields(cls.event_class())}  # type: ignore[arg-type]


__all__ = ["EventRecord", "event_fields"]
