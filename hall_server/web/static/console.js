// The hall console.  Each role opens on the screen of its work ("My desk"), its steps in
// the order they are done; "All commands" lists every command the role may give, as a
// form built from the command's declared arguments.  The page holds no rules: it shows
// the picture the server pushes after each commit, sends commands by name over the
// WebSocket, and the server checks the role and the rules of every one.
// Every text staff read is in the language they pick (docs/languages.md): the console's
// catalog through t()/tn(), amounts and times by CLDR in the hall's time zone (i18n.js).
"use strict";
const { t, tn } = I18n;
const money = (cents) => I18n.money(cents);
const clock = (ms) => I18n.time(ms);
// A colon between a name and its value, as the language writes it (French: a no-break space before).
const colon = () => (I18n.language === "fr" ? "\u00a0: " : ": ");
// "A, B and C" in the page's language (CLDR's list patterns).
const andList = (items) => new Intl.ListFormat(I18n.language, { type: "conjunction" }).format(items.map(String));
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

// The names of the game's prizes, and the words of a few values of the hall's state, as staff read them.
const PRIZE_WORDS = {
  get line() { return t("line"); }, get bingo() { return t("bingo"); }, get jackpot() { return t("jackpot"); },
  get superbingo() { return t("superbingo"); }, get grand_superbingo() { return t("grand superbingo"); },
  get megabingo() { return t("megabingo"); }, get superbingo_last_game() { return t("superbingo fund"); },
};
const prizeName = (prize) => PRIZE_WORDS[prize] || words(String(prize));
const PRIZE_CAPS = { get line() { return t("LINE"); }, get bingo() { return t("BINGO"); } };
const prizeCaps = (prize) => PRIZE_CAPS[prize] || prizeName(prize).toUpperCase();
const GAME_STATES = {
  get selling() { return t("selling"); }, get sale_closed() { return t("sale closed"); },
  get drawing() { return t("drawing"); }, get suspended() { return t("suspended"); },
  get "suspended for good"() { return t("suspended for good"); }, get "cards collected"() { return t("cards collected"); },
  get closed() { return t("closed"); }, get "finished by hand"() { return t("finished by hand"); },
  get refunded() { return t("refunded"); },
};
const stateName = (state) => GAME_STATES[state] || words(String(state));
const TERMINAL_STATES = {
  get "in service"() { return t("in service"); }, get "out of service"() { return t("out of service"); },
  get revoked() { return t("revoked"); },
};
const terminalState = (state) => TERMINAL_STATES[state] || String(state);
const ROLES = {
  get administrator() { return t("administrator"); }, get room_chief() { return t("room chief"); },
  get table_chief() { return t("table chief"); }, get seller_caller() { return t("seller-caller"); },
  get cashier() { return t("cashier"); }, get admission() { return t("admission"); },
};
const roleName = (role) => ROLES[role] || words(String(role));
// The words a choice takes (hall_server/web/forms.py CHOICES): the value is sent, its word shown.
const CHOICE_WORDS = {
  get card() { return t("card"); }, get ticket() { return t("ticket"); },
  get cash() { return t("cash"); }, get transfer() { return t("transfer"); }, get cheque() { return t("cheque"); },
  get opening() { return t("opening"); }, get closing() { return t("closing"); }, get extra() { return t("extra"); },
  get reserve_before() { return t("reserve set, before"); }, get reserve_after() { return t("reserve set, after"); },
  get superbingo() { return t("superbingo"); }, get grand_superbingo() { return t("grand superbingo"); },
  get jackpot() { return t("jackpot"); }, get approved() { return t("approved"); }, get objected() { return t("objected"); },
  get "identity card"() { return t("identity card"); }, get passport() { return t("passport"); },
  get "residence permit"() { return t("residence permit"); },
};
const choiceWord = (value) => (CHOICE_WORDS[value] === undefined ? words(String(value)) : CHOICE_WORDS[value]);
// A paper card as staff name it: "series 1001 card 17".
const cardLabel = (card) => t("series {series} card {card}", { series: card.series, card: card.card_number });

function say(text, ok, where) {
  for (const line of [document.getElementById("answer"), where].filter(Boolean)) {
    line.textContent = text;
    line.className = `${line.id === "answer" ? "answer" : "outcome"} ${ok ? "ok" : "error"}`;
  }
}

// --- What a command did, in words: the records it committed, as the pushes showed them --

Console.recent = new Map();  // seq -> record, the latest pushed ones
Console.unsaid = null;       // the last answer, said before the pushes of some of its records came

function remember(record) {
  Console.recent.set(record.seq, record);
  if (Console.recent.size > 500) Console.recent.delete(Console.recent.keys().next().value);
}

// A refusal that the hall records as a fact (a claim that does not win, a terminal's
// request refused) is a "no" for the person at the console, whatever the command did.
const REFUSALS = new Set(["claim_rejected", "terminal_request_refused", "entry_refused"]);

// What a cash movement is, in the cashier's words.
const CASH_MOVES = {
  get hand_in() { return t("Takings handed in"); }, get float_top_up() { return t("Float topped up"); },
  get desk_to_desk() { return t("Cash moved between desks"); },
};
// A drawer as people name it: "desk1", "the seller ana's drawer", "the safe".
const drawerText = (account) => {
  const [kind, name] = String(account).split(":");
  if (account === "house") return t("the safe");
  if (account === "operator") return t("the operator's account");
  return kind === "cash" && name ? name : String(account);
};

// An account number as it is printed and read aloud: 6072 0102 0601.
const accountText = (number) => String(number).replace(/(\d{4})(?=\d)/g, "$1 ");

function outcomeOf(record) {
  const p = record.payload || {};
  switch (record.type) {
    case "claim_rejected": return t("Claim refused: card {card} of series {series} does not win - {reason}",
      {card: p.card_number, series: p.series, reason: p.reason});
    case "prize_won": return t("prize won: {prize} on card {card} of series {series} (ball {count})",
      {prize: prizeCaps(p.pattern), card: p.card_number, series: p.series, count: p.ball_count});
    case "visitor_admitted": return p.age_checked
      ? t("Visitor number {number} admitted ({name}), of age", {number: p.number, name: p.name})
      : t("Visitor number {number} admitted ({name})", {number: p.number, name: p.name});
    case "visitor_left": return t("Visitor number {number} left the hall", {number: p.number});
    // A journal written before the door kept the ground alone repeats "entry refused: ".
    case "entry_refused": return t("Entry refused to {name}: {reason}", {name: p.name, reason: String(p.reason).replace(/^entry refused: /i, "")});
    case "complaint_confirmed": return t("Complaint number {number} confirmed as written before the room chief", {number: p.number});
    case "opening_hours_notified": return p.previous
      ? t("Opening hours reported to the regulator: {hours} (applies from {date} unless the regulator objects)", {hours: p.hours, date: p.applies_from})
      : t("Opening hours reported to the regulator: {hours}", {hours: p.hours});
    case "opening_hours_decided": return p.decision === "approved"
      ? t("The regulator approved the opening hours {hours} ({reference})", {hours: p.hours, reference: p.reference})
      : t("The regulator objected to the opening hours {hours} ({reference})", {hours: p.hours, reference: p.reference});
    case "self_excluded": {
      const document = p.document_type ? `${choiceWord(p.document_type)} ${p.document}` : t("document no. {number}", {number: p.document});
      const who = p.name ? `${p.name}, ${document}` : document;
      return t("Self-exclusion recorded: {who} may not play until {date}", {who, date: p.until});
    }
    case "spending_limit_set": return p.limit_cents === null ? t("Daily limit removed from {date}", {date: p.effective})
      : t("Daily limit of {amount} from {date}", {amount: money(p.limit_cents), date: p.effective});
    case "player_account_opened": return t("Account {account} opened ({medium}) for visitor {visitor}",
      {account: accountText(p.account), medium: choiceWord(p.medium), visitor: p.visitor});
    case "credit_loaded": return t("Loaded {amount} on account {account} at {desk}", {amount: money(p.amount), account: accountText(p.account), desk: p.desk});
    case "credit_cashed_out": {
      const method = p.reference ? `${choiceWord(p.method)} ${p.reference}` : choiceWord(p.method);
      return t("Paid out {amount} from account {account} by {method}", {amount: money(p.amount), account: accountText(p.account), method});
    }
    case "banned_list_imported": return tn("Banned list imported: {n} entry from {source}", "Banned list imported: {n} entries from {source}", p.rows, {source: p.source});
    case "paper_cards_sold": return tn("Sold series {series} cards {first}-{last}: {n} card, {amount}", "Sold series {series} cards {first}-{last}: {n} cards, {amount}",
      p.count, {series: p.series, first: p.first, last: p.last, amount: money(p.amount_cents)});
    case "cash_desk_opened": return t("Cash desk {desk} opened with a float of {amount}", {desk: p.desk, amount: money(p.float)});
    case "cash_desk_reconciled": return t("Cash desk {desk} closed: counted {counted}, expected {expected}, difference {difference}",
      {desk: p.desk, counted: money(p.counted), expected: money(p.expected), difference: money(p.difference)});
    case "complaint_recorded": {
      const said = {number: p.number, complainant: p.complainant, chief: p.room_chief};
      if (p.room_chief) return t("Complaint number {number} written in the book ({complainant}), before the room chief {chief}", said);
      if (p.witnessed === false) return t("Complaint number {number} written in the book ({complainant}); the room chief confirms it", said);
      return t("Complaint number {number} written in the book ({complainant})", said);
    }
    case "incident_recorded": return t("Incident number {number} recorded", {number: p.number});
    case "balls_counted": return countWhole(p) ? t("Balls counted ({stage}): {counted} of 90", {stage: choiceWord(p.stage), counted: p.counted})
      : tn("Count FAILED ({stage}): {n} ball counted, {faults}; count again", "Count FAILED ({stage}): {n} balls counted, {faults}; count again",
        p.counted, {stage: choiceWord(p.stage), faults: countFaults(p)});
    case "system_verified": return p.passed ? t("Verification for {date}: passed", {date: p.date}) : t("Verification for {date}: FAILED", {date: p.date});
    case "ball_voided": return t("Ball {ball} voided by {by} (ball {count}): {reason}", {ball: p.ball, by: p.voided_by, count: p.ball_count, reason: p.reason});
    case "ball_correction_signed": return t("Correction signed by {signer} ({role}): ball {count} announced as {misread} reads {corrected} - {reason}; the other chief signs it",
      {signer: p.signer, role: roleName(p.role), count: p.ball_count, misread: p.misread, corrected: p.corrected, reason: p.reason});
    case "ball_correction_cancelled": return t("Correction of ball {count} cancelled by {by}: {misread} stands", {count: p.ball_count, by: p.by, misread: p.misread});
    case "ball_corrected": return t("BALL CORRECTED: ball {count} is {ball}, not {misread} as announced (signed by {signers}: {reason})",
      {count: p.ball_count, ball: p.ball, misread: p.misread, signers: andList(p.signed_by), reason: p.reason});
    case "card_refused": return t("Card {card} refused as invalid by {by}: {reason}", {card: `${p.series}-${p.card_number}`, by: p.refused_by, reason: p.reason});
    case "prize_closed": {
      const prizes = andList(p.patterns.map(prizeCaps));
      return p.wait_s ? t("{prizes} closed after {seconds} s with no new claim: no other card shares it", {prizes, seconds: p.wait_s})
        : t("{prizes} closed by {by}: no other card shares it", {prizes, by: p.closed_by});
    }
    case "game_suspended": return t("Game suspended: {reason}", {reason: p.reason});
    case "game_suspended_for_good": return t("Game suspended for good: {reason}", {reason: p.reason});
    case "game_resumed": return t("Game resumed");
    case "terminal_failed": return (p.refunded || []).length
      ? tn("Terminal {terminal} failed: its cards left the game, {n} refunded", "Terminal {terminal} failed: its cards left the game, {n} refunded",
        p.refunded.length, {terminal: p.terminal_id})
      : t("Terminal {terminal} failed: its cards left the game", {terminal: p.terminal_id});
    case "terminal_out_of_service": return p.kept_in_play && p.kept_in_play.length
      ? tn("Terminal {terminal} out of service: {reason}; its {n} card of the game stays in play, its wins credited, no refund: the draw had started (R96.3)",
        "Terminal {terminal} out of service: {reason}; its {n} cards of the game stay in play, their wins credited, no refund: the draw had started (R96.3)",
        p.kept_in_play.length, {terminal: p.terminal, reason: p.reason})
      : t("Terminal {terminal} out of service: {reason}", {terminal: p.terminal, reason: p.reason});
    case "blower_fault": case "blower_link": case "blower_switched": return BLOWER_RECORDS[record.type](p);
    case "clock_stepped": return clockStep(p);
    case "prize_paid": return p.desk
      ? t("prize paid: {prize} {amount} at {desk}", {prize: prizeName(p.prize), amount: money(p.amount_cents), desk: String(p.desk).replace(/^cash:/, "")})
      : t("prize paid: {prize} {amount}", {prize: prizeName(p.prize), amount: money(p.amount_cents)});
    case "cash_moved": {
      const what = CASH_MOVES[p.kind] || t("Cash moved");
      return t("{what}: {amount} from {source} to {destination}",
        {what, amount: money(p.amount), source: drawerText(p.source), destination: drawerText(p.destination)});
    }
    case "jackpot_deposited": return t("Jackpot money deposited: {amount} from {source} (slip {reference}); the bank account holds {bank} of {funds}",
      {amount: money(p.amount), source: drawerText(p.counterpart), reference: p.reference, bank: money(p.bank_after), funds: money(p.funds)});
    case "jackpot_withdrawn": return t("Jackpot surplus withdrawn: {amount} to {destination} (slip {reference}); the bank account holds {bank}",
      {amount: money(p.amount), destination: drawerText(p.counterpart), reference: p.reference, bank: money(p.bank_after)});
    case "reserve_boost_announced": return t("Reserve boost announced: {line} more for the line, {bingo} more for the bingo ({left} of the session's allowance was left)",
      {line: money(p.line_cents), bingo: money(p.bingo_cents), left: money(p.allowance_cents - p.boosted_before_cents)});
    case "posting": return null;
    default: return recordWords(record.type);
  }
}

