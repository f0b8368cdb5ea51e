// The regulator's consultation of the central server: the shared page's script
// (consult.js) and the central server's own queries, its network games, halls,
// terminals and movements of money, in the page's language (I18n, docs/languages.md:
// the central server's language unless the reader picks another; amounts by CLDR,
// times 24-hour in the central server's time zone).
"use strict";
const { t, tn } = I18n;
const $ = (id) => document.getElementById(id);

// A network game's state and a prize as the page names them, in the page's language.
const STATES = () => ({
  scheduled: t("scheduled"), selling: t("on sale"), drawing: t("drawing"), closed: t("closed"),
  "not played": t("not played"),
});
const PRIZES = () => ({ line: t("line"), bingo: t("bingo") });
// Why a stake went back to the player (a central_stake_returned's cause).
const CAUSES = () => ({ terminal_failed: t("the terminal failed"), not_played: t("the game was not played") });

// A movement of money in the page's language, from the facts the server gives with it (its English
// words for a kind the page does not know).
function movementWords(m) {
  const s = m.said || {};
  if (s.kind === "bought") {
    return tn("{n} card bought, from card {first}", "{n} cards bought, from card {first}", s.cards, { first: s.first_card });
  }
  if (s.kind === "returned") {
    return tn("stake of {n} card returned: {cause}", "stake of {n} cards returned: {cause}", s.cards,
      { cause: named(CAUSES, s.cause) });
  }
  if (s.kind === "won") {
    return t("{prize} won with card {card} on ball {ball}", { prize: named(PRIZES, s.pattern), card: s.card, ball: s.ball });
  }
  return m.what;
}
const named = (table, key) => table()[key] || key;

Object.assign(Consult.words, {
  asking: (query) => t("asking: {query}", { query }),
  answered: (query) => t("answered: {query}", { query }),
  failed: (status) => t("the server answered {status}", { status }),
  get index() { return t("index"); },
});
Consult.money = I18n.money;
Consult.time = (ms) => (ms ? I18n.dateTime(ms) : "-");

// The answers last shown, written again when the reader picks another language (not asked again:
// each query is journaled).
const shown = { games: null, game: null, halls: null, terminals: null, movements: null };

function renderGames() {
  const tbody = Consult.fill("#games", []);
  if (!shown.games) return;
  shown.games.games.slice().reverse().forEach((g) => Consult.pickable(tbody, g.game_id, [g.game_id,
    named(STATES, g.state), g.halls.join(", "), g.cards_sold, Consult.money(g.sales_cents),
    Consult.money(g.prizes_paid_cents), g.balls], Consult.game));
  // The game shown stays marked in the list written anew.
  if (shown.game) Consult.choose(tbody.querySelector(`tr[data-game="${CSS.escape(shown.game.game.game_id)}"]`));
}

