"""The hall's languages: every text of the converted screens (extracted with Babel's
extractors as ``babel.cfg`` names them) is translated in each catalog, its placeholders
kept; CLDR money and times; the hall's language in ``hall.toml``."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg

from hall_server import i18n
from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config
from tests.support.catalogs import catalog_faults

REPO = Path(__file__).resolve().parents[2]
KEYWORDS = {**DEFAULT_KEYWORDS, "t": None, "tn": (1, 2)}  # N_ marks a word, as gettext does


def _sources(path: str) -> bool:
    """The folders extraction walks: the packages' (not the tests', the virtualenv's, the docs')."""
    top = Path(path).relative_to(REPO).parts[:1]
    return not top or top[0] in ("hall_server", "server_kit")


def extracted(mapping: str = "babel.cfg") -> dict[Any, list[str]]:
    """Every msgid of the sources a Babel mapping (``babel.cfg``, ``babel-<domain>.cfg``) names, with where
    it is used."""
    with (REPO / mapping).open() as file:
        method_map, options_map = parse_mapping_cfg(file)
    found: dict[Any, list[str]] = {}
    for path, _ in method_map:
        assert "*" in path or (REPO / path).is_file(), f"{mapping} names {path}, which does not exist"
    # From the repository's root: the printed reports' tables are laid out in server_kit, in the hall's words.
    for filename, line, message, _, _ in extract_from_dir(str(REPO), method_map, options_map, keywords=KEYWORDS,
                                                          directory_filter=_sources):
        found.setdefault(message, []).append(f"{filename}:{line}")
    return found


MESSAGES = extracted()
#: Every domain's texts (``hall``'s, from ``babel.cfg``, and each ``babel-<domain>.cfg``'s), as one.
EVERY_MESSAGE = {**MESSAGES, **{m: p for d, mapping in i18n.DOMAINS.items() if d != i18n.DOMAIN
                                for m, p in extracted(mapping).items()}}


def test_the_extraction_finds_the_texts_of_every_converted_screen() -> None:
    files = {where.split(":")[0] for places in EVERY_MESSAGE.values() for where in places}
    for page in ("kiosk.js", "kiosk.html", "vb.js", "vb.html", "board.js", "board.html", "login.js", "login.html",
                 "regulator.js", "regulator.html"):
        assert any(f.endswith(page) for f in files), f"no text extracted from {page}"
    assert "Sign in" in MESSAGES and ("{n} card sold", "{n} cards sold") in MESSAGES
    console = extracted(i18n.DOMAINS["console"])
    files = {where.split(":")[0] for places in console.values() for where in places}
    for page in ("console.js", "console.html"):
        assert any(f.endswith(page) for f in files), f"no text extracted from {page}"
    assert "Record the count" in console and "My desk" in console


def test_no_t_call_of_the_scripts_escapes_the_extractor() -> None:
    """A t("...") Babel's JavaScript lexer does not see (inside a template literal, say) would go untranslated."""
    ids = {m if isinstance(m, str) else m[0] for m in [*EVERY_MESSAGE, *extracted(i18n.DOMAINS["console"])]}
    for script in ("web/static/board.js", "web/static/voice.js", "web/static/login.js",
                   "terminal_gateway/static/kiosk.js", "terminal_gateway/static/vb.js", "web/static/regulator.js",
                   "web/static/console.js"):
        for called in re.findall(r'\bt\("((?:[^"\\]|\\.)*)"[,)]', (REPO / "hall_server" / script).read_text()):
            assert called in ids, f"{script}: t({called!r}) is not extracted (a t() inside a `template`?)"


@pytest.mark.parametrize("domain", sorted(i18n.DOMAINS))
@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_extracted_text_is_translated_in_each_catalog(language: str, domain: str) -> None:
    """Every text a domain's sources use is in that domain's file of each language, translated, its
    placeholders kept."""
    messages = MESSAGES if domain == i18n.DOMAIN else extracted(i18n.DOMAINS[domain])
    catalog = i18n.domain_catalog(language, domain)
    missing, empty, broken = catalog_faults(catalog, messages)
    assert not missing, f"{language}: not in {domain}.po: " + "; ".join(missing)
    assert not empty, f"{language}: untranslated or fuzzy in {domain}.po: " + "; ".join(empty)
    assert not broken, f"{language}: placeholders differ in {domain}.po: " + "; ".join(broken)


@pytest.mark.parametrize("language", ["ca", "es", "fr"])
def test_no_sentence_is_left_in_english(language: str) -> None:
    """A msgstr equal to its English msgid is allowed only for names and numbers alike in both."""
    alike = {"Terminal", "terminal", "Bingo", "bingo", "Jackpot", "jackpot", "Superbingo", "superbingo", "PIN",
             "Machine", "Jackpot {amount}", "jackpot {amount}", "Terminal {terminal}", "{card} (terminal)",
             "{hall} · terminal {terminal}", "code {code}", "megabingo", "Megabingo", "superjackpot",
             "Line {line} · Bingo {bingo}", "Card {n} · {pattern} · {pays}", "Grand superbingo", "grand superbingo",
             "paper", "{prize} {after}: {card}", "Bingo!", "{euros} euros", "{card} ({amount})",  # "paper": Catalan too
             "no", "virtual", "Pot", "Text", "Terminals", "Sessions",  # Catalan (and "no", "virtual" Castilian) too
             "cheque", "page {page}",  # Castilian, French
             # The console's: words alike in a language and English (Catalan "document", "text", "pot", "terminals";
             # French "date", "source", "destination", "description", "signature", "machine"; Castilian "cheque"),
             # and figures.
             "document", "text", "Pots", "pot", "date", "source", "destination", "description",
             "signature", "machine",
             "terminal {terminal}", "{command} (PDF)", "bingo (EUR)", "BINGO", "BINGO: {card}",
             # A text of parts only, each said in the reader's words: "{fault}; {more}" (French spaces its colons).
             "{fault}; {more}", "{ground}: {reason}", "terminal {terminal}: {reason}", "{check}: {fault}"}
    same = [m.id for m in i18n.catalog(language) if m.id and isinstance(m.id, str) and m.string == m.id
            and m.id not in alike]
    assert not same, f"{language}: left in English: {same}"


