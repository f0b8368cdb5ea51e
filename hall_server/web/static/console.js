// The caller console.  It shows the picture the server pushes after each commit and
// sends commands by name over the WebSocket; the server checks roles and rules, the
// page only leaves out the commands the signed-in role may not give.
"use strict";
const Console = {
  socket: null,
  commands: new Map(),
  current: null,
  counter: 0,
  // The commands some controls stand for, by the names the hall's modules register.
  DRAW: ["draw_ball"],
  VERIFY: ["verify_claim"],
};

Hall.buildGrid(document.getElementById("ball-grid"));

function requestId() {
  Console.counter += 1;
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `${Date.now().toString(36)}-${random[0].toString(36)}${random[1].toString(36)}-${Console.counter}`;
}

function say(text, ok) {
  const answer = document.getElementById("answer");
  answer.textContent = text;
  answer.className = ok ? "answer ok" : "answer error";
}

// --- What a command did, in words: the records it committed, as the pushes showed them --

Console.recent = new Map();  // seq -> record, the latest pushed ones

function remember(record) {
  Console.recent.set(record.seq, record);
  if (Console.recent.size > 500) Console.recent.delete(Console.recent.keys().next().value);
}

// A refusal that the hall records as a fact (a claim that does not win, a terminal's
// request refused) is a "no" for the person at the console, whatever the command did.
const REFUSALS = new Set(["claim_rejected", "terminal_request_refused", "entry_refused"]);

function outcomeOf(record) {
  const p = record.payload || {};
  switch (record.type) {
    case "claim_rejected": return `Claim refused: card ${p.card_number} of series ${p.series} does not win - ${p.reason}`;
    case "visitor_admitted": return `Visitor number ${p.number} admitted (${p.name})`;
    case "entry_refused": return `Entry refused to ${p.name}: ${p.reason}`;
    case "self_excluded": return `Self-exclusion recorded: document ${p.document} may not play until ${p.until}`;
    case "spending_limit_set": return p.limit_cents === null ? `Daily limit removed from ${p.effective}`
      : `Daily limit of ${Hall.money(p.limit_cents)} from ${p.effective}`;
    case "player_account_opened": return `Account ${p.account} opened (${p.medium}) for visitor ${p.visitor}`;
    case "credit_loaded": return `Loaded ${Hall.money(p.amount_cents)} on account ${p.account}`;
    case "banned_list_imported": return `Banned list imported: ${p.rows} entries from ${p.source}`;
    default: return record.type.replaceAll("_", " ");
  }
}

function describeAnswer(message) {
  const records = message.records || [];
  const parts = records.map((r) => {
    const known = Console.recent.get(r.seq);
    return {text: known ? outcomeOf(known) : r.type.replaceAll("_", " "), refused: REFUSALS.has(r.type)};
  });
  const result = message.result;
  if (result && typeof result === "object") {
    if (result.token) {
      parts.push({text: `Terminal ${result.terminal} enrolled. Its token, shown only now - enter it on the terminal: ${result.token}`, refused: false});
    } else {
      parts.push({text: Object.entries(result).map(([k, v]) => `${k.replaceAll("_", " ")}: ${v}`).join(", "), refused: false});
    }
  }
  if (!parts.length) return {text: message.repeated ? "Already done (sent twice)" : "Done: nothing to record", ok: true};
  const refused = parts.some((part) => part.refused);
  return {text: (refused ? "" : "Done: ") + parts.map((part) => part.text).join("; "), ok: !refused};
}

function send(command, args) {
  if (!Console.socket) {
    say("Not connected to the hall server; the command was not sent.", false);
    return;
  }
  Console.socket.send(JSON.stringify({id: requestId(), command, args}));
  say(`${command.replaceAll("_", " ")}: sent`, true);
}

function firstAllowed(names) {
  return names.find((name) => Console.commands.has(name)) || null;
}

// --- Generic command forms, from each command's declared argument types -------------

function parseNumbers(text) {
  // "1-90" or "3, 17, 20-25": ranges keep ball counts quick to type.
  const numbers = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const range = part.match(/^(\d+)-(\d+)$/);
    if (range) {
      for (let n = Number(range[1]); n <= Number(range[2]); n++) numbers.push(n);
    } else if (/^-?\d+$/.test(part)) {
      numbers.push(Number(part));
    } else {
      throw new Error(`"${part}" is not a whole number`);
    }
  }
  return numbers;
}

