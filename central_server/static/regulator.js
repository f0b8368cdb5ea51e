// The regulator's consultation of the central server: the shared page's script
// (consult.js) and the central server's own queries, its network games, halls,
// terminals and movements of money.
"use strict";
Object.assign(Consult, {
  async games() {
    const body = await Consult.ask("games");
    const tbody = Consult.fill("#games", []);
    if (!body) return;
    body.games.slice().reverse().forEach((g) => Consult.pickable(tbody, g.game_id, [g.game_id, g.state,
      g.halls.join(", "), g.cards_sold, Consult.money(g.sales_cents), Consult.money(g.prizes_paid_cents), g.balls],
    Consult.game));
  },
  async game(id, tr) {
    Consult.choose(tr);
    const body = await Consult.ask(`games/${encodeURIComponent(id)}`);
    const box = document.getElementById("game");
    box.textContent = "";
    if (!body) return;
    const g = body.game;
    document.getElementById("game-title").textContent = `Game ${g.game_id}`;
    document.getElementById("game-hint").textContent =
      `${g.state}; journal records ${g.journal.first_seq} to ${g.journal.last_seq}`;
    box.appendChild(Consult.facts([["Card price", Consult.money(g.price_cents)], ["Series", g.series],
      ["Halls", g.halls.join(", ")], ["Cards sold", g.cards_sold], ["Collection", Consult.money(g.collection_cents)],
      ["Prizes paid", Consult.money(g.prizes_paid_cents)]]));
    box.appendChild(Consult.el("h3", `Balls (${g.balls_drawn.length}), in the order drawn`));
    box.appendChild(Consult.el("p", g.balls_drawn.join(" ") || "none yet", "balls-line"));
    box.appendChild(Consult.el("h3", "Prizes"));
    box.appendChild(Consult.table(["Prize", "On ball", "Amount", "Winners", "Paid", "Carried"],
      g.prizes.map((p) => [p.pattern, p.ball_count, Consult.money(p.amount_cents), p.winner_count,
        Consult.money(p.paid_cents), Consult.money(p.carry_cents)])));
    box.appendChild(Consult.el("h3", "Winning cards, and where each was bought"));
    box.appendChild(Consult.table(["Prize", "Card", "Hall", "Terminal", "Player", "Paid"],
      g.winners.map((w) => [w.pattern, w.card, w.hall, w.terminal, w.player, Consult.money(w.payment_cents)])));
    box.appendChild(Consult.el("h3", `Purchases (${g.purchases.length})`));
    box.appendChild(Consult.table(["Seq", "Hall", "Terminal", "Cards", "Paid"],
      g.purchases.map((p) => [p.seq, p.hall, p.terminal, `${p.card_count} from ${p.first_card}`,
        Consult.money(p.amount_cents)])));
    if (g.refused.length) {
      box.appendChild(Consult.el("h3", `Purchases refused (${g.refused.length})`));
      box.appendChild(Consult.table(["Seq", "Hall", "Terminal", "Cards", "Why"],
        g.refused.map((p) => [p.seq, p.hall, p.terminal, p.card_count, p.reason])));
    }
    if (g.stakes_returned.length) {
      box.appendChild(Consult.el("h3", "Stakes returned"));
      box.appendChild(Consult.table(["Seq", "Hall", "Terminal", "Cards", "Amount", "Why"],
        g.stakes_returned.map((s) => [s.seq, s.hall, s.terminal, s.cards.length, Consult.money(s.amount_cents),
          s.cause])));
    }
  },
  async halls() {
    const halls = await Consult.ask("halls");
    if (halls) {
      Consult.fill("#halls", halls.halls.map((h) => [h.hall, h.purchases, h.cards, Consult.money(h.stakes_cents),
        Consult.money(h.returned_cents), Consult.money(h.prizes_paid_cents)]));
    }
    const terminals = await Consult.ask("terminals");
    if (terminals) {
      Consult.fill("#terminals", terminals.terminals.map((t) => [t.hall, t.terminal, t.purchases, t.cards,
        Consult.money(t.stakes_cents), Consult.money(t.prizes_paid_cents), t.failures]));
    }
  },
  async movements(event) {
    if (event) event.preventDefault();
    const params = new URLSearchParams({ limit: "200" });
    ["hall", "terminal", "player", "game"].forEach((name) => {
      const value = document.getElementById(`m-${name}`).value.trim();
      if (value) params.set(name, value);
    });
    const body = await Consult.ask(`movements?${params}`);
    Consult.fill("#movements", []);
    const total = document.getElementById("movements-total");
    total.textContent = "";
    if (!body) return;
    total.textContent = `${body.matching} movement(s); their total: ${Consult.money(body.total_change_cents)}`
      + (body.next_after !== null ? `; the first ${body.movements.length} shown` : "");
    Consult.fill("#movements", body.movements.map((m) => [m.seq, Consult.time(m.time_ms), m.game, m.hall,
      m.terminal, m.player, Consult.money(m.change_cents), m.what]));
  },
});
document.getElementById("movements-form").addEventListener("submit", Consult.movements);
Consult.games().then(Consult.halls).then(() => Consult.movements()).then(() => Consult.records());
