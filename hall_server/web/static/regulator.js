// The regulator's consultation: every figure is the hall's answer to a query of
// /regulator/api/, which the hall records in its journal before it answers.
"use strict";
const Consult = {
  // Amounts and elements as every page of the hall shows them (common.js).
  money: Hall.money,
  el: Hall.el,
  row(cells) {
    const tr = document.createElement("tr");
    cells.forEach((c) => tr.appendChild(Consult.el("td", c === null || c === undefined ? "-" : c)));
    return tr;
  },
  time(ms) {
    return ms ? new Date(ms).toLocaleString() : "-";
  },
  async ask(query) {
    const status = document.getElementById("status");
    status.textContent = `asking: ${query || "index"}`;
    status.classList.remove("offline");
    try {
      const answer = await fetch(`/regulator/api/${query}`, { headers: { accept: "application/json" } });
      const body = await answer.json();
      if (!body.ok) throw new Error(body.error ? body.error.message : `the hall answered ${answer.status}`);
      status.textContent = `answered: ${query || "index"}`;
      return body;
    } catch (error) {
      status.textContent = String(error.message || error);
      status.classList.add("offline");
      return null;
    }
  },
  async games() {
    const body = await Consult.ask("games");
    const rows = document.querySelector("#games tbody");
    rows.textContent = "";
    if (!body) return;
    body.games.slice().reverse().forEach((g) => {
      const tr = Consult.row([g.game_id, g.session, g.state, g.cards_sold, Consult.money(g.collection_cents),
        Consult.money(g.prizes_paid_cents), g.balls]);
      tr.className = "pick";
      tr.tabIndex = 0;
      tr.dataset.game = g.game_id;
      tr.addEventListener("click", () => Consult.game(g.game_id, tr));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") Consult.game(g.game_id, tr); });
      rows.appendChild(tr);
    });
  },
  async game(id, tr) {
    document.querySelectorAll("#games tr.chosen").forEach((r) => r.classList.remove("chosen"));
    if (tr) tr.classList.add("chosen");
    const body = await Consult.ask(`games/${encodeURIComponent(id)}`);
    const box = document.getElementById("game");
    box.textContent = "";
    if (!body) return;
    const g = body.game;
    document.getElementById("game-title").textContent = `Game ${g.game_id}`;
    document.getElementById("game-hint").textContent =
      `${g.state}; journal records ${g.journal.first_seq} to ${g.journal.last_seq}`;
    const facts = document.createElement("dl");
    [["Card price", Consult.money(g.price_cents)], ["Paper cards", g.paper_cards], ["Virtual cards", g.virtual_cards],
      ["Collection", Consult.money(g.collection_cents)], ["Prizes paid", Consult.money(g.prizes_paid_cents)]]
      .forEach(([k, v]) => { facts.appendChild(Consult.el("dt", k)); facts.appendChild(Consult.el("dd", v)); });
    box.appendChild(facts);
    box.appendChild(Consult.el("h3", `Balls (${g.balls.length}), in the order drawn`));
    box.appendChild(Consult.el("p", g.balls.join(" "), "balls-line"));
    box.appendChild(Consult.el("h3", "Prizes"));
    const prizes = document.createElement("table");
    prizes.className = "rows";
    prizes.appendChild(Consult.row(["Prize", "On ball", "Amount", "Winning cards and where bought"]));
    g.prizes.forEach((p) => prizes.appendChild(Consult.row([p.prize, p.ball_count, Consult.money(p.amount_cents),
      p.winners.map((w) => `${w.card} (${w.where === "paper" ? `paper, ${w.seller}` : `terminal ${w.terminal}`})`)
        .join(", ")])));
    box.appendChild(prizes);
    box.appendChild(Consult.el("h3", "Cards sold"));
    const sales = document.createElement("table");
    sales.className = "rows";
    sales.appendChild(Consult.row(["Series", "Cards", "Paid", "Where"]));
    g.paper_sales.forEach((s) => sales.appendChild(Consult.row([s.series, `${s.first} to ${s.last}`,
      Consult.money(s.amount_cents), `paper, ${s.seller}`])));
    g.virtual.forEach((c) => sales.appendChild(Consult.row([c.card.split("-")[0], c.card,
      Consult.money(c.stake_cents), `terminal ${c.terminal}${c.refunded ? " (refunded)" : ""}`])));
    box.appendChild(sales);
  },
  async records(event) {
    if (event) event.preventDefault();
    const after = document.getElementById("after").value.trim() || "0";
    const type = document.getElementById("type").value.trim();
    const what = document.getElementById("staff-only").checked ? "staff-actions" : "records";
    const params = new URLSearchParams({ after, limit: "100" });
    if (type) params.set("type", type);
    const body = await Consult.ask(`${what}?${params}`);
    const rows = document.querySelector("#records tbody");
    rows.textContent = "";
    const next = document.getElementById("next-page");
    next.hidden = true;
    if (!body) return;
    body.records.forEach((r) => {
      const actor = r.payload.actor;
      const tr = Consult.row([r.seq, Consult.time(r.time_ms), r.type, actor ? `${actor.name} (${actor.role})` : "-",
        JSON.stringify(r.payload)]);
      tr.lastChild.className = "payload";
      tr.title = `hash ${r.hash}`;
      rows.appendChild(tr);
    });
    if (body.next_after !== null) {
      next.hidden = false;
      next.onclick = () => { document.getElementById("after").value = body.next_after; Consult.records(); };
    }
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
    const moves = document.createElement("table");
    moves.className = "rows";
    moves.appendChild(Consult.row(["Seq", "Time", "Change", "Balance", "Why"]));
    body.movements.forEach((m) => moves.appendChild(Consult.row([m.seq, Consult.time(m.time_ms),
      Consult.money(m.change_cents), Consult.money(m.balance_cents), m.reason])));
    box.appendChild(moves);
  },
};
document.getElementById("records-form").addEventListener("submit", Consult.records);
document.getElementById("account-form").addEventListener("submit", Consult.account);
Consult.games().then(() => Consult.records());