// Money is typed and shown in euros; the command takes integer cents, converted exactly
// from the text (never through a floating-point number).
function eurosToCents(text, name) {
  const match = text.trim().replace(",", ".").match(/^(\d{1,12})(?:\.(\d{1,2}))?$/);
  if (!match) throw new Error(`${name} is an amount in euros, e.g. 12.50`);
  return Number(match[1]) * 100 + Number((match[2] || "").padEnd(2, "0"));
}

const SECRET_PARAMS = new Set(["pin", "new_pin", "password", "old_pin"]);

function fileField(input) {
  // A whole file (the regulator's banned list) is read into the text area: a one-line
  // field would eat its line breaks.
  const picker = document.createElement("input");
  picker.type = "file";
  picker.accept = ".csv,.txt,text/csv,text/plain";
  picker.addEventListener("change", async () => {
    const file = picker.files && picker.files[0];
    if (!file) return;
    input.value = await file.text();
    const source = document.querySelector('#command-fields [data-param="source"]');
    if (source && !source.value) source.value = file.name;
  });
  return picker;
}

function fieldFor(name, type) {
  const label = Hall.el("label", name.endsWith("_cents") ? `${name.slice(0, -6).replaceAll("_", " ")} (EUR)`
    : name.replaceAll("_", " "));
  let input;
  if (type === "bool") {
    input = document.createElement("input");
    input.type = "checkbox";
  } else if (type === "int" && name.endsWith("_cents")) {
    input = document.createElement("input");
    input.type = "text";
    input.inputMode = "decimal";
    input.placeholder = "euros, e.g. 12.50";
    input.dataset.money = "euros";
  } else if (type === "str" && name === "content") {
    input = document.createElement("textarea");
    input.rows = 6;
    input.placeholder = "choose the file below, or paste its lines";
    label.appendChild(input);
    label.appendChild(fileField(input));
    input.dataset.param = name;
    input.dataset.type = type;
    return label;
  } else if (type === "str" && SECRET_PARAMS.has(name)) {
    input = document.createElement("input");
    input.type = "password";
    input.autocomplete = "off";
  } else if (type === "dict") {
    input = document.createElement("textarea");
    input.placeholder = "JSON object, e.g. {\"key\": null}";
    input.rows = 4;
  } else {
    input = document.createElement("input");
    input.type = type === "int" ? "number" : "text";
    if (type === "list[int]") input.placeholder = "numbers: 1-90 or 3, 17, 20";
    if (type === "list[str]") input.placeholder = "comma-separated";
  }
  input.dataset.param = name;
  input.dataset.type = type;
  label.appendChild(input);
  return label;
}

function readField(input) {
  const type = input.dataset.type;
  const text = input.value;
  switch (type) {
    case "bool": return input.checked;
    case "int":
      if (input.dataset.money === "euros") return eurosToCents(text, input.dataset.param.slice(0, -6).replaceAll("_", " "));
      if (!/^-?\d+$/.test(text.trim())) throw new Error(`${input.dataset.param} is a whole number`);
      return Number(text);
    case "str": return text;
    case "list[int]": return parseNumbers(text);
    case "list[str]": return text.split(",").map((s) => s.trim()).filter(Boolean);
    case "dict": return JSON.parse(text || "{}");
    default: throw new Error(`unknown type ${type}`);
  }
}

function openForm(name) {
  const spec = Console.commands.get(name);
  if (!spec) return;
  Console.current = name;
  document.getElementById("command-title").textContent = name.replaceAll("_", " ");
  document.getElementById("command-summary").textContent = spec.summary;
  const fields = document.getElementById("command-fields");
  fields.textContent = "";
  for (const {name: param, type} of spec.params) fields.appendChild(fieldFor(param, type));
  const form = document.getElementById("command-form");
  form.hidden = false;
  const first = fields.querySelector("input, textarea");
  if (first) first.focus(); else form.querySelector("button[type=submit]").focus();
}

function closeForm() {
  document.getElementById("command-form").hidden = true;
  Console.current = null;
}

