"""The receiver's page: who feeds it, how far each feed stands, each hall's last games as
replayed, each day replayed card by card from its audit export, and the alerts (read-only).

``GET /`` is one HTML page written on the server (no script), refreshed by the browser
every few seconds, in Catalan (the regulator is Andorra's) or the language ``?lang=`` names
(``es``, ``fr``, ``en``; :mod:`regulator.i18n`), its times 24-hour in Andorra's time; ``GET /api/status`` is the same as JSON (what ``bingo regulator
status --json`` prints); ``GET /api/records?sender=S&after=N&limit=L&type=T`` is a page
of the records a sender fed, as it signed them (the regulator consults the central
server's and each hall's records here, R95.3), at most :data:`MAX_PAGE` a page, with
``next_after`` for the next.  Every other method is refused.

Who reads it is the client certificate's to say: the page listens over mutual TLS with
the receiver's certificate (a connection without a certificate of the operator's
authority has no handshake), and answers only a ``regulator`` or an ``inspector``
certificate; any other role gets 403 before anything is read.  An inspector reads the
records without the personal fields their types declare (a visitor's name and document
number).  Every read of the store and of the receiver's journal runs in a thread pool,
never on the reactor that takes the feeds; each is bounded (a page of records is one
query with a limit).
"""

from __future__ import annotations

import datetime
import html
import json
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from babel.numbers import format_decimal

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web import resource
from twisted.web.server import NOT_DONE_YET, Request

from protocol.chain import Record
from protocol.records import REGISTRY
from protocol.records.base import personal_keys
from protocol.regulator_feed import record_to_dict
from regulator.days import Awaited, DayVerdict, replayed_games, verdict_dict
from regulator.games import KEPT, CheckedGame
from regulator.i18n import LANGUAGE_NAMES, TIME_ZONE, Words, language_of
from regulator.receiver import ALERT_KINDS, Receiver
from regulator.reports import ReceivedReport, ReportInbox
from regulator.store import Alert, SenderPosition, Store
from server_kit.core import RunBlocking, run_inline
from server_kit.pki import PkiError, Role, presented_identity

log = Logger()
#: The certificates that may read the page: the regulator's, and an inspector's (without personal data).
READERS = frozenset({Role.regulator, Role.inspector})
#: Records a page of ``/api/records`` holds by default, and at most.
PAGE, MAX_PAGE = 100, 500

#: Seconds between the page's own refreshes.
REFRESH_S = 5
#: The records that are notices to the regulator, shown as such (R74.2).
NOTICES = ("opening_hours_notified", "prize_terms_notified")


def _english(msgid: str, **params: Any) -> str:
    return msgid.format(**params) if params else msgid


def notice_text(record: Record, words: Words | None = None) -> str:
    """A notice to the regulator for a person: in English with UTC times (``/api/status``, the CLI), or in
    ``words``' language with Andorra's times (the page)."""
    t = words.t if words is not None else _english
    moment = words.moment if words is not None else when
    p = record.payload
    if record.type == "opening_hours_notified":
        if p.get("previous"):
            return t("opening hours: {hours}, replacing {previous}; applies from {date}", hours=p["hours"],
                     previous=p["previous"], date=p["applies_from"])
        return t("opening hours: {hours} (first report); applies from {date}", hours=p["hours"], date=p["applies_from"])
    if record.type == "prize_terms_notified":
        terms = ", ".join(f"{prize_name(term['pattern']['name'], words)} {percent(term['basis_points'], words)}"
                          for term in p["prizes"])
        if p["percentages_changed"]:
            what = t("a change of percentages")
        elif p["combinations_changed"]:
            what = t("a change of winning combinations")
        else:
            what = t("the first terms")
        return t("prize terms ({what}, game {game}): {terms}; apply from {date}", what=what, game=p["game_id"],
                 terms=terms, date=moment(p["applies_from_ms"]))
    return record.type


def prize_name(name: str, words: Words | None) -> str:
    """A prize's or a pattern's name as the records write it, in the page's language when it is one of the game's."""
    if words is None:
        return name
    t = words.t
    return {"line": t("line"), "bingo": t("bingo"), "superbingo": t("superbingo")}.get(name, name)


