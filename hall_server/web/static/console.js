// The hall console.  Each role opens on the screen of its work ("My desk"), its steps in
// the order they are done; "All commands" lists every command the role may give, as a
// form built from the command's declared arguments.  The page holds no rules: it shows
// the picture the server pushes after each commit, sends commands by name over the
// WebSocket, and the server checks the role and the rules of every one.
"use strict";
const Console = {
  socket: null,
  commands: new Map(),
  token: null,
  card: null,
  account: null,
  admitted: null,
  choices: {},
  me: null,
  view: null,
  current: null,
  counter: 0,
  pending: new Map(),   // request id -> what to do with its answer
  forms: [],            // the desk's command forms, refreshed from each picture
  updaters: [],         // the desk's status lines, refreshed from each picture
  placed: new Set(),    // the commands the desk's screen offers
  // The commands some controls stand for, by the names the hall's modules register.
  DRAW: ["draw_ball"],
  VERIFY: ["verify_claim"],
};

Hall.buildGrid(document.getElementById("ball-grid"));
document.body.dataset.screen = "desk";

function requestId() {
  Console.counter += 1;
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `${Date.now().toString(36)}-${random[0].toString(36)}${random[1].toString(36)}-${Console.counter}`;
}

const words = (name) => name.replaceAll("_", " ");

function say(text, ok, where) {
  for (const line of [document.getElementById("answer"), where].filter(Boolean)) {
    line.textContent = text;
    line.className = `${line.id === "answer" ? "answer" : "outcome"} ${ok ? "ok" : "error"}`;
  }
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

// What a cash movement is, in the cashier's words.
const CASH_MOVES = {hand_in: "Takings handed in", float_top_up: "Float topped up", desk_to_desk: "Cash moved between desks"};
// A drawer as people name it: "desk1", "the seller ana's drawer", "the safe".
const drawerText = (account) => {
  const [kind, name] = String(account).split(":");
  if (account === "house") return "the safe";
  if (account === "operator") return "the operator's account";
  return kind === "cash" && name ? name : String(account);
};

// An account number as it is printed and read aloud: 6072 0102 0601.
const accountText = (number) => String(number).replace(/(\d{4})(?=\d)/g, "$1 ");

function outcomeOf(record) {
  const p = record.payload || {};
  switch (record.type) {
    case "claim_rejected": return `Claim refused: card ${p.card_number} of series ${p.series} does not win - ${p.reason}`;
    case "prize_won": return `prize won: ${p.pattern.toUpperCase()} on card ${p.card_number} of series ${p.series} (ball ${p.ball_count})`;
    case "visitor_admitted": return `Visitor number ${p.number} admitted (${p.name})${p.age_checked ? ", of age" : ""}`;
    case "visitor_left": return `Visitor number ${p.number} left the hall`;
    // A journal written before the door kept the ground alone repeats "entry refused: ".
    case "entry_refused": return `Entry refused to ${p.name}: ${String(p.reason).replace(/^entry refused: /i, "")}`;
    case "complaint_confirmed": return `Complaint number ${p.number} confirmed as written before the room chief`;
    case "opening_hours_notified": return `Opening hours reported to the regulator: ${p.hours}${p.previous ? " (applies from " + p.applies_from + " unless the regulator objects)" : ""}`;
    case "opening_hours_decided": return `The regulator ${p.decision === "approved" ? "approved" : "objected to"} the opening hours ${p.hours} (${p.reference})`;
    case "self_excluded": return `Self-exclusion recorded: ${p.name ? p.name + ", " : ""}${p.document_type ? p.document_type + " " : "document "}${p.document} may not play until ${p.until}`;
    case "spending_limit_set": return p.limit_cents === null ? `Daily limit removed from ${p.effective}`
      : `Daily limit of ${Hall.money(p.limit_cents)} from ${p.effective}`;
    case "player_account_opened": return `Account ${accountText(p.account)} opened (${p.medium}) for visitor ${p.visitor}`;
    case "credit_loaded": return `Loaded ${Hall.money(p.amount)} on account ${accountText(p.account)} at ${p.desk}`;
    case "credit_cashed_out": return `Paid out ${Hall.money(p.amount)} from account ${accountText(p.account)} by ${p.method}${p.reference ? " " + p.reference : ""}`;
    case "banned_list_imported": return `Banned list imported: ${p.rows} entries from ${p.source}`;
    case "paper_cards_sold": return `Sold series ${p.series} cards ${p.first}-${p.last}: ${p.count} cards, ${Hall.money(p.amount_cents)}`;
    case "cash_desk_opened": return `Cash desk ${p.desk} opened with a float of ${Hall.money(p.float)}`;
    case "cash_desk_reconciled": return `Cash desk ${p.desk} closed: counted ${Hall.money(p.counted)}, expected ${Hall.money(p.expected)}, difference ${Hall.money(p.difference)}`;
    case "complaint_recorded": return `Complaint number ${p.number} written in the book (${p.complainant})${p.room_chief ? ", before the room chief " + p.room_chief : p.witnessed === false ? "; the room chief confirms it" : ""}`;
    case "incident_recorded": return `Incident number ${p.number} recorded`;
    case "balls_counted": return countWhole(p) ? `Balls counted (${p.stage}): ${p.counted} of 90`
      : `Count FAILED (${p.stage}): ${p.counted} ball(s) counted, ${countFaults(p)}; count again`;
    case "system_verified": return `Verification for ${p.date}: ${p.passed ? "passed" : "FAILED"}`;
    case "ball_voided": return `Ball ${p.ball} voided by ${p.voided_by} (ball ${p.ball_count}): ${p.reason}`;
    case "ball_correction_signed": return `Correction signed by ${p.signer} (${words(p.role)}): ball ${p.ball_count} announced as ${p.misread} reads ${p.corrected} - ${p.reason}; the other chief signs it`;
    case "ball_correction_cancelled": return `Correction of ball ${p.ball_count} cancelled by ${p.by}: ${p.misread} stands`;
    case "ball_corrected": return `BALL CORRECTED: ball ${p.ball_count} is ${p.ball}, not ${p.misread} as announced (signed by ${p.signed_by.join(" and ")}: ${p.reason})`;
    case "card_refused": return `Card ${p.series}-${p.card_number} refused as invalid by ${p.refused_by}: ${p.reason}`;
    case "prize_closed": return `${p.patterns.map((x) => x.toUpperCase()).join(" and ")} closed ${p.wait_s ? `after ${p.wait_s} s with no new claim` : `by ${p.closed_by}`}: no other card shares it`;
    case "game_suspended": return `Game suspended: ${p.reason}`;
    case "game_suspended_for_good": return `Game suspended for good: ${p.reason}`;
    case "game_resumed": return "Game resumed";
    case "terminal_failed": return `Terminal ${p.terminal_id} failed: its cards left the game${(p.refunded || []).length ? ", " + p.refunded.length + " refunded" : ""}`;
    case "terminal_out_of_service": return `Terminal ${p.terminal} out of service: ${p.reason}` + (p.kept_in_play && p.kept_in_play.length ? `; its ${p.kept_in_play.length} card(s) of the game stay in play, their wins credited, no refund: the draw had started (R96.3)` : "");
    case "blower_fault": case "blower_link": case "blower_switched": return BLOWER_RECORDS[record.type](p);
    case "clock_stepped": return clockStep(p);
    case "prize_paid": return `prize paid: ${p.prize} ${Hall.money(p.amount_cents)}${p.desk ? " at " + String(p.desk).replace(/^cash:/, "") : ""}`;
    case "cash_moved": return `${CASH_MOVES[p.kind] || "Cash moved"}: ${Hall.money(p.amount)} from ${drawerText(p.source)} to ${drawerText(p.destination)}`;
    case "jackpot_deposited": return `Jackpot money deposited: ${Hall.money(p.amount)} from ${drawerText(p.counterpart)} (slip ${p.reference}); the bank account holds ${Hall.money(p.bank_after)} of ${Hall.money(p.funds)}`;
    case "jackpot_withdrawn": return `Jackpot surplus withdrawn: ${Hall.money(p.amount)} to ${drawerText(p.counterpart)} (slip ${p.reference}); the bank account holds ${Hall.money(p.bank_after)}`;
    case "reserve_boost_announced": return `Reserve boost announced: ${Hall.money(p.line_cents)} more for the line, ${Hall.money(p.bingo_cents)} more for the bingo (${Hall.money(p.allowance_cents - p.boosted_before_cents)} of the session's allowance was left)`;
    case "posting": return null;
    default: return words(record.type);
  }
}

function describeAnswer(message) {
  const records = message.records || [];
  const parts = records.map((r) => {
    const known = Console.recent.get(r.seq);
    const failedCount = Boolean(known && known.type === "balls_counted" && !countWhole(known.payload || {}));
    return {text: known ? outcomeOf(known) : words(r.type), refused: REFUSALS.has(r.type) || failedCount};
  }).filter((part) => part.text);
  const result = message.result;
  if (Array.isArray(result)) {
    parts.push({text: `${result.length} found`, refused: false});
  } else if (result && typeof result === "object") {
    if (Array.isArray(result.games)) {
      showLastGames(result.games);
      parts.push({text: `${result.games.length} finished game(s), shown under Last games`, refused: false});
    } else if (result.token && result.machine) {
      parts.push({text: `Station ${result.station} of machine ${result.machine} enrolled; its token is shown below, only now`, refused: false});
    } else if (result.token) {
      parts.push({text: `Terminal ${result.terminal} enrolled. Its token, shown only now - enter it on the terminal: ${result.token}`, refused: false});
    } else if (isVbMeters(result)) {
      Console.vbMeters = result;
      refresh();
      const machines = Object.keys(result).filter((k) => k !== "superjackpot_cents").length;
      parts.push({text: `The meters of ${machines === 1 ? "1 machine are" : machines + " machines are"} shown under Video bingo machines`, refused: false});
    } else if ("cells" in result || "balance_cents" in result) {
      // A card or an account looked up: its desk shows it whole.
    } else if (Object.values(result).some((v) => v && typeof v === "object")) {
      parts.push({text: Object.entries(result).map(([k, v]) => (v && typeof v === "object" ? k : `${words(k)}: ${v}`)).join(", "), refused: false});
    } else {
      parts.push({text: Object.entries(result).map(([k, v]) => `${words(k)}: ${v}`).join(", "), refused: false});
    }
  }
  if (!parts.length) return {text: message.repeated ? "Already done (sent twice)" : "Done: nothing to record", ok: true};
  const refused = parts.some((part) => part.refused);
  return {text: (refused ? "" : "Done: ") + parts.map((part) => part.text).join("; "), ok: !refused};
}

// Send a command; ``then(message)`` hears its answer, ``where`` shows it too (a form's own
// line).  A look-up (``quiet``) changes nothing, so only ``then`` hears its answer.
function send(command, args, then, where, quiet) {
  if (!Console.socket) {
    say("Not connected to the hall server; the command was not sent.", false, where);
    return;
  }
  const id = requestId();
  Console.pending.set(id, {then, where, quiet});
  Console.socket.send(JSON.stringify({id, command, args}));
  if (!quiet) say(`${words(command)}: sent`, true, where);
}

function firstAllowed(names) {
  return names.find((name) => Console.commands.has(name)) || null;
}

// --- A command's PDF (the ticket, the statement): a download, made by the server -----

async function download(command, args, where) {
  say(`${words(command)}: making the PDF`, true, where);
  let response;
  try {
    response = await fetch("/api/document", {
      method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({id: requestId(), command, args}),
    });
  } catch (error) {
    say("Not connected to the hall server; nothing was printed.", false, where);
    return;
  }
  if (!response.ok) {
    const answer = await response.json().catch(() => null);
    say(answer && answer.error ? answer.error.message : `the server answered ${response.status}`, false, where);
    if (response.status === 401) window.location.assign("/login");
    return;
  }
  const disposition = response.headers.get("content-disposition") || "";
  const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || `${command}.pdf`;
  const url = URL.createObjectURL(await response.blob());
  const link = Hall.el("a");
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say(`Done: ${name} downloaded - open it to print`, true, where);
}

// --- Fields, from each argument's name and declared type ------------------------------

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

const clock = (ms) => new Date(ms).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"});

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
    const source = input.form && input.form.querySelector('[data-param="source"]');
    if (source && !source.value) source.value = file.name;
  });
  return picker;
}