// What the other records are, in words: the journal's name of the fact for those the console does not know.
const RECORD_WORDS = {
  get ball_drawn() { return t("ball drawn"); }, get ball_set_replaced() { return t("ball set replaced"); },
  get cards_collected() { return t("cards collected"); }, get cash_desk_handed_over() { return t("cash desk handed over"); },
  get extra_check_requested() { return t("extra check requested"); }, get game_closed() { return t("game closed"); },
  get game_finished() { return t("game finished"); }, get game_refunded() { return t("game refunded"); },
  get last_game_announced() { return t("last game announced"); }, get megabingo_announced() { return t("megabingo announced"); },
  get operator_contribution() { return t("operator contribution"); }, get pin_lockout_cleared() { return t("pin lockout cleared"); },
  get player_account_closed() { return t("player account closed"); }, get pots_announced() { return t("pots announced"); },
  get prize_winner_identified() { return t("prize winner identified"); }, get sale_closed() { return t("sale closed"); },
  get sale_opened() { return t("sale opened"); }, get second_series_opened() { return t("second series opened"); },
  get session_closed() { return t("session closed"); }, get session_closing_signed() { return t("session closing signed"); },
  get session_opened() { return t("session opened"); }, get session_opening_signed() { return t("session opening signed"); },
  get terminal_enrolled() { return t("terminal enrolled"); }, get terminal_returned_to_service() { return t("terminal returned to service"); },
  get terminal_revoked() { return t("terminal revoked"); }, get terminal_sale_opened() { return t("terminal sale opened"); },
  get vb_cash_box_counted() { return t("cash box counted"); }, get vb_cash_device_enrolled() { return t("cash device enrolled"); },
  get vb_station_enrolled() { return t("station enrolled"); },
};
const recordWords = (type) => RECORD_WORDS[type] || words(type);

function describeAnswer(message) {
  const records = message.records || [];
  const parts = records.map((r) => {
    const known = Console.recent.get(r.seq);
    const failedCount = Boolean(known && known.type === "balls_counted" && !countWhole(known.payload || {}));
    return {text: known ? outcomeOf(known) : recordWords(r.type), refused: REFUSALS.has(r.type) || failedCount};
  }).filter((part) => part.text);
  const result = message.result;
  if (Array.isArray(result)) {
    parts.push({text: tn("{n} found", "{n} found", result.length), refused: false});
  } else if (result && typeof result === "object") {
    if (Array.isArray(result.games)) {
      showLastGames(result.games);
      parts.push({text: tn("{n} finished game, shown under Last games", "{n} finished games, shown under Last games", result.games.length), refused: false});
    } else if (result.token && result.machine) {
      parts.push({text: t("Station {station} of machine {machine} enrolled; its token is shown below, only now", {station: result.station, machine: result.machine}), refused: false});
    } else if (result.token) {
      parts.push({text: t("Terminal {terminal} enrolled. Its token, shown only now - enter it on the terminal: {token}", {terminal: result.terminal, token: result.token}), refused: false});
    } else if (isVbMeters(result)) {
      Console.vbMeters = result;
      refresh();
      const machines = Object.keys(result).filter((k) => k !== "superjackpot_cents").length;
      parts.push({text: tn("The meters of {n} machine are shown under Video bingo machines", "The meters of {n} machines are shown under Video bingo machines", machines), refused: false});
    } else if ("cells" in result || "balance_cents" in result) {
      // A card or an account looked up: its desk shows it whole.
    } else if (Object.values(result).some((v) => v && typeof v === "object")) {
      parts.push({text: Object.entries(result).map(([k, v]) => (v && typeof v === "object" ? k : `${words(k)}: ${v}`)).join(", "), refused: false});
    } else {
      parts.push({text: Object.entries(result).map(([k, v]) => `${words(k)}: ${v}`).join(", "), refused: false});
    }
  }
  if (!parts.length) return {text: message.repeated ? t("Already done (sent twice)") : t("Done: nothing to record"), ok: true};
  const refused = parts.some((part) => part.refused);
  const text = parts.map((part) => part.text).join("; ");
  return {text: refused ? text : t("Done: {what}", {what: text}), ok: !refused};
}

// Send a command; ``then(message)`` hears its answer, ``where`` shows it too (a form's own
// line).  A look-up (``quiet``) changes nothing, so only ``then`` hears its answer.
function send(command, args, then, where, quiet) {
  if (!Console.socket) {
    say(t("Not connected to the hall server; the command was not sent."), false, where);
    return;
  }
  const id = requestId();
  Console.pending.set(id, {then, where, quiet});
  // The server says a refusal in the staff member's language (docs/languages.md).
  Console.socket.send(JSON.stringify({id, command, args, language: I18n.language}));
  if (!quiet) say(t("{command}: sent", {command: commandName(command)}), true, where);
}

function firstAllowed(names) {
  return names.find((name) => Console.commands.has(name)) || null;
}

// --- A command's PDF (the ticket, the statement): a download, made by the server -----

async function download(command, args, where) {
  say(t("{command}: making the PDF", {command: commandName(command)}), true, where);
  let response;
  try {
    response = await fetch("/api/document", {
      method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({id: requestId(), command, args, language: I18n.language}),
    });
  } catch (error) {
    say(t("Not connected to the hall server; nothing was printed."), false, where);
    return;
  }
  if (!response.ok) {
    const answer = await response.json().catch(() => null);
    say(answer && answer.error ? answer.error.message : t("the server answered {status}", {status: response.status}), false, where);
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
  say(t("Done: {file} downloaded - open it to print", {file: name}), true, where);
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
      throw new Error(t("{text} is not a whole number", {text: part}));
    }
  }
  return numbers;
}

// Money is typed and shown in euros; the command takes integer cents, converted exactly
// from the text (never through a floating-point number).
function eurosToCents(text, name) {
  const match = text.trim().replace(",", ".").match(/^(\d{1,12})(?:\.(\d{1,2}))?$/);
  if (!match) throw new Error(t("{field} is an amount in euros, e.g. {example}", {field: name, example: euros(1250)}));
  return Number(match[1]) * 100 + Number((match[2] || "").padEnd(2, "0"));
}

// An amount as it is typed in a field: "12,50" (ca, es, fr), "12.50" (en); both are read back.
const euros = (cents) => new Intl.NumberFormat(I18n.language, {minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false})
  .format(cents / 100);

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
  desk: (view) => (view.desks || []).map((d) => [d.desk, d.open
    ? t("{desk} (open, {amount} in the drawer)", {desk: d.desk, amount: money(d.cents)}) : t("{desk} (closed)", {desk: d.desk})]),
  series: (view) => (view.series || []).map((s) => [String(s.series),
    t("{series} · {set} · {price} · {left} of {count} left", {series: s.series, set: s.card_set, price: money(s.price_cents),
      left: s.card_count - s.last_sold, count: s.card_count})]),
  terminal: (view) => (view.terminals || []).map((x) => [x.terminal, `${x.terminal} (${x.place}, ${terminalState(x.state)})`]),
  // A seller's drawer holds the cash of their paper sales until it is handed in at a desk.
  seller: (view) => Object.entries(view.drawers || {})
    .filter(([name]) => !(view.desks || []).some((d) => d.desk === name))
    .map(([name, cents]) => [name, t("{seller} ({amount} in the drawer)", {seller: name, amount: money(cents)})]),
  visitor: (view) => (view.visitors || []).map((v) => [String(v.number),
    [`${v.number} · ${v.name}`, v.account ? t("(holds an account)") : "", v.left ? t("(left)") : ""].filter(Boolean).join(" ")]),
  // The complaints the room chief has not yet confirmed as written in their presence (R75.5).
  complaint: (view) => (view.complaints || []).filter((c) => !c.room_chief).map((c) => [String(c.number),
    t("No. {number} · {complainant}", {number: c.number, complainant: c.complainant})]),
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
  if (kind in Console.choices) return Console.choices[kind].map((w) => [w, choiceWord(w)]);
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
  if (!options.length) select.appendChild(Hall.el("option", t("(none yet)"))).value = "";
  for (const [value, text] of options) select.appendChild(Hall.el("option", text)).value = value;
  const preferred = select.preferChoice ? select.preferChoice(view) : null;
  if (options.some(([v]) => v === kept) && select.dataset.touched) select.value = kept;
  else if (preferred !== null && preferred !== undefined && options.some(([v]) => v === String(preferred))) select.value = String(preferred);
  else if (options.some(([v]) => v === kept)) select.value = kept;
}

