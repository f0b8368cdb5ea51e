// The regulator's consultation of the hall: the shared page's script (consult.js) and
// the hall's own queries, its games and a player account.
"use strict";
Object.assign(Consult, {
  async games() {
    const body = await Consult.ask("games");
    const tbody = Consult.fill("#games", []);
    if (!body) return;
    body.games.slice().reverse().forEach((g) => Consult.pickable(tbody, g.game_id, [g.game_id, g.session, g.state,
      g.cards_sold, Consult.money(g.collection_cents), Consult.money(g.prizes_paid_cents), g.balls], Consult.game));
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
    box.appendChild(Consult.facts([["Card price", Consult.money(g.price_cents)], ["Paper cards", g.paper_cards],
      ["Virtual cards", g.virtual_cards], ["Collection", Consult.money(g.collection_cents)],
      ["Prizes paid", Consult.money(g.prizes_paid_cents)]]));
    box.appendChild(Consult.el("h3", `Balls (${g.balls.length}), in the order drawn`));
    box.appendChild(Consult.el("p", g.balls.join(" "), "balls-line"));
    box.appendChild(Consult.el("h3", "Prizes"));
    box.appendChild(Consult.table(["Prize", "On ball", "Amount", "Winning cards and where bought"],
      g.prizes.map((p) => [p.prize, p.ball_count, Consult.money(p.amount_cents),
        p.winners.map((w) => `${w.card} (${w.where === "paper" ? `paper, ${w.seller}` : `terminal ${w.terminal}`})`)
          .join(", ")])));
    box.appendChild(Consult.el("h3", "Cards sold"));
    box.appendChild(Consult.table(["Series", "Cards", "Paid", "Where"], [
      ...g.paper_sales.map((s) => [s.series, `${s.first} to ${s.last}`, Consult.money(s.amount_cents),
        `paper, ${s.seller}`]),
      ...g.virtual.map((c) => [c.card.split("-")[0], c.card, Consult.money(c.stake_cents),
        `terminal ${c.terminal}${c.refunded ? " (refunded)" : ""}`]),
    ]));
  },
  async account(event) {
    event.preventDefault();
    const number = document.getElementById("account").value.replace(/\s/g, "");
    const box = document.getElementById("account-answer");
    box.textContent = "";
    const body = await Consult.ask(`accounts/${encodeURIComponent(number)}`);
    if (!body) return;
    box.appendChild(Consult.el("p", `Account ${body.account}, opened in record ${body.opened.seq} `
      + `(${Consult.time(body.opened.time_ms)}); balance ${Consult.money(body.balance_cents)}`));
    box.appendChild(Consult.table(["Seq", "Time", "Change", "Balance", "Why"],
      body.movements.map((m) => [m.seq, Consult.time(m.time_ms), Consult.money(m.change_cents),
        Consult.money(m.balance_cents), m.reason])));
  },
});
document.getElementById("account-form").addEventListener("submit", Consult.account);
Consult.games().then(() => Consult.records());