// The choices an argument takes from the hall's state, by the argument's name.
const STATE_CHOICES = {
  desk: (view) => (view.desks || []).map((d) => [d.desk,
    `${d.desk} (${d.open ? "open, " + Hall.money(d.cents) + " in the drawer" : "closed"})`]),
  series: (view) => (view.series || []).map((s) => [String(s.series),
    `${s.series} · ${s.card_set} · ${Hall.money(s.price_cents)} · ${s.card_count - s.last_sold} of ${s.card_count} left`]),
  terminal: (view) => (view.terminals || []).map((t) => [t.terminal, `${t.terminal} (${t.place}, ${t.state})`]),
  // A seller's drawer holds the cash of their paper sales until it is handed in at a desk.
  seller: (view) => Object.entries(view.drawers || {})
    .filter(([name]) => !(view.desks || []).some((d) => d.desk === name))
    .map(([name, cents]) => [name, `${name} (${Hall.money(cents)} in the drawer)`]),
  visitor: (view) => (view.visitors || []).map((v) => [String(v.number),
    `${v.number} · ${v.name}${v.account ? " (holds an account)" : ""}${v.left ? " (left)" : ""}`]),
  // The complaints the room chief has not yet confirmed as written in their presence (R75.5).
  complaint: (view) => (view.complaints || []).filter((c) => !c.room_chief).map((c) => [String(c.number),
    `No. ${c.number} · ${c.complainant}`]),
};

// The commands that name a new thing: that argument is typed, not chosen among the known ones.
const NAMES_NEW = {enrol_terminal: ["terminal"], replace_ball_set: ["new_set"]};

function choiceKind(name, command) {
  if ((NAMES_NEW[command] || []).includes(name)) return null;
  if (command === "confirm_complaint" && name === "number") return "complaint";
  if (name in Console.choices) return name;
  if (name === "desk" || name.endsWith("_desk")) return "desk";  // from_desk, to_desk...
  if (name in STATE_CHOICES) return name;
  return null;
}

function choicesFor(kind, view) {
  if (kind in Console.choices) return Console.choices[kind].map((w) => [w, words(w)]);
  return STATE_CHOICES[kind](view || {series: [], desks: [], terminals: [], visitors: []});
}

function fillSelect(select, view) {
  const kept = select.value;
  const options = choicesFor(select.dataset.choices, view)
    .filter(([value]) => !select.filterChoice || select.filterChoice(value, view));
  const key = JSON.stringify(options);
  if (select.dataset.options === key) return;
  select.dataset.options = key;
  select.textContent = "";
  if (!options.length) select.appendChild(Hall.el("option", "(none yet)")).value = "";
  for (const [value, text] of options) select.appendChild(Hall.el("option", text)).value = value;
  const preferred = select.preferChoice ? select.preferChoice(view) : null;
  if (options.some(([v]) => v === kept) && select.dataset.touched) select.value = kept;
  else if (preferred !== null && preferred !== undefined && options.some(([v]) => v === String(preferred))) select.value = String(preferred);
  else if (options.some(([v]) => v === kept)) select.value = kept;
}

const LABELS = {pin: "PIN (4 to 8 digits, typed by the player)", new_pin: "new PIN", float_cents: "float (EUR)",
  birth_date: "birth date on the document (checked, not kept)"};

function labelText(name) {
  if (name in LABELS) return LABELS[name];
  return name.endsWith("_cents") ? `${words(name.slice(0, -6))} (EUR)` : words(name);
}

function fieldFor(name, type, options = {}) {
  const label = Hall.el("label", options.label || labelText(name));
  let input;
  const kind = choiceKind(name, options.command);
  if (type === "bool") {
    input = document.createElement("input");
    input.type = "checkbox";
  } else if (kind && (type === "str" || type === "int")) {
    input = document.createElement("select");
    input.dataset.choices = kind;
    input.addEventListener("change", () => { input.dataset.touched = "1"; });
    fillSelect(input, Console.view);
  } else if (type === "int" && name.endsWith("_cents")) {
    input = document.createElement("input");
    input.type = "text";
    input.inputMode = "decimal";
    input.placeholder = "euros, e.g. 12.50";
    input.dataset.money = "euros";
  } else if (type === "str" && name === "content") {
    input = document.createElement("textarea");
    input.rows = 5;
    input.placeholder = "choose the file below, or paste its lines";
    label.appendChild(input);
    label.appendChild(fileField(input));
    input.dataset.param = name;
    input.dataset.type = type;
    return label;
  } else if (type === "str" && ["text", "description", "complaint"].includes(name)) {
    input = document.createElement("textarea");
    input.rows = 2;
  } else if (type === "str" && SECRET_PARAMS.has(name)) {
    input = document.createElement("input");
    input.type = "password";
    input.autocomplete = "off";
    input.inputMode = "numeric";
  } else if (type === "str" && (name === "date" || name.endsWith("_date"))) {
    input = document.createElement("input");
    input.type = "date";
  } else if (type === "dict") {
    input = document.createElement("textarea");
    input.placeholder = "JSON object, e.g. {\"key\": null}";
    input.rows = 4;
  } else {
    input = document.createElement("input");
    input.type = type === "int" ? "number" : "text";
    if (type === "int") input.inputMode = "numeric";
    if (type === "list[int]") input.placeholder = "numbers: 1-90 or 3, 17, 20";
    if (type === "list[str]") input.placeholder = "names, separated by commas";
    if (name === "account") { input.placeholder = "type or scan the number"; input.inputMode = "numeric"; }
  }
  input.dataset.param = name;
  input.dataset.type = type;
  if (options.value !== undefined) input.value = options.value;
  label.appendChild(input);
  return label;
}

function readField(input) {
  const type = input.dataset.type;
  const text = input.value;
  const name = input.dataset.param;
  switch (type) {
    case "bool": return input.checked;
    case "int":
      if (input.dataset.money === "euros") return eurosToCents(text, words(name.slice(0, -6)));
      if (!/^-?\d+$/.test(text.trim())) throw new Error(`${words(name)} is a whole number`);
      return Number(text);
    case "str": return text;
    case "list[int]": return parseNumbers(text);
    case "list[str]": return text.split(",").map((s) => s.trim()).filter(Boolean);
    case "dict": return JSON.parse(text || "{}");
    default: throw new Error(`unknown type ${type}`);
  }
}

function readFields(container) {
  const args = {};
  for (const input of container.querySelectorAll("[data-param]")) args[input.dataset.param] = readField(input);
  return args;
}

// --- The generic forms of "All commands" ----------------------------------------------

function openForm(name) {
  const spec = Console.commands.get(name);
  if (!spec) return;
  showScreen("all-commands");
  Console.current = name;
  document.getElementById("command-title").textContent = words(name);
  document.getElementById("command-summary").textContent = spec.summary;
  const fields = document.getElementById("command-fields");
  fields.textContent = "";
  for (const {name: param, type} of spec.params) {
    if (param === "game_id") continue;  // the page fills in the game in play
    fields.appendChild(fieldFor(param, type, {command: name}));
  }
  const form = document.getElementById("command-form");
  form.querySelector("button[type=submit]").firstChild.textContent = spec.document ? "Download PDF " : "Send ";
  form.hidden = false;
  const first = fields.querySelector("input, textarea, select");
  if (first) first.focus(); else form.querySelector("button[type=submit]").focus();
}

function closeForm() {
  document.getElementById("command-form").hidden = true;
  Console.current = null;
}

document.getElementById("command-form").addEventListener("submit", (event) => {
  event.preventDefault();
  let args;
  try {
    args = argsWithGame(Console.current, readFields(document.getElementById("command-fields")));
  } catch (error) {
    say(error.message, false);
    return;
  }
  if (Console.commands.get(Console.current).document) download(Console.current, args);
  else send(Console.current, args);
});
document.getElementById("command-cancel").addEventListener("click", closeForm);

function commandButton(name) {
  const button = Hall.el("button", words(name));
  button.type = "button";
  button.title = Console.commands.get(name).summary;
  button.dataset.command = name;
  button.addEventListener("click", () => openForm(name));
  return button;
}

function showCommands() {
  const list = document.getElementById("commands");
  list.textContent = "";
  for (const name of Console.commands.keys()) {
    const row = Hall.el("div", null, "command-row");
    row.appendChild(commandButton(name));
    row.appendChild(Hall.el("span", Console.commands.get(name).summary, "hint"));
    list.appendChild(row);
  }
  if (!Console.commands.size) list.appendChild(Hall.el("p", "Your role gives no commands here.", "hint"));
  document.getElementById("draw").hidden = !firstAllowed(Console.DRAW);
}

function showMore() {
  // Whatever the role may do that its desk does not offer: a new command shows up here.
  const more = document.getElementById("more-commands");
  more.textContent = "";
  const left = [...Console.commands.keys()].filter((name) => !Console.placed.has(name));
  left.forEach((name) => more.appendChild(commandButton(name)));
  document.getElementById("more").hidden = !left.length;
}

// --- The screens: My desk, All commands, and the game (its own tab on a handheld) ----

function showScreen(id) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("current", tab.dataset.screen === id);
  document.body.dataset.screen = id;
  document.getElementById("desk").hidden = id === "all-commands";
  document.getElementById("all-commands").hidden = id !== "all-commands";
}

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => showScreen(tab.dataset.screen));
}

// --- The desk's building blocks -------------------------------------------------------

function currentGameId() {
  return Console.view && Console.view.game ? Console.view.game.game_id : null;
}

function argsWithGame(name, args) {
  // Commands that act on the game in play name it; the page fills it in.
  const spec = Console.commands.get(name);
  if (spec && spec.params.some((p) => p.name === "game_id")) args.game_id = currentGameId() || "";
  return args;
}

