"""What the catalog tests of every server share: a catalog's texts checked against what the
sources use, and the English texts a page in another language must not show."""

from __future__ import annotations

import re
import string
from typing import Any, Iterable, Mapping, NamedTuple


def placeholders(text: str) -> set[str]:
    """The names of ``text``'s ``{placeholders}``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


class Faults(NamedTuple):
    """What a catalog lacks: texts missing, untranslated or fuzzy, and translations whose placeholders differ."""

    missing: list[str]
    empty: list[str]
    broken: list[str]


def catalog_faults(catalog: Any, messages: Mapping[Any, list[str]]) -> Faults:
    """Each text of ``messages`` (msgid -> where the sources use it) as ``catalog`` holds it: missing,
    untranslated or fuzzy, or with placeholders lost or invented ({n} of a plural aside)."""
    missing, empty, broken = [], [], []
    for msgid, places in messages.items():
        message = catalog.get(msgid)
        if message is None:
            missing.append(f"{msgid!r} ({places[0]})")
            continue
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(forms) or message.fuzzy:
            empty.append(repr(msgid))
            continue
        wanted = placeholders(msgid if isinstance(msgid, str) else msgid[1]) - {"n"}
        for form in forms:
            if placeholders(form) - {"n"} - wanted or (isinstance(msgid, str) and placeholders(form) != placeholders(msgid)):
                broken.append(f"{msgid!r} -> {form!r}")
    return Faults(missing, empty, broken)


class English(NamedTuple):
    """A catalog text written otherwise than English: its msgid, its words between placeholders, and a
    pattern finding it in a page's text (a placeholder matches anything)."""

    english: str
    words: list[str]
    pattern: re.Pattern[str]


def english_texts(catalog: Iterable[Any]) -> list[English]:
    """Every text of ``catalog`` its language writes otherwise than English (each plural form too).
    A one-word text is English only as the whole of a page's text ("Buy"); a longer one anywhere in it."""
    found = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        pairs = zip(message.id, message.string) if isinstance(message.id, tuple) else [(message.id, message.string)]
        for english, translated in pairs:
            if english == translated:
                continue
            literal = [text for text, _, _, _ in string.Formatter().parse(english)]
            if not any(character.isalpha() for character in "".join(literal)):
                continue  # only placeholders and punctuation ("{prize} {after}: {card}"): no English word to find
            pattern = ".+?".join(re.escape(text) for text in literal)
            found.append(English(english, [text for text in literal if text.strip()],
                                 re.compile(rf"^{pattern}$" if " " not in english.strip() else pattern)))
    return found
