"""The central server's languages: every text of its consultation page and of its reports' tables
(extracted as ``babel-central.cfg`` names them) is translated in each of its catalogs, placeholders
kept; ``[central] language`` in ``central.toml``, another value refused naming the four."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg

from central_server import i18n
from central_server.config import ConfigError, parse_config
from tests.support.catalogs import catalog_faults
from tests.unit.test_i18n import KEYWORDS, REPO


def _sources(path: str) -> bool:
    """The folders extraction walks: the central server's and the kit's (its reports' tables)."""
    top = Path(path).relative_to(REPO).parts[:1]
    return not top or top[0] in ("central_server", "server_kit")


def extracted() -> dict[Any, list[str]]:
    """Every msgid of the sources ``babel-central.cfg`` names, with where it is used."""
    with (REPO / i18n.MAPPING).open() as file:
        method_map, options_map = parse_mapping_cfg(file)
    for path, _ in method_map:
        assert (REPO / path).is_file(), f"{i18n.MAPPING} names {path}, which does not exist"
    found: dict[Any, list[str]] = {}
    for filename, line, message, _, _ in extract_from_dir(str(REPO), method_map, options_map, keywords=KEYWORDS,
                                                          directory_filter=_sources):
        found.setdefault(message, []).append(f"{filename}:{line}")
    return found


MESSAGES = extracted()
CENTRAL = {"central": {"id": "central-a"}, "network": {"halls": ["hall-1", "hall-2"]}}


def test_the_extraction_finds_the_page_the_reports_and_the_records_words() -> None:
    files = {where.split(":")[0] for places in MESSAGES.values() for where in places}
    for source in ("regulator.js", "regulator.html", "central_server/i18n.py", "reports/daily.py", "reports/yearly.py"):
        assert any(f.endswith(source) for f in files), f"no text extracted from {source}"
    assert "Network games" in MESSAGES and ("{n} purchase", "{n} purchases") in MESSAGES and "not played" in MESSAGES


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_extracted_text_is_translated_in_each_central_catalog(language: str) -> None:
    catalog = i18n.CATALOGS.domain_catalog(language, i18n.DOMAIN)
    missing, empty, broken = catalog_faults(catalog, MESSAGES)
    assert not missing, f"{language}: not in central.po: " + "; ".join(missing)
    assert not empty, f"{language}: untranslated or fuzzy in central.po: " + "; ".join(empty)
    assert not broken, f"{language}: placeholders differ in central.po: " + "; ".join(broken)


@pytest.mark.parametrize("language", ["ca", "es", "fr"])
def test_no_sentence_of_the_central_catalog_is_left_in_english(language: str) -> None:
    """A msgstr equal to its English msgid only for names, codes and words alike in both languages."""
    alike = {"bingo", "Bingo", "Terminal", "terminal", "Terminals", "No.", "Stake %", "Text", "virtual", "no",
             "page {page}", "Machine", "Jackpots", "Pot", "Total", "Document", "Base", "Tax", "Sessions", "Balls",
             "{title} - journal records {first} to {last}"}
    same = [m.id for m in i18n.CATALOGS.catalog(language) if m.id and isinstance(m.id, str) and m.string == m.id
            and m.id not in alike]
    assert not same, f"{language}: left in English: {same}"


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_the_report_tables_read_the_same_from_the_central_server_as_from_a_hall(language: str) -> None:
    """The daily and yearly reports' tables are laid out by the server kit in the words each server gives:
    a text in both the central catalog and the hall's ``reports`` catalog is translated alike in both, so
    the regulator reads one word for one thing whichever server signed the report."""
    from hall_server import i18n as hall_i18n

    hall = {m.id: m.string for m in hall_i18n.domain_catalog(language, "reports") if m.id}
    central = {m.id: m.string for m in i18n.CATALOGS.domain_catalog(language, i18n.DOMAIN) if m.id}
    shared = set(hall) & set(central)
    assert len(shared) > 100, f"{language}: only {len(shared)} texts in both catalogs"
    differ = sorted(str(k) for k in shared if hall[k] != central[k])
    assert not differ, f"{language}: the hall's reports.po and central.po translate these differently: {differ}"


def test_the_catalan_words_are_the_regulations() -> None:
    assert i18n.translate("ca", "Cards sold") == "Cartrons venuts"
    assert i18n.translate("es", "line") == "línea" and i18n.translate("fr", "line") == "ligne"
    assert i18n.CATALOGS.translations("fr").ngettext("{n} purchase", "{n} purchases", 0) == "{n} achat"
    assert i18n.wording("ca").money(123456) == "1.234,56\xa0€"
    assert i18n.wording("fr").money(123456) == "1\xa0234,56\xa0€"  # the PDFs' fonts have no narrow no-break space


def test_the_central_servers_language_is_read_from_central_toml() -> None:
    assert parse_config(CENTRAL).language == "ca"
    assert parse_config({**CENTRAL, "central": {"id": "central-a", "language": "fr"}}).language == "fr"


@pytest.mark.parametrize("language", ["de", "CA", "català"])
def test_an_unknown_central_language_is_refused_naming_the_four(language: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"central\.language: the central server speaks 'ca', 'es', 'fr', 'en' "
                                          rf"\(Catalan, Castilian, French, English\), not '{language}'"):
        parse_config({**CENTRAL, "central": {"id": "central-a", "language": language}})


def test_no_t_call_of_the_page_escapes_the_extractor() -> None:
    """A t("...") Babel's JavaScript lexer does not see (inside a template literal, say) would go untranslated."""
    import re

    ids = {m if isinstance(m, str) else m[0] for m in MESSAGES}
    script = (REPO / "central_server/static/regulator.js").read_text()
    for called in re.findall(r'\bt\("((?:[^"\\]|\\.)*)"[,)]', script):
        assert called in ids, f"regulator.js: t({called!r}) is not extracted"