// A section of the desk: a numbered step with its state line, shown when ``when(view)``.
function section(title, options = {}) {
  const box = Hall.el("section", null, "task");
  if (options.id) box.id = options.id;
  const head = Hall.el("h2", title);
  box.appendChild(head);
  if (options.state) {
    const line = Hall.el("p", "", "state-line");
    box.appendChild(line);
    Console.updaters.push((view) => {
      const [text, done] = options.state(view);
      line.textContent = text;
      box.classList.toggle("done", done === true);
    });
  }
  if (options.when) Console.updaters.push((view) => { box.hidden = !options.when(view); });
  if (options.next) Console.updaters.push((view) => { box.classList.toggle("next", options.next(view)); });
  return box;
}

// One command as a form of its own on the desk.  ``options``:
//   label       the button's text;          fixed      arguments the page gives (name -> value or fn(view));
//   fields      per argument: {label, value, auto(view), readonly, filter(value, view), prefer(view)};
//   done(msg)   after a committed answer;   keep       argument names whose typed values stay after sending.
function commandForm(name, options = {}) {
  const spec = Console.commands.get(name);
  if (!spec) return null;
  Console.placed.add(name);
  const form = Hall.el("form", null, "desk-form");
  form.dataset.command = name;
  const fields = Hall.el("div", null, "fields");
  const fixed = options.fixed || {};
  for (const {name: param, type} of spec.params) {
    if (param === "game_id" || param in fixed) continue;
    const opts = {command: name, ...((options.fields || {})[param] || {})};
    const label = fieldFor(param, type, opts);
    const input = label.querySelector("[data-param]");
    if (opts.filter) input.filterChoice = opts.filter;
    if (opts.prefer) input.preferChoice = opts.prefer;
    if (opts.readonly) input.readOnly = true;
    if (opts.auto) {
      // Filled in from the state until the person types over it; a read-only field always
      // shows the state's value.
      input.addEventListener("input", () => { input.dataset.typed = "1"; });
      Console.updaters.push((view) => {
        if (!opts.readonly && (input.dataset.typed || document.activeElement === input)) return;
        const value = opts.auto(view);
        input.value = value === null || value === undefined ? "" : String(value);
      });
    }
    if (input.tagName === "SELECT") Console.forms.push(input);
    fields.appendChild(label);
  }
  form.appendChild(fields);
  if (!fields.children.length) form.classList.add("bare");  // a button alone: it sits in a row with others
  if (options.when) Console.updaters.push((view) => { form.hidden = !options.when(view); });
  const button = Hall.el("button", options.label || (spec.document ? `${words(name)} (PDF)` : words(name)),
    options.quiet ? "" : "primary");
  button.type = "submit";
  form.appendChild(button);
  const outcome = Hall.el("p", "", "outcome");
  form.appendChild(outcome);
  form.title = spec.summary;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let args;
    try {
      args = readFields(fields);
      for (const [param, value] of Object.entries(fixed)) args[param] = typeof value === "function" ? value(Console.view) : value;
      args = argsWithGame(name, args);
    } catch (error) {
      say(error.message, false, outcome);
      return;
    }
    if (options.before) options.before();
    if (spec.document) { download(name, args, outcome); return; }
    send(name, args, (message) => {
      if (!message.ok) return;
      for (const input of fields.querySelectorAll("[data-param]")) {
        delete input.dataset.typed;
        const keep = (options.keep || []).includes(input.dataset.param) || input.tagName === "SELECT";
        if (!keep && input.type !== "checkbox") input.value = "";
        if (input.type === "password") input.value = "";
      }
      refresh();
      if (options.done) options.done(message);
    }, outcome);
  });
  return form;
}

function append(parent, ...children) {
  for (const child of children) if (child) parent.appendChild(child);
  return parent;
}

function live(tag, cls, render) {
  // An element redrawn from every picture.
  const node = Hall.el(tag, null, cls);
  Console.updaters.push((view) => render(node, view));
  return node;
}

// --- The session's opening and closing (administrator, room chief) -------------------

const countWhole = (count) => !(count.missing || []).length && !(count.repeated || []).length;
// What a count lacked: "missing 17, 42; repeated 5".
const countFaults = (count) => [
  (count.missing || []).length ? `missing ${count.missing.join(", ")}` : "",
  (count.repeated || []).length ? `repeated ${count.repeated.join(", ")}` : "",
].filter(Boolean).join("; ");

function sessionSteps(view) {
  const s = view.session;
  const fresh = !s.number || s.closed;  // no session, or the last one is closed: a new one opens
  const opening = !fresh && !s.open && s.last_count && s.last_count.stage === "opening" ? s.last_count : null;
  // A count that did not find the 90 balls once each is a count made, not passed: the
  // opening is not signed until a count finds them all (R84.2).
  const countFailed = Boolean(opening && !countWhole(opening));
  const counted = !fresh && (s.open || Boolean(opening && !countFailed));
  const verified = s.open || counted || countFailed || Boolean(s.verification && s.verification.passed);
  return {
    verified, counted, countFailed, open: Boolean(s.open), fresh,
    signedOpening: fresh ? [] : Object.keys(s.opening || {}), signedClosing: Object.keys(s.closing || {}),
    countedClosing: Boolean(s.open && s.last_count && s.last_count.stage === "closing"),
  };
}

const ROLE_WORDS = {administrator: "administrator", room_chief: "room chief"};
const signedBy = (signatures, session) => signatures.length
  ? signatures.map((role) => `${ROLE_WORDS[role] || words(role)} ${session[role] || ""}`.trim()).join(" and ")
  : "nobody yet";

function todayInput() {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}

function openingSection() {
  const box = section("Session opening", {
    state: (view) => {
      const st = sessionSteps(view);
      return st.open ? [`Session ${view.session.number} is open (${view.session.date})`, true]
        : ["Verify the system, count the 90 balls before witnesses, then both sign", false];
    },
    when: (view) => !view.session.open,
  });
  const verification = section("1. Verify the system", {
    state: (view) => {
      const st = sessionSteps(view);
      const v = view.session.verification;
      if (st.open) return ["done: the session is open", true];
      if (v) {
        const failed = Object.entries(v.results || {}).filter(([, fault]) => fault !== null).map(([check, fault]) => `${words(check)}: ${typeof fault === "string" ? fault : JSON.stringify(fault)}`);
        return v.passed ? [`passed for ${v.date}`, true] : [`FAILED for ${v.date}: ${failed.join("; ")}`, false];
      }
      return ["not yet run today", false];
    },
    next: (view) => !sessionSteps(view).verified,
  });
  append(verification, commandForm("run_verification", {label: "Run the verification", fields: {date: {label: "session date", value: todayInput()}}, keep: ["date"]}));
  const count = section("2. Count the balls (room chief, with witnesses)", {
    state: (view) => {
      const st = sessionSteps(view);
      const c = view.session.last_count;
      if (st.counted) return ["counted at the opening: all 90 present", true];
      if (st.countFailed) return [`COUNT FAILED: ${countFaults(c)}. Find the ball${(c.missing || []).length > 1 ? "s" : ""} and count again before the same witnesses; the opening is signed only after a count of all 90`, false];
      return [st.verified ? "to do now: the room chief counts the balls" : "after the verification", false];
    },
    next: (view) => { const st = sessionSteps(view); return st.verified && !st.counted; },
  });
  Console.updaters.push((view) => { count.classList.toggle("failed", sessionSteps(view).countFailed); });
  append(count, commandForm("count_balls", {
    label: "Record the count", fixed: {stage: "opening"},
    fields: {balls_present: {label: "balls present", value: "1-90"}, witnesses: {label: "witnesses (names, commas between)"}},
    keep: ["balls_present", "witnesses"],
  }));
  const sign = section("3. Sign the opening (administrator and room chief)", {
    state: (view) => {
      const st = sessionSteps(view);
      if (st.countFailed) return ["not yet: the last count did not find the 90 balls", false];
      return [`signed by ${signedBy(st.signedOpening, view.session.opening)}`, st.open];
    },
    next: (view) => { const st = sessionSteps(view); return st.counted && !st.open && !st.signedOpening.includes(Console.me.role); },
  });
  append(sign, commandForm("sign_session_opening", {label: "Sign the opening", when: (view) => sessionSteps(view).counted}));
  return append(box, verification, count, sign);
}

function closingSection() {
  const box = section("Session closing", {
    state: (view) => [view.session.closed ? `Session ${view.session.number} is closed` : "After the last game: count the balls again, then both sign", Boolean(view.session.closed)],
    when: (view) => Boolean(view.session.open),
  });
  // The closing is the next step only once the game announced as the last is over: during a
  // game the next step is the game's own (the sale, the draw, the prize, its end).
  const lastPlayed = (view) => Boolean(view.game && view.game.last_game && gameOver(view.game));
  const count = section("1. Count the balls", {
    state: (view) => {
      if (sessionSteps(view).countedClosing) return ["counted at the closing", true];
      if (!gameOver(view.game)) return ["after the last game; a game is in play now", false];
      return [lastPlayed(view) ? "to do now: the last game is over" : "after the last game", false];
    },
    next: (view) => !sessionSteps(view).countedClosing && lastPlayed(view),
  });
  append(count, commandForm("count_balls", {
    label: "Record the closing count", fixed: {stage: "closing"},
    fields: {balls_present: {label: "balls present", value: "1-90"}, witnesses: {label: "witnesses (names, commas between)"}},
    keep: ["balls_present"],
  }));
  const sign = section("2. Sign the closing", {
    state: (view) => [`signed by ${signedBy(sessionSteps(view).signedClosing, view.session.closing)}`, false],
    next: (view) => sessionSteps(view).countedClosing && !sessionSteps(view).signedClosing.includes(Console.me.role),
  });
  append(sign, commandForm("sign_session_closing", {label: "Sign the closing"}));
  return append(box, count, sign);
}

// --- The game: what is on sale and in play -------------------------------------------

const gameOver = (game) => !game || ["closed", "finished by hand", "refunded", "cards collected"].includes(game.state);
// A line or bingo found and still open to other cards (R85.6), or a correction waiting for
// its second signature (R85.5): either holds the draw.
const paused = (view) => Boolean(view.game && view.game.pause);
const drawHeld = (view) => Boolean(view.game && (view.game.pause || view.game.correction));
// The cards the last ball completed a prize on that nobody has won yet: what the caller
// watches for before a claim (R85.6).
const foundNow = (view) => {
  const g = view.game;
  if (!g || g.state !== "drawing") return [];
  const won = new Set(g.winners.map((w) => w.pattern));
  return (g.completed || []).filter((c) => !won.has(c.pattern) && !(c.pattern === "line" && won.has("bingo")));
};
const lastBall = (view) => (view.game && view.game.balls.length ? view.game.balls[view.game.balls.length - 1] : "");

