"""The regulator receiver page's languages: every text of ``regulator/web.py`` (extracted with Babel's
Python extractor as ``babel-regulator.cfg`` names it) is translated in each of the regulator's own
catalogs (``regulator/locale``), its placeholders kept, no sentence left in English; the page's times
are Andorra's, 24-hour, its dates and amounts as the language writes them."""

from __future__ import annotations

import re
import string
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from regulator import i18n

REPO = Path(__file__).resolve().parents[2]
KEYWORDS = {**DEFAULT_KEYWORDS, "t": None, "tn": (1, 2)}


def extracted() -> dict[Any, str]:
    with (REPO / "babel-regulator.cfg").open() as file:
        method_map, options_map = parse_mapping_cfg(file)
    found: dict[Any, str] = {}
    for filename, line, message, _, _ in extract_from_dir(str(REPO), method_map, options_map, keywords=KEYWORDS):
        found.setdefault(message, f"{filename}:{line}")
    return found


MESSAGES = extracted()


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_t_call_of_the_page_is_extracted() -> None:
    """A t("...") Babel's Python extractor does not see (inside an f-string, say) would stay English."""
    ids = {m if isinstance(m, str) else m[0] for m in MESSAGES}
    source = (REPO / "regulator" / "web.py").read_text()
    called = re.findall(r"""\bt\((["'])((?:(?!\1)[^\\]|\\.)*)\1[,)]""", source)
    assert len(called) > 50
    missed = [text for _, text in called if text not in ids]
    assert not missed, f"t() calls not extracted (inside an f-string?): {missed}"


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_text_of_the_page_is_translated_in_each_catalog(language: str) -> None:
    with (i18n.LOCALE_DIR / language / "LC_MESSAGES" / "regulator.po").open("rb") as file:
        catalog = read_po(file, locale=language)
    missing, empty, broken = [], [], []
    for msgid, where in MESSAGES.items():
        message = catalog.get(msgid)
        if message is None:
            missing.append(f"{msgid!r} ({where})")
            continue
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(forms) or message.fuzzy:
            empty.append(repr(msgid))
            continue
        wanted = placeholders(msgid if isinstance(msgid, str) else msgid[1])
        broken += [f"{msgid!r} -> {form!r}" for form in forms if placeholders(str(form)) - {"n"} != wanted - {"n"}]
        if language != "en":
            english = msgid if isinstance(msgid, str) else msgid[0]
            alike = {"bingo", "superbingo", "Signatures (openssl cms)"}
            if english not in alike and english in forms:
                broken.append(f"{msgid!r} left in English")
    assert not missing, f"{language}: not in regulator.po: " + "; ".join(missing)
    assert not empty, f"{language}: untranslated or fuzzy: " + "; ".join(empty)
    assert not broken, f"{language}: " + "; ".join(broken)


def test_times_are_24_hour_in_andorra_and_dates_as_the_language_writes_them() -> None:
    evening = int(datetime(2026, 12, 5, 19, 5, 9, tzinfo=timezone.utc).timestamp() * 1000)
    summer = int(datetime(2026, 7, 14, 22, 30, 0, tzinfo=timezone.utc).timestamp() * 1000)
    assert i18n.Words("ca").moment(evening) == "5/12/26 20:05:09"  # UTC+1 in winter
    assert i18n.Words("ca").moment(summer) == "15/7/26 00:30:00"  # UTC+2 in summer: the next day
    assert i18n.Words("fr").moment(evening) == "05/12/2026 20:05:09"
    assert i18n.Words("en").moment(evening) == "12/5/26 20:05:09"
    assert i18n.Words("ca").moment(0) == "-"


def test_the_page_speaks_catalan_unless_asked_and_writes_money_by_cldr() -> None:
    assert i18n.language_of(None) == "ca" and i18n.language_of("de") == "ca" and i18n.language_of("fr") == "fr"
    words = i18n.Words("ca")
    assert words.money(123456) == "1.234,56\xa0€" and words.number(12345) == "12.345"
    assert words.t("Regulator's receiver") == "Receptor del regulador"
    assert words.tn("{n} alert(s)", "{n} alert(s)", 1) == "1 alerta"
    assert words.tn("{n} alert(s)", "{n} alert(s)", 3) == "3 alertes"
    assert i18n.Words("en").tn("{n} alert(s)", "{n} alert(s)", 3) == "3 alert(s)"