def percent(basis_points: int, words: Words | None) -> str:
    """Basis points as a percentage: ``12.5%``, ``12,5 %`` in Catalan."""
    if words is None:
        return f"{basis_points / 100:g}%"
    return words.t("{percent}%", percent=format_decimal(basis_points / 100, locale=words.locale))

STYLE = """
body { font: 16px/1.4 system-ui, sans-serif; margin: 0; background: #10141a; color: #e8ecf1; }
header { padding: 14px 24px; background: #1b2230; display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: baseline; }
nav.languages { margin-left: auto; display: flex; gap: 12px; }
nav.languages a { color: #9ecbff; }
nav.languages a[aria-current] { color: #e8ecf1; font-weight: 600; text-decoration: none; }
h1 { font-size: 22px; margin: 0; } h2 { font-size: 18px; margin: 24px 0 8px; }
main { padding: 0 24px 24px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #2a3345; vertical-align: top; }
th { color: #9aa7bb; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #7fd69b; } .alert { color: #ffd0d0; background: #3a1616; }
.state { padding: 3px 10px; border-radius: 6px; white-space: nowrap; }
.none { color: #9aa7bb; }
"""


def when(ms: int) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


#: The alerts the page and ``/api/status`` list, newest first (``alerts_total`` counts them all).
SHOWN_ALERTS = 200


@dataclass(frozen=True)
class Held:
    """What the page shows from the store and the receiver's own journal: read off the reactor."""

    senders: list[SenderPosition]
    alerts: list[Alert]  # the last SHOWN_ALERTS, in the order raised
    alert_counts: dict[str, int]  # each sender's alerts, repeats counted
    verdicts: list[DayVerdict]  # newest first
    reports: list[ReceivedReport]  # newest first
    notices: list[tuple[str, Record]]


@dataclass(frozen=True)
class Checked:
    """What the page shows from the receiver's memory: read on the reactor, where the feeds change it."""

    games: dict[str, list[CheckedGame]]  # each hall's last games, newest first
    awaited: list[Awaited]


def read_held(store: Store, receiver: Receiver | None = None, inbox: ReportInbox | None = None) -> Held:
    """Every database read the page needs, each bounded; blocking (the page runs it in a thread pool)."""
    return Held(store.senders(), store.alerts(last=SHOWN_ALERTS), store.alert_counts(),
                receiver.days.verdicts() if receiver is not None else [],
                inbox.received() if inbox is not None else [], store.of_types(NOTICES))


def checked(receiver: Receiver | None, fold: bool = False) -> Checked:
    """Each hall's last games and the days awaiting their records, as the receiver holds them.

    Only the halls already folded (every sender is, at the serving receiver's start and at
    its hello); with ``fold`` (``bingo regulator status``), the others are folded now."""
    if receiver is None:
        return Checked({}, [])
    if fold:
        for sender in receiver.store.senders():
            receiver.games_of(sender.sender)
    games = {sender: list(reversed(list(hall.checked))) for sender, hall in sorted(receiver.games.items())}
    return Checked(games, receiver.days.awaited())


def status(held: Held, shown: Checked) -> dict[str, Any]:
    """Each sender's position, the last alerts, each hall's last games checked, the days, as plain data."""
    replayed = replayed_games(held.verdicts)
    return {
        "senders": [s.__dict__ for s in held.senders],
        "alerts": [a.__dict__ for a in held.alerts],
        "alerts_total": sum(held.alert_counts.values()),
        "games": {sender: [{**game.__dict__, "prizes": [list(p) for p in game.prizes], "faults": list(game.faults),
                            "verified": game.verified, "replayed_card_by_card": replayed.get((sender, game.game_id))}
                           for game in games] for sender, games in shown.games.items()},
        "days": [verdict_dict(verdict) for verdict in held.verdicts],
        "days_awaiting_records": [awaited.__dict__ for awaited in shown.awaited],
        "reports": [r.__dict__ for r in held.reports],
        "notices": [{"sender": sender, "seq": record.seq, "type": record.type, "time_ms": record.time_ms,
                     "notice": notice_text(record)} for sender, record in held.notices],
    }


