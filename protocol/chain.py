"""Hash-chained, signed journal records (DESIGN.md "The journal is the truth").

A record is ``seq`` (1, 2, 3, ...), ``time_ms`` (the server clock), ``type``, a JSON
``payload`` and ``prev`` (the hash of the record before; 64 zeros for the first).
Its *body* is the canonical JSON of those five fields: keys sorted, no spaces, UTF-8.
``hash`` is SHA-256 of the body and ``signature`` the server's Ed25519 signature of
the body, so a record checks with stock tools::

    openssl pkeyutl -verify -pubin -inkey hall-journal.pub.pem -rawin \\
        -in record-42.body -sigfile record-42.sig

:func:`verify_chain` names the first record that was altered (hash or signature),
removed or inserted (sequence gap or repeat) or moved (``prev`` link broken).

The *head* is the last record's ``seq`` and ``hash`` kept outside the database and
signed with the same key (:func:`sign_head`): its body is the canonical JSON of
``format``, ``seq`` and ``hash``.  Records cut from the end of the journal are found
against it; a head that is missing while records exist, unsigned, or signed by
another key is itself a fault, so deleting or rewriting it hides nothing.

The first record of a journal opened by the hall server is :data:`OPENING`, written
by an explicit initialisation: an empty journal with no head is the only journal that
may be started afresh.

**Sealed secrets.**  A record that holds a secret (a PIN's hash, a terminal token's
hash: the fields its declaration marks secret) carries, under :data:`SEALED_KEY`, a
random nonce for each: ``"sealed": {"pin_hash": "<32 hex>"}``.  Its body holds, in
each secret's place, the secret's *commitment* instead of the secret:
``{"commitment": HMAC-SHA256(nonce, canonical JSON of the value)}``, and no
``sealed`` key (:func:`signed_payload`).  So the record's :func:`sealed_form` - its
payload as the body holds it, every secret replaced by its commitment - has the very
same body, hash and signature, and verifies anywhere with the journal's public key,
while the secret and its nonce never leave the server (the regulator's feed and the
audit export send the sealed form).  The server's own copy verifies too: its body is
made from the secret and the nonce.  A record without ``sealed`` (every record of a
journal written before, and every record that holds no secret) is signed over its
payload as it is, as it always was.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from protocol.compact_json import AS_JSON_REFUSES
from protocol.errors import N_, DomainError, Phrase, Template

GENESIS = "0" * 64
HEAD_FORMAT = "bingo-journal-head/1"
#: The type of the first record of a journal: its explicit, journaled initialisation.
OPENING = "journal_opened"


#: How a fault names the head kept outside the database, unless it names the head's file.
THE_HEAD = N_("the journal head")


def head_file(path: object) -> Phrase:
    """How a fault names the journal's head by its file."""
    return Phrase(N_("the journal head file {path}"), path=path)


#: A record's faults, in the catalogs' words (the console says them in its reader's language).
ALTERED = N_("its content does not match its hash (altered)")
UNLINKED = N_("does not follow the record before it (inserted, removed or reordered)")
FORGED = N_("its signature does not verify (altered or forged)")


class ChainError(DomainError):
    """A journal that does not verify; the message names the first bad record.

    ``reason`` is a template of the catalogs filled from ``params`` (the check's fault said in
    the console's language: ``DomainError``'s ``template``), or a text as it reads."""

    def __init__(self, seq: int | None, reason: str, **params: Any) -> None:
        self.seq = seq
        if not isinstance(reason, Template):
            super().__init__(f"record {seq}: {reason}" if seq is not None else reason)
        elif seq is None:
            super().__init__(reason, **params)
        else:
            super().__init__(N_("record {seq}: {fault}"), seq=seq, fault=Phrase(reason, **params))


#: The one encoder of canonical JSON (``json.dumps`` would make one for each call).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: one byte string for one value."""
    return _CANONICAL.encode(value).encode()


#: orjson's options for :func:`canonical_json_without_floats`: keys sorted; what ``json`` refuses, refused.
_FAST = orjson.OPT_SORT_KEYS | AS_JSON_REFUSES


