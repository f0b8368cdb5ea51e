// The regulator's consultation of the hall: the shared page's script (consult.js) and
// the hall's own queries, its games and a player account, in the page's language (I18n,
// docs/languages.md: the hall's language unless the reader picks another; amounts by
// CLDR, times 24-hour in the hall's time zone).
"use strict";
const { t, tn } = I18n;
const $ = (id) => document.getElementById(id);

// A game's state as the minutes word it (hall_server/reports/minutes.py), and a prize, in the
// page's language.
const STATES = () => ({
  scheduled: t("scheduled"), selling: t("on sale"), "sale closed": t("sale closed"), drawing: t("drawing"), suspended: t("suspended"),
  "suspended for good": t("suspended for good"), refunded: t("refunded"),
  "being finished by hand": t("being finished by hand"), closed: t("closed"), "finished by hand": t("finished by hand"),
});
const PRIZES = () => ({ line: t("line"), bingo: t("bingo") });
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
const shown = { games: null, game: null, account: null };

function where(w) {
  return w.where === "paper" ? t("{card} (paper card, sold by {seller})", { card: w.card, seller: w.seller })
    : t("{card} (at terminal {terminal})", { card: w.card, terminal: w.terminal });
}

function renderGames() {
  const tbody = Consult.fill("#games", []);
  if (!shown.games) return;
  shown.games.games.slice().reverse().forEach((g) => Consult.pickable(tbody, g.game_id, [g.game_id, g.session,
    named(STATES, g.state), g.cards_sold, Consult.money(g.collection_cents), Consult.money(g.prizes_paid_cents), g.balls],
  Consult.game));
  // The game shown stays marked in the list written anew.
  if (shown.game) Consult.choose(tbody.querySelector(`tr[data-game="${CSS.escape(shown.game.game.game_id)}"]`));
}

function renderGame() {
  const box = $("game");
  box.textContent = "";
  if (!shown.game) {
    $("game-title").textContent = t("A game");
    $("game-hint").textContent = t("Choose a game to see its cards, balls and prizes.");
    return;
  }
  const g = shown.game.game;
  $("game-title").textContent = t("Game {game}", { game: g.game_id });
  $("game-hint").textContent = t("{state}; journal records {first} to {last}",
    { state: named(STATES, g.state), first: g.journal.first_seq, last: g.journal.last_seq });
  box.appendChild(Consult.facts([[t("Card price"), Consult.money(g.price_cents)], [t("Paper cards"), g.paper_cards],
    [t("Virtual cards"), g.virtual_cards], [t("Collection"), Consult.money(g.collection_cents)],
    [t("Prizes paid"), Consult.money(g.prizes_paid_cents)]]));
  box.appendChild(Consult.el("h3", tn("{n} ball, in the order drawn", "{n} balls, in the order drawn", g.balls.length)));
  box.appendChild(Consult.el("p", g.balls.join(" "), "balls-line"));
  box.appendChild(Consult.el("h3", t("Prizes")));
  box.appendChild(Consult.table([t("Prize"), t("On ball"), t("Amount"), t("Winning cards and where bought")],
    g.prizes.map((p) => [named(PRIZES, p.prize), p.ball_count, Consult.money(p.amount_cents),
      p.winners.map(where).join(", ")])));
  box.appendChild(Consult.el("h3", t("Cards sold")));
  box.appendChild(Consult.table([t("Series"), t("Cards"), t("Paid"), t("Where")], [
    ...g.paper_sales.map((s) => [s.series, t("{first} to {last}", { first: s.first, last: s.last }),
      Consult.money(s.amount_cents), t("paper, sold by {seller}", { seller: s.seller })]),
    ...g.virtual.map((c) => [c.card.split("-")[0], c.card, Consult.money(c.stake_cents),
      c.refunded ? t("at terminal {terminal} (refunded)", { terminal: c.terminal })
        : t("at terminal {terminal}", { terminal: c.terminal })]),
  ]));
}

function renderAccount() {
  const box = $("account-answer");
  box.textContent = "";
  const body = shown.account;
  if (!body) return;
  box.appendChild(Consult.el("p", t("Account {account}, opened in record {seq} ({time}); balance {balance}",
    { account: body.account, seq: body.opened.seq, time: Consult.time(body.opened.time_ms),
      balance: Consult.money(body.balance_cents) })));
  box.appendChild(Consult.table([t("Seq"), t("Time"), t("Change"), t("Balance"), t("Why")],
    body.movements.map((m) => [m.seq, Consult.time(m.time_ms), Consult.money(m.change_cents),
      Consult.money(m.balance_cents), I18n.said(m.said, m.reason)])));
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
  async account(event) {
    event.preventDefault();
    const number = $("account").value.replace(/\s/g, "");
    shown.account = null;
    renderAccount();
    shown.account = await Consult.ask(`accounts/${encodeURIComponent(number)}`);
    renderAccount();
  },
});

I18n.onChange(() => { renderGames(); renderGame(); renderAccount(); });
I18n.start(() => {
  $("account-form").addEventListener("submit", Consult.account);
  renderGame();
  Consult.games().then(() => Consult.records());
}, { remember: true, chooser: $("language") });