// The commands as staff read them (the English words are the command's name).
const COMMAND_NAMES = {
  get admit_visitor() { return t("admit visitor"); },
  get announce_last_game() { return t("announce last game"); },
  get announce_megabingo() { return t("announce megabingo"); },
  get announce_pots() { return t("announce pots"); },
  get announce_reserve_boost() { return t("announce reserve boost"); },
  get announce_sale() { return t("announce sale"); },
  get cancel_ball_correction() { return t("cancel ball correction"); },
  get cash_drawers() { return t("cash drawers"); },
  get cash_out() { return t("cash out"); },
  get clear_pin_lockout() { return t("clear pin lockout"); },
  get close_game() { return t("close game"); },
  get close_player_account() { return t("close player account"); },
  get close_prize() { return t("close prize"); },
  get close_sale() { return t("close sale"); },
  get collect_cards() { return t("collect cards"); },
  get confirm_complaint() { return t("confirm complaint"); },
  get contribute_to_pot() { return t("contribute to pot"); },
  get correct_ball() { return t("correct ball"); },
  get count_balls() { return t("count balls"); },
  get declare_terminal_failed() { return t("declare terminal failed"); },
  get deposit_jackpot() { return t("deposit jackpot"); },
  get draw_ball() { return t("draw ball"); },
  get enrol_terminal() { return t("enrol terminal"); },
  get enrol_vb_cash_device() { return t("enrol vb cash device"); },
  get enrol_vb_station() { return t("enrol vb station"); },
  get enter_ball() { return t("enter ball"); },
  get find_player_account() { return t("find player account"); },
  get finish_game() { return t("finish game"); },
  get hand_in_takings() { return t("hand in takings"); },
  get hand_over_cash_desk() { return t("hand over cash desk"); },
  get identify_paper_winner() { return t("identify paper winner"); },
  get import_banned_list() { return t("import banned list"); },
  get load_credit() { return t("load credit"); },
  get move_cash() { return t("move cash"); },
  get open_cash_desk() { return t("open cash desk"); },
  get open_player_account() { return t("open player account"); },
  get open_second_series() { return t("open second series"); },
  get open_terminal_sale() { return t("open terminal sale"); },
  get pay_prizes() { return t("pay prizes"); },
  get print_account_statement() { return t("print account statement"); },
  get print_player_ticket() { return t("print player ticket"); },
  get recall_games() { return t("recall games"); },
  get reconcile_cash_desk() { return t("reconcile cash desk"); },
  get record_complaint() { return t("record complaint"); },
  get record_hours_decision() { return t("record hours decision"); },
  get record_incident() { return t("record incident"); },
  get record_self_exclusion() { return t("record self exclusion"); },
  get record_visitor_left() { return t("record visitor left"); },
  get recover_jackpot_contribution() { return t("recover jackpot contribution"); },
  get refuse_card() { return t("refuse card"); },
  get replace_ball_set() { return t("replace ball set"); },
  get request_extra_check() { return t("request extra check"); },
  get resume_game() { return t("resume game"); },
  get return_terminal_to_service() { return t("return terminal to service"); },
  get revoke_terminal() { return t("revoke terminal"); },
  get run_verification() { return t("run verification"); },
  get sell_cards() { return t("sell cards"); },
  get set_spending_limit() { return t("set spending limit"); },
  get show_card() { return t("show card"); },
  get sign_session_closing() { return t("sign session closing"); },
  get sign_session_opening() { return t("sign session opening"); },
  get suspend_game() { return t("suspend game"); },
  get suspend_game_for_good() { return t("suspend game for good"); },
  get top_up_float() { return t("top up float"); },
  get vb_count_cash_box() { return t("vb count cash box"); },
  get vb_meters() { return t("vb meters"); },
  get vb_recall() { return t("vb recall"); },
  get verify_claim() { return t("verify claim"); },
  get withdraw_jackpot_surplus() { return t("withdraw jackpot surplus"); },
};
const commandName = (name) => (COMMAND_NAMES[name] === undefined ? words(name) : COMMAND_NAMES[name]);

// A command's arguments as its form names them (the English words are the argument's name).
const LABELS = {
  get account() { return t("account"); }, get amount_cents() { return t("amount (EUR)"); }, get ball() { return t("ball"); },
  get balls_present() { return t("balls present"); }, get bingo_cents() { return t("bingo (EUR)"); },
  get birth_date() { return t("birth date on the document (checked, not kept)"); }, get card_number() { return t("card number"); },
  get cards() { return t("cards"); }, get complainant() { return t("complainant"); }, get complaint() { return t("complaint"); },
  get content() { return t("content"); }, get corrected() { return t("corrected"); }, get count() { return t("count"); },
  get counted_cents() { return t("counted (EUR)"); }, get date() { return t("date"); }, get days() { return t("days"); },
  get decision() { return t("decision"); }, get description() { return t("description"); }, get desk() { return t("desk"); },
  get destination() { return t("destination"); }, get document() { return t("document"); },
  get document_type() { return t("document type"); }, get first() { return t("first"); }, get float_cents() { return t("float (EUR)"); },
  get from_desk() { return t("from desk"); }, get grand_superbingo_limit() { return t("grand superbingo limit"); },
  get jackpot_threshold() { return t("jackpot threshold"); }, get last() { return t("last"); },
  get limit_cents() { return t("limit (EUR)"); }, get line_cents() { return t("line (EUR)"); }, get machine() { return t("machine"); },
  get medium() { return t("medium"); }, get megabingo() { return t("megabingo"); }, get method() { return t("method"); },
  get name() { return t("name"); }, get new_pin() { return t("new PIN"); }, get new_set() { return t("new set"); },
  get number() { return t("number"); }, get pin() { return t("PIN (4 to 8 digits, typed by the player)"); },
  get place() { return t("place"); }, get players() { return t("players"); }, get pot() { return t("pot"); },
  get public_key() { return t("public key"); }, get reason() { return t("reason"); }, get reference() { return t("reference"); },
  get seconds() { return t("seconds"); }, get seller() { return t("seller"); }, get series() { return t("series"); },
  get source() { return t("source"); }, get stage() { return t("stage"); }, get station() { return t("station"); },
  get superbingo_limit() { return t("superbingo limit"); }, get terminal() { return t("terminal"); }, get text() { return t("text"); },
  get time() { return t("time"); }, get to() { return t("to"); }, get to_desk() { return t("to desk"); }, get to_role() { return t("to role"); },
  get visitor() { return t("visitor"); }, get visitors() { return t("visitors"); }, get witnesses() { return t("witnesses"); },
};

function labelText(name) {
  if (LABELS[name] !== undefined) return LABELS[name];
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
    input.placeholder = t("euros, e.g. {example}", {example: euros(1250)});
    input.dataset.money = "euros";
  } else if (type === "str" && name === "content") {
    input = document.createElement("textarea");
    input.rows = 5;
    input.placeholder = t("choose the file below, or paste its lines");
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
    input.placeholder = t("JSON object, e.g. {example}", {example: '{"key": null}'});
    input.rows = 4;
  } else {
    input = document.createElement("input");
    input.type = type === "int" ? "number" : "text";
    if (type === "int") input.inputMode = "numeric";
    if (type === "list[int]") input.placeholder = t("numbers: 1-90 or 3, 17, 20");
    if (type === "list[str]") input.placeholder = t("names, separated by commas");
    if (name === "account") { input.placeholder = t("type or scan the number"); input.inputMode = "numeric"; }
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
      if (input.dataset.money === "euros") return eurosToCents(text, labelText(name));
      if (!/^-?\d+$/.test(text.trim())) throw new Error(t("{field} is a whole number", {field: labelText(name)}));
      return Number(text);
    case "str": return text;
    case "list[int]": return parseNumbers(text);
    case "list[str]": return text.split(",").map((s) => s.trim()).filter(Boolean);
    case "dict": return JSON.parse(text || "{}");
    default: throw new Error(t("unknown type {type}", {type}));
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
  document.getElementById("command-title").textContent = commandName(name);
  document.getElementById("command-summary").textContent = t(spec.summary);
  const fields = document.getElementById("command-fields");
  fields.textContent = "";
  for (const {name: param, type} of spec.params) {
    if (param === "game_id") continue;  // the page fills in the game in play
    fields.appendChild(fieldFor(param, type, {command: name}));
  }
  const form = document.getElementById("command-form");
  const submit = form.querySelector("button[type=submit] [data-i18n]");
  submit.dataset.i18n = spec.document ? "Download PDF" : "Send";
  submit.textContent = spec.document ? t("Download PDF") : t("Send");
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
  const button = Hall.el("button", commandName(name));
  button.type = "button";
  button.title = t(Console.commands.get(name).summary);
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
    row.appendChild(Hall.el("span", t(Console.commands.get(name).summary), "hint"));
    list.appendChild(row);
  }
  if (!Console.commands.size) list.appendChild(Hall.el("p", t("Your role gives no commands here."), "hint"));
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
  head.dataset.next = t("next");  // "← next" beside the step to do now (hall.css)
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
  const button = Hall.el("button", options.label || (spec.document ? t("{command} (PDF)", {command: commandName(name)}) : commandName(name)),
    options.quiet ? "" : "primary");
  button.type = "submit";
  form.appendChild(button);
  const outcome = Hall.el("p", "", "outcome");
  form.appendChild(outcome);
  form.title = t(spec.summary);
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
  (count.missing || []).length ? t("missing {balls}", {balls: count.missing.join(", ")}) : "",
  (count.repeated || []).length ? t("repeated {balls}", {balls: count.repeated.join(", ")}) : "",
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

// "signed by the administrator admin and the room chief rosa", or by nobody yet.
const signedBy = (signatures, session) => (signatures.length
  ? t("signed by {who}", {who: andList(signatures.map((role) => `${roleName(role)} ${session[role] || ""}`.trim()))})
  : t("signed by nobody yet"));

function todayInput() {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}

function openingSection() {
  const box = section(t("Session opening"), {
    state: (view) => {
      const st = sessionSteps(view);
      return st.open ? [t("Session {number} is open ({date})", {number: view.session.number, date: view.session.date}), true]
        : [t("Verify the system, count the 90 balls before witnesses, then both sign"), false];
    },
    when: (view) => !view.session.open,
  });
  const verification = section(t("1. Verify the system"), {
    state: (view) => {
      const st = sessionSteps(view);
      const v = view.session.verification;
      if (st.open) return [t("done: the session is open"), true];
      if (v) {
        // A fault worded from the catalog is said in the console's language; another reads as the server wrote it.
        const faultText = (check, fault) => typeof fault === "string" ? I18n.said((v.said || {})[check], fault) : JSON.stringify(fault);
        const failed = Object.entries(v.results || {}).filter(([, fault]) => fault !== null).map(([check, fault]) => `${words(check)}: ${faultText(check, fault)}`);
        return v.passed ? [t("passed for {date}", {date: v.date}), true] : [t("FAILED for {date}: {faults}", {date: v.date, faults: failed.join("; ")}), false];
      }
      return [t("not yet run today"), false];
    },
    next: (view) => !sessionSteps(view).verified,
  });
  append(verification, commandForm("run_verification", {label: t("Run the verification"), fields: {date: {label: t("session date"), value: todayInput()}}, keep: ["date"]}));
  const count = section(t("2. Count the balls (room chief, with witnesses)"), {
    state: (view) => {
      const st = sessionSteps(view);
      const c = view.session.last_count;
      if (st.counted) return [t("counted at the opening: all 90 present"), true];
      if (st.countFailed) return [tn("COUNT FAILED: {faults}. Find the ball and count again before the same witnesses; the opening is signed only after a count of all 90",
        "COUNT FAILED: {faults}. Find the balls and count again before the same witnesses; the opening is signed only after a count of all 90",
        Math.max(1, (c.missing || []).length), {faults: countFaults(c)}), false];
      return [st.verified ? t("to do now: the room chief counts the balls") : t("after the verification"), false];
    },
    next: (view) => { const st = sessionSteps(view); return st.verified && !st.counted; },
  });
  Console.updaters.push((view) => { count.classList.toggle("failed", sessionSteps(view).countFailed); });
  append(count, commandForm("count_balls", {
    label: t("Record the count"), fixed: {stage: "opening"},
    fields: {balls_present: {label: t("balls present"), value: "1-90"}, witnesses: {label: t("witnesses (names, commas between)")}},
    keep: ["balls_present", "witnesses"],
  }));
  const sign = section(t("3. Sign the opening (administrator and room chief)"), {
    state: (view) => {
      const st = sessionSteps(view);
      if (st.countFailed) return [t("not yet: the last count did not find the 90 balls"), false];
      return [signedBy(st.signedOpening, view.session.opening), st.open];
    },
    next: (view) => { const st = sessionSteps(view); return st.counted && !st.open && !st.signedOpening.includes(Console.me.role); },
  });
  append(sign, commandForm("sign_session_opening", {label: t("Sign the opening"), when: (view) => sessionSteps(view).counted}));
  return append(box, verification, count, sign);
}

