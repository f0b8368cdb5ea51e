"""Opening hours and Andorra's working days, as pure rules (R74.1, R74.2).

**Opening hours** are written the way a notice to the regulator words them, and read
by :func:`parse_schedule`::

    every day 16:00-02:00
    mon-thu 16:00-02:00; fri, sat 16:00-04:00; sun 12:00-00:00
    Monday to Saturday 17:00-01:00

Rules are separated by ``;``.  Each names its days (``every day``, a day, a range
``mon-fri`` or ``Monday to Friday``, several joined by ``,`` or ``and``; English names,
whole or in three letters) and then one or more windows ``HH:MM-HH:MM``.  A window whose
end is not after its start runs past midnight (``16:00-02:00`` closes at 02:00 the next
morning; ``00:00-24:00`` is the whole day); it belongs to the day it opens.  A day no
rule names is a day the hall stays closed.  The times are the hall's civil time, in its
time zone: the functions here take and give naive local date-times.

**Working days** (R74.2: a change of the hours applies after three working days without
the regulator's objection) are Monday to Friday less Andorra's public holidays.  The
holidays come from the ``holidays`` package's calendar of Andorra (country ``AD``,
national, not a parish's), which cites the Constitution and the government's yearly
calendar published in the BOPA: 1 January, 6 January (Epiphany), Carnival Monday,
14 March (Constitution Day), Good Friday, Easter Monday, 1 May, Whit Monday, 15 August,
8 September (Our Lady of Meritxell), 1 November, 8 December, 25 and 26 December.
Easter and the days that move with it (Carnival Monday, Good Friday, Easter Monday,
Whit Monday) are computed by that package from the Gregorian Easter (``dateutil.easter``,
the Western computus).  **Ruling:** the government's half-day holidays - the afternoons
of 5 January, Holy Thursday, 24 December and 31 December - are not working days either:
the regulator's offices close for the afternoon, and a change may apply only once the
regulator has had three *whole* working days to object.  docs/minutes.md says so.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

import holidays

#: The categories of Andorra's calendar that are not working days: the public holidays and
#: the government's half-day holidays (see the module's ruling).
HOLIDAY_CATEGORIES = ("public", "government")
#: Working days between a change's notice and the day it applies (R74.2).
WORKING_DAYS = 3

DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_TIME = r"(?<!\d)\d{1,2}:\d{2}(?!\d)"
_WINDOW = re.compile(rf"({_TIME})\s*-\s*({_TIME})")
_FIRST_TIME = re.compile(_TIME)
_MAX_TEXT = 200


class HoursError(ValueError):
    """Opening hours that cannot be read; the message says what to write instead."""


@dataclass(frozen=True)
class Window:
    """Open from ``opens`` for ``minutes`` minutes (past midnight when it runs beyond the day)."""

    opens: time
    minutes: int

    def on(self, day: date) -> tuple[datetime, datetime]:
        """The window opened on ``day``: its opening and closing local date-times."""
        start = datetime.combine(day, self.opens)
        return start, start + timedelta(minutes=self.minutes)

    def text(self) -> str:
        end = (datetime.combine(date(2000, 1, 1), self.opens) + timedelta(minutes=self.minutes)).time()
        closes = "24:00" if self.minutes and end == time(0) and self.opens == time(0) else end.strftime("%H:%M")
        return f"{self.opens.strftime('%H:%M')}-{closes}"


@dataclass(frozen=True)
class Schedule:
    """The windows of each weekday (0 Monday .. 6 Sunday), and the text they were read from."""

    text: str
    days: tuple[tuple[Window, ...], ...]

    def windows_around(self, moment: datetime) -> list[tuple[datetime, datetime]]:
        """Every window opened from eight days before ``moment``'s day to its day, in order."""
        found = []
        for back in range(8, -1, -1):
            day = moment.date() - timedelta(days=back)
            found += [window.on(day) for window in self.days[day.weekday()]]
        return sorted(found)

    def is_open(self, moment: datetime) -> bool:
        """Whether the hall is open at the local date-time ``moment``."""
        return any(opens <= moment < closes for opens, closes in self.windows_around(moment))

    def last_closing(self, moment: datetime) -> datetime | None:
        """When the hall last closed at or before ``moment`` (None: no window in the week before)."""
        ended = [closes for _, closes in self.windows_around(moment) if closes <= moment]
        return max(ended) if ended else None

    def next_opening(self, moment: datetime) -> datetime | None:
        """When the hall opens next after ``moment`` (None: no day of the week is open)."""
        for ahead in range(0, 8):
            day = moment.date() + timedelta(days=ahead)
            for window in self.days[day.weekday()]:
                opens, _ = window.on(day)
                if opens > moment:
                    return opens
        return None