def test_money_is_written_by_cldr_rules_for_each_language() -> None:
    assert i18n.money(123456, "ca") == "1.234,56\xa0€"
    assert i18n.money(123456, "es") == "1.234,56\xa0€"
    assert i18n.money(123456, "fr") == "1\u202f234,56\xa0€"
    assert i18n.money(123456, "en") == "€1,234.56"
    assert i18n.money(-5, "ca") == "-0,05\xa0€"


def test_times_are_24_hour_in_the_halls_zone() -> None:
    evening = datetime(2026, 12, 5, 19, 5, tzinfo=timezone.utc)
    andorra = ZoneInfo("Europe/Andorra")
    assert i18n.clock_time(evening, "en", andorra) == "20:05"
    assert i18n.date_time(evening, "ca", andorra) == "5/12/26 20:05"


def test_translate_fills_the_placeholders_and_the_plural_follows_the_language() -> None:
    assert i18n.translate("ca", "Game {number}", number=7) == "Partida 7"
    assert i18n.translations("fr").ngettext("{n} card sold", "{n} cards sold", 0) == "{n} carton vendu"
    assert i18n.translations("es").ngettext("{n} card sold", "{n} cards sold", 0) == "{n} cartones vendidos"
    with pytest.raises(i18n.LanguageUnknown, match="ca, es, fr, en"):
        i18n.translate("de", "Game")


STAFF_HASH = hash_password("a long enough password")


def write_config(folder: Path, language: str | None) -> Path:
    text = default_config_text("Sala", [(n, r, STAFF_HASH) for n, r in DEFAULT_STAFF], port=0)
    assert '\nlanguage = "ca"\n' in text  # the generated hall.toml says it, with its comment
    if language is not None:
        text = text.replace('language = "ca"', f'language = "{language}"')
    (folder / "hall.toml").write_text(text)
    return folder / "hall.toml"


def test_the_halls_language_is_read_from_hall_toml(tmp_path: Path) -> None:
    assert load_config(write_config(tmp_path, None)).language == "ca"
    assert load_config(write_config(tmp_path, "fr")).language == "fr"


@pytest.mark.req("R97.2")
def test_responsible_play_default_messages_speak_the_halls_language_and_the_operators_stay_as_written(
        tmp_path: Path) -> None:
    """The generated hall.toml leaves [responsible_play] unset: the default warnings and help are the
    catalog's texts, which each page says in its reader's language (the board in the hall's, a kiosk in
    its player's; tests/web/test_languages_browser.py); what the operator writes there is shown as written."""
    from hall_server.config import DEFAULT_HELP, DEFAULT_WARNINGS

    for language in i18n.LANGUAGES:
        responsible = load_config(write_config(tmp_path, language)).responsible
        assert responsible.warnings == DEFAULT_WARNINGS and responsible.help == DEFAULT_HELP, language
    catalog = i18n.messages("ca")
    assert catalog[DEFAULT_WARNINGS[2]] == "Els menors de 18 anys no poden jugar."
    assert all(catalog.get(text) for text in (*DEFAULT_WARNINGS, DEFAULT_HELP)), "each default is translated"
    own = write_config(tmp_path, "fr")
    own.write_text(own.read_text() + '\n[responsible_play]\nwarnings = ["Jouez avec modération."]\nhelp = "Aide : 112."\n')
    assert load_config(own).responsible.warnings == ("Jouez avec modération.",)
    assert load_config(own).responsible.help == "Aide : 112."


def test_an_unknown_language_is_refused_naming_the_four(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"hall\.language.*'ca', 'es', 'fr', 'en'.*not 'de'"):
        load_config(write_config(tmp_path, "de"))


def test_the_catalog_endpoint_serves_one_language_and_refuses_others() -> None:
    from twisted.web.test.requesthelper import DummyRequest

    from hall_server.web.i18n import I18nResource

    resource = I18nResource("es", "Europe/Andorra")
    request = DummyRequest([b"ca.json"])
    import json
    body = json.loads(resource.render_GET(request))
    assert body["language"] == "ca" and body["messages"]["Sign in"] == "Iniciar la sessió"
    assert request.responseHeaders.getRawHeaders(b"cache-control") == [b"public, max-age=300"]
    hall = DummyRequest([b"hall.json"])
    assert json.loads(resource.render_GET(hall))["language"] == "es"
    unknown = DummyRequest([b"de.json"])
    answer = json.loads(resource.render_GET(unknown))
    assert unknown.responseCode == 404 and "ca, es, fr, en" in answer["error"]["message"]


def test_the_kiosk_says_every_reason_a_network_purchase_is_refused_for() -> None:
    """The central server's reasons (``protocol.central_messages.REFUSALS``) and the hall's link down reach
    the kiosk as the refusal's ``reason``: each has its sentence in the kiosk's catalog, none is shown in English."""
    from protocol.central_messages import REFUSALS

    script = (REPO / "hall_server" / "terminal_gateway" / "static" / "kiosk.js").read_text()
    table = script[script.index("const REFUSALS = () => ({"):]
    table = table[:table.index("\n});")]
    said = set(re.findall(r"^  (\w+): ", table, re.M))
    assert said >= {*REFUSALS, "link_down", "unknown_game", "sale_time", "cards_max", "credit_short"}, \
        sorted({*REFUSALS} - said)