function closingSection() {
  const box = section(t("Session closing"), {
    state: (view) => [view.session.closed ? t("Session {number} is closed", {number: view.session.number}) : t("After the last game: count the balls again, then both sign"), Boolean(view.session.closed)],
    when: (view) => Boolean(view.session.open),
  });
  // The closing is the next step only once the game announced as the last is over: during a
  // game the next step is the game's own (the sale, the draw, the prize, its end).
  const lastPlayed = (view) => Boolean(view.game && view.game.last_game && gameOver(view.game));
  const count = section(t("1. Count the balls"), {
    state: (view) => {
      if (sessionSteps(view).countedClosing) return [t("counted at the closing"), true];
      if (!gameOver(view.game)) return [t("after the last game; a game is in play now"), false];
      return [lastPlayed(view) ? t("to do now: the last game is over") : t("after the last game"), false];
    },
    next: (view) => !sessionSteps(view).countedClosing && lastPlayed(view),
  });
  append(count, commandForm("count_balls", {
    label: t("Record the closing count"), fixed: {stage: "closing"},
    fields: {balls_present: {label: t("balls present"), value: "1-90"}, witnesses: {label: t("witnesses (names, commas between)")}},
    keep: ["balls_present"],
  }));
  const sign = section(t("2. Sign the closing"), {
    state: (view) => [signedBy(sessionSteps(view).signedClosing, view.session.closing), false],
    next: (view) => sessionSteps(view).countedClosing && !sessionSteps(view).signedClosing.includes(Console.me.role),
  });
  append(sign, commandForm("sign_session_closing", {label: t("Sign the closing")}));
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
  const title = t("{prizes}! Another card?", {prizes: andList(pause.patterns.map(prizeCaps))});
  const found = view.game.winners.filter((w) => pause.patterns.includes(w.pattern)).map((w) => cardLabel(w));
  const detail = t("Found on ball {count} by {cards}. Nothing is drawn: the table chief checks every other card called; the caller closes the prize, or it closes by itself {seconds} s after the last claim.",
    {count: pause.ball_count, cards: found.join(", ") || "-", seconds: view.claim_wait_s || 10});
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
  const box = section(t("Correct a misread ball"), {
    state: (view) => {
      const c = waiting(view);
      if (!c) return [t("The blower's ball only, before any claim on it: both chiefs sign the same correction"), false];
      const said = {signer: c.signer, role: roleName(c.role), count: c.ball_count, misread: c.misread, corrected: c.corrected, reason: c.reason};
      return [c.role === Console.me.role
        ? t("{signer} ({role}) signed: ball {count} was announced as {misread}; the ball drawn reads {corrected} ({reason}). Waiting for the other chief's signature. Nothing is drawn meanwhile.", said)
        : t("{signer} ({role}) signed: ball {count} was announced as {misread}; the ball drawn reads {corrected} ({reason}). Sign it if you agree, or cancel it. Nothing is drawn meanwhile.", said), false];
    },
    when: (view) => Boolean(view.game && view.game.balls.length && !gameOver(view.game)),
  });
  Console.updaters.push((view) => { box.classList.toggle("correction-waiting", Boolean(waiting(view))); });
  append(box,
    commandForm("correct_ball", {
      label: t("Sign the correction"), quiet: true,
      fields: {
        // Only the last ball is corrected (R85.5): the ball announced is always the last
        // one drawn (or the one a signed correction names), never typed, so it cannot go stale.
        ball: {label: t("ball announced (the last)"), readonly: true,
          auto: (view) => (waiting(view) ? waiting(view).misread : lastBall(view))},
        corrected: {label: t("ball drawn (read again)"), auto: (view) => (waiting(view) ? waiting(view).corrected : "")},
        reason: {label: t("why")},
      },
    }),
    commandForm("cancel_ball_correction", {label: t("Cancel the correction"), quiet: true, when: (view) => Boolean(waiting(view))}));
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
    node.appendChild(Hall.el("p", game ? t("No cards sold by you in this game yet.") : t("No game on sale."), "hint"));
    return;
  }
  const table = Hall.el("table", null, "receipt-table");
  const head = table.createTHead().insertRow();
  [t("Series"), t("Cards"), t("Count"), t("Amount")].forEach((h) => head.appendChild(Hall.el("th", h)));
  const body = table.createTBody();
  for (const s of mine) {
    const row = body.insertRow();
    [s.series, `${s.first}-${s.last}`, s.count, money(s.amount_cents)].forEach((v) => row.insertCell().textContent = String(v));
  }
  const foot = table.createTFoot().insertRow();
  const cards = mine.reduce((n, s) => n + s.count, 0);
  const total = mine.reduce((n, s) => n + s.amount_cents, 0);
  [t("Total"), "", String(cards), money(total)].forEach((v) => foot.appendChild(Hall.el("th", v)));
  node.appendChild(Hall.el("h3", t("Game {number} · sold by {seller}", {number: game.game_id, seller: Console.me.name})));
  node.appendChild(table);
}

// "3: selling", and whether it is the session's last game.
const gameText = (game) => (game.last_game
  ? t("{number}: {state} (last game of the session)", {number: game.game_id, state: stateName(game.state)})
  : `${game.game_id}${colon()}${stateName(game.state)}`);

// The game panel (beside every desk): the balls and the game's facts, as the picture has them.
function showBalls(game) {
  Hall.showBalls(game);  // the grid, the last ball and the previous ones
  const balls = game ? game.balls : [];
  document.getElementById("ball-count").textContent = balls.length ? t("ball {n} of 90", {n: balls.length}) : t("no ball drawn yet");
}

// The megabingo announced (R90.2): its date, time and amount, the whole fund being paid.
function megabingoText(megabingo) {
  if (!megabingo) return "";
  return t("Megabingo on {date} at {time}: {amount}, the whole fund, at least {minimum}",
    {date: I18n.day(megabingo.date), time: megabingo.time, amount: money(megabingo.fund_cents), minimum: money(megabingo.minimum_cents)});
}

// The pots the room chief put in play for the game, as its pots_announced record names them.
function potsText(pots) {
  const shown = [];
  if (pots.jackpot_threshold) shown.push(t("jackpot within {balls} balls: {amount}", {balls: pots.jackpot_threshold, amount: money(pots.jackpot_cents)}));
  if (pots.superbingo_limit) shown.push(t("superbingo within {balls} balls: {amount}", {balls: pots.superbingo_limit, amount: money(pots.superbingo_cents)}));
  if (pots.grand_superbingo_limit) {
    shown.push(t("grand superbingo within {balls} balls: {amount}", {balls: pots.grand_superbingo_limit, amount: money(pots.grand_superbingo_cents)}));
  }
  if (pots.megabingo_cents !== null && pots.megabingo_cents !== undefined) {
    shown.push(t("megabingo: its whole fund, at least {amount}", {amount: money(pots.megabingo_cents)}));
  }
  return shown.length ? shown.join("; ") : t("no pot in play");
}

function showFacts(game) {
  const set = (id, text) => { document.getElementById(id).textContent = text; };
  set("cards-sold", game ? game.cards_sold : "-");
  set("price", game ? money(game.price_cents) : "-");
  set("line-prize", game && "line" in game.prizes ? money(game.prizes.line) : "-");
  set("bingo-prize", game && "bingo" in game.prizes ? money(game.prizes.bingo) : "-");
  set("pots", game ? potsText(game.pots) : "-");
  set("game-state", game ? t("game {text}", {text: gameText(game)}) : t("no game"));
  document.getElementById("game-state").title = document.getElementById("game-state").textContent;  // shortened in a narrow bar
  const winners = document.getElementById("winners");
  winners.textContent = "";
  (game ? game.winners : []).forEach((w) => {
    winners.appendChild(Hall.el("li", t("{prize} on ball {count}: {card}", {prize: prizeCaps(w.pattern), count: w.ball_count, card: cardLabel(w)})));
  });
}

function gameSummary(node, view) {
  const game = view.game;
  node.textContent = "";
  if (!game) { node.appendChild(Hall.el("p", t("No game yet."), "hint")); return; }
  const facts = [
    [t("Game"), gameText(game)],
    [t("Series"), game.series.map((s) => t("{series} from card {card}", {series: s.series, card: s.first_card})).join(", ")],
    [t("Cards sold"), `${game.cards_sold} (${money(game.collection_cents)})`],
    [t("Prizes"), game.prizes && "line" in game.prizes ? t("line {line}, bingo {bingo}", {line: money(game.prizes.line), bingo: money(game.prizes.bingo)})
      : t("announced at the close of the sale")],
    [t("Pots"), potsText(game.pots || {})],
    [t("Balls"), game.balls.length ? tn("{n} drawn, last {ball}", "{n} drawn, last {ball}", game.balls.length, {ball: game.balls[game.balls.length - 1]})
      : t("none drawn")],
    [t("Winners"), game.winners.length ? game.winners.map((w) => t("{prize} {card} (ball {count})",
      {prize: prizeCaps(w.pattern), card: `${w.series}-${w.card_number}`, count: w.ball_count})).join(", ") : t("none yet")],
    [t("Paid"), (game.paid || []).length ? game.paid.map((p) => `${prizeName(p.prize)} ${money(p.amount_cents)}`).join(", ") : t("nothing yet")],
  ];
  const list = Hall.el("dl", null, "overview");
  for (const [k, v] of facts) { list.appendChild(Hall.el("dt", k)); list.appendChild(Hall.el("dd", v)); }
  node.appendChild(list);
}

// --- The screens of the roles ----------------------------------------------------------

function administratorScreen(screen) {
  append(screen, openingSection(), closingSection(), operatorPotsSection());
  const terminals = section(t("Player terminals"), {state: (view) => [tn("{n} enrolled", "{n} enrolled", (view.terminals || []).length), false]});
  append(terminals, commandForm("enrol_terminal", {label: t("Enrol the terminal"), done: showToken}),
    live("div", "token-box", (node) => { node.hidden = !Console.token; node.textContent = Console.token || ""; }),
    live("ul", "rows", terminalRows));
  screen.appendChild(terminals);
  const banned = section(t("The regulator's banned list"), {state: bannedState});
  append(banned, commandForm("import_banned_list", {label: t("Import the list")}));
  screen.appendChild(banned);
  screen.appendChild(hoursSection());
}