// "Line! Another card?": the prize found, who has it, and how it closes (R85.6).
function pauseWords(view) {
  const pause = view.game.pause;
  const title = `${pause.patterns.map((p) => p.toUpperCase()).join(" AND ")}! Another card?`;
  const found = view.game.winners.filter((w) => pause.patterns.includes(w.pattern)).map((w) => Hall.cardLabel(w));
  const detail = `Found on ball ${pause.ball_count} by ${found.join(", ") || "-"}. Nothing is drawn: the table chief `
    + `checks every other card called; the caller closes the prize, or it closes by itself ${view.claim_wait_s || 10} s `
    + "after the last claim.";
  return [title, detail];
}

function pauseBanner() {
  // At the top of the desks of the roles it concerns: the caller, the table chief, the room chief.
  const node = Hall.el("div", null, "pause-banner");
  node.setAttribute("role", "status");
  const title = Hall.el("div", "", "pause-title");
  const detail = Hall.el("div", "", "pause-detail");
  append(node, title, detail);
  Console.updaters.push((view) => {
    node.hidden = !paused(view);
    if (node.hidden) return;
    [title.textContent, detail.textContent] = pauseWords(view);
  });
  return node;
}

// Correcting a misread ball (R85.5): the room chief and the table chief each sign the same
// correction at their own desk; a claim on the ball, or a cancel, ends a correction signed once.
function correctionSection() {
  const waiting = (view) => (view.game ? view.game.correction : null);
  const box = section("Correct a misread ball", {
    state: (view) => {
      const c = waiting(view);
      if (!c) return ["The blower's ball only, before any claim on it: both chiefs sign the same correction", false];
      const mine = c.role === Console.me.role;
      return [`${c.signer} (${words(c.role)}) signed: ball ${c.ball_count} was announced as ${c.misread}; the ball drawn `
        + `reads ${c.corrected} (${c.reason}). ${mine ? "Waiting for the other chief's signature." : "Sign it if you agree, or cancel it."}`
        + " Nothing is drawn meanwhile.", false];
    },
    when: (view) => Boolean(view.game && view.game.balls.length && !gameOver(view.game)),
  });
  Console.updaters.push((view) => { box.classList.toggle("correction-waiting", Boolean(waiting(view))); });
  append(box,
    commandForm("correct_ball", {
      label: "Sign the correction", quiet: true,
      fields: {
        // Only the last ball is corrected (R85.5): the ball announced is always the last
        // one drawn (or the one a signed correction names), never typed, so it cannot go stale.
        ball: {label: "ball announced (the last)", readonly: true,
          auto: (view) => (waiting(view) ? waiting(view).misread : lastBall(view))},
        corrected: {label: "ball drawn (read again)", auto: (view) => (waiting(view) ? waiting(view).corrected : "")},
        reason: {label: "why"},
      },
    }),
    commandForm("cancel_ball_correction", {label: "Cancel the correction", quiet: true, when: (view) => Boolean(waiting(view))}));
  return box;
}
const gameSeries = (view) => (view.game ? view.game.series.map((s) => String(s.series)) : []);

function nextCard(view, series) {
  // The card after the last one sold of ``series`` in this game, or the sale's first.
  const game = view.game;
  if (!game) return null;
  const sold = (game.sales || []).filter((s) => String(s.series) === String(series)).map((s) => s.last);
  if (sold.length) return Math.max(...sold) + 1;
  const opened = game.series.find((s) => String(s.series) === String(series));
  return opened ? opened.first_card : null;
}

function receipt(node, view) {
  const game = view.game;
  node.textContent = "";
  const mine = game && !gameOver(game) ? (game.sales || []).filter((s) => s.seller === Console.me.name) : [];
  if (!mine.length) {
    node.appendChild(Hall.el("p", game ? "No cards sold by you in this game yet." : "No game on sale.", "hint"));
    return;
  }
  const table = Hall.el("table", null, "receipt-table");
  const head = table.createTHead().insertRow();
  ["Series", "Cards", "Count", "Amount"].forEach((h) => head.appendChild(Hall.el("th", h)));
  const body = table.createTBody();
  for (const s of mine) {
    const row = body.insertRow();
    [s.series, `${s.first}-${s.last}`, s.count, Hall.money(s.amount_cents)].forEach((v) => row.insertCell().textContent = String(v));
  }
  const foot = table.createTFoot().insertRow();
  const cards = mine.reduce((n, s) => n + s.count, 0);
  const total = mine.reduce((n, s) => n + s.amount_cents, 0);
  ["Total", "", String(cards), Hall.money(total)].forEach((v) => foot.appendChild(Hall.el("th", v)));
  node.appendChild(Hall.el("h3", `Game ${game.game_id} · sold by ${Console.me.name}`));
  node.appendChild(table);
}

function gameSummary(node, view) {
  const game = view.game;
  node.textContent = "";
  if (!game) { node.appendChild(Hall.el("p", "No game yet.", "hint")); return; }
  const facts = [
    ["Game", `${game.game_id}: ${game.state}${game.last_game ? " (last game of the session)" : ""}`],
    ["Series", game.series.map((s) => `${s.series} from card ${s.first_card}`).join(", ")],
    ["Cards sold", `${game.cards_sold} (${Hall.money(game.collection_cents)})`],
    ["Prizes", game.prizes && "line" in game.prizes ? `line ${Hall.money(game.prizes.line)}, bingo ${Hall.money(game.prizes.bingo)}` : "announced at the close of the sale"],
    ["Pots", Hall.potsText(game.pots || {})],
    ["Balls", game.balls.length ? `${game.balls.length} drawn, last ${game.balls[game.balls.length - 1]}` : "none drawn"],
    ["Winners", game.winners.length ? game.winners.map((w) => `${w.pattern.toUpperCase()} ${w.series}-${w.card_number} (ball ${w.ball_count})`).join(", ") : "none yet"],
    ["Paid", (game.paid || []).length ? game.paid.map((p) => `${p.prize} ${Hall.money(p.amount_cents)}`).join(", ") : "nothing yet"],
  ];
  const list = Hall.el("dl", null, "overview");
  for (const [k, v] of facts) { list.appendChild(Hall.el("dt", k)); list.appendChild(Hall.el("dd", v)); }
  node.appendChild(list);
}

// --- The screens of the roles ----------------------------------------------------------

function administratorScreen(screen) {
  append(screen, openingSection(), closingSection(), operatorPotsSection());
  const terminals = section("Player terminals", {state: (view) => [`${(view.terminals || []).length} enrolled`, false]});
  append(terminals, commandForm("enrol_terminal", {label: "Enrol the terminal", done: showToken}),
    live("div", "token-box", (node) => { node.hidden = !Console.token; node.textContent = Console.token || ""; }),
    live("ul", "rows", terminalRows));
  screen.appendChild(terminals);
  const banned = section("The regulator's banned list", {state: bannedState});
  append(banned, commandForm("import_banned_list", {label: "Import the list"}));
  screen.appendChild(banned);
  screen.appendChild(hoursSection());
}

// The opening hours (R74): those in force, a change waiting for the regulator, and its answer.
function hoursState(view) {
  const h = view.opening_hours;
  if (!h) return ["No opening hours reported: the hall is held to none (set [hall] opening_hours)", false];
  const now = `in force: ${h.in_force || h.hours}${h.open_now === false ? " - the hall is CLOSED now" : ""}`;
  if (h.pending) return [`${now}; change to ${h.hours} requested: applies from ${h.applies_from} unless the regulator objects, or once it approves`, false];
  if (h.decision) return [`${now}; the regulator ${h.decision === "approved" ? "approved" : "objected to"} ${h.hours} (${h.reference})`, true];
  return [now, true];
}

function hoursSection() {
  const box = section("Opening hours (R74)", {id: "opening-hours", state: hoursState});
  box.querySelector(".state-line").id = "hours-detail";
  return append(box, commandForm("record_hours_decision", {
    label: "Record the regulator's answer", when: (view) => Boolean(view.opening_hours && view.opening_hours.pending),
    fields: {reference: {label: "reference of the regulator's letter"}},
  }));
}

function showToken(message) {
  const result = message.result;
  if (result && result.token) {
    Console.token = `Token of ${result.terminal}, shown only now - enter it on the terminal: ${result.token}`;
    refresh();
  }
}

function terminalRows(node, view) {
  node.textContent = "";
  for (const t of view.terminals || []) {
    node.appendChild(Hall.el("li", `${t.terminal} · ${t.place} · ${t.state}${t.reason ? " (" + t.reason + ")" : ""}`,
      t.state === "in service" ? "" : "warn"));
  }
  if (!(view.terminals || []).length) node.appendChild(Hall.el("li", "No terminal enrolled.", "hint"));
}

function bannedState(view) {
  const list = view.banned_list;
  return list ? [`Banned list: ${list.rows} entries from ${list.source} (imported by ${list.imported_by})`, true]
    : ["No banned list loaded: nobody can be admitted until an administrator imports it", false];
}

function roomChiefScreen(screen) {
  const overview = section("The hall now", {id: "overview"});
  append(overview, live("div", "", gameSummary));
  const faults = section("Faults");
  append(faults, live("ul", "rows faults", (node, view) => {
    node.textContent = "";
    const shown = view.faults || [];
    if (!shown.length) node.appendChild(Hall.el("li", "No fault recorded.", "hint"));
    shown.forEach((record) => node.appendChild(Hall.el("li", `${clock(record.time_ms)} ${outcomeOf(record)}`, "warn")));
  }));
  append(faults,
    commandForm("suspend_game", {label: "Suspend the game", when: (view) => Boolean(view.game && ["selling", "drawing"].includes(view.game.state))}),
    commandForm("resume_game", {label: "Resume the game", when: (view) => Boolean(view.game && view.game.state === "suspended")}));
  const terminals = section("Terminals");
  const inService = (value, view) => (view.terminals || []).some((t) => t.terminal === value && t.state === "in service");
  append(terminals, live("ul", "rows", terminalRows),
    commandForm("declare_terminal_failed", {label: "Declare failed", fields: {terminal: {filter: inService}}, quiet: true,
      when: (view) => (view.terminals || []).some((t) => t.state === "in service")}),
    commandForm("return_terminal_to_service", {label: "Back in service", fields: {terminal: {filter: (v, view) => !inService(v, view)}}, quiet: true,
      when: (view) => (view.terminals || []).some((t) => t.state === "out of service")}));
  screen.appendChild(append(Hall.el("div", null, "row-of-tasks"), overview, append(Hall.el("div"), faults, terminals)));
  const game = section("The game", {
    state: (view) => {
      const g = view.game;
      if (!g || gameOver(g)) return ["The seller-caller opens the next sale", false];
      if (g.state === "selling") return ["Selling: put the pots in play, then close the sale", false];
      if (g.pause) return [pauseWords(view)[0] + " The caller closes the prize", false];
      if (g.state === "drawing") return [g.winners.some((w) => w.pattern === "bingo") ? "Bingo closed: close the game, then collect the cards" : "Drawing", false];
      return [g.state, false];
    },
    when: (view) => Boolean(view.session.open),
  });
  const selling = (view) => Boolean(view.game && view.game.state === "selling");
  const pots = append(section("Pots for this game", {when: selling}), commandForm("announce_pots", {
    label: "Put the pots in play",
    fields: {superbingo_limit: {value: "0"}, grand_superbingo_limit: {value: "0"}, jackpot_threshold: {value: "0"}},
    keep: ["superbingo_limit", "grand_superbingo_limit", "jackpot_threshold"],
  }));
  const close = append(section("Close the sale", {when: selling, next: selling}), commandForm("close_sale", {label: "Close the sale"}));
  const drawing = (view) => Boolean(view.game && view.game.state === "drawing");
  const end = append(section("End of the game", {when: (view) => Boolean(view.game) && !["selling", "cards collected"].includes(view.game.state),
    next: (view) => Boolean(view.game && view.game.winners.some((w) => w.pattern === "bingo")) && !paused(view)}),
  commandForm("close_game", {label: "Close the game", when: (view) => !paused(view)}),
  commandForm("collect_cards", {label: "Cards collected", when: (view) => !paused(view)}));
  const last = append(section("Last game of the session", {when: (view) => Boolean(view.game && !view.game.last_game && !gameOver(view.game))}),
    commandForm("announce_last_game", {label: "Announce this game as the last"}));
  append(game, pots, close, end, correctionSection(), last);
  append(screen, pauseBanner(), game, openingSection(), closingSection(), complaintsSection(), megabingoSection(),
    operatorPotsSection(), machinesSection());
}