document.getElementById("command-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const args = {};
  try {
    for (const input of document.querySelectorAll("#command-fields [data-param]")) {
      args[input.dataset.param] = readField(input);
    }
  } catch (error) {
    say(error.message, false);
    return;
  }
  send(Console.current, args);
});
document.getElementById("command-cancel").addEventListener("click", closeForm);

function showCommands() {
  const list = document.getElementById("commands");
  list.textContent = "";
  for (const name of Console.commands.keys()) {
    const button = Hall.el("button", name.replaceAll("_", " "));
    button.type = "button";
    button.title = Console.commands.get(name).summary;
    button.dataset.command = name;
    button.addEventListener("click", () => openForm(name));
    list.appendChild(button);
  }
  if (!Console.commands.size) list.appendChild(Hall.el("p", "Your role gives no commands here.", "hint"));
  document.getElementById("draw").hidden = !firstAllowed(Console.DRAW);
  document.getElementById("verify").hidden = !firstAllowed(Console.VERIFY);
}

// --- The special controls: draw and verify -------------------------------------------

function currentGameId() {
  return Console.view && Console.view.game ? Console.view.game.game_id : null;
}

function argsWithGame(name, args) {
  // Commands that act on the game in play name it; the page fills it in.
  const spec = Console.commands.get(name);
  if (spec && spec.params.some((p) => p.name === "game_id")) args.game_id = currentGameId() || "";
  return args;
}

function draw() {
  const name = firstAllowed(Console.DRAW);
  if (name) send(name, argsWithGame(name, {}));
}

document.getElementById("draw").addEventListener("click", draw);
document.getElementById("verify").addEventListener("submit", (event) => {
  event.preventDefault();
  const name = firstAllowed(Console.VERIFY);
  const series = document.getElementById("verify-series").value;
  const card = document.getElementById("verify-card").value;
  if (!/^\d+$/.test(series) || !/^\d+$/.test(card)) {
    say("Give the series and the card number as whole numbers.", false);
    return;
  }
  send(name, argsWithGame(name, {series: Number(series), card_number: Number(card)}));
});

document.addEventListener("keydown", (event) => {
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
  if (event.key === "Escape") { closeForm(); event.target.blur && event.target.blur(); return; }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (key === "d" && firstAllowed(Console.DRAW)) { event.preventDefault(); draw(); }
  if (key === "v" && firstAllowed(Console.VERIFY)) {
    // The last claim's numbers are still in the form: typed over, not appended to.
    event.preventDefault();
    const series = document.getElementById("verify-series");
    series.focus();
    series.select();
  }
  if (key === "k") { event.preventDefault(); const b = document.querySelector("#commands button"); if (b) b.focus(); }
});

// --- The picture --------------------------------------------------------------------

// The blower's reports stand out: a fault has suspended the game (R86.1) until the
// room chief clears it and resumes.
const BLOWER_RECORDS = {
  blower_fault: (p) => `BLOWER FAULT on the ${p.blower} blower: ${p.fault} (draw ${p.draw_no}); the game is suspended`,
  blower_link: (p) => `${p.blower} blower link ${p.up ? "up" : "DOWN"}: ${p.detail}`,
  blower_fault_cleared: (p) => `${p.blower} blower fault cleared`,
  blower_switched: (p) => `drawing from the ${p.to} blower`,
};

function recordClass(record) {
  if (record.type === "blower_fault" || (record.type === "blower_link" && !record.payload.up)) return "fault";
  if (REFUSALS.has(record.type)) return "fault";
  return undefined;
}

function describeRecord(record) {
  const p = record.payload || {};
  if (record.type in BLOWER_RECORDS) {
    const who = p.actor ? ` (${p.actor.name})` : "";
    return `#${record.seq} ${BLOWER_RECORDS[record.type](p)}${who}`;
  }
  const who = p.actor ? ` (${p.actor.name})` : "";
  const detail = Object.entries(p)
    .filter(([k, v]) => !["actor", "type", "game_id"].includes(k) && v !== null)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" ");
  return `#${record.seq} ${record.type.replaceAll("_", " ")}${who} ${detail}`;
}