// The opening hours (R74): those in force, a change waiting for the regulator, and its answer.
function hoursState(view) {
  const h = view.opening_hours;
  if (!h) return [t("No opening hours reported: the hall is held to none (set [hall] opening_hours)"), false];
  const now = h.open_now === false ? t("in force: {hours} - the hall is CLOSED now", {hours: h.in_force || h.hours})
    : t("in force: {hours}", {hours: h.in_force || h.hours});
  if (h.pending) return [t("{now}; change to {hours} requested: applies from {date} unless the regulator objects, or once it approves",
    {now, hours: h.hours, date: h.applies_from}), false];
  if (h.decision) return [h.decision === "approved" ? t("{now}; the regulator approved {hours} ({reference})", {now, hours: h.hours, reference: h.reference})
    : t("{now}; the regulator objected to {hours} ({reference})", {now, hours: h.hours, reference: h.reference}), true];
  return [now, true];
}

function hoursSection() {
  const box = section(t("Opening hours (R74)"), {id: "opening-hours", state: hoursState});
  box.querySelector(".state-line").id = "hours-detail";
  return append(box, commandForm("record_hours_decision", {
    label: t("Record the regulator's answer"), when: (view) => Boolean(view.opening_hours && view.opening_hours.pending),
    fields: {reference: {label: t("reference of the regulator's letter")}},
  }));
}

function showToken(message) {
  const result = message.result;
  if (result && result.token) {
    Console.token = t("Token of {terminal}, shown only now - enter it on the terminal: {token}", {terminal: result.terminal, token: result.token});
    refresh();
  }
}

function terminalRows(node, view) {
  node.textContent = "";
  for (const x of view.terminals || []) {
    node.appendChild(Hall.el("li", `${x.terminal} · ${x.place} · ${terminalState(x.state)}${x.reason ? " (" + x.reason + ")" : ""}`,
      x.state === "in service" ? "" : "warn"));
  }
  if (!(view.terminals || []).length) node.appendChild(Hall.el("li", t("No terminal enrolled."), "hint"));
}

function bannedState(view) {
  const list = view.banned_list;
  return list ? [tn("Banned list: {n} entry from {source} (imported by {by})", "Banned list: {n} entries from {source} (imported by {by})",
    list.rows, {source: list.source, by: list.imported_by}), true]
    : [t("No banned list loaded: nobody can be admitted until an administrator imports it"), false];
}

function roomChiefScreen(screen) {
  const overview = section(t("The hall now"), {id: "overview"});
  append(overview, live("div", "", gameSummary));
  const faults = section(t("Faults"));
  append(faults, live("ul", "rows faults", (node, view) => {
    node.textContent = "";
    const shown = view.faults || [];
    if (!shown.length) node.appendChild(Hall.el("li", t("No fault recorded."), "hint"));
    shown.forEach((record) => node.appendChild(Hall.el("li", `${clock(record.time_ms)} ${outcomeOf(record)}`, "warn")));
  }));
  append(faults,
    commandForm("suspend_game", {label: t("Suspend the game"), when: (view) => Boolean(view.game && ["selling", "drawing"].includes(view.game.state))}),
    commandForm("resume_game", {label: t("Resume the game"), when: (view) => Boolean(view.game && view.game.state === "suspended")}));
  const terminals = section(t("Terminals"));
  const inService = (value, view) => (view.terminals || []).some((x) => x.terminal === value && x.state === "in service");
  append(terminals, live("ul", "rows", terminalRows),
    commandForm("declare_terminal_failed", {label: t("Declare failed"), fields: {terminal: {filter: inService}}, quiet: true,
      when: (view) => (view.terminals || []).some((x) => x.state === "in service")}),
    commandForm("return_terminal_to_service", {label: t("Back in service"), fields: {terminal: {filter: (v, view) => !inService(v, view)}}, quiet: true,
      when: (view) => (view.terminals || []).some((x) => x.state === "out of service")}));
  screen.appendChild(append(Hall.el("div", null, "row-of-tasks"), overview, append(Hall.el("div"), faults, terminals)));
  const game = section(t("The game"), {
    state: (view) => {
      const g = view.game;
      if (!g || gameOver(g)) return [t("The seller-caller opens the next sale"), false];
      if (g.state === "selling") return [t("Selling: put the pots in play, then close the sale"), false];
      if (g.pause) return [t("{found} The caller closes the prize", {found: pauseWords(view)[0]}), false];
      if (g.state === "drawing") return [g.winners.some((w) => w.pattern === "bingo") ? t("Bingo closed: close the game, then collect the cards") : t("Drawing"), false];
      return [stateName(g.state), false];
    },
    when: (view) => Boolean(view.session.open),
  });
  const selling = (view) => Boolean(view.game && view.game.state === "selling");
  const pots = append(section(t("Pots for this game"), {when: selling}), commandForm("announce_pots", {
    label: t("Put the pots in play"),
    fields: {superbingo_limit: {value: "0"}, grand_superbingo_limit: {value: "0"}, jackpot_threshold: {value: "0"}},
    keep: ["superbingo_limit", "grand_superbingo_limit", "jackpot_threshold"],
  }));
  const close = append(section(t("Close the sale"), {when: selling, next: selling}), commandForm("close_sale", {label: t("Close the sale")}));
  const drawing = (view) => Boolean(view.game && view.game.state === "drawing");
  const end = append(section(t("End of the game"), {when: (view) => Boolean(view.game) && !["selling", "cards collected"].includes(view.game.state),
    next: (view) => Boolean(view.game && view.game.winners.some((w) => w.pattern === "bingo")) && !paused(view)}),
  commandForm("close_game", {label: t("Close the game"), when: (view) => !paused(view)}),
  commandForm("collect_cards", {label: t("Cards collected"), when: (view) => !paused(view)}));
  const last = append(section(t("Last game of the session"), {when: (view) => Boolean(view.game && !view.game.last_game && !gameOver(view.game))}),
    commandForm("announce_last_game", {label: t("Announce this game as the last")}));
  append(game, pots, close, end, correctionSection(), last);
  append(screen, pauseBanner(), game, openingSection(), closingSection(), complaintsSection(), megabingoSection(),
    operatorPotsSection(), machinesSection());
}

// --- The pots outside a game: the megabingo's announcement, the operator's money ----------

// The megabingo (R90, R90.2): announced at least 10 days ahead, it pays its whole fund, at least the fund now;
// the boards and the kiosks show it until it is played.
function megabingoSection() {
  if (!Console.commands.has("announce_megabingo")) return null;
  const box = section(t("Megabingo"), {state: (view) => (view.megabingo
    ? [t("{megabingo} · shown on the boards and the kiosks", {megabingo: megabingoText(view.megabingo)}), true]
    : [t("None announced: announce one at least 10 days ahead; it pays its whole fund on that day"), false])});
  append(box, commandForm("announce_megabingo", {label: t("Announce the megabingo"), quiet: true,
    fields: {date: {label: t("date (YYYY-MM-DD)")}, time: {label: t("time (21:00)")}}}));
  return box;
}

// The operator's money in the pots (R89.5, R91.9): its contributions, and what it may take back of the
// jackpot's - what players have not won of them, from the day after each for one calendar year.
function operatorPotsSection() {
  if (!Console.commands.has("contribute_to_pot")) return null;
  const box = section(t("The operator's contributions to the pots"), {state: (view) => {
    const jackpot = view.jackpot_contributions;
    if (!jackpot) return ["", false];
    return [t("The jackpot holds {unwon} of the operator's contributions that players have not won; {recoverable} may be taken back today ({day}), between sessions",
      {unwon: money(jackpot.contributions.reduce((sum, c) => sum + c.unwon_cents, 0)), recoverable: money(jackpot.recoverable_cents), day: jackpot.day}), false];
  }});
  append(box,
    commandForm("contribute_to_pot", {label: t("Pay into the pot"), fields: {amount_cents: {label: t("amount (EUR)")}}}),
    live("ul", "rows", (node, view) => {
      node.textContent = "";
      for (const c of (view.jackpot_contributions || {}).contributions || []) {
        const said = {date: c.date, amount: money(c.unwon_cents), until: c.until};
        node.appendChild(Hall.el("li", c.recoverable ? t("Jackpot contribution of {date}: {amount} not won · may be taken back until {until}", said)
          : c.date >= view.jackpot_contributions.day
            ? t("Jackpot contribution of {date}: {amount} not won · may be taken back from the day after it until {until}", said)
            : t("Jackpot contribution of {date}: {amount} not won · its year ended on {until}", said),
          c.recoverable ? "" : "hint"));
      }
    }),
    commandForm("recover_jackpot_contribution", {label: t("Take back from the jackpot"), quiet: true,
      fields: {amount_cents: {label: t("amount (EUR)")}},
      when: (view) => Boolean(view.jackpot_contributions && view.jackpot_contributions.recoverable_cents > 0)}));
  return box;
}

// The complaints book (R75.5): written in the room chief's presence; the door's wait for the confirmation.
function complaintsSection() {
  const waiting = (view) => (view.complaints || []).filter((c) => !c.room_chief);
  const box = section(t("Complaints book"), {
    id: "complaints",
    state: (view) => (waiting(view).length ? [tn("{n} complaint written at the door waits for your confirmation; the session does not close before",
      "{n} complaints written at the door wait for your confirmation; the session does not close before", waiting(view).length), false]
      : [t("every complaint was written before the room chief"), true]),
    next: (view) => waiting(view).length > 0,
  });
  return append(box,
    commandForm("confirm_complaint", {label: t("Confirm: written in my presence"), when: (view) => waiting(view).length > 0,
      fields: {number: {label: t("complaint")}}}),
    commandForm("record_complaint", {label: t("Write the complaint")}),
    live("ul", "rows complaints", complaintRows));
}

function complaintRows(node, view) {
  node.textContent = "";
  (view.complaints || []).forEach((c) => node.appendChild(Hall.el("li", c.room_chief
    ? t("No. {number} · {complainant}: {text} - written before {chief}", {number: c.number, complainant: c.complainant, text: c.text, chief: c.room_chief})
    : t("No. {number} · {complainant}: {text} - WAITING for the room chief", {number: c.number, complainant: c.complainant, text: c.text}),
    c.room_chief ? "" : "warn")));
  if (!(view.complaints || []).length) node.appendChild(Hall.el("li", t("No complaint written."), "hint"));
}

// --- The video bingo machines: meters and game recall (GLI-11), station enrolment --------

const VB_METERS = [["credits_in", () => t("Credits in")], ["credits_out", () => t("Credits out")], ["stakes", () => t("Stakes")],
  ["prizes", () => t("Prizes")], ["plays", () => t("Plays")], ["jackpot_contributions", () => t("Jackpot in")],
  ["jackpot_payouts", () => t("Jackpot paid")], ["cash_in", () => t("Cash in")], ["cash_out", () => t("Cash paid out")],
  ["jackpot_cents", () => t("Jackpot now")]];