// --- The pots outside a game: the megabingo's announcement, the operator's money ----------

// The megabingo (R90, R90.2): announced at least 10 days ahead, it pays its whole fund, at least the fund now;
// the boards and the kiosks show it until it is played.
function megabingoSection() {
  if (!Console.commands.has("announce_megabingo")) return null;
  const box = section("Megabingo", {state: (view) => (view.megabingo
    ? [`${Hall.megabingoText(view.megabingo)} · shown on the boards and the kiosks`, true]
    : ["None announced: announce one at least 10 days ahead; it pays its whole fund on that day", false])});
  append(box, commandForm("announce_megabingo", {label: "Announce the megabingo", quiet: true,
    fields: {date: {label: "date (YYYY-MM-DD)"}, time: {label: "time (21:00)"}}}));
  return box;
}

// The operator's money in the pots (R89.5, R91.9): its contributions, and what it may take back of the
// jackpot's - what players have not won of them, from the day after each for one calendar year.
function operatorPotsSection() {
  if (!Console.commands.has("contribute_to_pot")) return null;
  const box = section("The operator's contributions to the pots", {state: (view) => {
    const jackpot = view.jackpot_contributions;
    if (!jackpot) return ["", false];
    return [`The jackpot holds ${Hall.money(jackpot.contributions.reduce((sum, c) => sum + c.unwon_cents, 0))} of the ` +
      `operator's contributions that players have not won; ${Hall.money(jackpot.recoverable_cents)} may be taken back ` +
      `today (${jackpot.day}), between sessions`, false];
  }});
  append(box,
    commandForm("contribute_to_pot", {label: "Pay into the pot", fields: {amount_cents: {label: "amount (EUR)"}}}),
    live("ul", "rows", (node, view) => {
      node.textContent = "";
      for (const c of (view.jackpot_contributions || {}).contributions || []) {
        node.appendChild(Hall.el("li", `Jackpot contribution of ${c.date}: ${Hall.money(c.unwon_cents)} not won · ` +
          (c.recoverable ? `may be taken back until ${c.until}` : (c.date >= view.jackpot_contributions.day
            ? `may be taken back from the day after it until ${c.until}` : `its year ended on ${c.until}`)),
          c.recoverable ? "" : "hint"));
      }
    }),
    commandForm("recover_jackpot_contribution", {label: "Take back from the jackpot", quiet: true,
      fields: {amount_cents: {label: "amount (EUR)"}},
      when: (view) => Boolean(view.jackpot_contributions && view.jackpot_contributions.recoverable_cents > 0)}));
  return box;
}

// The complaints book (R75.5): written in the room chief's presence; the door's wait for the confirmation.
function complaintsSection() {
  const waiting = (view) => (view.complaints || []).filter((c) => !c.room_chief);
  const box = section("Complaints book", {
    id: "complaints",
    state: (view) => (waiting(view).length ? [`${waiting(view).length} complaint(s) written at the door wait for your confirmation; the session does not close before`, false]
      : ["every complaint was written before the room chief", true]),
    next: (view) => waiting(view).length > 0,
  });
  return append(box,
    commandForm("confirm_complaint", {label: "Confirm: written in my presence", when: (view) => waiting(view).length > 0,
      fields: {number: {label: "complaint"}}}),
    commandForm("record_complaint", {label: "Write the complaint"}),
    live("ul", "rows complaints", complaintRows));
}

function complaintRows(node, view) {
  node.textContent = "";
  (view.complaints || []).forEach((c) => node.appendChild(Hall.el("li",
    `No. ${c.number} · ${c.complainant}: ${c.text} - ${c.room_chief ? "written before " + c.room_chief : "WAITING for the room chief"}`,
    c.room_chief ? "" : "warn")));
  if (!(view.complaints || []).length) node.appendChild(Hall.el("li", "No complaint written.", "hint"));
}

// --- The video bingo machines: meters and game recall (GLI-11), station enrolment --------

const VB_METERS = [["credits_in", "Credits in"], ["credits_out", "Credits out"], ["stakes", "Stakes"],
  ["prizes", "Prizes"], ["plays", "Plays"], ["jackpot_contributions", "Jackpot in"], ["jackpot_payouts", "Jackpot paid"],
  ["cash_in", "Cash in"], ["cash_out", "Cash out"], ["jackpot_cents", "Jackpot now"]];

function machinesSection() {
  if (!Console.commands.has("vb_meters")) return null;  // a hall without [videobingo]
  const box = section("Video bingo machines", {id: "machines"});
  append(box,
    commandForm("vb_meters", {label: "Show the meters", fields: {machine: {label: "machine (empty: every one)"}}, keep: ["machine"], quiet: true,
      done: (message) => { Console.vbMeters = message.result; refresh(); }}),
    live("div", "vb-meters", vbMetersTable),
    commandForm("vb_recall", {label: "Last ten plays", keep: ["machine"], quiet: true,
      done: (message) => { Console.vbRecall = message.result; refresh(); }}),
    live("ul", "rows vb-recall", vbRecallRows),
    commandForm("enrol_vb_station", {label: "Enrol the station", quiet: true, done: (message) => {
      const r = message.result;
      Console.vbToken = r && r.token ? `Token of ${r.machine} station ${r.station}, shown only now - open the machine's screen at /vb/#machine=${r.machine}&station=${r.station}&token=${r.token}` : null;
      refresh();
    }}),
    live("div", "token-box", (node) => { node.hidden = !Console.vbToken; node.textContent = Console.vbToken || ""; }),
    // Cash into a machine only on its cash device's signed notes; its cash box counted against the meters.
    commandForm("enrol_vb_cash_device", {label: "Enrol the cash device", fields: {public_key: {label: "the bill validator's public key (64 hex digits or PEM)"}}}),
    commandForm("vb_count_cash_box", {label: "Count the cash box", fields: {counted_cents: {label: "counted cash (EUR)"}}}));
  return box;
}

// A vb_meters answer: each machine's meters by its id, and the superjackpot when every machine is asked.
function isVbMeters(result) {
  const machines = Object.entries(result).filter(([k]) => k !== "superjackpot_cents");
  return machines.length > 0 && machines.every(([, m]) => m && typeof m === "object" && "plays" in m && "credits_in" in m);
}

function vbMetersTable(node) {
  node.textContent = "";
  const meters = Console.vbMeters;
  if (!meters) return;
  const table = Hall.el("table", null, "receipt-table");
  const head = table.createTHead().insertRow();
  for (const text of ["Machine", ...VB_METERS.map(([, label]) => label), "State"]) head.appendChild(Hall.el("th", text));
  const body = table.createTBody();
  for (const [machine, m] of Object.entries(meters)) {
    if (machine === "superjackpot_cents") continue;
    const row = body.insertRow();
    row.dataset.machine = machine;
    row.insertCell().textContent = machine;
    for (const [key] of VB_METERS) {
      const cell = row.insertCell();
      cell.dataset.meter = key;
      cell.textContent = key === "plays" ? String(m[key]) : Hall.money(m[key]);
    }
    row.insertCell().textContent = m.state;
  }
  node.appendChild(table);
  if ("superjackpot_cents" in meters) node.appendChild(Hall.el("p", `Superjackpot now: ${Hall.money(meters.superjackpot_cents)}`, "hint"));
}

function vbRecallRows(node) {
  node.textContent = "";
  const plays = Console.vbRecall;
  if (!plays) return;
  if (!plays.length) node.appendChild(Hall.el("li", "No play on this machine yet.", "hint"));
  for (const p of plays) {
    const paid = p.results.map((r, i) => r.pattern ? `card ${i + 1} ${r.pattern} (${r.credits})` : null).filter(Boolean);
    const line = `#${p.number} · ${clock(p.at_ms)} · station ${p.station} · ${p.cards.length} card(s) · stake ${Hall.money(p.stake_cents)}`
      + ` · won ${Hall.money(p.won_cents)}${paid.length ? " - " + paid.join(", ") : ""} · credit after ${Hall.money(p.credit_after_cents)}`
      + ` · balls ${p.balls.join(" ")}`;
    const item = Hall.el("li", line);
    item.dataset.seq = String(p.seq);
    node.appendChild(item);
  }
}