def page(held: Held, shown: Checked, now_ms: int, reader: str = "", language: str = "en",
         zone: tzinfo = TIME_ZONE) -> str:
    """The page in ``language`` (English unless asked: the served page asks Catalan unless its reader picks
    another), its times in ``zone`` (Andorra's), 24-hour.  The receiver's findings as journaled (an alert's
    detail, a game's faults, a day's detail) stay in English.

    Every text is a ``t()``/``tn()`` call outside an f-string (Babel's extractor does not read into one)."""
    w = Words(language, zone)
    t, tn, at = w.t, w.tn, w.moment
    senders, alerts = held.senders, held.alerts
    e = html.escape

    def none_row(columns: int, text: str) -> str:
        return f"<tr><td colspan={columns} class=none>{e(text)}</td></tr>"

    rows = "".join(
        f"<tr><td>{e(s.sender)}</td><td class=n>{w.number(s.seq)}</td><td>{at(s.time_ms)}</td>"
        f"<td class=n>{w.number(held.alert_counts.get(s.sender, 0))}</td></tr>"
        for s in senders
    ) or none_row(4, t("No hall or central server has fed this receiver yet."))

    def repeated(a: Alert) -> str:
        if not a.repeats:
            return ""
        more = tn("(and {n} more of its kind within a minute of it, counted, not raised one by one; the last at "
                  "record {seq}, {time})", "(and {n} more of its kind within a minute of it, counted, not raised one "
                  "by one; the last at record {seq}, {time})", a.repeats, seq=a.last_seq, time=at(a.last_time_ms))
        return f" <span class=none>{e(more)}</span>"

    alert_rows = "".join(
        f"<tr class=alert><td>{at(a.time_ms)}</td><td>{e(a.sender)}</td><td>{e(alert_kind(a.kind, w))}</td>"
        f"<td class=n>{a.seq or '-'}</td><td>{e(a.detail)}{repeated(a)}</td></tr>"
        for a in reversed(alerts)
    ) or none_row(5, t("No alert: every record received verified and followed the one before."))
    replayed = replayed_games(held.verdicts)
    held_up_to = {s.sender: s.seq for s in senders}

    def verdict(sender: str, g: CheckedGame) -> str:
        if not g.verified:
            return f"<td class=alert>{e('; '.join(g.faults))}</td>"
        day = replayed.get((sender, g.game_id))
        said = t("verified; replayed card by card ({export})", export=day) if day else t("verified")
        return f"<td class=ok>{e(said)}</td>"

    def prizes(g: CheckedGame) -> str:
        return ", ".join(tn("{prize} {amount} ({n} card(s))", "{prize} {amount} ({n} card(s))", n,
                            prize=prize_name(p, w), amount=w.money(c)) for p, c, n in g.prizes)

    game_rows = "".join(
        f"<tr><td>{e(sender)}</td><td>{e(g.game_id)}</td><td>{at(g.closed_ms)}</td><td class=n>{g.balls}</td>"
        f"<td class=n>{w.number(g.cards_sold)}</td><td>{e(prizes(g))}</td>"
        + verdict(sender, g) + "</tr>"
        for sender, games in shown.games.items()
        for g in games
    ) or none_row(7, t("No game of a hall has been played to its end in the feeds yet."))

    def day_row(d: DayVerdict) -> str:
        if d.verified:
            found = tn("replayed card by card: {n} game(s) verified", "replayed card by card: {n} game(s) verified",
                       len(d.games))
            judged = f"<td class=ok>{e(found)}</td>"
        elif d.verdict == "refused":
            refused = t("not replayed card by card: {detail}", detail=d.detail)
            judged = f"<td class=none>{e(refused)}</td>"
        else:
            judged = f"<td class=alert>{e(d.detail)}</td>"
        records = t("{first} to {last}", first=d.first_seq, last=d.last_seq) if d.last_seq else "-"
        return (f"<tr><td>{at(d.time_ms)}</td><td>{e(d.sender)}</td><td>{e(d.day)}</td><td>{e(records)}</td>"
                f"<td>{e(', '.join(d.games)) or '-'}</td>{judged}</tr>")

    def awaited_row(a: Awaited) -> str:
        upto = t("up to {seq}", seq=a.last_seq)
        waiting = t("waiting for its records (held up to {seq})", seq=held_up_to.get(a.sender, 0))
        return (f"<tr><td>-</td><td>{e(a.sender)}</td><td>{e(a.day)}</td><td>{e(upto)}</td><td>-</td>"
                f"<td class=none>{e(waiting)}</td></tr>")

    day_rows = ("".join(day_row(d) for d in held.verdicts[:20]) + "".join(awaited_row(a) for a in shown.awaited)
                or none_row(6, t("No audit export of a day received yet.")))
    notice_rows = "".join(
        f"<tr><td>{at(record.time_ms)}</td><td>{e(sender)}</td><td class=n>{record.seq}</td>"
        f"<td>{e(notice_text(record, w))}</td></tr>"
        for sender, record in held.notices
    ) or none_row(4, t("No notice received yet."))
    signatures_verified = t("every signature verified")
    report_rows = "".join(
        f"<tr><td>{at(r.time_ms)}</td><td>{e(r.sender)}</td><td>{e(r.name)}</td>"
        + (f"<td class=ok>{e(signatures_verified)}</td>" if r.verified else f"<td class=alert>{e(r.detail)}</td>")
        + "</tr>"
        for r in held.reports[:20]
    ) or none_row(4, t("No signed report received yet."))
    total = sum(held.alert_counts.values())
    alerted = tn("{n} alert(s)", "{n} alert(s)", total) if total else t("no alert")
    state = f'<span class="state {"alert" if total else "ok"}">{e(alerted)}</span>'
    choices = " ".join(
        f'<a href="?lang={code}" hreflang={code} lang={code}' + (" aria-current=true" if code == w.language else "")
        + f">{e(name)}</a>" for code, name in LANGUAGE_NAMES.items())
    # The page's labels, each a t() of its own (see the docstring).
    title = e(t("Regulator's receiver"))
    as_of = e(t("as of {time}", time=at(now_ms)))
    zone_said = e(t("times: {zone}, 24-hour", zone=str(zone)))
    language_label = e(t("Language"))
    sender_label, record_label, replay_label = t("Sender"), t("Record"), t("Replay")

    def head(*labels: str) -> str:
        return "".join(f"<th>{e(label)}</th>" for label in labels)

    feeds = e(t("Feeds"))
    feeds_head = head(sender_label, t("Records held"), t("Last record"), t("Alerts"))
    games_title = e(t("Last games"))
    games_said = e(t("Each hall's last {kept} games played to their end, replayed from their records: the balls, the "
                     "winners and the split of each prize by stake.", kept=KEPT))
    games_head = head(t("Hall"), t("Game"), t("Closed"), t("Balls"), t("Cards"), t("Prizes"), replay_label)
    days_title = e(t("Days replayed card by card"))
    days_said = e(t("Each day's audit export, signed by its sender, checked on the records held: the scenario and "
                    "the result are what the records say, and the replay of the scenario is the result (every "
                    "winning card holds its pattern, every prize follows from the sales)."))
    days_head = head(t("Checked"), sender_label, t("Day"), t("Records"), t("Games"), replay_label)
    notices_title = e(t("Notices"))
    notices_head = head(t("Notified"), sender_label, record_label, t("Notice"))
    reports_title = e(t("Signed reports"))
    reports_head = head(t("Received"), sender_label, t("Report"), t("Signatures (openssl cms)"))
    alerts_title = e(t("Alerts"))
    alerts_said = e(t("Raised on: {kinds}. Each is journaled once in the receiver's signed journal; more of a kind "
                      "from a sender within a minute are counted on the one raised. The last {shown} are listed.",
                      kinds=", ".join(alert_kind(k, w) for k in ALERT_KINDS), shown=SHOWN_ALERTS))
    alerts_head = head(t("Raised"), sender_label, t("Kind"), record_label, t("What"))
    return f"""<!doctype html>
<html lang="{w.language}"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>
<body><header><h1>{title}</h1>{state}<span class=none>{as_of}</span><span class=none>{zone_said}</span>
<span class=none>{e(reader)}</span><nav class=languages aria-label="{language_label}">{choices}</nav></header>
<main>
<h2>{feeds}</h2>
<table id=senders><thead><tr>{feeds_head}</tr></thead>
<tbody>{rows}</tbody></table>
<h2>{games_title}</h2>
<p class=none>{games_said}</p>
<table id=games><thead><tr>{games_head}</tr></thead><tbody>{game_rows}</tbody></table>
<h2>{days_title}</h2>
<p class=none>{days_said}</p>
<table id=days><thead><tr>{days_head}</tr>
</thead><tbody>{day_rows}</tbody></table>
<h2>{notices_title}</h2>
<table id=notices><thead><tr>{notices_head}</tr></thead>
<tbody>{notice_rows}</tbody></table>
<h2>{reports_title}</h2>
<table id=reports><thead><tr>{reports_head}</tr>
</thead><tbody>{report_rows}</tbody></table>
<h2>{alerts_title}</h2>
<p class=none>{alerts_said}</p>
<table id=alerts><thead><tr>{alerts_head}</tr></thead>
<tbody>{alert_rows}</tbody></table>
</main></body></html>
"""