function machinesSection() {
  if (!Console.commands.has("vb_meters")) return null;  // a hall without [videobingo]
  const box = section(t("Video bingo machines"), {id: "machines"});
  append(box,
    commandForm("vb_meters", {label: t("Show the meters"), fields: {machine: {label: t("machine (empty: every one)")}}, keep: ["machine"], quiet: true,
      done: (message) => { Console.vbMeters = message.result; refresh(); }}),
    live("div", "vb-meters", vbMetersTable),
    commandForm("vb_recall", {label: t("Last ten plays"), keep: ["machine"], quiet: true,
      done: (message) => { Console.vbRecall = message.result; refresh(); }}),
    live("ul", "rows vb-recall", vbRecallRows),
    commandForm("enrol_vb_station", {label: t("Enrol the station"), quiet: true, done: (message) => {
      const r = message.result;
      Console.vbToken = r && r.token ? t("Token of {machine} station {station}, shown only now - open the machine's screen at {address}",
        {machine: r.machine, station: r.station, address: `/vb/#machine=${r.machine}&station=${r.station}&token=${r.token}`}) : null;
      refresh();
    }}),
    live("div", "token-box", (node) => { node.hidden = !Console.vbToken; node.textContent = Console.vbToken || ""; }),
    // Cash into a machine only on its cash device's signed notes; its cash box counted against the meters.
    commandForm("enrol_vb_cash_device", {label: t("Enrol the cash device"), fields: {public_key: {label: t("the bill validator's public key (64 hex digits or PEM)")}}}),
    commandForm("vb_count_cash_box", {label: t("Count the cash box"), fields: {counted_cents: {label: t("counted cash (EUR)")}}}));
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
  for (const text of [t("Machine"), ...VB_METERS.map(([, label]) => label()), t("State")]) head.appendChild(Hall.el("th", text));
  const body = table.createTBody();
  for (const [machine, m] of Object.entries(meters)) {
    if (machine === "superjackpot_cents") continue;
    const row = body.insertRow();
    row.dataset.machine = machine;
    row.insertCell().textContent = machine;
    for (const [key] of VB_METERS) {
      const cell = row.insertCell();
      cell.dataset.meter = key;
      cell.textContent = key === "plays" ? String(m[key]) : money(m[key]);
    }
    row.insertCell().textContent = m.state;
  }
  node.appendChild(table);
  if ("superjackpot_cents" in meters) node.appendChild(Hall.el("p", t("Superjackpot now: {amount}", {amount: money(meters.superjackpot_cents)}), "hint"));
}

function vbRecallRows(node) {
  node.textContent = "";
  const plays = Console.vbRecall;
  if (!plays) return;
  if (!plays.length) node.appendChild(Hall.el("li", t("No play on this machine yet."), "hint"));
  for (const p of plays) {
    const paid = p.results.map((r, i) => r.pattern ? t("card {n} {pattern} ({credits})", {n: i + 1, pattern: r.pattern, credits: r.credits}) : null).filter(Boolean);
    const line = [`#${p.number}`, clock(p.at_ms), t("station {station}", {station: p.station}), tn("{n} card", "{n} cards", p.cards.length),
      t("stake {amount}", {amount: money(p.stake_cents)}),
      paid.length ? t("won {amount} - {cards}", {amount: money(p.won_cents), cards: paid.join(", ")}) : t("won {amount}", {amount: money(p.won_cents)}),
      t("credit after {amount}", {amount: money(p.credit_after_cents)}), t("balls {balls}", {balls: p.balls.join(" ")})].join(" · ");
    const item = Hall.el("li", line);
    item.dataset.seq = String(p.seq);
    node.appendChild(item);
  }
}

function sellerScreen(screen) {
  const sale = section(t("1. Open the sale"), {
    state: (view) => (view.game && !gameOver(view.game) ? [t("game {number} on sale from series {series}", {number: view.game.game_id, series: gameSeries(view).join(", ")}), true]
      : [view.session.open ? t("choose the series to sell") : t("waiting for the session to open"), false]),
    next: (view) => Boolean(view.session.open && gameOver(view.game)),
  });
  append(sale, commandForm("announce_sale", {
    label: t("Open the sale"), when: (view) => gameOver(view.game),
    fields: {series: {filter: (value, view) => view.series.some((s) => String(s.series) === value && s.last_sold < s.card_count)}},
  }));
  const selling = (view) => Boolean(view.game && view.game.state === "selling");
  const sell = section(t("2. Sell paper cards"), {
    state: (view) => (selling(view) ? [t("the first card is filled in; type the last card of the range you hand over"), false]
      : [t("when a sale is open"), false]),
    next: selling,
  });
  const form = commandForm("sell_cards", {
    label: t("Record the sale"), when: selling,
    fields: {
      series: {filter: (value, view) => gameSeries(view).includes(value), prefer: (view) => gameSeries(view).slice(-1)[0]},
      first: {label: t("first card"), auto: (view) => nextCard(view, form ? form.querySelector('[data-param="series"]').value : null)},
      last: {label: t("last card")},
    },
  });
  append(sell, form, commandForm("open_second_series", {
    label: t("Open the second series"), when: selling, quiet: true,
    fields: {series: {filter: (value, view) => !gameSeries(view).includes(value)}},
  }));
  if (form) form.querySelector('[data-param="series"]').addEventListener("change", refresh);
  const bill = section(t("Receipt"));
  bill.id = "receipt";
  append(bill, live("div", "receipt", receipt));
  // A prize found - a card the last ball completed, or a claim verified and open to other
  // cards (R85.6) - comes first, at the top of the desk where the caller sees it without
  // scrolling; drawing is the next step again once it is closed.
  const prize = section(t("Prize found: check and close it"), {
    id: "prize-found",
    state: (view) => {
      if (paused(view)) return [t("{found} Ask the hall; once nobody else calls, close the prize", {found: pauseWords(view)[0]}), false];
      const found = foundNow(view);
      const what = andList([...new Set(found.map((c) => (c.pattern === "bingo" ? "bingo" : "line")))].map(prizeCaps));
      return [t("{prizes} on this ball: {cards}. Wait for the call and ask “Another card?”; the table chief checks the card called, then you close the prize (if nobody calls, draw on)",
        {prizes: what, cards: found.map((c) => cardLabel(c)).join(", ")}), false];
    },
    when: (view) => paused(view) || foundNow(view).length > 0,
    next: (view) => paused(view) || foundNow(view).length > 0,
  });
  append(prize, commandForm("close_prize", {label: t("No other card: close the prize"), when: paused}));
  const draw = section(t("3. Draw"), {
    state: (view) => {
      const g = view.game;
      if (g && g.pause) return [t("held while the prize found is open (above)"), false];
      if (g && g.correction) return [t("ball {count} is being corrected by the chiefs: wait for them", {count: g.correction.ball_count}), false];
      if (foundNow(view).length) return [t("held: a card completed on this ball (above); draw again only if nobody calls it"), false];
      if (g && g.state === "drawing") return [t("the sale is closed: draw with the button or the D key"), false];
      if (g && g.state === "selling") return [t("once the room chief closes the sale"), false];
      return ["-", false];
    },
    next: (view) => Boolean(view.game && view.game.state === "drawing") && !paused(view) && !foundNow(view).length,
  });
  const button = Hall.el("button", t("Draw ball (D)"), "primary big");
  button.type = "button";
  button.id = "desk-draw";
  button.addEventListener("click", draw_);
  Console.updaters.push((view) => { button.disabled = !(view.game && view.game.state === "drawing") || drawHeld(view); });
  if (firstAllowed(Console.DRAW)) { append(draw, button); Console.placed.add("draw_ball"); }
  const collect = section(t("4. Collect the cards"), {when: (view) => Boolean(view.game && ["closed", "finished by hand"].includes(view.game.state))});
  append(collect, commandForm("collect_cards", {label: t("Cards collected")}));
  append(screen, pauseBanner(), prize, sale, sell, bill, draw, collect);
}

// --- The table chief's claim check: the card, its marks and the completing ball ------

function tableChiefScreen(screen) {
  const check = section(t("Claim check"), {
    state: (view) => (view.game && view.game.state === "drawing" ? [t("type or scan the card's number; Enter checks it"), false]
      : [t("when the game is drawing"), false]),
  });
  const form = Hall.el("form", null, "desk-form verify");
  form.id = "verify";
  form.appendChild(Hall.el("h3", t("Verify a claim (V)")));
  const series = fieldFor("verify-series", "int", {label: t("series")});
  const seriesInput = series.querySelector("input");
  seriesInput.id = "verify-series";
  delete seriesInput.dataset.param;
  const card = fieldFor("verify-card", "str", {label: t("card (number, or series-number as scanned)")});
  const cardInput = card.querySelector("input");
  cardInput.id = "verify-card";
  cardInput.inputMode = "numeric";
  delete cardInput.dataset.param;
  Console.updaters.push((view) => {
    if (!seriesInput.value && view.game && document.activeElement !== seriesInput) seriesInput.value = view.game.series[0].series;
  });
  const button = Hall.el("button", t("Verify"), "primary");
  button.type = "submit";
  const outcome = Hall.el("p", "", "outcome");
  append(form, append(Hall.el("div", null, "fields"), series, card), button, outcome);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const scanned = cardInput.value.trim().match(/^(\d+)\s*[-/ ]\s*(\d+)$/);
    if (scanned) { seriesInput.value = scanned[1]; cardInput.value = scanned[2]; }
    if (!/^\d+$/.test(seriesInput.value.trim()) || !/^\d+$/.test(cardInput.value.trim())) {
      say(t("Give the series and the card number as whole numbers."), false, outcome);
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
    label: t("Refuse the card as invalid"), quiet: true,
    fields: {
      series: {auto: () => seriesInput.value},
      card_number: {label: t("card number"), auto: () => cardInput.value},
      reason: {label: t("why (tampered, damaged, not the card sold)")},
    },
  });
  append(check, form, live("div", "claim-card", showClaimCard), refuse,
    live("ul", "rows refused", (node, view) => {
      node.textContent = "";
      for (const r of (view.game && view.game.refused) || []) {
        node.appendChild(Hall.el("li", t("Refused: {card} by {by}: {reason}", {card: `${r.series}-${r.card_number}`, by: r.refused_by, reason: r.reason}), "warn"));
      }
    }));
  const completedNow = section(t("Cards the last ball completed"), {state: (view) => [view.game && view.game.completed.length ? t("click one to check it") : t("no card"), false]});
  append(completedNow, live("ul", "cards chips", (node, view) => {
    node.textContent = "";
    (view.game ? view.game.completed : []).forEach((c) => {
      const card = `${c.series}-${c.card_number}`;
      const chip = Hall.el("li", c.pattern === "bingo" ? t("BINGO: {card}", {card}) : t("ROW: {card}", {card}), c.pattern === "bingo" ? "completed bingo" : "completed");
      chip.tabIndex = 0;
      chip.addEventListener("click", () => { seriesInput.value = c.series; cardInput.value = c.card_number; cardInput.focus(); });
      node.appendChild(chip);
    });
  }));
  append(screen, pauseBanner(), check, completedNow, correctionSection());
  // Standing in for the cashier (R80.4): once a cash desk is handed over to this table chief,
  // the cashier's desk is theirs to work, until it is handed back or counted and closed.
  const standIn = section(t("Standing in for the cashier (R80.4)"), {
    id: "stand-in",
    state: (view) => (holdsDesk(view) ? [t("you hold {desk}: the cashier's work is yours until you hand it over or close it", {desk: holdsDesk(view).desk}), true]
      : [t("the cashier, or the room chief, hands a cash desk over to you first"), false]),
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
    node.appendChild(Hall.el("p", t("Card {card}: {error}", {card: `${shown.series}-${shown.card_number}`, error: shown.error}), "outcome error"));
    return;
  }
  const drawn = new Set(shown.drawn);
  const completing = new Set(Object.values(shown.completed).filter(Boolean).map((c) => c.ball));
  node.appendChild(Hall.el("h3", t("Series {series} card {card}", {series: shown.series, card: shown.card_number})));
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
    const said = {prize: prizeCaps(pattern), count: done ? done.ball_count : 0, ball: done ? done.ball : 0};
    lines.push(!done ? t("{prize} not completed", said) : done.won ? t("{prize} completed on ball {count} (number {ball}) - won", said)
      : t("{prize} completed on ball {count} (number {ball})", said));
  }
  node.appendChild(Hall.el("p", tn("{lines}. {n} ball drawn when checked.", "{lines}. {n} balls drawn when checked.", shown.drawn.length, {lines: lines.join("; ")}), "hint card-facts"));
  node.appendChild(Hall.el("p", t("Blue: called. Yellow: the ball that completed it. White: not called."), "hint legend"));
}