function sellerScreen(screen) {
  const sale = section("1. Open the sale", {
    state: (view) => (view.game && !gameOver(view.game) ? [`game ${view.game.game_id} on sale from series ${gameSeries(view).join(", ")}`, true]
      : [view.session.open ? "choose the series to sell" : "waiting for the session to open", false]),
    next: (view) => Boolean(view.session.open && gameOver(view.game)),
  });
  append(sale, commandForm("announce_sale", {
    label: "Open the sale", when: (view) => gameOver(view.game),
    fields: {series: {filter: (value, view) => view.series.some((s) => String(s.series) === value && s.last_sold < s.card_count)}},
  }));
  const selling = (view) => Boolean(view.game && view.game.state === "selling");
  const sell = section("2. Sell paper cards", {
    state: (view) => (selling(view) ? ["the first card is filled in; type the last card of the range you hand over", false]
      : ["when a sale is open", false]),
    next: selling,
  });
  const form = commandForm("sell_cards", {
    label: "Record the sale", when: selling,
    fields: {
      series: {filter: (value, view) => gameSeries(view).includes(value), prefer: (view) => gameSeries(view).slice(-1)[0]},
      first: {label: "first card", auto: (view) => nextCard(view, form ? form.querySelector('[data-param="series"]').value : null)},
      last: {label: "last card"},
    },
  });
  append(sell, form, commandForm("open_second_series", {
    label: "Open the second series", when: selling, quiet: true,
    fields: {series: {filter: (value, view) => !gameSeries(view).includes(value)}},
  }));
  if (form) form.querySelector('[data-param="series"]').addEventListener("change", refresh);
  const bill = section("Receipt");
  bill.id = "receipt";
  append(bill, live("div", "receipt", receipt));
  // A prize found - a card the last ball completed, or a claim verified and open to other
  // cards (R85.6) - comes first, at the top of the desk where the caller sees it without
  // scrolling; drawing is the next step again once it is closed.
  const prize = section("Prize found: check and close it", {
    id: "prize-found",
    state: (view) => {
      if (paused(view)) return [`${pauseWords(view)[0]} Ask the hall; once nobody else calls, close the prize`, false];
      const found = foundNow(view);
      const what = [...new Set(found.map((c) => (c.pattern === "bingo" ? "BINGO" : "LINE")))].join(" and ");
      return [`${what} on this ball: ${found.map((c) => Hall.cardLabel(c)).join(", ")}. Wait for the call and ask "Another card?"; `
        + "the table chief checks the card called, then you close the prize (if nobody calls, draw on)", false];
    },
    when: (view) => paused(view) || foundNow(view).length > 0,
    next: (view) => paused(view) || foundNow(view).length > 0,
  });
  append(prize, commandForm("close_prize", {label: "No other card: close the prize", when: paused}));
  const draw = section("3. Draw", {
    state: (view) => {
      const g = view.game;
      if (g && g.pause) return ["held while the prize found is open (above)", false];
      if (g && g.correction) return [`ball ${g.correction.ball_count} is being corrected by the chiefs: wait for them`, false];
      if (foundNow(view).length) return ["held: a card completed on this ball (above); draw again only if nobody calls it", false];
      if (g && g.state === "drawing") return ["the sale is closed: draw with the button or the D key", false];
      if (g && g.state === "selling") return ["once the room chief closes the sale", false];
      return ["-", false];
    },
    next: (view) => Boolean(view.game && view.game.state === "drawing") && !paused(view) && !foundNow(view).length,
  });
  const button = Hall.el("button", "Draw ball (D)", "primary big");
  button.type = "button";
  button.id = "desk-draw";
  button.addEventListener("click", draw_);
  Console.updaters.push((view) => { button.disabled = !(view.game && view.game.state === "drawing") || drawHeld(view); });
  if (firstAllowed(Console.DRAW)) { append(draw, button); Console.placed.add("draw_ball"); }
  const collect = section("4. Collect the cards", {when: (view) => Boolean(view.game && ["closed", "finished by hand"].includes(view.game.state))});
  append(collect, commandForm("collect_cards", {label: "Cards collected"}));
  append(screen, pauseBanner(), prize, sale, sell, bill, draw, collect);
}

// --- The table chief's claim check: the card, its marks and the completing ball ------

function tableChiefScreen(screen) {
  const check = section("Claim check", {
    state: (view) => (view.game && view.game.state === "drawing" ? ["type or scan the card's number; Enter checks it", false]
      : ["when the game is drawing", false]),
  });
  const form = Hall.el("form", null, "desk-form verify");
  form.id = "verify";
  form.appendChild(Hall.el("h3", "Verify a claim (V)"));
  const series = fieldFor("verify-series", "int", {label: "series"});
  const seriesInput = series.querySelector("input");
  seriesInput.id = "verify-series";
  delete seriesInput.dataset.param;
  const card = fieldFor("verify-card", "str", {label: "card (number, or series-number as scanned)"});
  const cardInput = card.querySelector("input");
  cardInput.id = "verify-card";
  cardInput.inputMode = "numeric";
  delete cardInput.dataset.param;
  Console.updaters.push((view) => {
    if (!seriesInput.value && view.game && document.activeElement !== seriesInput) seriesInput.value = view.game.series[0].series;
  });
  const button = Hall.el("button", "Verify", "primary");
  button.type = "submit";
  const outcome = Hall.el("p", "", "outcome");
  append(form, append(Hall.el("div", null, "fields"), series, card), button, outcome);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const scanned = cardInput.value.trim().match(/^(\d+)\s*[-/ ]\s*(\d+)$/);
    if (scanned) { seriesInput.value = scanned[1]; cardInput.value = scanned[2]; }
    if (!/^\d+$/.test(seriesInput.value.trim()) || !/^\d+$/.test(cardInput.value.trim())) {
      say("Give the series and the card number as whole numbers.", false, outcome);
      return;
    }
    const args = {series: Number(seriesInput.value), card_number: Number(cardInput.value)};
    const name = firstAllowed(Console.VERIFY);
    send(name, argsWithGame(name, args), () => {
      if (Console.commands.has("show_card")) send("show_card", args, (message) => {
        if (message.ok) Console.card = message.result;
        else Console.card = {error: message.error.message, ...args};
        refresh();
      }, null, true);
    }, outcome);
  });
  Console.placed.add("verify_claim");
  Console.placed.add("show_card");
  // A card tampered with, damaged or not the card sold is refused instead of verified (R82.8).
  const refuse = commandForm("refuse_card", {
    label: "Refuse the card as invalid", quiet: true,
    fields: {
      series: {auto: () => seriesInput.value},
      card_number: {label: "card", auto: () => cardInput.value},
      reason: {label: "why (tampered, damaged, not the card sold)"},
    },
  });
  append(check, form, live("div", "claim-card", showClaimCard), refuse,
    live("ul", "rows refused", (node, view) => {
      node.textContent = "";
      for (const r of (view.game && view.game.refused) || []) {
        node.appendChild(Hall.el("li", `Refused: ${r.series}-${r.card_number} by ${r.refused_by}: ${r.reason}`, "warn"));
      }
    }));
  const completedNow = section("Cards the last ball completed", {state: (view) => [view.game && view.game.completed.length ? "click one to check it" : "none", false]});
  append(completedNow, live("ul", "cards chips", (node, view) => {
    node.textContent = "";
    (view.game ? view.game.completed : []).forEach((c) => {
      const chip = Hall.el("li", `${c.pattern === "bingo" ? "BINGO" : "ROW"}: ${c.series}-${c.card_number}`, c.pattern === "bingo" ? "completed bingo" : "completed");
      chip.tabIndex = 0;
      chip.addEventListener("click", () => { seriesInput.value = c.series; cardInput.value = c.card_number; cardInput.focus(); });
      node.appendChild(chip);
    });
  }));
  append(screen, pauseBanner(), check, completedNow, correctionSection());
  // Standing in for the cashier (R80.4): once a cash desk is handed over to this table chief,
  // the cashier's desk is theirs to work, until it is handed back or counted and closed.
  const standIn = section("Standing in for the cashier (R80.4)", {
    id: "stand-in",
    state: (view) => (holdsDesk(view) ? [`you hold ${holdsDesk(view).desk}: the cashier's work is yours until you hand it over or close it`, true]
      : ["the cashier, or the room chief, hands a cash desk over to you first", false]),
  });
  const cashierDesk = Hall.el("div", null, "stand-in-desk");
  Console.updaters.push((view) => { cashierDesk.hidden = !holdsDesk(view); });
  cashierScreen(cashierDesk);
  append(screen, append(standIn, cashierDesk));
}

function holdsDesk(view) {
  return (view.desks || []).find((d) => d.open && d.held_by === Console.me.name) || null;
}

function showClaimCard(node, view) {
  node.textContent = "";
  const shown = Console.card;
  if (!shown) return;
  if (shown.error) {
    node.appendChild(Hall.el("p", `Card ${shown.series}-${shown.card_number}: ${shown.error}`, "outcome error"));
    return;
  }
  const drawn = new Set(shown.drawn);
  const completing = new Set(Object.values(shown.completed).filter(Boolean).map((c) => c.ball));
  node.appendChild(Hall.el("h3", `Series ${shown.series} card ${shown.card_number}`));
  const grid = Hall.el("div", null, "card-grid");
  grid.setAttribute("role", "table");
  shown.cells.forEach((n) => {
    const cell = Hall.el("span", n || "", n ? (drawn.has(n) ? "marked" : "unmarked") : "blank");
    if (completing.has(n)) cell.classList.add("completing");
    grid.appendChild(cell);
  });
  node.appendChild(grid);
  const lines = [];
  for (const [pattern, done] of Object.entries(shown.completed)) {
    lines.push(done ? `${pattern.toUpperCase()} completed on ball ${done.ball_count} (number ${done.ball})${done.won ? " - won" : ""}`
      : `${pattern.toUpperCase()} not completed`);
  }
  node.appendChild(Hall.el("p", `${lines.join("; ")}. ${shown.drawn.length} balls drawn when checked.`, "hint card-facts"));
  node.appendChild(Hall.el("p", "Blue: called. Yellow: the ball that completed it. White: not called.", "hint legend"));
}

// --- The cashier's desk: the account found by its ticket, the drawer -----------------

