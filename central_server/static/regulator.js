// The regulator's consultation of the central server: every figure is the central
// server's answer to a query of /regulator/api/, recorded in its journal before it answers.
"use strict";
const Consult = {
  money(cents) {
    if (cents === null || cents === undefined) return "-";
    const sign = cents < 0 ? "-" : "";
    const abs = Math.abs(cents);
    return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")} €`;
  },
  el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  },
  row(cells) {
    const tr = document.createElement("tr");
    cells.forEach((c) => tr.appendChild(Consult.el("td", c === null || c === undefined ? "-" : c)));
    return tr;
  },
  table(head, rows) {
    const table = document.createElement("table");
    table.className = "rows";
    const thead = document.createElement("thead");
    const tr = document.createElement("tr");
    head.forEach((h) => tr.appendChild(Consult.el("th", h)));
    thead.appendChild(tr);
    table.appendChild(thead);
    const body = document.createElement("tbody");
    rows.forEach((cells) => body.appendChild(Consult.row(cells)));
    table.appendChild(body);
    return table;
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
      if (!body.ok) throw new Error(body.error ? body.error.message : `the central server answered ${answer.status}`);
      status.textContent = `answered: ${query || "index"}`;
      return body;
    } catch (error) {
      status.textContent = String(error.message || error);
      status.classList.add("offline");
      return null;
    }
  },
  fill(selector, rows) {
    const tbody = document.querySelector(`${selector} tbody`);
    tbody.textContent = "";
    rows.forEach((cells) => tbody.appendChild(Consult.row(cells)));
    return tbody;
  },
  async games() {
    const body = await Consult.ask("games");
    const tbody = Consult.fill("#games", []);
    if (!body) return;
    body.games.slice().reverse().forEach((g) => {
      const tr = Consult.row([g.game_id, g.state, g.halls.join(", "), g.cards_sold, Consult.money(g.sales_cents),
        Consult.money(g.prizes_paid_cents), g.balls]);
      tr.className = "pick";
      tr.tabIndex = 0;
      tr.dataset.game = g.game_id;
      tr.addEventListener("click", () => Consult.game(g.game_id, tr));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") Consult.game(g.game_id, tr); });
      tbody.appendChild(tr);
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
    [["Card price", Consult.money(g.price_cents)], ["Series", g.series], ["Halls", g.halls.join(", ")],
      ["Cards sold", g.cards_sold], ["Collection", Consult.money(g.collection_cents)],
      ["Prizes paid", Consult.money(g.prizes_paid_cents)]]
      .forEach(([k, v]) => { facts.appendChild(Consult.el("dt", k)); facts.appendChild(Consult.el("dd", v)); });
    box.appendChild(facts);
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
  async records(event) {
    if (event) event.preventDefault();
    const after = document.getElementById("after").value.trim() || "0";
    const type = document.getElementById("type").value.trim();
    const what = document.getElementById("operator-only").checked ? "operator-actions" : "records";
    const params = new URLSearchParams({ after, limit: "100" });
    if (type) params.set("type", type);
    const body = await Consult.ask(`${what}?${params}`);
    const tbody = Consult.fill("#records", []);
    const next = document.getElementById("next-page");
    next.hidden = true;
    if (!body) return;
    body.records.forEach((r) => {
      const actor = r.payload.actor;
      const tr = Consult.row([r.seq, Consult.time(r.time_ms), r.type, actor ? `${actor.name} (${actor.role})` : "-",
        JSON.stringify(r.payload)]);
      tr.lastChild.className = "payload";
      tr.title = `hash ${r.hash}`;
      tbody.appendChild(tr);
    });
    if (body.next_after !== null) {
      next.hidden = false;
      next.onclick = () => { document.getElementById("after").value = body.next_after; Consult.records(); };
    }
  },
};
document.getElementById("records-form").addEventListener("submit", Consult.records);
document.getElementById("movements-form").addEventListener("submit", Consult.movements);
Consult.games().then(Consult.halls).then(() => Consult.movements()).then(() => Consult.records());