// --- The cashier's desk: the account found by its ticket, the drawer -----------------

function cashierScreen(screen) {
  const drawer = section(t("Cash drawers"), {
    state: (view) => {
      const open = (view.desks || []).filter((d) => d.open);
      return open.length ? [open.map((d) => t("{desk}: {amount} in the drawer", {desk: d.desk, amount: money(d.cents)})).join("; "), true]
        : [t("no desk open: open yours with its float"), false];
    },
    next: (view) => !(view.desks || []).some((d) => d.open),
  });
  const deskIsOpen = (open) => (value, view) => (view.desks || []).some((d) => d.desk === value && d.open === open);
  append(drawer, live("ul", "rows drawers", (node, view) => {
    node.textContent = "";
    for (const d of view.desks || []) {
      const said = {desk: d.desk, amount: money(d.cents), who: d.held_by};
      node.appendChild(Hall.el("li", !d.open ? t("{desk}: closed · {amount}", said) : d.held_by ? t("{desk}: open · {amount} · in the hands of {who}", said)
        : t("{desk}: open · {amount}", said), d.open ? "open-desk" : ""));
    }
  }));
  const anyDesk = (open) => (view) => (view.desks || []).some((d) => d.open === open);
  const openDesk = commandForm("open_cash_desk", {label: t("Open the desk"), fields: {desk: {filter: deskIsOpen(false)}}, when: anyDesk(false)});
  const reconcile = commandForm("reconcile_cash_desk", {label: t("Count and close the desk"), fields: {desk: {filter: deskIsOpen(true)}, counted_cents: {label: t("counted cash (EUR)")}}, when: anyDesk(true), quiet: true});
  // The desk changes hands only by a journaled hand-over (to a cashier, or the table chief standing in, R80.4).
  const handOver = commandForm("hand_over_cash_desk", {label: t("Hand the desk over"), fields: {desk: {filter: deskIsOpen(true)}}, when: anyDesk(true)});
  append(drawer, openDesk, reconcile, handOver);
  // Cash between drawers: the sellers' takings, a desk's float topped up, one desk to another.
  const sellerCents = (form) => (view) => {
    const chosen = form && form.querySelector('[data-param="seller"]');
    const cents = chosen ? (view.drawers || {})[chosen.value] : null;
    return cents ? euros(cents) : "";
  };
  let takings = null;
  takings = commandForm("hand_in_takings", {label: t("Take in the seller's cash"), fields: {desk: {filter: deskIsOpen(true)},
    amount_cents: {label: t("amount (EUR)"), auto: (view) => sellerCents(takings)(view)}}});
  if (takings) takings.querySelector('[data-param="seller"]').addEventListener("change", refresh);
  append(drawer, takings,
    commandForm("top_up_float", {label: t("Top up the float"), fields: {desk: {filter: deskIsOpen(true)}, amount_cents: {label: t("amount (EUR)")}}}),
    commandForm("move_cash", {label: t("Move the cash"), fields: {from_desk: {filter: deskIsOpen(true)}, to_desk: {filter: deskIsOpen(true)}, amount_cents: {label: t("amount (EUR)")}}}));
  Console.placed.add("cash_drawers");  // the drawers are on screen, live
  screen.appendChild(drawer);

  const find = section(t("Player account"), {state: () => (Console.account ? [t("found: {account}", {account: accountText(Console.account.account)}), true]
    : [t("type or scan the number on the player's ticket or card"), false])});
  const lookup = Hall.el("form", null, "desk-form");
  lookup.id = "find-account";
  const numberField = fieldFor("account", "str", {label: t("account number")});
  const numberInput = numberField.querySelector("input");
  delete numberInput.dataset.param;
  numberInput.id = "account-number";
  const findButton = Hall.el("button", t("Find"), "primary");
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
    commandForm("load_credit", {label: t("Load"), fixed: {account: accountNumber}, fields: {amount_cents: {label: t("amount (EUR)")}, desk: openOnly}, done: again}),
    commandForm("cash_out", {label: t("Pay out"), fixed: {account: accountNumber}, fields: {amount_cents: {label: t("amount (EUR)")}, desk: openOnly, reference: {label: t("cheque number or transfer reference (empty for cash)")}}, done: again}),
    commandForm("set_spending_limit", {label: t("Set the daily limit"), fixed: {account: accountNumber}, fields: {limit_cents: {label: t("daily limit (EUR, 0: none)")}}, done: again}),
    append(Hall.el("div", null, "bare-row"),
      commandForm("print_player_ticket", {label: t("Ticket (PDF)"), fixed: {account: accountNumber}}),
      commandForm("print_account_statement", {label: t("Statement (PDF)"), fixed: {account: accountNumber}}),
      commandForm("clear_pin_lockout", {label: t("Clear the PIN lockout"), fixed: {account: accountNumber}, quiet: true}),
      commandForm("close_player_account", {label: t("Close the account"), fixed: {account: accountNumber}, done: again, quiet: true})));
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

  const open = section(t("Open an account"), {state: () => [t("for a visitor admitted today: choose them, the medium, and let them type a PIN of 4 to 8 digits"), false]});
  append(open, commandForm("open_player_account", {
    label: t("Open the account"),
    fields: {visitor: {filter: (value, view) => (view.visitors || []).some((v) => String(v.number) === value && !v.account)}},
    done: (message) => {
      const opened = (message.records || []).map((r) => Console.recent.get(r.seq)).find((r) => r && r.type === "player_account_opened");
      if (opened) findAccount(opened.payload.account);
    },
  }));
  screen.appendChild(open);

  const prizes = section(t("Prizes"), {
    state: (view) => {
      const g = view.game;
      if (!g || !g.winners.length) return [t("no prize won in this game yet"), false];
      const paid = (g.paid || []).map((p) => p.prize);
      const due = [...new Set(g.winners.map((w) => w.pattern))].filter((p) => !paid.includes(p));
      return [due.length ? t("won and to pay once settled: {prizes}", {prizes: due.map(prizeName).join(", ")})
        : t("paid: {prizes}", {prizes: paid.map(prizeName).join(", ")}), !due.length];
    },
  });
  // A paper winner of 15,000 EUR or more in the game is paid once identified (R75.6): the desk names the
  // winner's cards of the game (the system sums their prizes) and the document they show.
  append(prizes, commandForm("identify_paper_winner", {label: t("Record the winner's identity ({amount} or more)", {amount: money(1500000)}),
    fields: {cards: {label: t("the winner's winning cards of this game (7-41, 7-42)")},
             document: {label: t("identity document number")}, name: {label: t("name on the document")}}}));
  append(prizes, commandForm("pay_prizes", {label: t("Pay the prizes"), fields: {desk: openOnly}}), live("ul", "rows", (node, view) => {
    node.textContent = "";
    for (const paid of (view.game && view.game.paid) || []) {
      const cards = paid.payments.map((p) => `${p.series}-${p.card_number} ${money(p.cents)}`).join(", ");
      node.appendChild(Hall.el("li", `${prizeName(paid.prize)}${colon()}${money(paid.amount_cents)} - ${cards}`));
    }
  }));
  screen.appendChild(prizes);
}