function cashierScreen(screen) {
  const drawer = section("Cash drawers", {
    state: (view) => {
      const open = (view.desks || []).filter((d) => d.open);
      return open.length ? [open.map((d) => `${d.desk}: ${Hall.money(d.cents)} in the drawer`).join("; "), true]
        : ["no desk open: open yours with its float", false];
    },
    next: (view) => !(view.desks || []).some((d) => d.open),
  });
  const deskIsOpen = (open) => (value, view) => (view.desks || []).some((d) => d.desk === value && d.open === open);
  append(drawer, live("ul", "rows drawers", (node, view) => {
    node.textContent = "";
    for (const d of view.desks || []) {
      node.appendChild(Hall.el("li", `${d.desk}: ${d.open ? "open" : "closed"} · ${Hall.money(d.cents)}${d.open && d.held_by ? " · in the hands of " + d.held_by : ""}`, d.open ? "open-desk" : ""));
    }
  }));
  const anyDesk = (open) => (view) => (view.desks || []).some((d) => d.open === open);
  const openDesk = commandForm("open_cash_desk", {label: "Open the desk", fields: {desk: {filter: deskIsOpen(false)}}, when: anyDesk(false)});
  const reconcile = commandForm("reconcile_cash_desk", {label: "Count and close the desk", fields: {desk: {filter: deskIsOpen(true)}, counted_cents: {label: "counted cash (EUR)"}}, when: anyDesk(true), quiet: true});
  // The desk changes hands only by a journaled hand-over (to a cashier, or the table chief standing in, R80.4).
  const handOver = commandForm("hand_over_cash_desk", {label: "Hand the desk over", fields: {desk: {filter: deskIsOpen(true)}}, when: anyDesk(true)});
  append(drawer, openDesk, reconcile, handOver);
  // Cash between drawers: the sellers' takings, a desk's float topped up, one desk to another.
  const sellerCents = (form) => (view) => {
    const chosen = form && form.querySelector('[data-param="seller"]');
    const cents = chosen ? (view.drawers || {})[chosen.value] : null;
    return cents ? `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}` : "";
  };
  let takings = null;
  takings = commandForm("hand_in_takings", {label: "Take in the seller's cash", fields: {desk: {filter: deskIsOpen(true)},
    amount_cents: {label: "amount (EUR)", auto: (view) => sellerCents(takings)(view)}}});
  if (takings) takings.querySelector('[data-param="seller"]').addEventListener("change", refresh);
  append(drawer, takings,
    commandForm("top_up_float", {label: "Top up the float", fields: {desk: {filter: deskIsOpen(true)}, amount_cents: {label: "amount (EUR)"}}}),
    commandForm("move_cash", {label: "Move the cash", fields: {from_desk: {filter: deskIsOpen(true)}, to_desk: {filter: deskIsOpen(true)}, amount_cents: {label: "amount (EUR)"}}}));
  Console.placed.add("cash_drawers");  // the drawers are on screen, live
  screen.appendChild(drawer);

  const find = section("Player account", {state: () => (Console.account ? [`found: ${accountText(Console.account.account)}`, true]
    : ["type or scan the number on the player's ticket or card", false])});
  const lookup = Hall.el("form", null, "desk-form");
  lookup.id = "find-account";
  const numberField = fieldFor("account", "str", {label: "account number"});
  const numberInput = numberField.querySelector("input");
  delete numberInput.dataset.param;
  numberInput.id = "account-number";
  const findButton = Hall.el("button", "Find", "primary");
  findButton.type = "submit";
  const outcome = Hall.el("p", "", "outcome");
  append(lookup, numberField, findButton, outcome);
  lookup.addEventListener("submit", (event) => {
    event.preventDefault();
    findAccount(numberInput.value, outcome);
  });
  Console.placed.add("find_player_account");
  const accountBox = live("div", "account-box", showAccount);
  accountBox.id = "account";
  const accountNumber = () => (Console.account ? Console.account.account : "");
  const again = () => { if (Console.account) findAccount(Console.account.account); };
  const actions = Hall.el("div", null, "account-actions");
  const openOnly = {filter: deskIsOpen(true)};
  append(actions,
    commandForm("load_credit", {label: "Load", fixed: {account: accountNumber}, fields: {amount_cents: {label: "amount (EUR)"}, desk: openOnly}, done: again}),
    commandForm("cash_out", {label: "Cash out", fixed: {account: accountNumber}, fields: {amount_cents: {label: "amount (EUR)"}, desk: openOnly, reference: {label: "cheque number or transfer reference (empty for cash)"}}, done: again}),
    commandForm("set_spending_limit", {label: "Set the daily limit", fixed: {account: accountNumber}, fields: {limit_cents: {label: "daily limit (EUR, 0: none)"}}, done: again}),
    append(Hall.el("div", null, "bare-row"),
      commandForm("print_player_ticket", {label: "Ticket (PDF)", fixed: {account: accountNumber}}),
      commandForm("print_account_statement", {label: "Statement (PDF)", fixed: {account: accountNumber}}),
      commandForm("clear_pin_lockout", {label: "Clear the PIN lockout", fixed: {account: accountNumber}, quiet: true}),
      commandForm("close_player_account", {label: "Close the account", fixed: {account: accountNumber}, done: again, quiet: true})));
  const method = actions.querySelector('form[data-command="cash_out"] [data-param="method"]');
  const reference = actions.querySelector('form[data-command="cash_out"] [data-param="reference"]');
  if (method && reference) {
    // A cash payment has no reference; a cheque or a transfer needs one (R78).
    const toggle = () => { reference.closest("label").hidden = method.value === "cash"; if (method.value === "cash") reference.value = ""; };
    method.addEventListener("change", toggle);
    Console.updaters.push(toggle);
  }
  Console.updaters.push(() => { actions.hidden = !Console.account || Console.account.closed; });
  append(find, lookup, accountBox, actions);
  screen.appendChild(find);

  const open = section("Open an account", {state: () => ["for a visitor admitted today: choose them, the medium, and let them type a PIN of 4 to 8 digits", false]});
  append(open, commandForm("open_player_account", {
    label: "Open the account",
    fields: {visitor: {filter: (value, view) => (view.visitors || []).some((v) => String(v.number) === value && !v.account)}},
    done: (message) => {
      const opened = (message.records || []).map((r) => Console.recent.get(r.seq)).find((r) => r && r.type === "player_account_opened");
      if (opened) findAccount(opened.payload.account);
    },
  }));
  screen.appendChild(open);

  const prizes = section("Prizes", {
    state: (view) => {
      const g = view.game;
      if (!g || !g.winners.length) return ["no prize won in this game yet", false];
      const paid = (g.paid || []).map((p) => p.prize);
      const due = [...new Set(g.winners.map((w) => w.pattern))].filter((p) => !paid.includes(p));
      return [due.length ? `won and to pay once settled: ${due.join(", ")}` : `paid: ${paid.join(", ")}`, !due.length];
    },
  });
  // A paper winner of 15,000 EUR or more in the game is paid once identified (R75.6): the desk names the
  // winner's cards of the game (the system sums their prizes) and the document they show.
  append(prizes, commandForm("identify_paper_winner", {label: "Record the winner's identity (15,000 EUR or more)",
    fields: {cards: {label: "the winner's winning cards of this game (7-41, 7-42)"},
             document: {label: "identity document number"}, name: {label: "name on the document"}}}));
  append(prizes, commandForm("pay_prizes", {label: "Pay the prizes", fields: {desk: openOnly}}), live("ul", "rows", (node, view) => {
    node.textContent = "";
    for (const paid of (view.game && view.game.paid) || []) {
      node.appendChild(Hall.el("li", `${paid.prize}: ${Hall.money(paid.amount_cents)} - ${paid.payments.map((p) => `${p.series}-${p.card_number} ${Hall.money(p.cents)}`).join(", ")}`));
    }
  }));
  screen.appendChild(prizes);
}

function findAccount(number, where) {
  send("find_player_account", {account: String(number)}, (message) => {
    if (message.ok) {
      Console.account = message.result;
      if (where) say(`Account ${accountText(message.result.account)}: ${Hall.money(message.result.balance_cents)}`, true, where);
    } else {
      Console.account = null;
      say(message.error.message, false, where);
    }
    refresh();
  }, null, true);
}

function showAccount(node) {
  node.textContent = "";
  const a = Console.account;
  if (!a) return;
  node.appendChild(Hall.el("div", accountText(a.account), "account-number"));
  node.appendChild(Hall.el("div", Hall.money(a.balance_cents), "account-balance"));
  node.appendChild(Hall.el("p", `${a.medium} of visitor ${a.visitor}${a.closed ? " - CLOSED" : ""}`, "hint"));
  if (a.movements.length) {
    const table = Hall.el("table", null, "receipt-table");
    const head = table.createTHead().insertRow();
    ["#", "Movement", "Amount", "Balance"].forEach((h) => head.appendChild(Hall.el("th", h)));
    const body = table.createTBody();
    for (const m of [...a.movements].reverse()) {
      const row = body.insertRow();
      [m.seq, m.reason, Hall.money(m.amount_cents), Hall.money(m.balance_cents)].forEach((v) => row.insertCell().textContent = String(v));
    }
    node.appendChild(table);
  }
}

// --- The admission desk ---------------------------------------------------------------

function admissionScreen(screen) {
  const banned = section("Banned list", {state: bannedState});
  banned.querySelector(".state-line").id = "banned-state";
  screen.appendChild(banned);
  const admit = section("Admit a visitor", {
    state: (view) => (view.banned_list ? ["name, identity document and birth date as on the document (under 18: refused; the date is not kept)", false] : ["nobody can be admitted before the banned list is loaded", false]),
    next: (view) => Boolean(view.banned_list),
  });
  const presence = live("p", "presence", (node, view) => {
    const p = view.presence;
    node.id = "presence";
    if (!p) { node.textContent = ""; return; }
    const full = p.capacity !== null && p.present >= p.capacity;
    node.textContent = p.capacity === null ? `People present: ${p.present} (no authorised capacity configured)`
      : `People present: ${p.present} of ${p.capacity}${full ? " - FULL: admit again once someone leaves" : ""}`;
    node.classList.toggle("error", full);
  });
  admit.appendChild(presence);
  append(admit, commandForm("admit_visitor", {label: "Admit", before: () => { Console.admitted = null; refresh(); }, done: (message) => {
    const admitted = (message.records || []).map((r) => Console.recent.get(r.seq)).find((r) => r && r.type === "visitor_admitted");
    Console.admitted = admitted ? admitted.payload : null;
    refresh();
  }}), live("div", "visitor-number", (node) => {
    node.hidden = !Console.admitted;
    node.textContent = Console.admitted ? `Visitor number ${Console.admitted.number} - ${Console.admitted.name}` : "";
  }));
  const present = (value, view) => ((view.presence || {}).visitors || []).map(String).includes(value);
  const today = section("Visitors admitted");
  append(today, commandForm("record_visitor_left", {label: "The visitor leaves", quiet: true,
    fields: {visitor: {filter: present}}, when: (view) => ((view.presence || {}).present || 0) > 0}),
  live("ul", "rows", (node, view) => {
    node.textContent = "";
    (view.visitors || []).slice(0, 12).forEach((v) => node.appendChild(Hall.el("li", `${v.number} · ${v.name}${v.left ? " (left)" : ""}`)));
    if (!(view.visitors || []).length) node.appendChild(Hall.el("li", "Nobody admitted yet.", "hint"));
  }));
  const complaints = section("Complaints book", {state: () => ["written in the room chief's presence: the room chief confirms it (R75.5)", false]});
  append(complaints, commandForm("record_complaint", {label: "Write the complaint"}), live("ul", "rows", complaintRows));
  const incidents = section("Incidents and self-exclusion");
  append(incidents, commandForm("record_incident", {label: "Record the incident", fields: {visitors: {label: "visitor numbers concerned"}}}),
    commandForm("record_self_exclusion", {label: "Record the self-exclusion", fields: {
      name: {label: "name (as on the document)"}, document: {label: "document number"},
      birth_date: {label: "birth date on the document (kept with the exclusion)"}}}));
  append(screen, admit, today, complaints, incidents);
}

const SCREENS = {
  administrator: administratorScreen,
  room_chief: roomChiefScreen,
  seller_caller: sellerScreen,
  table_chief: tableChiefScreen,
  cashier: cashierScreen,
  admission: admissionScreen,
};

function buildDesk() {
  const screen = document.getElementById("screen");
  screen.textContent = "";
  Console.forms = [];
  Console.updaters = [];
  Console.placed = new Set();
  const build = SCREENS[Console.me.role];
  if (build) build(screen);
  else screen.appendChild(Hall.el("p", "Your role has no desk screen; its commands are under All commands.", "hint"));
  if (Console.commands.has("recall_games")) Console.placed.add("recall_games");  // the Last games panel
  showMore();
}

// --- The special controls: draw and verify -------------------------------------------

