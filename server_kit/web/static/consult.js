// The regulator's consultation, as every server's page shows it: each figure is the
// server's answer to a query of /regulator/api/, recorded in its journal before it
// answers.  A server's own script (regulator.js) adds its queries to Consult, and may
// give its words, money and times in its page's language (words, money, time).
"use strict";
const Consult = {
  // The status line's words (English here; a server's script may give them translated).
  words: {
    asking: (query) => `asking: ${query}`,
    answered: (query) => `answered: ${query}`,
    failed: (status) => `the server answered ${status}`,
    index: "index",
  },
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
    table.appendChild(Consult.row(head));
    rows.forEach((cells) => table.appendChild(Consult.row(cells)));
    return table;
  },
  fill(selector, rows) {
    const tbody = document.querySelector(`${selector} tbody`);
    tbody.textContent = "";
    rows.forEach((cells) => tbody.appendChild(Consult.row(cells)));
    return tbody;
  },
  facts(pairs) {
    const list = document.createElement("dl");
    pairs.forEach(([k, v]) => { list.appendChild(Consult.el("dt", k)); list.appendChild(Consult.el("dd", v)); });
    return list;
  },
  time(ms) {
    return ms ? new Date(ms).toLocaleString() : "-";
  },
  async ask(query) {
    const status = document.getElementById("status");
    status.textContent = Consult.words.asking(query || Consult.words.index);
    status.classList.remove("offline");
    try {
      const answer = await fetch(`/regulator/api/${query}`, { headers: { accept: "application/json" } });
      const body = await answer.json();
      if (!body.ok) throw new Error(body.error ? body.error.message : Consult.words.failed(answer.status));
      status.textContent = Consult.words.answered(query || Consult.words.index);
      return body;
    } catch (error) {
      status.textContent = String(error.message || error);
      status.classList.add("offline");
      return null;
    }
  },
  // The journal's records, a hundred at a time: any type, one type, or (the checkbox
  // #by-people, whose data-query names the query) the records people's commands made.
  async records(event) {
    if (event) event.preventDefault();
    const after = document.getElementById("after").value.trim() || "0";
    const type = document.getElementById("type").value.trim();
    const people = document.getElementById("by-people");
    const what = people.checked ? people.dataset.query : "records";
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
  // The games, newest first; choosing one (click or Enter) shows it with ``show(id, row)``.
  pickable(tbody, id, cells, show) {
    const tr = Consult.row(cells);
    tr.className = "pick";
    tr.tabIndex = 0;
    tr.dataset.game = id;
    tr.addEventListener("click", () => show(id, tr));
    tr.addEventListener("keydown", (e) => { if (e.key === "Enter") show(id, tr); });
    tbody.appendChild(tr);
  },
  choose(tr) {
    document.querySelectorAll("#games tr.chosen").forEach((r) => r.classList.remove("chosen"));
    if (tr) tr.classList.add("chosen");
  },
};
document.getElementById("records-form").addEventListener("submit", Consult.records);