function findAccount(number, where) {
  send("find_player_account", {account: String(number)}, (message) => {
    if (message.ok) {
      Console.account = message.result;
      if (where) say(t("Account {account}: {amount}", {account: accountText(message.result.account), amount: money(message.result.balance_cents)}), true, where);
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
  node.appendChild(Hall.el("div", money(a.balance_cents), "account-balance"));
  node.appendChild(Hall.el("p", a.closed ? t("{medium} of visitor {visitor} - CLOSED", {medium: choiceWord(a.medium), visitor: a.visitor})
    : t("{medium} of visitor {visitor}", {medium: choiceWord(a.medium), visitor: a.visitor}), "hint"));
  if (a.movements.length) {
    const table = Hall.el("table", null, "receipt-table");
    const head = table.createTHead().insertRow();
    ["#", t("Movement"), t("Amount"), t("Balance")].forEach((h) => head.appendChild(Hall.el("th", h)));
    const body = table.createTBody();
    for (const m of [...a.movements].reverse()) {
      const row = body.insertRow();
      // The reason as the statement prints it, in the reader's language (the journal keeps it in English).
      [m.seq, I18n.said(m.said, m.reason), money(m.amount_cents), money(m.balance_cents)].forEach((v) => row.insertCell().textContent = String(v));
    }
    node.appendChild(table);
  }
}

// --- The admission desk ---------------------------------------------------------------

function admissionScreen(screen) {
  const banned = section(t("Banned list"), {state: bannedState});
  banned.querySelector(".state-line").id = "banned-state";
  screen.appendChild(banned);
  const admit = section(t("Admit a visitor"), {
    state: (view) => (view.banned_list ? [t("name, identity document and birth date as on the document (under 18: refused; the date is not kept)"), false] : [t("nobody can be admitted before the banned list is loaded"), false]),
    next: (view) => Boolean(view.banned_list),
  });
  const presence = live("p", "presence", (node, view) => {
    const p = view.presence;
    node.id = "presence";
    if (!p) { node.textContent = ""; return; }
    const full = p.capacity !== null && p.present >= p.capacity;
    const said = {present: p.present, capacity: p.capacity};
    node.textContent = p.capacity === null ? t("People present: {present} (no authorised capacity configured)", said)
      : full ? t("People present: {present} of {capacity} - FULL: admit again once someone leaves", said)
        : t("People present: {present} of {capacity}", said);
    node.classList.toggle("error", full);
  });
  admit.appendChild(presence);
  append(admit, commandForm("admit_visitor", {label: t("Admit"), before: () => { Console.admitted = null; refresh(); }, done: (message) => {
    const admitted = (message.records || []).map((r) => Console.recent.get(r.seq)).find((r) => r && r.type === "visitor_admitted");
    Console.admitted = admitted ? admitted.payload : null;
    refresh();
  }}), live("div", "visitor-number", (node) => {
    node.hidden = !Console.admitted;
    node.textContent = Console.admitted ? t("Visitor number {number} - {name}", {number: Console.admitted.number, name: Console.admitted.name}) : "";
  }));
  const present = (value, view) => ((view.presence || {}).visitors || []).map(String).includes(value);
  const today = section(t("Visitors admitted"));
  append(today, commandForm("record_visitor_left", {label: t("The visitor leaves"), quiet: true,
    fields: {visitor: {filter: present}}, when: (view) => ((view.presence || {}).present || 0) > 0}),
  live("ul", "rows", (node, view) => {
    node.textContent = "";
    (view.visitors || []).slice(0, 12).forEach((v) => node.appendChild(Hall.el("li", v.left ? `${v.number} · ${v.name} ` + t("(left)") : `${v.number} · ${v.name}`)));
    if (!(view.visitors || []).length) node.appendChild(Hall.el("li", t("Nobody admitted yet."), "hint"));
  }));
  const complaints = section(t("Complaints book"), {state: () => [t("written in the room chief's presence: the room chief confirms it (R75.5)"), false]});
  append(complaints, commandForm("record_complaint", {label: t("Write the complaint")}), live("ul", "rows", complaintRows));
  const incidents = section(t("Incidents and self-exclusion"));
  append(incidents, commandForm("record_incident", {label: t("Record the incident"), fields: {visitors: {label: t("visitor numbers concerned")}}}),
    commandForm("record_self_exclusion", {label: t("Record the self-exclusion"), fields: {
      name: {label: t("name (as on the document)")}, document: {label: t("document number")},
      birth_date: {label: t("birth date on the document (kept with the exclusion)")}}}));
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
  else screen.appendChild(Hall.el("p", t("Your role has no desk screen; its commands are under All commands."), "hint"));
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
  blower_fault: (p) => t("BLOWER FAULT on the {blower} blower: {fault} (draw {draw}); the game is suspended", {blower: blowerName(p.blower), fault: p.fault, draw: p.draw_no}),
  blower_link: (p) => (p.up ? t("{blower} blower link up: {detail}", {blower: blowerName(p.blower), detail: p.detail})
    : t("{blower} blower link DOWN: {detail}", {blower: blowerName(p.blower), detail: p.detail})),
  blower_fault_cleared: (p) => t("{blower} blower fault cleared", {blower: blowerName(p.blower)}),
  blower_switched: (p) => t("drawing from the {blower} blower", {blower: blowerName(p.to)}),
};

const BLOWERS = { get main() { return t("main"); }, get reserve() { return t("reserve"); } };
const blowerName = (name) => BLOWERS[name] || String(name);

// The server's wall clock stepped (docs/server-kit.md, "Clocks"): the records' times never go back.
function clockStep(p) {
  const seconds = (ms) => `${new Intl.NumberFormat(I18n.language, {minimumFractionDigits: 1, maximumFractionDigits: 1}).format(Math.abs(ms) / 1000)} s`;
  const step = {step: seconds(p.step_ms), now: clock(p.wall_ms)};
  const said = p.at_start ? t("CLOCK: the server's clock reads {step} before the journal's last record", step)
    : p.step_ms < 0 ? t("CLOCK STEPPED BACK by {step} (it now reads {now})", step) : t("CLOCK STEPPED FORWARD by {step} (it now reads {now})", step);
  return p.ahead_ms > 0 ? t("{said}; the records' times carry on {ahead} ahead of it: set the clock right", {said, ahead: seconds(p.ahead_ms)})
    : t("{said}; the records' times follow it", {said});
}

function recordClass(record) {
  if (record.type === "blower_fault" || (record.type === "blower_link" && !record.payload.up)) return "fault";
  if (record.type === "clock_stepped") return "fault";
  if (REFUSALS.has(record.type)) return "fault";
  return undefined;
}

// The journal panel lists the records as the journal holds them (their names and data, as the
// regulator reads them), in no language of the page; the blower's and the clock's stand out in words.
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
  if (s.open) text = t("session {number} open", {number: s.number});
  else if (s.number && !s.closed) {
    const signed = Object.keys(s.opening);
    text = signed.length ? t("session {number} opening: signed by {who}", {number: s.number, who: andList(signed.map(roleName))})
      : t("session {number} opening: signed by nobody yet", {number: s.number});
  } else if (s.verification) text = s.verification.passed ? t("verification passed; count the balls") : t("verification FAILED; count the balls");
  else if (s.closed) text = t("session {number} closed", {number: s.number});
  else text = t("no session open");
  document.getElementById("session-state").textContent = text;
  document.getElementById("session-state").title = text;
  // Until the regulator's list is imported the admission desk refuses everyone (R75.2).
  const banned = document.getElementById("banned-state");
  if (banned) banned.classList.toggle("error", !view.banned_list);
}

// A link's line in the top bar: hidden without the link, in red while it is behind or down.
function showLinkLine(id, link, behind) {
  const line = document.getElementById(id);
  line.hidden = !link;
  if (!link) return;
  // The top bar cuts a long line short: the whole of it is its tooltip.
  line.textContent = line.title = I18n.said(link.said, link.line);
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
  line.textContent = hours.pending
    ? t("open {hours} (requested: {requested}, from {date} unless the regulator objects)", {hours: inForce, requested: hours.hours, date: hours.applies_from})
    : hours.open_now === false ? t("open {hours} - closed now", {hours: inForce}) : t("open {hours}", {hours: inForce});
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
  set("annex-title", t("Hall-annex game {number} · main hall {main}, annex {annex}", {number: game.game_id, main: game.main, annex: game.annex}));
  set("annex-state", game.link_up ? stateName(game.state)
    : t("{state} · the link to the partner hall is lost: what is done here is sent when it is back", {state: stateName(game.state)}));
  document.getElementById("annex-state").classList.toggle("error", !game.link_up);
  set("annex-last-ball", game.last_ball === null ? "-" : String(game.last_ball));
  set("annex-ball-count", String(game.balls.length));
  set("annex-cards", game.cards_sold === null ? "-" : String(game.cards_sold));
  set("annex-line", "line" in game.prizes ? money(game.prizes.line) : "-");
  set("annex-bingo", "bingo" in game.prizes ? money(game.prizes.bingo) : "-");
  const winners = document.getElementById("annex-winners");
  winners.textContent = "";
  game.winners.forEach((w) => winners.appendChild(
    Hall.el("li", t("{prize} on ball {count}: {card} ({hall})", {prize: prizeCaps(w.pattern), count: w.ball_count, card: w.card, hall: w.hall}))));
}

function show(view) {
  Console.view = view;
  showAnnex(view);
  // The game panel's draw button is held like the desk's while a prize found is open (R85.6).
  document.getElementById("draw").disabled = drawHeld(view);
  document.getElementById("hall-name").textContent = view.hall;
  showSession(view);
  showBalls(view.game);
  showFacts(view.game);
  document.getElementById("collected").textContent = view.game ? money(view.game.collection_cents) : "-";
  const completed = document.getElementById("completed");
  completed.textContent = "";
  // The ball's record names every card it completed: the whole card (a bingo) or a row.
  (view.game ? view.game.completed : []).forEach((c) => {
    const card = cardLabel(c);
    completed.appendChild(Hall.el("li", c.pattern === "bingo" ? t("BINGO: {card}", {card}) : t("ROW: {card}", {card}), c.pattern === "bingo" ? "completed bingo" : "completed"));
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
  item.appendChild(minutesLink(kind, subject, "pdf", t("Print (PDF)")));
  item.appendChild(minutesLink(kind, subject, "csv", "CSV"));
  item.appendChild(minutesLink(kind, subject, "pdf.sig", t("signature")));
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
  list.appendChild(minutesItem("session", String(session.number), t("Session {number}", {number: session.number})));
  (session.games || []).forEach((game) => {
    list.appendChild(minutesItem("game", game.game_id, t("Game {number}", {number: game.number})));
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
  const series = game.series.map((s) => t("series {series} cards {first}-{last} ({count} paper)", {series: s.series, first: s.first, last: s.last, count: s.count}));
  series.push(t("{count} virtual cards", {count: game.virtual_cards}));
  const sold = game.cards_sold === null ? game.paper_cards + game.virtual_cards : game.cards_sold;
  return tn("{n} card sold: {series}", "{n} cards sold: {series}", sold, {series: series.join(", ")});
}

function winnerText(w) {
  const where = w.where === "paper" ? t("paper, sold by {seller}", {seller: w.seller}) : w.where === "terminal" ? t("terminal {terminal}", {terminal: w.terminal})
    : t("bought where the journal does not say");
  return `${w.shown_as || w.card} (${where})${w.cents === null ? "" : " " + money(w.cents)}`;
}

function showLastGames(games) {
  const list = document.getElementById("last-games-list");
  document.getElementById("last-games-none").hidden = games.length > 0;
  list.textContent = "";
  for (const game of games) {
    const item = Hall.el("li", null, "last-game");
    item.dataset.game = game.game_id;
    item.appendChild(Hall.el("div", t("Game {number} of session {session} · {state} · collected {amount}",
      {number: game.number, session: game.session, state: stateName(game.state), amount: money(game.collection_cents)}), "last-game-title"));
    item.appendChild(Hall.el("div", soldText(game), "hint"));
    item.appendChild(Hall.el("div", t("Balls ({count}): {balls}", {count: game.balls.length, balls: game.balls.join(" ")}), "last-game-balls"));
    if (game.prizes.length) {
      const table = Hall.el("table", null, "receipt-table");
      const head = table.createTHead().insertRow();
      [t("Prize"), t("Ball"), t("Winning cards"), t("Amount")].forEach((h) => head.appendChild(Hall.el("th", h)));
      const body = table.createTBody();
      for (const p of game.prizes) {
        const row = body.insertRow();
        [p.paid ? prizeName(p.prize) : t("{prize} (to pay)", {prize: prizeName(p.prize)}), `${p.ball_count} (${p.ball})`, p.winners.map(winnerText).join("; "),
         money(p.amount_cents)].forEach((v) => row.insertCell().textContent = String(v));
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
    document.getElementById("me").textContent = `${me.name} · ${roleName(me.role)}`;
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
    const unsaid = Console.unsaid;
    if (unsaid && unsaid.missing.delete(message.record.seq) && !unsaid.missing.size) {
      Console.unsaid = null;
      const {text, ok} = describeAnswer(unsaid.message);
      say(text, ok, unsaid.where);
    }
    if (RECALL_CHANGES.has(message.record.type)) loadLastGames();
  } else if (message.type === "answer" || message.ok === false) {
    const waiting = message.id ? Console.pending.get(message.id) : null;
    if (waiting) Console.pending.delete(message.id);
    const where = waiting ? waiting.where : null;
    if (waiting && waiting.quiet) {
      waiting.then(message);
      return;
    }
    Console.unsaid = null;
    if (message.ok) {
      const {text, ok} = describeAnswer(message);
      say(text, ok, where);
      // An answer may come before the pushes of its records: said again, in full, once they are here.
      const missing = new Set((message.records || []).map((r) => r.seq).filter((seq) => !Console.recent.has(seq)));
      if (missing.size && message.result === undefined) Console.unsaid = {message, where, missing};
    } else {
      say(message.error.message, false, where);
      if (message.error.code === "signed_out") window.location.assign("/login");
    }
    if (waiting && waiting.then) waiting.then(message);
  }
}

function linkState(up) {
  const link = document.getElementById("link");
  link.textContent = up ? t("live") : t("reconnecting");
  link.classList.toggle("offline", !up);
}

// Another language picked: every text of the page again, from the same picture.
I18n.onChange(() => {
  if (!Console.socket) document.getElementById("link").textContent = t("connecting");
  else linkState(true);
  document.getElementById("answer").textContent = "";  // the last answer was said in the other language
  if (!Console.me || !Console.view) return;
  document.getElementById("me").textContent = `${Console.me.name} · ${roleName(Console.me.role)}`;
  showCommands();
  buildDesk();
  document.getElementById("minutes-list").dataset.key = "";
  show(Console.view);
  if (Console.current) openForm(Console.current);
  loadLastGames();
});

const connect = () => Hall.connect("/ws", onMessage, async (up, socket) => {
  Console.socket = socket;
  linkState(up);
  if (!up) {
    // A refused handshake looks like a dropped link; ask whether the sign-in ended.
    const state = await fetch("/api/state").catch(() => null);
    if (state && state.status === 401) window.location.assign("/login");
  }
});

// The page speaks the language the staff member picked on this device (the sign-in page's choice too), else the hall's.
I18n.start(() => {
  document.getElementById("link").textContent = t("connecting");
  connect();
}, {remember: true, chooser: document.getElementById("language")});

document.getElementById("logout").addEventListener("click", async () => {
  await fetch("/logout", {method: "POST"});
  window.location.assign("/login");
});
