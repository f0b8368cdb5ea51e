"""Admission: the door, the regulator's banned list, the people present, the complaints book, incidents.

The admission service (R75.1-5) controls who enters the hall.  Its rules, as this
module enforces them:

* Every visitor gets a **numbered visitor record** (R75.3) holding only what the rules
  need: the name and the number of the identity document shown.  The document number
  is what the banned list (R75.2) and the staff rule (R81.b) are checked against; the
  name is what staff and inspectors read.  Nothing else (address, birth date, photo)
  is kept, because no rule needs it (data protection, R75.3).
* **Minors** may not enter (R75.1, R97.1): the desk types the birth date read on the
  document; a visitor under :data:`ADULT_AGE` on the hall's day is refused.  The record
  keeps that the check passed (``age_checked``), never the date.
* The hall's **authorised capacity** (R73.5, ``[hall] capacity``): a visitor is refused
  while the people present reach it.  The people present are the visitors admitted
  since the hall last closed (by its opening hours in force; without hours, since the
  start of the hall's day) and not recorded as leaving (``record_visitor_left``).
* Every refusal at the door - banned, self-excluded, a minor, the hall full - is a fact
  of the day: journaled as ``entry_refused`` with its ground, shown to the desk, and
  listed among the incidents of the minutes (R75.4, R77.2).
* The **regulator's register of banned persons** is imported from a CSV file
  (:func:`parse_banned_list`; format in ``docs/cashier-admission.md``).  An import
  replaces the whole list at once, in one journal record that holds the rows, the
  file's SHA-256 and its row count; a file with one bad row imports nothing and the
  error names the line.  Until a list has been imported nobody is admitted: the door
  cannot enforce a register it does not have.
* A person on the list is refused at the door, and the cashier refuses to open a
  playing account for them (:meth:`AdmissionModule.is_banned` is the pure query both
  use).  A ban runs to the end of its ``until`` day, or for ever when none is given.
* Staff, owners and managers may not play (R81.b): the staff list with their identity
  documents is given at construction, and :meth:`AdmissionModule.is_staff` lets the
  cashier refuse them an account.
* The **complaints book** (R75.5): a complaint is written in the room chief's presence.
  The room chief writes it, or confirms the one the door wrote (``confirm_complaint``);
  each is numbered and journaled, and the session does not close while one waits for the
  room chief.  With the **incidents** of admission and of the room (R75.4, R77.2) they
  are numbered entries of the minutes book and of the daily report.

Document numbers are compared in a normal form (:func:`normalize_document`): upper
case, without spaces, dots, hyphens or slashes, so ``12.345-678 a`` at the door
matches ``12345678A`` on the regulator's list.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Any, Callable, Iterable, Sequence
from zoneinfo import ZoneInfo

from twisted.internet.defer import Deferred

from hall_server.hall.roles import Role
from protocol.chain import Record
from protocol.errors import N_, DomainError
from protocol.records import JournalRecord, declared
from protocol.records.admission import (
    BannedListImported,
    ComplaintConfirmed,
    ComplaintRecorded,
    EntryRefused,
    IncidentRecorded,
    VisitorAdmitted,
    VisitorLeft,
)
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState

#: The civil time zone of a hall whose configuration names none (``[hall] timezone``):
#: the composition root hands each module the configured zone, which says what "today"
#: is for bans, visitor records, cash desks, session dates and the minutes.
DEFAULT_TIMEZONE: tzinfo = ZoneInfo("Europe/Andorra")
BANNED_LIST_HEADER = ("document", "name", "until")
MAX_NAME = 200
MAX_DOCUMENT = 32
MAX_TEXT = 4_000
#: The age from which a person may enter and play (R75.1, R97.1).
ADULT_AGE = 18
#: The oldest a birth date may make a visitor: an older one is a typing mistake.
MAX_AGE = 130
#: The identity documents the desks read a person's identity from (a self-exclusion names its kind).
DOCUMENT_TYPES = ("identity card", "passport", "residence permit")
#: The grounds of a refusal at the door, as ``entry_refused`` names them.
BANNED, SELF_EXCLUDED, MINOR, CAPACITY, STAFF = "banned", "self_excluded", "minor", "capacity", "staff"

PERMISSIONS = {
    "admit_visitor": {Role.ADMISSION},
    "record_visitor_left": {Role.ADMISSION},
    "confirm_complaint": {Role.ROOM_CHIEF},
    # The register is the regulator's; loading it is the operator's administrator's
    # responsibility, so a door clerk cannot swap the list the door enforces.
    "import_banned_list": {Role.ADMINISTRATOR},
    "record_complaint": {Role.ADMISSION, Role.ROOM_CHIEF},
    "record_incident": {Role.ADMISSION, Role.ROOM_CHIEF},
}

_DOCUMENT_NOISE = re.compile(r"[\s.\-/]")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def door_words(refusal: str) -> str:
    """A refusal's words as an ``entry_refused`` record keeps them: the ground alone, without the
    "entry refused: " the checks' own words begin with (the record says it is a refusal at the
    door, and every screen and the minutes say so before the words)."""
    prefix = "entry refused: "
    return refusal[len(prefix):] if refusal.lower().startswith(prefix) else refusal


class AdmissionError(DomainError):
    """An admission command refused; the message says why and what to do."""


class BannedListError(AdmissionError):
    """A banned-list file that cannot be imported; the message names the line."""

    def __init__(self, line: int | None, reason: str) -> None:
        self.line = line
        super().__init__(
            f"banned list, line {line}: {reason}; nothing was imported"
            if line is not None
            else f"banned list: {reason}; nothing was imported"
        )


def normalize_document(text: object) -> str:
    """An identity document number in the form it is compared in, or :class:`AdmissionError`."""
    if not isinstance(text, str):
        raise AdmissionError(N_("an identity document number is text, not {text!r}"), text=text)
    document = _DOCUMENT_NOISE.sub("", text).upper()
    if not document:
        raise AdmissionError(N_("give the number of the identity document shown"))
    if not document.isalnum() or not document.isascii():
        raise AdmissionError(N_("an identity document number has letters and digits only, not {text!r}"), text=text)
    if len(document) > MAX_DOCUMENT:
        raise AdmissionError(N_("an identity document number has at most {most} characters"), most=MAX_DOCUMENT)
    return document


#: Characters that make no printable text: bidirectional overrides and isolates (which turn a
#: name around on a screen) besides the control characters, line and paragraph separators.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def person_key(name: str, born: date) -> tuple[str, str]:
    """A person as two documents of theirs both name them: the name without case, accents or extra
    spaces ("JOSÉ  Pérez" and "jose perez" are one), and the birth date."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return " ".join(plain.casefold().split()), born.isoformat()