def alert_kind(kind: str, w: Words) -> str:
    """An alert's kind for a person, in the page's language (``gap``: a record missing)."""
    t = w.t
    names = {
        "gap": t("gap"), "bad_signature": t("bad signature"), "broken_chain": t("broken chain"),
        "fenced_epoch": t("fenced epoch"), "key_changed": t("key changed"), "clock_backwards": t("clock backwards"),
        "clock_stepped": t("clock stepped"), "replay_differs": t("replay differs"),
        "report_unverified": t("report unverified"), "audit_differs": t("audit differs"),
        "audit_not_replayed": t("audit not replayed"), "secret_held": t("secret held"),
        "not_registered": t("not registered"),
    }
    return names.get(kind, kind.replace("_", " "))


def reader_of(request: Request) -> tuple[str, Role] | str:
    """The name and role of the certificate on ``request``'s connection when it may read the page;
    otherwise why not, for the 403 answer."""
    try:
        identity = presented_identity(request.transport)
    except PkiError as error:
        return f"the certificate presented names no role of the operator's PKI: {error}"
    if identity is None:
        return "no certificate was presented"
    if identity.role not in READERS:
        article = "an" if str(identity.role)[0] in "aeiou" else "a"
        return f"{article} {identity.role} certificate ({identity.common_name}) may not read it"
    return identity.common_name, identity.role