function showSession(view) {
  const s = view.session;
  let text;
  if (s.open) text = `session ${s.number} open`;
  else if (s.number && !s.closed) text = `session ${s.number} opening: signed by ${Object.keys(s.opening).join(", ") || "nobody yet"}`;
  else if (s.verification) text = `verification ${s.verification.passed ? "passed" : "FAILED"}; count the balls`;
  else if (s.closed) text = `session ${s.number} closed`;
  else text = "no session open";
  document.getElementById("session-state").textContent = text;
  // Until the regulator's list is imported the admission desk refuses everyone (R75.2).
  const banned = document.getElementById("banned-state");
  if (banned) {
    const list = view.banned_list;
    banned.textContent = list ? `Banned list: ${list.rows} entries from ${list.source} (imported by ${list.imported_by})`
      : "No banned list loaded: nobody can be admitted until an administrator imports it";
    banned.className = list ? "hint" : "answer error";
  }
}

function show(view) {
  Console.view = view;
  document.getElementById("hall-name").textContent = view.hall;
  showSession(view);
  Hall.showBalls(view.game);
  Hall.showFacts(view.game);
  document.getElementById("collected").textContent = view.game ? Hall.money(view.game.collection_cents) : "-";
  const completed = document.getElementById("completed");
  completed.textContent = "";
  // The ball's record names every card it completed: the whole card (a bingo) or a row.
  (view.game ? view.game.completed : []).forEach((c) => {
    const what = c.pattern === "bingo" ? "BINGO" : "ROW";
    completed.appendChild(Hall.el("li", `${what}: ${Hall.cardLabel(c)}`, c.pattern === "bingo" ? "completed bingo" : "completed"));
  });
  showMinutes(view);
  const log = document.getElementById("log");
  log.textContent = "";
  view.recent.forEach((record) => log.appendChild(Hall.el("li", describeRecord(record), recordClass(record))));
}

// --- The minutes book: links to the signed reports, made from the journal on request --

function minutesLink(kind, subject, format, text) {
  const link = Hall.el("a", text);
  link.href = `/api/minutes/${kind}/${encodeURIComponent(subject)}.${format}`;
  link.dataset.minutes = `${kind}-${format}`;
  if (format === "pdf") { link.target = "_blank"; link.rel = "noopener"; }  // the browser's PDF viewer
  return link;
}

function minutesItem(kind, subject, title) {
  const item = Hall.el("li");
  item.dataset.subject = subject;
  item.appendChild(Hall.el("span", title, "minutes-title"));
  item.appendChild(minutesLink(kind, subject, "pdf", "Print (PDF)"));
  item.appendChild(minutesLink(kind, subject, "csv", "CSV"));
  item.appendChild(minutesLink(kind, subject, "pdf.sig", "signature"));
  return item;
}

function showMinutes(view) {
  if (!Console.minutes) return;
  const session = view.session;
  const list = document.getElementById("minutes-list");
  list.textContent = "";
  document.getElementById("minutes-none").hidden = session.number > 0;
  if (!session.number) return;
  list.appendChild(minutesItem("session", String(session.number), `Session ${session.number}`));
  (session.games || []).forEach((game) => {
    list.appendChild(minutesItem("game", game.game_id, `Game ${game.number}`));
  });
}

function onMessage(message) {
  if (message.type === "snapshot") {
    const me = message.me;
    document.getElementById("me").textContent = `${me.name} · ${me.role.replaceAll("_", " ")}`;
    Console.commands = new Map(message.commands.map((c) => [c.name, c]));
    Console.minutes = message.minutes === true;
    document.getElementById("minutes").hidden = !Console.minutes;
    showCommands();
    show(message.view);
  } else if (message.type === "record") {
    remember(message.record);
    show(message.view);
  } else if (message.type === "answer" || message.ok === false) {
    if (message.ok) {
      const {text, ok} = describeAnswer(message);
      say(text, ok);
    } else {
      say(message.error.message, false);
      if (message.error.code === "signed_out") window.location.assign("/login");
    }
  }
}

Hall.connect("/ws", onMessage, async (up, socket) => {
  Console.socket = socket;
  Hall.linkState(up);
  if (!up) {
    // A refused handshake looks like a dropped link; ask whether the sign-in ended.
    const state = await fetch("/api/state").catch(() => null);
    if (state && state.status === 401) window.location.assign("/login");
  }
});

document.getElementById("logout").addEventListener("click", async () => {
  await fetch("/logout", {method: "POST"});
  window.location.assign("/login");
});