def control_character(text: str) -> str | None:
    """The first character of ``text`` that is not printable text (NUL, ESC, a bidi override...), as U+XXXX."""
    for char in text:
        if char in _BIDI_CONTROLS or unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return f"U+{ord(char):04X}"
    return None


def local_date(now_ms: int, timezone: tzinfo) -> date:
    """The hall's calendar day at ``now_ms`` in its time zone ``timezone``."""
    return datetime.fromtimestamp(now_ms / 1000, timezone).date()


def age_on(born: date, day: date) -> int:
    """Whole years from ``born`` to ``day`` (born on 29 February: a year older on 1 March in other years)."""
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


def read_birth_date(text: object, today: date) -> date:
    """The birth date read on the document (YYYY-MM-DD), or :class:`AdmissionError`."""
    if not isinstance(text, str) or not _ISO_DATE.fullmatch(text.strip()):
        raise AdmissionError(N_("give the birth date on the document as YYYY-MM-DD, not {text!r} (R75.1)"), text=text)
    try:
        born = date.fromisoformat(text.strip())
    except ValueError:
        raise AdmissionError(N_("{text!r} is not a real date; read the birth date on the document again"),
                             text=text) from None
    if born > today:
        raise AdmissionError(N_("the birth date {born} is after today; read it on the document again"),
                             born=born.isoformat())
    if age_on(born, today) > MAX_AGE:
        raise AdmissionError(N_("the birth date {born} makes the visitor older than {most}; "
                                "read it on the document again"), born=born.isoformat(), most=MAX_AGE)
    return born