def canonical_json_without_floats(value: Any) -> bytes:
    """:func:`canonical_json` of a value that holds no float, made by orjson: the same bytes, about
    fourteen times sooner for a video bingo play's body (0.9 us against 12.9 us).

    orjson writes text, whole numbers, truths, null, arrays (tuples too) and objects (their
    subclasses too) as ``json`` does here: the same escapes (``\\"``, ``\\\\``, the control
    characters; nothing else, in UTF-8), keys sorted by code point.  A float it writes its own
    way (``1e-05`` as ``0.00001``, NaN as ``null``): a caller passes only values that cannot hold
    one, as the records of a type whose fields are all whole numbers, text, truths and shapes
    of them (:func:`protocol.records.base.holds_no_float`).  What orjson does not take (a whole number
    beyond 64 bits, a key that is not text, text that is not UTF-8, a type JSON does not have)
    goes to :func:`canonical_json`, which writes it or refuses it as it always did.
    """
    try:
        return orjson.dumps(value, option=_FAST)
    except orjson.JSONEncodeError:
        return canonical_json(value)


#: The payload key of a record's sealed secrets: each secret field's name and its commitment's nonce.
SEALED_KEY = "sealed"
#: The key of the object that stands for a secret in a record's body and its sealed form.
COMMITMENT_KEY = "commitment"
_NONCE = re.compile(r"(?:[0-9a-f]{2}){16,64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def commitment(nonce: str, value: Any) -> str:
    """The commitment to a secret ``value``: HMAC-SHA256 keyed with the nonce's bytes, of its canonical JSON."""
    return hmac.new(bytes.fromhex(nonce), canonical_json(value), hashlib.sha256).hexdigest()


def is_commitment(value: Any) -> bool:
    """Whether ``value`` is what stands for a secret in a sealed form: ``{"commitment": <64 hex>}``."""
    return (isinstance(value, Mapping) and len(value) == 1 and isinstance(value.get(COMMITMENT_KEY), str)
            and _HEX64.fullmatch(value[COMMITMENT_KEY]) is not None)


def signed_payload(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """The payload as a record's body holds it: with :data:`SEALED_KEY`, each sealed secret
    replaced by its commitment and the nonces left out; without, the payload as it is.

    A ``sealed`` that is not a map of the payload's own keys to hex nonces is not a seal:
    the payload is signed as it is then, so a record whose seal was tampered with no
    longer matches its hash.
    """
    sealed = payload.get(SEALED_KEY) if isinstance(payload, Mapping) else None
    if sealed is None:
        return payload
    if not isinstance(sealed, Mapping) or not sealed:
        return payload
    shown = {key: value for key, value in payload.items() if key != SEALED_KEY}
    for name, nonce in sealed.items():
        if name not in shown or not isinstance(nonce, str) or _NONCE.fullmatch(nonce) is None:
            return payload
        shown[name] = {COMMITMENT_KEY: commitment(nonce, shown[name])}
    return shown


def body(seq: int, time_ms: int, type: str, payload: Mapping[str, Any], prev: str,
         encode: Callable[[Any], bytes] = canonical_json) -> bytes:
    """The bytes a record's hash and signature cover; ``encode`` is :func:`canonical_json` or, for a
    payload that holds no float, :func:`canonical_json_without_floats` (the same bytes)."""
    return encode({"seq": seq, "time_ms": time_ms, "type": type, "payload": signed_payload(payload), "prev": prev})


@dataclass(frozen=True)
class Record:
    seq: int
    time_ms: int
    type: str
    payload: Mapping[str, Any]
    prev: str
    hash: str
    signature: str

    @property
    def body(self) -> bytes:
        return body(self.seq, self.time_ms, self.type, self.payload, self.prev)


def sealed_form(record: Record) -> Record:
    """``record`` as it may leave its server: each sealed secret replaced by its commitment.

    The same body, hash and signature: it verifies with the journal's public key like
    the record itself.  A record that seals nothing is returned as it is.
    """
    shown = signed_payload(record.payload)
    return record if shown is record.payload else replace(record, payload=shown)


@dataclass(frozen=True)
class Head:
    """The signed (seq, hash) of the journal's last record, as kept outside the database."""

    seq: int
    hash: str
    signature: str

    @property
    def body(self) -> bytes:
        return head_body(self.seq, self.hash)

    def to_dict(self) -> dict[str, Any]:
        return {"format": HEAD_FORMAT, "seq": self.seq, "hash": self.hash, "signature": self.signature}


def head_body(seq: int, hash: str) -> bytes:
    """The byte string a head's signature covers."""
    return canonical_json({"format": HEAD_FORMAT, "seq": seq, "hash": hash})


def sign_head(key: Ed25519PrivateKey, record: Record) -> Head:
    """The head naming ``record`` as the journal's last, signed with the journal key."""
    return Head(record.seq, record.hash, key.sign(head_body(record.seq, record.hash)).hex())


def head_from_dict(data: Any, where: str = THE_HEAD) -> Head:
    """A head as stored; :class:`ChainError` unless it has the head's fields and format."""
    unsigned = ChainError(None, N_("{where} is not a signed head (unsigned, or rewritten by hand)"), where=where)
    if not isinstance(data, dict) or data.get("format") != HEAD_FORMAT:
        raise unsigned
    seq, hash, signature = data.get("seq"), data.get("hash"), data.get("signature")
    if (
        isinstance(seq, bool) or not isinstance(seq, int) or seq < 1
        or not isinstance(hash, str) or not isinstance(signature, str)
    ):
        raise unsigned
    return Head(seq, hash, signature)


def check_head(head: Head, public_key: Ed25519PublicKey, where: str = THE_HEAD) -> None:
    """Raise :class:`ChainError` unless ``head`` is signed by ``public_key``."""
    try:
        public_key.verify(bytes.fromhex(head.signature), head.body)
    except (InvalidSignature, ValueError):
        raise ChainError(None, N_("{where} (record {record}) is not signed by the journal's key (rewritten or forged)"),
                         where=where, record=head.seq) from None


def _out_of_sequence(seq: int, expected_seq: int) -> ChainError:
    """Record ``seq`` where ``expected_seq`` was due: one seen before, or the ones between missing."""
    if seq < expected_seq:
        return ChainError(seq, N_("appears again after record {before} (inserted or reordered)"), before=expected_seq - 1)
    return ChainError(expected_seq, N_("is missing: the journal jumps from {before} to {after}"),
                      before=expected_seq - 1, after=seq)


#: The signature of a record sealed and not yet signed (:func:`seal` without a key).
UNSIGNED = ""


def seal(
    key: Ed25519PrivateKey | None,
    previous: Record | None,
    time_ms: int,
    type: str,
    payload: Mapping[str, Any],
    encode: Callable[[Any], bytes] = canonical_json,
) -> Record:
    """The record that follows ``previous`` (or the first one), hashed and signed; its body made
    by ``encode`` (:func:`body`).

    Without a key it is hashed and linked but not yet signed (:data:`UNSIGNED`): the
    journal signs it as it stores it (:func:`signed`), off the thread that decides, so
    the order and the chain are fixed here and the signature, which nothing decided
    depends on, costs that thread nothing.  No unsigned record is ever stored.
    """
    seq = previous.seq + 1 if previous else 1
    prev = previous.hash if previous else GENESIS
    data = body(seq, time_ms, type, payload, prev, encode)
    record = Record(
        seq=seq,
        time_ms=time_ms,
        type=type,
        payload=payload,
        prev=prev,
        hash=hashlib.sha256(data).hexdigest(),
        signature=key.sign(data).hex() if key is not None else UNSIGNED,
    )
    if key is None:
        record.__dict__[_SEALED_BODY] = data  # kept for the signature: the body is not made twice
    return record


_SEALED_BODY = "_sealed_body"


def signed(sign: Callable[[bytes], bytes], records: Iterable[Record]) -> list[Record]:
    """``records`` with a signature each: those sealed unsigned are signed with ``sign`` (Ed25519 of the body)."""
    out = []
    for record in records:
        if record.signature != UNSIGNED:
            out.append(record)
            continue
        data = record.__dict__.pop(_SEALED_BODY, None) or record.body
        made = object.__new__(Record)  # the record with its signature: a copy without dataclasses.replace's checks
        made.__dict__.update(record.__dict__)
        made.__dict__["signature"] = sign(data).hex()
        out.append(made)
    return out


_BODY_OPENS = b'{"payload":'
_BODY_PREV = b',"prev":"'


def _payload_text(payload: Mapping[str, Any], body: bytes) -> str | None:
    """The payload's canonical JSON, cut out of the record's body, or None when the body does not hold it as it is.

    The body's keys are sorted, so it opens with the payload and ``"prev"`` follows it; a
    ``,"prev":"`` inside the payload comes before that one (in a string its quotes would be
    escaped).  A record that seals secrets signs their commitments, not the payload stored.
    """
    if signed_payload(payload) is not payload or not body.startswith(_BODY_OPENS):
        return None
    return body[len(_BODY_OPENS) : body.rindex(_BODY_PREV)].decode()


def stored_payload(record: Record) -> str:
    """``record``'s payload as the journal stores it: its canonical JSON, as the journal noted it at
    its commit (:func:`note_stored`), or cut from the body it was sealed with while that is kept
    (until it is signed: :func:`signed`)."""
    noted = record.__dict__.get(_STORED_TEXT)
    if noted is not None:
        return noted  # type: ignore[no-any-return]
    body = record.__dict__.get(_SEALED_BODY)
    text = _payload_text(record.payload, body) if body is not None else None
    return text if text is not None else canonical_json(record.payload).decode()


_STORED_TEXT = "_stored_payload"


def note_stored(record: Record, text: str) -> None:
    """``record`` keeps ``text``, its payload as the journal stored it (:func:`stored_payload`), beside its fields."""
    record.__dict__[_STORED_TEXT] = text


#: A committed record as a server keeps it in memory to fold it again: its stored columns
#: ``seq``, ``time_ms``, ``type``, the payload as its canonical JSON text, ``prev``, ``hash``,
#: ``signature``.  Strings and integers only, so the cyclic garbage collector leaves it be,
#: where a record's payload is a tree of dicts and lists it walks at each collection.
KeptRecord = tuple[int, int, str, str, str, str, str]


def as_kept(record: Record) -> KeptRecord:
    """``record`` as a server keeps it once committed (:data:`KeptRecord`)."""
    return (record.seq, record.time_ms, record.type, stored_payload(record), record.prev, record.hash,
            record.signature)


def from_kept(row: KeptRecord) -> Record:
    """The record ``row`` keeps, its payload read again as the journal's own reader reads it."""
    seq, time_ms, type, text, prev, hash, signature = row
    return Record(seq=seq, time_ms=time_ms, type=type, payload=json.loads(text), prev=prev, hash=hash,
                  signature=signature)


#: A stored record's columns as the link check reads them: ``seq``, ``time_ms``, ``type``,
#: the payload as its canonical JSON text, ``prev``, ``hash`` (the signature is not read).
StoredRow = tuple[int, int, str, str, str, str]
#: Record types whose JSON string is the name in quotes: the body is then put together from the row's text.
_PLAIN_TYPE = re.compile(r"[a-z0-9_]{1,64}")


def _row_body(seq: int, time_ms: int, type: str, payload: str, prev: str) -> bytes:
    """The body of a stored row, put together from its columns without reading the payload's JSON.

    The journal stores each payload as its canonical JSON, so the body is the row's text
    in place.  With ``prev`` and ``seq`` fixed by the link and ``type`` a plain name, the
    text can be cut into its columns one way only: a row whose text hashes to the
    record's hash holds exactly the record's fields.
    """
    return f'{{"payload":{payload},"prev":"{prev}","seq":{seq},"time_ms":{time_ms},"type":"{type}"}}'.encode()


def verify_links(rows: Iterable[StoredRow], through: tuple[int, str], where: str = N_("its signed checkpoint")) -> int:
    """Check records 1 to ``through[0]`` as stored: each hash of its content and each link,
    the last being ``through[1]`` (the hash ``where`` names); the signatures are not
    checked.  Returns ``through[0]``.

    This is how a start checks the records its checkpoint stands for without folding
    them: with the last hash pinned by a signature (the checkpoint's, the head's), a
    record changed anywhere before it breaks a hash or a link, so no signature is
    needed to find it; each record's own signature is checked by ``bingo journal
    verify`` and the pre-session verification.  A row whose text is not put together
    the fast way (:func:`_row_body`) is read through its JSON and checked as
    :func:`verify_chain` does.  Raises :class:`ChainError` naming the first fault.
    """
    end, anchor = through
    expected_seq, prev = 1, GENESIS
    sha256 = hashlib.sha256
    for seq, time_ms, type, payload, stored_prev, hash in rows:
        if seq > end:
            break
        if seq != expected_seq:
            raise _out_of_sequence(seq, expected_seq)
        if not (_PLAIN_TYPE.fullmatch(type) and sha256(_row_body(seq, time_ms, type, payload, stored_prev)).hexdigest() == hash):
            try:
                data = body(seq, time_ms, type, json.loads(payload), stored_prev)
            except ValueError:
                data = b""
            if sha256(data).hexdigest() != hash:
                raise ChainError(seq, ALTERED)
        if stored_prev != prev:
            raise ChainError(seq, UNLINKED)
        prev = hash
        expected_seq += 1
    if expected_seq - 1 < end:
        raise ChainError(expected_seq, N_("is missing: the journal ends at {last} before record {end}"),
                         last=expected_seq - 1, end=end)
    if prev != anchor:
        raise ChainError(end, N_("differs from the record {where} names"), where=where)
    return end


def verify_chain(
    records: Iterable[Record],
    public_key: Ed25519PublicKey,
    *,
    head: Head | None,
    where: str = THE_HEAD,
    after: tuple[int, str] | None = None,
) -> int:
    """Check every record in order and the journal's end against ``head``; returns how many.

    ``head`` is the signed head kept outside the database, or ``None`` when there is
    none: then the journal must be empty (never started), since a journal cut short at
    its end is otherwise indistinguishable from a shorter one.  The journal may run
    past the head (a crash between a commit and the head's update, or a server
    committing while this runs): records past it still verify, and nobody without the
    key can add them.  Raises :class:`ChainError` naming the first fault; ``where``
    names the head in the messages (its file, say).

    ``after`` is a ``(seq, hash)`` already trusted (a verified checkpoint's): ``records``
    then start at ``seq + 1`` and the first must follow ``hash``; the head may not stand
    before ``seq`` (the caller anchors at the head then).  Returns the last ``seq``.
    """
    if head is not None:
        check_head(head, public_key, where)
    expected_seq, prev = 1, GENESIS
    at_head: str | None = None
    if after is not None:
        expected_seq, prev = after[0] + 1, after[1]
        if head is not None and head.seq == after[0]:
            at_head = after[1]
    for record in records:
        if record.seq != expected_seq:
            raise _out_of_sequence(record.seq, expected_seq)
        data = record.body
        if hashlib.sha256(data).hexdigest() != record.hash:
            raise ChainError(record.seq, ALTERED)
        if record.prev != prev:
            raise ChainError(record.seq, UNLINKED)
        try:
            public_key.verify(bytes.fromhex(record.signature), data)
        except (InvalidSignature, ValueError):
            raise ChainError(record.seq, FORGED) from None
        prev = record.hash
        expected_seq += 1
        if head is not None and record.seq == head.seq:
            at_head = record.hash
    count = expected_seq - 1
    if head is None:
        if count:
            raise ChainError(None, N_("{where} is missing but the journal holds {count} records: a deleted head could "
                                      "hide records cut from the end, so the journal cannot be trusted"),
                             where=where, count=count)
        return count
    if count < head.seq:
        raise ChainError(count + 1, N_("is missing: the journal ends at {last} but its head says {head}"),
                         last=count, head=head.seq)
    if at_head != head.hash:
        raise ChainError(head.seq, N_("differs from the head kept outside the database"))
    return count