def shown_record(record: Record, role: Role) -> dict[str, Any]:
    """A record as ``/api/records`` answers it: as its sender signed it (its sealed form) for the
    regulator; for an inspector, without the personal fields its type declares (named in ``withheld``)."""
    plain = record_to_dict(record)
    declared = REGISTRY.get(record.type)
    personal = [key for key in personal_keys(declared) if key in plain["payload"]] if declared is not None else []
    if role is Role.inspector and personal:
        plain["payload"] = {key: value for key, value in plain["payload"].items() if key not in personal}
        plain["withheld"] = personal
    return plain


def one_arg(request: Request, name: str) -> str | None:
    """The first value of the query's ``name``, as text, or None."""
    values = request.args.get(name.encode()) if request.args else None
    return values[0].decode("utf-8", "replace") if values else None


class ReceiverPage(resource.Resource):
    """``/``, ``/api/status`` and ``/api/records``, for a regulator's or an inspector's certificate only.

    ``run`` runs a blocking function off the reactor (a thread pool): every read of the store
    and of the receiver's journal goes through it.
    """

    isLeaf = True

    def __init__(self, store: Store, clock: Any, receiver: Receiver | None = None,
                 inbox: ReportInbox | None = None, run: RunBlocking = run_inline) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.receiver = receiver
        self.inbox = inbox
        self.run = run

    def render(self, request: Request) -> bytes | int:
        request.setHeader(b"Cache-Control", b"no-store")
        request.setHeader(b"X-Content-Type-Options", b"nosniff")
        request.setHeader(b"X-Frame-Options", b"DENY")
        request.setHeader(b"Referrer-Policy", b"no-referrer")
        request.setHeader(b"Content-Security-Policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                                      b"frame-ancestors 'none'")
        reader = reader_of(request)
        if isinstance(reader, str):  # nothing is read before the reader is known
            request.setResponseCode(403)
            return self._json(request, {"error": "the receiver's page is the regulator's: it answers a regulator's "
                                                 f"or an inspector's certificate of the operator's authority; {reader}"})
        if request.method not in (b"GET", b"HEAD"):
            request.setResponseCode(405)
            request.setHeader(b"Allow", b"GET, HEAD")
            return self._json(request, {"error": "the receiver's page is read-only: GET only"})
        path = request.path.rstrip(b"/") or b"/"
        if path == b"/api/records":
            return self._answer(request, self.run(self._records, request.args, reader[1]))
        if path not in (b"/", b"/api/status"):
            request.setResponseCode(404)
            return self._json(request, {"error": f"no page {path.decode('utf-8', 'replace')[:100]!r}: try /, "
                                                 "/api/status or /api/records"})
        reading = self.run(read_held, self.store, self.receiver, self.inbox)

        def shown(held: Held) -> tuple[int, Any]:  # back on the reactor: the receiver's memory is read here
            now = checked(self.receiver)
            if path == b"/api/status":
                return 200, status(held, now)
            language = language_of(one_arg(request, "lang"))
            read_by = Words(language).t("read by {name} ({role})", name=reader[0], role=str(reader[1]))
            text = page(held, now, int(self.clock.seconds() * 1000), read_by, language)
            return 200, text.encode("utf-8")

        return self._answer(request, reading.addCallback(shown))

    def _answer(self, request: Request, answer: "defer.Deferred[tuple[int, Any]]") -> int:
        """Write ``answer`` (a status and JSON-able data, or HTML bytes) when it comes, unless the client left."""
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def send(result: tuple[int, Any]) -> None:
            if gone:
                return
            code, body = result
            request.setResponseCode(code)
            if isinstance(body, bytes):
                request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
                request.write(body)
            else:
                request.write(self._json(request, body))
            request.finish()

        def failed(failure: Failure) -> None:
            log.failure("The receiver's page failed on {path}", failure, path=request.path)
            send((500, {"error": "the receiver failed on this request; its log says why"}))

        answer.addCallback(send).addErrback(failed)
        return NOT_DONE_YET

    def _records(self, args: dict[bytes, list[bytes]], role: Role) -> tuple[int, Any]:
        """``/api/records?sender=S&after=N&limit=L&type=T``: a page of a sender's records as it signed them,
        in order (one bounded query, off the reactor); ``next_after`` is the ``after`` of the next page."""
        def one(name: str) -> str | None:
            values = args.get(name.encode())
            return values[0].decode("utf-8", "replace") if values else None

        sender, after, limit, kind = one("sender"), one("after") or "0", one("limit") or str(PAGE), one("type")
        problem = None
        known = {s.sender for s in self.store.senders()}
        if sender not in known:
            problem = f"sender is one of {sorted(known)}, not {sender!r}" if known else "no sender has fed this receiver"
        elif not after.isdigit() or len(after) > 15:
            problem = f"after is a whole number, not {after[:20]!r}"
        elif not limit.isdigit() or not 1 <= int(limit) <= MAX_PAGE:
            problem = f"limit is a whole number from 1 to {MAX_PAGE}, not {limit[:20]!r}"
        elif kind is not None and not (kind.replace("_", "").isalpha() and kind.islower() and len(kind) <= 64):
            problem = f"a record type is lower-case letters and _, not {kind[:40]!r}"
        if problem is not None:
            return 400, {"error": problem}
        assert sender is not None
        found = self.store.page(sender, int(after), int(limit), kind)
        return 200, {"sender": sender, "after": int(after), "records": [shown_record(r, role) for r in found],
                     "next_after": found[-1].seq if len(found) == int(limit) else None}

    @staticmethod
    def _json(request: Request, value: Any) -> bytes:
        request.setHeader(b"Content-Type", b"application/json")
        return json.dumps(value, sort_keys=True).encode("utf-8")
