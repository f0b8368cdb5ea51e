// The pages' languages (docs/languages.md), on every server that serves pages (the hall, the
// central server): the server's catalogs (/i18n/<lang>.json, the same .po files the server reads),
// CLDR money and 24-hour times in the server's time zone (Intl).
//   I18n.t("Game {number}", { number: 4 })      a text in the page's language, placeholders filled
//   I18n.tn("{n} card", "{n} cards", n)          the plural form for n ({n} is filled)
//   I18n.money(7200)  "72,00 €" (ca), "€72.00" (en): integer cents, never a float amount
//   I18n.time(ms)     "20:05" in the server's time zone
//   I18n.day("2026-12-17")  "17 de desembre de 2026" (ca), "December 17, 2026" (en): a calendar date
// Elements carrying data-i18n have their text translated (the English text is the msgid);
// data-i18n-placeholder, data-i18n-aria-label, data-i18n-title and data-i18n-data-empty (the text CSS
// shows in an empty list, content: attr(data-empty)) translate that attribute.
// The language is the page's ?lang=, else the one the person chose (localStorage, on pages
// with a chooser), else the server's: the hall's ([hall] language in hall.toml, /i18n/hall.json),
// the central server's ([central] language in central.toml, /i18n/central.json: start()'s
// options.settings names it).
"use strict";

const I18n = (() => {
  let storage = "hall-language";
  const ATTRIBUTES = ["placeholder", "aria-label", "title", "data-empty"];
  const state = {
    language: "en", messages: {}, hall: { language: "ca", languages: ["ca", "es", "fr", "en"], names: {}, time_zone: "Europe/Andorra" },
    remember: false, listeners: [],
  };

  async function fetchJson(path) {
    const answer = await fetch(path, { credentials: "same-origin" });
    if (!answer.ok) throw new Error(`${path}: ${answer.status}`);
    return answer.json();
  }

  function wanted() {
    const asked = new URLSearchParams(location.search).get("lang");
    if (state.hall.languages.includes(asked)) return asked;
    const stored = state.remember ? localStorage.getItem(storage) : null;
    if (state.hall.languages.includes(stored)) return stored;
    return state.hall.language;
  }

  function fill(text, params) {
    if (!params) return text;
    return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
  }

  function t(msgid, params) {
    const found = state.messages[msgid];
    const text = Array.isArray(found) ? found[0] : found || msgid;
    return fill(text, params);
  }

  function tn(singular, plural, n, params) {
    const found = state.messages[singular];
    const one = new Intl.PluralRules(state.language).select(n) === "one";
    const text = Array.isArray(found) ? found[one ? 0 : Math.min(1, found.length - 1)] : one ? singular : plural;
    return fill(text, { n, ...params });
  }

  // A text the server composed in English (a movement's reason), given with the catalog's message it is
  // said with and its parts ({message, parts}): the message in the page's language, each part through the
  // catalog too (a desk's name reads as written), a part that is such a phrase itself said the same way;
  // the English text when none is given.
  function said(phrase, english) {
    if (!phrase) return english;
    const parts = Object.fromEntries(Object.entries(phrase.parts).map(
      ([k, v]) => [k, v !== null && typeof v === "object" ? said(v, "") : t(v)]));
    return t(phrase.message, parts);
  }

  function money(cents) {
    if (cents === null || cents === undefined) return "-";
    return new Intl.NumberFormat(state.language, { style: "currency", currency: "EUR", useGrouping: "always" })
      .format(cents / 100);
  }

  function time(ms) {
    return new Intl.DateTimeFormat(state.language, { hour: "2-digit", minute: "2-digit", hourCycle: "h23",
      timeZone: state.hall.time_zone }).format(new Date(ms));
  }

  // A calendar date the hall wrote as YYYY-MM-DD (a megabingo's day), as the language writes it in
  // full; the text as it is when it is not such a date.
  function day(iso) {
    const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(iso));
    if (!parts) return String(iso);
    return new Intl.DateTimeFormat(state.language, { dateStyle: "long", timeZone: "UTC" })
      .format(new Date(Date.UTC(+parts[1], +parts[2] - 1, +parts[3])));
  }

  function dateTime(ms) {
    return new Intl.DateTimeFormat(state.language, { dateStyle: "short", timeStyle: "medium", hourCycle: "h23",
      timeZone: state.hall.time_zone }).format(new Date(ms));
  }

  // The marked texts of the page in the page's language; each keeps its msgid to change again.
  function apply(root = document) {
    document.documentElement.lang = state.language;
    root.querySelectorAll("[data-i18n]").forEach((el) => {
      if (!el.dataset.i18n) el.dataset.i18n = el.textContent.trim().replace(/\s+/g, " ");
      el.textContent = t(el.dataset.i18n);
    });
    for (const name of ATTRIBUTES) {
      const key = `data-i18n-${name}`;
      root.querySelectorAll(`[${key}]`).forEach((el) => {
        if (!el.getAttribute(key)) el.setAttribute(key, el.getAttribute(name) || "");
        el.setAttribute(name, t(el.getAttribute(key)));
      });
    }
    document.querySelectorAll(".language-chooser button").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.language === state.language));
    });
  }

  async function use(language) {
    try {
      state.messages = (await fetchJson(`/i18n/${language}.json`)).messages;
      state.language = language;
    } catch (error) {
      console.warn(`i18n: the ${language} catalog did not load (${error.message}); texts stay as they are`);
      return;
    }
    apply();
    state.listeners.forEach((listener) => listener(language));
  }

  // A row of buttons, one per language, each named in its own language: the person's choice is kept.
  function chooser(container) {
    container.classList.add("language-chooser");
    container.setAttribute("role", "group");
    container.setAttribute("aria-label", "Language · Idioma · Langue");
    container.replaceChildren(...state.hall.languages.map((language) => {
      const button = document.createElement("button");
      button.type = "button"; button.dataset.language = language; button.lang = language;
      button.textContent = language.toUpperCase();
      button.title = state.hall.names[language] || language;
      button.setAttribute("aria-pressed", String(language === state.language));
      button.addEventListener("click", () => {
        localStorage.setItem(storage, language);
        use(language);
      });
      return button;
    }));
  }

  // Loads the server's settings (options.settings, the hall's by default) and the page's language,
  // then runs ready(); a server that cannot be reached leaves the page in English with money and
  // times still formatted.  options.storage: where the person's choice is kept (one per server).
  async function start(ready, options = {}) {
    state.remember = Boolean(options.remember);
    if (options.storage) storage = options.storage;
    const settings = options.settings || "/i18n/hall.json";
    try {
      state.hall = await fetchJson(settings);
    } catch (error) {
      console.warn(`i18n: the server's languages did not load (${error.message}); the page stays in English`);
    }
    await use(wanted());
    if (options.chooser) chooser(options.chooser);
    apply();
    ready();
  }

  return {
    t, tn, said, money, time, day, dateTime, apply, use, start, chooser,
    get language() { return state.language; },
    onChange(listener) { state.listeners.push(listener); },
  };
})();