def _minutes(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def _day(word: str, rule: str) -> int:
    word = word.strip().lower().rstrip(".")
    for index, name in enumerate(DAY_NAMES):
        if word in (name, name[:3]):
            return index
    raise HoursError(f"{word!r} in {rule!r} is not a day; write mon, tue, ... or Monday, Tuesday, ...")


def _days(words: str, rule: str) -> set[int]:
    words = words.strip().lower()
    if words in ("every day", "daily", "everyday"):
        return set(range(7))
    if not words:
        raise HoursError(f"{rule!r} names no day; start it with the days, e.g. \"mon-fri 16:00-02:00\"")
    chosen: set[int] = set()
    for part in re.split(r"\s*,\s*|\s+and\s+", words):
        if not part:
            continue
        ends = re.split(r"\s*-\s*|\s+to\s+", part)
        if len(ends) == 1:
            chosen.add(_day(ends[0], rule))
        elif len(ends) == 2:
            first, last = _day(ends[0], rule), _day(ends[1], rule)
            day = first
            chosen.add(day)
            while day != last:
                day = (day + 1) % 7
                chosen.add(day)
        else:
            raise HoursError(f"{part!r} in {rule!r} is not a day or a range of days such as mon-fri")
    return chosen


def parse_schedule(text: object) -> Schedule:
    """The schedule that ``text`` writes, or :class:`HoursError` naming what is wrong."""
    if not isinstance(text, str) or not text.strip() or len(text) > _MAX_TEXT or any(ord(c) < 0x20 for c in text):
        raise HoursError(f"says the opening hours in 1-{_MAX_TEXT} characters on one line, "
                         "e.g. \"every day 16:00-02:00\"")
    days: list[list[Window]] = [[] for _ in DAY_NAMES]
    for rule in (part.strip() for part in text.split(";")):
        if not rule:
            continue
        first = _FIRST_TIME.search(rule)
        if first is None:
            raise HoursError(f"{rule!r} gives no hours; write the days, then HH:MM-HH:MM")
        named = _days(rule[:first.start()], rule)
        rest = rule[first.start():]
        windows = []
        for match in _WINDOW.finditer(rest):
            opens, closes = _minutes(match.group(1)), _minutes(match.group(2))
            if opens >= 24 * 60 or closes > 24 * 60 or any(int(t[-2:]) > 59 for t in match.groups()):
                raise HoursError(f"{match.group(0)!r} in {rule!r}: a day has the hours 00:00 to 24:00")
            length = closes - opens if closes > opens else closes + 24 * 60 - opens
            windows.append(Window(time(opens // 60, opens % 60), length))
        leftover = _WINDOW.sub("", rest).replace(",", " ").replace(" and ", " ").strip()
        if leftover or not windows:
            raise HoursError(f"{rule!r}: after the days come windows HH:MM-HH:MM, not {leftover or rest!r}")
        for day in named:
            days[day] += windows
    if not any(days):
        raise HoursError("the hours open the hall on no day")
    # A week and a day from a Monday (1 January 2024), so a window past midnight meets the next day's.
    spans = sorted(w.on(date(2024, 1, 1) + timedelta(days=n)) for n in range(8) for w in days[n % 7])
    for (_, ends), (starts, _) in zip(spans, spans[1:]):
        if starts < ends:
            raise HoursError(f"two windows overlap on {DAY_NAMES[starts.weekday()].capitalize()} at "
                             f"{starts.strftime('%H:%M')}; give each hour once")
    return Schedule(text.strip(), tuple(tuple(sorted(w, key=lambda w: w.opens)) for w in days))


# --- Working days ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def andorra_holidays(year: int) -> dict[date, str]:
    """Andorra's public and government holidays of ``year`` (the ruling above), with their names."""
    calendar = holidays.country_holidays("AD", years=year, categories=HOLIDAY_CATEGORIES, language="en_US")
    return {day: str(name) for day, name in sorted(calendar.items())}


def is_working_day(day: date) -> bool:
    """Monday to Friday, and not a holiday of Andorra (public, or the government's afternoon off)."""
    return day.weekday() < 5 and day not in andorra_holidays(day.year)


def working_days_after(day: date, count: int = WORKING_DAYS) -> date:
    """The ``count``-th working day after ``day`` (``day`` itself is not counted)."""
    while count:
        day += timedelta(days=1)
        if is_working_day(day):
            count -= 1
    return day


def change_applies_from(notice_day: date) -> date:
    """The day a change of the opening hours noticed on ``notice_day`` applies, the regulator not
    objecting (R74.2): the day after the third whole working day that follows the notice."""
    return working_days_after(notice_day, WORKING_DAYS) + timedelta(days=1)