function draw_() {
  const name = firstAllowed(Console.DRAW);
  if (name) send(name, argsWithGame(name, {}));
}

document.getElementById("draw").addEventListener("click", draw_);

document.addEventListener("keydown", (event) => {
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
  if (event.key === "Escape") { closeForm(); event.target.blur && event.target.blur(); return; }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (key === "d" && firstAllowed(Console.DRAW)) { event.preventDefault(); draw_(); }
  const series = document.getElementById("verify-series");
  if (key === "v" && series) {
    // The last claim's numbers are still in the form: typed over, not appended to.
    event.preventDefault();
    showScreen("desk");
    series.focus();
    series.select();
  }
  if (key === "k") {
    event.preventDefault();
    showScreen("all-commands");
    const b = document.querySelector("#commands button");
    if (b) b.focus();
  }
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

// The server's wall clock stepped (docs/server-kit.md, "Clocks"): the records' times never go back.
function clockStep(p) {
  const seconds = (ms) => `${(Math.abs(ms) / 1000).toFixed(1)} s`;
  const said = p.at_start ? `CLOCK: the server's clock reads ${seconds(p.step_ms)} before the journal's last record`
    : `CLOCK STEPPED ${p.step_ms < 0 ? "BACK" : "FORWARD"} by ${seconds(p.step_ms)} (it now reads ${clock(p.wall_ms)})`;
  return p.ahead_ms > 0 ? `${said}; the records' times carry on ${seconds(p.ahead_ms)} ahead of it: set the clock right`
    : `${said}; the records' times follow it`;
}

function recordClass(record) {
  if (record.type === "blower_fault" || (record.type === "blower_link" && !record.payload.up)) return "fault";
  if (record.type === "clock_stepped") return "fault";
  if (REFUSALS.has(record.type)) return "fault";
  return undefined;
}

function describeRecord(record) {
  const p = record.payload || {};
  const who = p.actor ? ` (${p.actor.name})` : "";
  if (record.type in BLOWER_RECORDS) return `#${record.seq} ${BLOWER_RECORDS[record.type](p)}${who}`;
  if (record.type === "clock_stepped") return `#${record.seq} ${clockStep(p)}`;
  const detail = Object.entries(p)
    .filter(([k, v]) => !["actor", "type", "game_id"].includes(k) && v !== null)
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" ");
  return `#${record.seq} ${words(record.type)}${who} ${detail}`;
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
  if (banned) banned.classList.toggle("error", !view.banned_list);
}

// A link's line in the top bar: hidden without the link, in red while it is behind or down.
function showLinkLine(id, link, behind) {
  const line = document.getElementById(id);
  line.hidden = !link;
  if (!link) return;
  line.textContent = link.line;
  line.classList.toggle("behind", behind(link));
}

// The regulator's real-time feed (R92.7): shown when the hall feeds one, in red when behind.
function showFeed(view) {
  showLinkLine("feed-state", view.feed, (feed) => Boolean(feed.behind));
}

// The link to the central server of the network games: which process (a replicated central
// server's node and epoch), in red while it is down.
function showCentral(view) {
  showLinkLine("central-state", view.central, (central) => !central.up);
}

// The storage's alarm: while commits cannot be made (disk full, a read-only file, a lock, the
// database unreachable) every command is refused, and every console says why and where.
function showStorage(view) {
  showLinkLine("storage-state", view.storage, () => true);
}

// The opening hours reported to the regulator (R74.2); a change shows the day it applies.
function showHours(view) {
  const line = document.getElementById("hours-state");
  const hours = view.opening_hours;
  line.hidden = !hours;
  if (!hours) return;
  const inForce = hours.in_force || hours.hours;
  line.textContent = hours.pending ? `open ${inForce} (requested: ${hours.hours}, from ${hours.applies_from} unless the regulator objects)`
    : `open ${inForce}${hours.open_now === false ? " - closed now" : ""}`;
}

function refresh() {
  const view = Console.view;
  if (!view) return;
  showFeed(view);
  showCentral(view);
  showStorage(view);
  showHours(view);
  // A new stage of the session (opened, closed, the next one counted): the answers of the
  // last stage, and a token shown then, are gone from the desk.
  const stage = `${view.session.number}-${view.session.open}-${view.session.closed}`;
  if (Console.stage !== undefined && Console.stage !== stage) {
    document.querySelectorAll("#screen .outcome").forEach((line) => { line.textContent = ""; line.className = "outcome"; });
    Console.token = null;
  }
  Console.stage = stage;
  for (const select of Console.forms) fillSelect(select, view);
  for (const update of Console.updaters) update(view);
  const generic = document.querySelectorAll("#command-fields select");
  generic.forEach((select) => fillSelect(select, view));
}

// The hall-annex game (R3.5.b): the main hall's balls, the joint prizes, both rooms' verified claims.
function showAnnex(view) {
  const game = view.annex;
  document.getElementById("annex-panel").hidden = !game;
  if (!game) return;
  const set = (id, text) => { document.getElementById(id).textContent = text; };
  set("annex-title", `Hall-annex game ${game.game_id} · main hall ${game.main}, annex ${game.annex}`);
  set("annex-state", game.link_up ? game.state.replace(/_/g, " ")
    : `${game.state.replace(/_/g, " ")} · the link to the partner hall is lost: what is done here is sent when it is back`);
  document.getElementById("annex-state").classList.toggle("error", !game.link_up);
  set("annex-last-ball", game.last_ball === null ? "-" : String(game.last_ball));
  set("annex-ball-count", String(game.balls.length));
  set("annex-cards", game.cards_sold === null ? "-" : String(game.cards_sold));
  set("annex-line", "line" in game.prizes ? Hall.money(game.prizes.line) : "-");
  set("annex-bingo", "bingo" in game.prizes ? Hall.money(game.prizes.bingo) : "-");
  const winners = document.getElementById("annex-winners");
  winners.textContent = "";
  game.winners.forEach((w) => winners.appendChild(
    Hall.el("li", `${w.pattern.toUpperCase()} on ball ${w.ball_count}: ${w.card} (${w.hall})`)));
}

function show(view) {
  Console.view = view;
  showAnnex(view);
  // The game panel's draw button is held like the desk's while a prize found is open (R85.6).
  document.getElementById("draw").disabled = drawHeld(view);
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
  refresh();
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
  const key = JSON.stringify([session.number, session.games]);
  if (list.dataset.key === key) return;  // unchanged: the links keep their focus
  list.dataset.key = key;
  list.textContent = "";
  document.getElementById("minutes-none").hidden = session.number > 0;
  if (!session.number) return;
  list.appendChild(minutesItem("session", String(session.number), `Session ${session.number}`));
  (session.games || []).forEach((game) => {
    list.appendChild(minutesItem("game", game.game_id, `Game ${game.number}`));
  });
}

// --- The last games (every role): cards sold, balls and prizes, from recall_games ----------

// The records after which the last games read differently: a game's end, a prize paid.
const RECALL_CHANGES = new Set(["game_closed", "game_finished", "game_refunded", "prize_paid"]);

function loadLastGames() {
  if (!Console.commands.has("recall_games")) return;
  send("recall_games", {count: 10}, (message) => {
    if (message.ok) showLastGames(message.result.games);
    else document.getElementById("last-games-none").textContent = message.error.message;
  }, null, true);
}

function soldText(game) {
  const series = game.series.map((s) => `series ${s.series} cards ${s.first}-${s.last} (${s.count} paper)`);
  series.push(`${game.virtual_cards} virtual`);
  return `${game.cards_sold === null ? game.paper_cards + game.virtual_cards : game.cards_sold} cards sold: ${series.join(", ")}`;
}

function winnerText(w) {
  const where = w.where === "paper" ? `paper, sold by ${w.seller}` : w.where === "terminal" ? `terminal ${w.terminal}` : "bought where the journal does not say";
  return `${w.shown_as || w.card} (${where})${w.cents === null ? "" : ` ${Hall.money(w.cents)}`}`;
}

function showLastGames(games) {
  const list = document.getElementById("last-games-list");
  document.getElementById("last-games-none").hidden = games.length > 0;
  list.textContent = "";
  for (const game of games) {
    const item = Hall.el("li", null, "last-game");
    item.dataset.game = game.game_id;
    item.appendChild(Hall.el("div", `Game ${game.number} of session ${game.session} · ${game.state} · collected ${Hall.money(game.collection_cents)}`, "last-game-title"));
    item.appendChild(Hall.el("div", soldText(game), "hint"));
    item.appendChild(Hall.el("div", `Balls (${game.balls.length}): ${game.balls.join(" ")}`, "last-game-balls"));
    if (game.prizes.length) {
      const table = Hall.el("table", null, "receipt-table");
      const head = table.createTHead().insertRow();
      ["Prize", "Ball", "Winning cards", "Amount"].forEach((h) => head.appendChild(Hall.el("th", h)));
      const body = table.createTBody();
      for (const p of game.prizes) {
        const row = body.insertRow();
        [`${words(p.prize)}${p.paid ? "" : " (to pay)"}`, `${p.ball_count} (${p.ball})`, p.winners.map(winnerText).join("; "),
         Hall.money(p.amount_cents)].forEach((v) => row.insertCell().textContent = String(v));
      }
      item.appendChild(table);
    }
    list.appendChild(item);
  }
}

function onMessage(message) {
  if (message.type === "snapshot") {
    const me = message.me;
    Console.me = me;
    document.getElementById("me").textContent = `${me.name} · ${words(me.role)}`;
    document.body.dataset.role = me.role;
    Console.commands = new Map(message.commands.map((c) => [c.name, c]));
    Console.choices = message.choices || {};
    Console.minutes = message.minutes === true;
    document.getElementById("minutes").hidden = !Console.minutes;
    Console.view = message.view;
    document.getElementById("last-games").hidden = !Console.commands.has("recall_games");
    showCommands();
    buildDesk();
    show(message.view);
    loadLastGames();
  } else if (message.type === "feed") {
    if (Console.view) {
      Console.view.feed = message.feed;
      showFeed(Console.view);
    }
  } else if (message.type === "central") {
    if (Console.view) {
      Console.view.central = message.central;
      showCentral(Console.view);
    }
  } else if (message.type === "storage") {
    if (Console.view) {
      Console.view.storage = message.storage;
      showStorage(Console.view);
    }
  } else if (message.type === "record") {
    remember(message.record);
    show(message.view);
    if (RECALL_CHANGES.has(message.record.type)) loadLastGames();
  } else if (message.type === "answer" || message.ok === false) {
    const waiting = message.id ? Console.pending.get(message.id) : null;
    if (waiting) Console.pending.delete(message.id);
    const where = waiting ? waiting.where : null;
    if (waiting && waiting.quiet) {
      waiting.then(message);
      return;
    }
    if (message.ok) {
      const {text, ok} = describeAnswer(message);
      say(text, ok, where);
    } else {
      say(message.error.message, false, where);
      if (message.error.code === "signed_out") window.location.assign("/login");
    }
    if (waiting && waiting.then) waiting.then(message);
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