function renderGame() {
  const box = $("game");
  box.textContent = "";
  if (!shown.game) {
    $("game-title").textContent = t("A game");
    $("game-hint").textContent = t("Choose a game to see its purchases, balls, prizes and winners.");
    return;
  }
  const g = shown.game.game;
  $("game-title").textContent = t("Game {game}", { game: g.game_id });
  $("game-hint").textContent = t("{state}; journal records {first} to {last}",
    { state: named(STATES, g.state), first: g.journal.first_seq, last: g.journal.last_seq });
  box.appendChild(Consult.facts([[t("Card price"), Consult.money(g.price_cents)], [t("Series"), g.series],
    [t("Halls"), g.halls.join(", ")], [t("Cards sold"), g.cards_sold], [t("Collection"), Consult.money(g.collection_cents)],
    [t("Prizes paid"), Consult.money(g.prizes_paid_cents)]]));
  box.appendChild(Consult.el("h3", tn("{n} ball, in the order drawn", "{n} balls, in the order drawn",
    g.balls_drawn.length)));
  box.appendChild(Consult.el("p", g.balls_drawn.join(" ") || t("none yet"), "balls-line"));
  box.appendChild(Consult.el("h3", t("Prizes")));
  box.appendChild(Consult.table([t("Prize"), t("On ball"), t("Amount"), t("Winners"), t("Paid"), t("Carried on")],
    g.prizes.map((p) => [named(PRIZES, p.pattern), p.ball_count, Consult.money(p.amount_cents), p.winner_count,
      Consult.money(p.paid_cents), Consult.money(p.carry_cents)])));
  box.appendChild(Consult.el("h3", t("Winning cards, and where each was bought")));
  box.appendChild(Consult.table([t("Prize"), t("Card"), t("Hall"), t("Terminal"), t("Player"), t("Paid")],
    g.winners.map((w) => [named(PRIZES, w.pattern), w.card, w.hall, w.terminal, w.player,
      Consult.money(w.payment_cents)])));
  box.appendChild(Consult.el("h3", tn("{n} purchase", "{n} purchases", g.purchases.length)));
  box.appendChild(Consult.table([t("Seq"), t("Hall"), t("Terminal"), t("Cards"), t("Paid")],
    g.purchases.map((p) => [p.seq, p.hall, p.terminal,
      tn("{n} card from {first}", "{n} cards from {first}", p.card_count, { first: p.first_card }),
      Consult.money(p.amount_cents)])));
  if (g.refused.length) {
    box.appendChild(Consult.el("h3", tn("{n} purchase refused", "{n} purchases refused", g.refused.length)));
    box.appendChild(Consult.table([t("Seq"), t("Hall"), t("Terminal"), t("Cards"), t("Why")],
      g.refused.map((p) => [p.seq, p.hall, p.terminal, p.card_count, p.reason])));
  }
  if (g.stakes_returned.length) {
    box.appendChild(Consult.el("h3", t("Stakes returned")));
    box.appendChild(Consult.table([t("Seq"), t("Hall"), t("Terminal"), t("Cards"), t("Amount"), t("Why")],
      g.stakes_returned.map((s) => [s.seq, s.hall, s.terminal, s.cards.length, Consult.money(s.amount_cents),
        s.cause])));
  }
}

function renderHalls() {
  Consult.fill("#halls", shown.halls ? shown.halls.halls.map((h) => [h.hall, h.purchases, h.cards,
    Consult.money(h.stakes_cents), Consult.money(h.returned_cents), Consult.money(h.prizes_paid_cents)]) : []);
  Consult.fill("#terminals", shown.terminals ? shown.terminals.terminals.map((x) => [x.hall, x.terminal, x.purchases,
    x.cards, Consult.money(x.stakes_cents), Consult.money(x.prizes_paid_cents), x.failures]) : []);
}

function renderMovements() {
  const body = shown.movements;
  Consult.fill("#movements", body ? body.movements.map((m) => [m.seq, Consult.time(m.time_ms), m.game, m.hall,
    m.terminal, m.player, Consult.money(m.change_cents), movementWords(m)]) : []);
  const total = $("movements-total");
  total.textContent = "";
  if (!body) return;
  total.textContent = tn("{n} movement; their total: {total}", "{n} movements; their total: {total}", body.matching,
    { total: Consult.money(body.total_change_cents) })
    + (body.next_after !== null ? t("; the first {shown} shown", { shown: body.movements.length }) : "");
}

Object.assign(Consult, {
  async games() {
    shown.games = await Consult.ask("games");
    renderGames();
  },
  async game(id, tr) {
    Consult.choose(tr);
    shown.game = await Consult.ask(`games/${encodeURIComponent(id)}`);
    renderGame();
  },
  async halls() {
    shown.halls = await Consult.ask("halls");
    shown.terminals = await Consult.ask("terminals");
    renderHalls();
  },
  async movements(event) {
    if (event) event.preventDefault();
    const params = new URLSearchParams({ limit: "200" });
    ["hall", "terminal", "player", "game"].forEach((name) => {
      const value = $(`m-${name}`).value.trim();
      if (value) params.set(name, value);
    });
    shown.movements = null;
    renderMovements();
    shown.movements = await Consult.ask(`movements?${params}`);
    renderMovements();
  },
});

I18n.onChange(() => { renderGames(); renderGame(); renderHalls(); renderMovements(); });
I18n.start(() => {
  $("movements-form").addEventListener("submit", Consult.movements);
  renderGame();
  Consult.games().then(Consult.halls).then(() => Consult.movements()).then(() => Consult.records());
}, { remember: true, chooser: $("language"), settings: "/i18n/central.json", storage: "central-language" });