def clean_text(value: object, what: str, limit: int) -> str:
    """Non-empty, trimmed text of at most ``limit`` characters, or :class:`AdmissionError`."""
    if not isinstance(value, str) or not value.strip():
        raise AdmissionError(f"give the {what}")
    text = value.strip()
    if len(text) > limit:
        raise AdmissionError(f"the {what} is longer than {limit} characters")
    return text


@dataclass(frozen=True)
class StaffIdentity:
    """A member of staff (owners and managers included) and their identity document (R81.b)."""

    name: str
    document: str


@dataclass(frozen=True)
class BannedPerson:
    """One row of the regulator's register: banned through ``until`` (ISO date) or for ever."""

    document: str
    name: str
    until: str | None

    def banned_on(self, day: date) -> bool:
        return self.until is None or day <= date.fromisoformat(self.until)


@dataclass(frozen=True)
class BannedListImport:
    """Which file the list in force came from."""

    sha256: str
    rows: int
    source: str
    imported_by: str
    time_ms: int
    seq: int


@dataclass
class Visitor:
    number: int
    name: str
    document: str
    admitted_by: str
    time_ms: int
    seq: int


@dataclass
class Complaint:
    number: int
    complainant: str
    text: str
    recorded_by: str
    time_ms: int
    seq: int
    #: The room chief in whose presence it was written (R75.5); None while it waits for the confirmation.
    room_chief: str | None = None


@dataclass
class Incident:
    number: int
    description: str
    visitors: tuple[int, ...]
    recorded_by: str
    role: str
    time_ms: int
    seq: int


@dataclass
class AdmissionState:
    visitors: list[Visitor] = field(default_factory=list)
    left: dict[int, int] = field(default_factory=dict)  # visitor number -> the seq of their leaving
    banned: dict[str, BannedPerson] = field(default_factory=dict)
    banned_list: BannedListImport | None = None
    complaints: list[Complaint] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)


def parse_banned_list(text: str) -> list[BannedPerson]:
    """The rows of a banned-list file, or :class:`BannedListError` naming the first bad line.

    The file is UTF-8 CSV (RFC 4180 quoting, so a name may hold a comma) with the
    header ``document,name,until``; ``until`` is a date ``YYYY-MM-DD`` or empty for a
    ban without end.  Blank lines are skipped; a document listed twice is an error, as
    the regulator's register names each person once.
    """
    if not isinstance(text, str):
        raise BannedListError(None, "the file's content is text")
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    people: list[BannedPerson] = []
    first_line: dict[str, int] = {}
    header_seen = False
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            cells = [cell.strip() for cell in row]
            if not header_seen:
                if tuple(cell.lower() for cell in cells) != BANNED_LIST_HEADER:
                    raise BannedListError(
                        line, f"the header must be {','.join(BANNED_LIST_HEADER)}, found {','.join(cells)!r}"
                    )
                header_seen = True
                continue
            if len(cells) != len(BANNED_LIST_HEADER):
                raise BannedListError(
                    line, f"expected 3 fields (document,name,until), found {len(cells)}"
                )
            raw_document, name, until = cells
            try:
                document = normalize_document(raw_document)
            except AdmissionError as error:
                raise BannedListError(line, str(error)) from None
            if not name:
                raise BannedListError(line, f"document {document} has no name")
            if (bad := control_character(name)) is not None:
                raise BannedListError(
                    line, f"the name of document {document} holds the control character {bad}; a name is printable text"
                )
            if len(name) > MAX_NAME:
                raise BannedListError(line, f"the name of document {document} is longer than {MAX_NAME} characters")
            if until:
                if not _ISO_DATE.fullmatch(until):
                    raise BannedListError(line, f"until {until!r} is not a date YYYY-MM-DD")
                try:
                    date.fromisoformat(until)
                except ValueError:
                    raise BannedListError(line, f"until {until!r} is not a real date") from None
            if document in first_line:
                raise BannedListError(
                    line, f"document {document} is already listed on line {first_line[document]}"
                )
            first_line[document] = line
            people.append(BannedPerson(document, name, until or None))
    except csv.Error as error:
        raise BannedListError(reader.line_num, f"not valid CSV ({error})") from None
    if not header_seen:
        raise BannedListError(None, f"the file is empty; it starts with the header {','.join(BANNED_LIST_HEADER)}")
    if not people:
        # An empty register would lift every ban at once; far likelier a truncated
        # export than the regulator's intent, so it is refused.
        raise BannedListError(None, "the file lists nobody; a truncated file would lift every ban")
    return people


def read_banned_list_file(path: str) -> str:
    """A banned-list file's text, decoded so that its UTF-8 encoding is the file's bytes.

    Newlines are kept as they are, so the SHA-256 recorded at import is the SHA-256 of
    the file on disk (``sha256sum`` gives the same).
    """
    with open(path, "rb") as stream:
        data = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BannedListError(None, f"the file is not UTF-8 (byte {error.start})") from None


class AdmissionModule(ProjectedState):
    """The admission desk's state (rebuilt from the journal) and commands."""

    def __init__(
        self,
        core: CommandCore,
        staff: Iterable[StaffIdentity],
        timezone: tzinfo = DEFAULT_TIMEZONE,
        *,
        capacity: int | None = None,
        counted_since: Callable[[int], int] | None = None,
    ) -> None:
        self.core = core
        self.timezone = timezone
        self.state = AdmissionState()
        #: The hall's authorised capacity in people (R73.5); None: the configuration names none.
        self.capacity = capacity
        #: When the people present are counted from at ``now_ms`` (the hall's last closing, in ms);
        #: by default the start of the hall's day.
        self.counted_since = counted_since or self._start_of_day
        #: Other reasons a person may not come in or open an account, each with its ground:
        #: ``check(document, day, where)`` gives the refusal in words or None (a self-exclusion, R97.2).
        self.door_checks: list[tuple[str, Callable[[str, date, str], str | None]]] = []
        #: The same for the person rather than the document shown: ``check(name, birth date, day,
        #: where)`` (a self-exclusion recorded with another document of the same person, R97.2).
        self.person_checks: list[tuple[str, Callable[[str, date, date, str], str | None]]] = []
        self.staff: dict[str, str] = {}
        for member in staff:
            self.staff[normalize_document(member.document)] = member.name
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("admit_visitor", self.admit_visitor, {"name": str, "document": str, "birth_date": str},
             N_("check a visitor's age (birth date on the document, not kept), the banned list and the hall's "
             "capacity, and open a numbered visitor record")),
            ("record_visitor_left", self.record_visitor_left, {"visitor": int},
             N_("a visitor leaves the hall: no longer counted among the people present (R73.5)")),
            ("import_banned_list", self.import_banned_list, {"content": str, "source": str},
             N_("replace the regulator's banned list with a CSV file's rows")),
            ("record_complaint", self.record_complaint, {"complainant": str, "text": str},
             N_("write a complaint in the complaints book, in the room chief's presence (R75.5)")),
            ("confirm_complaint", self.confirm_complaint, {"number": int},
             N_("the room chief confirms that a complaint was written in their presence (R75.5)")),
            ("record_incident", self.record_incident, {"description": str, "visitors": list[int]},
             N_("record an incident for the minutes book")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries ------------------------------------------------------------------

    def today(self, now_ms: int) -> date:
        return local_date(now_ms, self.timezone)

    def _start_of_day(self, now_ms: int) -> int:
        midnight = datetime.combine(self.today(now_ms), datetime.min.time(), self.timezone)
        return int(midnight.timestamp() * 1000)

    def present(self, now_ms: int) -> list[Visitor]:
        """The people present at ``now_ms`` (R73.5): admitted since the hall last closed, not gone."""
        since = self.counted_since(now_ms)
        inside: list[Visitor] = []
        for visitor in reversed(self.state.visitors):
            if visitor.time_ms < since:
                break
            if visitor.number not in self.state.left:
                inside.append(visitor)
        return inside[::-1]

    def presence(self, now_ms: int) -> dict[str, Any]:
        """What the admission desk shows: the people present, and the authorised capacity."""
        inside = [visitor.number for visitor in self.present(now_ms)]
        return {"present": len(inside), "capacity": self.capacity, "visitors": inside}

    def waiting_complaints(self) -> list[Complaint]:
        """The complaints the room chief has not yet confirmed (R75.5)."""
        return [c for c in self.state.complaints if c.room_chief is None]

    def closing_refusal(self) -> str | None:
        """Why the session may not close yet: a complaint waits for the room chief (R75.5)."""
        waiting = self.waiting_complaints()
        if not waiting:
            return None
        numbers = ", ".join(str(c.number) for c in waiting)
        return (f"complaint(s) {numbers} of the complaints book wait for the room chief's confirmation that they were "
                "written in the room chief's presence (R75.5): confirm them first")

    def is_banned(self, document: str, on: date) -> bool:
        """Whether the person with ``document`` is on the regulator's list on day ``on``."""
        person = self.state.banned.get(normalize_document(document))
        return person is not None and person.banned_on(on)

    def is_staff(self, document: str) -> bool:
        """Whether ``document`` belongs to a member of staff, who may not play (R81.b)."""
        return normalize_document(document) in self.staff

    def ban_of(self, document: str) -> BannedPerson | None:
        return self.state.banned.get(normalize_document(document))

    def visitor(self, number: int) -> Visitor:
        """The visitor record ``number``, or :class:`AdmissionError`."""
        if isinstance(number, bool) or not isinstance(number, int):
            raise AdmissionError(N_("a visitor number is a whole number, not {number!r}"), number=number)
        if not 1 <= number <= len(self.state.visitors):
            raise AdmissionError(N_("there is no visitor record {number}"), number=number)
        return self.state.visitors[number - 1]

    def refuse_if_banned(self, document: str, on: date, where: str) -> None:
        """Raise :class:`AdmissionError` when the register bans ``document`` on ``on``."""
        person = self.ban_of(document)
        if person is not None and person.banned_on(on):
            until = f"until {person.until}" if person.until else "without end date"
            raise AdmissionError(
                f"{where} refused: document {person.document} is on the regulator's banned list "
                f"{until} (R75.2); record an incident if the person insists"
            )

    def refuse_at_the_door(self, document: str, on: date, where: str) -> None:
        """Raise :class:`AdmissionError` when the banned list or a door check refuses ``document``."""
        self.refuse_if_banned(document, on, where)
        refusal = self.door_refusal(document, on, where)
        if refusal is not None:
            raise AdmissionError(refusal)

    def door_refusal(self, document: str, on: date, where: str) -> str | None:
        """The first of :attr:`door_checks` that refuses ``document`` on ``on``, in words."""
        refused = self.door_refusal_ground(document, on, where)
        return refused[1] if refused is not None else None

    def door_refusal_ground(self, document: str, on: date, where: str) -> tuple[str, str] | None:
        """The first of :attr:`door_checks` that refuses ``document`` on ``on``: its ground and its words."""
        for ground, check in self.door_checks:
            refusal = check(document, on, where)
            if refusal is not None:
                return ground, refusal
        return None

    def ban_refusal(self, document: str, on: date, where: str) -> str | None:
        """Why the register refuses ``document`` on ``on``, in words, or None."""
        try:
            self.refuse_if_banned(document, on, where)
        except AdmissionError as refused:
            return str(refused)
        return None

    def capacity_refusal(self, now_ms: int) -> str | None:
        """Why nobody more may come in at ``now_ms``: the people present reach the capacity (R73.5)."""
        if self.capacity is None:
            return None
        present = len(self.present(now_ms))
        if present < self.capacity:
            return None
        return (f"entry refused: {present} people are present and the hall's authorised capacity is {self.capacity} "
                "(R73.5); admit the visitor once someone has left (record the leaving)")

    # --- Commands -----------------------------------------------------------------

    def admit_visitor(self, actor: Actor, name: str, document: str, birth_date: str) -> Deferred[list[Record]]:
        """Check a visitor's age, the banned list, the door's other checks and the hall's capacity;
        admit them with the next visitor number, or journal the refusal and its ground."""

        def decide(now: int) -> list[JournalRecord]:
            visitor_name = clean_text(name, "visitor's name", MAX_NAME)
            normal = normalize_document(document)
            if self.state.banned_list is None:
                raise AdmissionError(N_(
                    "the regulator's banned list has not been imported; nobody can be admitted "
                    "until an administrator imports it (R75.2)"
                ))
            today = self.today(now)
            born = read_birth_date(birth_date, today)
            refused = self._door_refusal(normal, today, now, age_on(born, today), visitor_name, born)
            if refused is not None:
                # A refusal at the door is a fact of the day: journaled, shown to the desk, in the minutes.
                ground, reason = refused
                return [EntryRefused(document=normal, name=visitor_name, reason=door_words(reason), ground=ground)]
            return [VisitorAdmitted(number=len(self.state.visitors) + 1, name=visitor_name, document=normal,
                                    age_checked=True)]

        return self.core.execute(actor, "admit_visitor", decide)

    def _door_refusal(self, document: str, today: date, now_ms: int, age: int, name: str,
                      born: date) -> tuple[str, str] | None:
        """The ground and words of the first reason the door refuses this person, or None."""
        if age < ADULT_AGE:
            return MINOR, (f"entry refused: the visitor is {age}, under {ADULT_AGE}; minors may not enter or play "
                           "(R75.1, R97.1)")
        if (banned := self.ban_refusal(document, today, "entry")) is not None:
            return BANNED, banned
        if (member := self.staff.get(document)) is not None:
            # A visitor record is a player's way in (the cashier opens accounts on it): staff,
            # owners and managers may not play (R81.b), so none is admitted as a visitor.
            return STAFF, (f"document {document} belongs to {member}, a member of this hall's staff; staff may not play "
                           "(R81.b), so a member of staff is not admitted as a visitor")
        if (other := self.door_refusal_ground(document, today, "entry")) is not None:
            return other
        for ground, check in self.person_checks:
            if (refusal := check(name, born, today, "entry")) is not None:
                return ground, refusal
        if (full := self.capacity_refusal(now_ms)) is not None:
            return CAPACITY, full
        return None

    def record_visitor_left(self, actor: Actor, visitor: int) -> Deferred[list[Record]]:
        """Visitor ``visitor`` leaves the hall: no longer among the people present (R73.5)."""

        def decide(now: int) -> list[JournalRecord]:
            person = self.visitor(visitor)
            if person.number in self.state.left:
                raise AdmissionError(N_("visitor {visitor} ({name}) has already left (record {seq})"),
                                     visitor=person.number, name=person.name, seq=self.state.left[person.number])
            if person.time_ms < self.counted_since(now):
                raise AdmissionError(N_("visitor {visitor} ({name}) was admitted before the hall last closed, "
                                        "and is no longer counted among the people present"),
                                     visitor=person.number, name=person.name)
            return [VisitorLeft(number=person.number)]

        return self.core.execute(actor, "record_visitor_left", decide)

    def import_banned_list(self, actor: Actor, content: str, source: str) -> Deferred[list[Record]]:
        """Replace the banned list with the rows of a CSV file (whole file or nothing)."""

        def decide(now: int) -> list[JournalRecord]:
            source_name = clean_text(source, "file's name", MAX_NAME)
            if (bad := control_character(source_name)) is not None:
                raise AdmissionError(N_("the file's name holds the control character {bad}; give it as printable text"),
                                     bad=bad)
            people = parse_banned_list(content)
            digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
            current = self.state.banned_list
            if current is not None and current.sha256 == digest:
                raise AdmissionError(
                    N_("this file (SHA-256 {digest}...) is already the list in force, imported "
                       "by {name} in record {seq}; nothing to do"),
                    digest=digest[:16], name=current.imported_by, seq=current.seq)
            return [
                BannedListImported(
                    source=source_name,
                    sha256=digest,
                    rows=len(people),
                    replaces=current.sha256 if current else None,
                    people=tuple((person.document, person.name, person.until) for person in people),
                )
            ]

        return self.core.execute(actor, "import_banned_list", decide)

    def record_complaint(self, actor: Actor, complainant: str, text: str) -> Deferred[list[Record]]:
        """Write a complaint in the complaints book (R75.5), as the complainant gives it.

        Written by the room chief, it was written in the room chief's presence; written at the
        door, it waits for the room chief's confirmation (:meth:`confirm_complaint`).
        """

        def decide(now: int) -> list[JournalRecord]:
            witnessed = str(actor.role) == Role.ROOM_CHIEF
            return [
                ComplaintRecorded(
                    number=len(self.state.complaints) + 1,
                    complainant=clean_text(complainant, "complainant's name", MAX_NAME),
                    text=clean_text(text, "complaint's text", MAX_TEXT),
                    witnessed=witnessed,
                    room_chief=actor.name if witnessed else None,
                )
            ]

        return self.core.execute(actor, "record_complaint", decide)

    def confirm_complaint(self, actor: Actor, number: int) -> Deferred[list[Record]]:
        """The room chief confirms that complaint ``number`` was written in their presence (R75.5)."""

        def decide(now: int) -> list[JournalRecord]:
            if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(self.state.complaints):
                raise AdmissionError(N_("there is no complaint number {number!r} in the book"), number=number)
            complaint = self.state.complaints[number - 1]
            if complaint.room_chief is not None:
                raise AdmissionError(N_("complaint {number} was written in the presence of {name} already (R75.5)"),
                                     number=number, name=complaint.room_chief)
            return [ComplaintConfirmed(number=number)]

        return self.core.execute(actor, "confirm_complaint", decide)

    def record_incident(
        self, actor: Actor, description: str, visitors: Sequence[int]
    ) -> Deferred[list[Record]]:
        """Record an incident for the minutes (R75.4, R77.2), naming the visitor records involved."""

        def decide(now: int) -> list[JournalRecord]:
            text = clean_text(description, "incident's description", MAX_TEXT)
            if not isinstance(visitors, (list, tuple)):
                raise AdmissionError(N_("list the visitor numbers involved (an empty list if none)"))
            numbers = [self.visitor(number).number for number in visitors]
            if len(set(numbers)) != len(numbers):
                raise AdmissionError(N_("a visitor is named twice in the incident"))
            return [IncidentRecorded(number=len(self.state.incidents) + 1, description=text, visitors=tuple(numbers))]

        return self.core.execute(actor, "record_incident", decide)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state = AdmissionState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        match event:
            case VisitorAdmitted():
                state.visitors.append(
                    Visitor(event.number, event.name, event.document, event.who.name, record.time_ms, record.seq)
                )
            case VisitorLeft():
                state.left[event.number] = record.seq
            case BannedListImported():
                state.banned = {doc: BannedPerson(doc, name, until) for doc, name, until in event.people}
                state.banned_list = BannedListImport(
                    event.sha256, event.rows, event.source, event.who.name, record.time_ms, record.seq
                )
            case ComplaintRecorded():
                # A complaint journaled before the room chief's confirmation existed (no ``witnessed``) stands as written.
                witness = event.room_chief if event.witnessed is not None else event.who.name
                state.complaints.append(
                    Complaint(event.number, event.complainant, event.text, event.who.name, record.time_ms,
                              record.seq, witness)
                )
            case ComplaintConfirmed():
                state.complaints[event.number - 1].room_chief = event.who.name
            case IncidentRecorded():
                state.incidents.append(
                    Incident(event.number, event.description, event.visitors, event.who.name, event.who.role,
                             record.time_ms, record.seq)
                )
