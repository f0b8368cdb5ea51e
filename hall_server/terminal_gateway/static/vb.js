// The video bingo machine's screen: one station's side of bingo-vb-machine/1 over /vb/ws
// (docs/video-bingo.md). The hall deals, draws and settles every play and commits it
// before it answers; this page only shows the committed play, ball by ball.
"use strict";

const PROTOCOL = "bingo-vb-machine/1";
const BALL_MS = 90; // the pace of the balls shown: the result is already committed
const $ = (id) => document.getElementById(id);

// Every sentence this screen writes for the player, in one place (the page's own labels are in
// vb.html), in the language the player picked (I18n, docs/languages.md).
const { t, tn } = I18n;
const TEXT = {
  get online() { return t("online"); },
  get offline() { return t("offline"); },
  get notConnected() { return t("The machine is not connected to the hall; wait a moment and try again."); },
  doesNotPlay: (why) => t("This machine does not play now: {why}", { why }),
  paidOut: (amount, toAccount) => (toAccount ? t("{amount} paid into your account.", { amount })
    : t("{amount} paid out in cash.", { amount })),
  added: (amount) => t("{amount} added to your credit.", { amount }),
  signedOut: (returned) => (returned ? t("You are signed out. Your credit of {amount} is back in your account.",
    { amount: returned }) : t("You are signed out.")),
  signedIn: (account) => t("Account {account}", { account }),
  credits: (n) => tn("{n} credit", "{n} credits", n),
  station: (machine, station) => t("{machine} · station {station}", { machine, station }),
  paytable: (name) => t("Paytable · {name}", { name }),
  rules: (balls, pool, rtp, credit) => t("{balls} balls from {pool} · return {rtp}% · 1 credit = {credit} a card",
    { balls, pool, rtp, credit }),
  jackpot: (amount) => t("Jackpot {amount}", { amount }),
  card: (n) => t("Card {n}", { n }),
  cardWon: (n, pattern, pays) => t("Card {n} · {pattern} · {pays}", { n, pattern, pays }),
  get noPlayYet() { return t("No play yet."); },
  recallLine: (number, time, station, cards, won, after) =>
    [t("Play {number} · {time} · station {station}", { number, time, station }), tn("{n} card", "{n} cards", cards),
      t("won {won} · credit after {after}", { won, after })].join(" · "),
  recalled: (number, station, after) => t("Recalled: play {number} of station {station}, credit after it {after}",
    { number, station, after }),
  win: (credits, amount, jackpot) => t("Win {credits} · {amount}", { credits, amount })
    + (jackpot ? " · " + t("jackpot {amount}", { amount: jackpot }) : ""),
  noWin: (credits, amount) => t("No win · stake {credits} ({amount})", { credits, amount }),
  play: (cards, amount) => tn("Play {n} card", "Play {n} cards", cards) + " · " + amount,
  get playPlain() { return t("Play"); },
};

// The hall's refusals a player reads, by their stable reason: the hall journals each in English and
// sends its reason and params (figures; amounts in cents) beside that message, and this screen says
// it in the player's language (docs/languages.md). A refusal with no reason here shows the message.
// A reason given by the hall (VbRefused(..., reason=...)) has its sentence here (tests/unit/test_vb_refusals.py).
const REFUSALS = () => ({
  not_enrolled: () => t("This station is not enrolled, or its token is wrong: staff must enrol it again."),
  hello: () => t("The screen must say which station it is first: reload the page."),
  protocol: () => t("This screen is of another version than the hall's: staff must update it."),
  certificate: () => t("This cabinet's certificate is for another station: staff must install this station's certificate."),
  unknown_machine: () => t("This machine is not one of the hall's machines: staff must enrol it again."),
  not_admitted: () => t("This machine does not meet the hall's rules, so it does not play: call the staff."),
  retired: () => t("This machine is retired: it does not play any more."),
  meters: () => t("This machine is out of service (its meters cannot be read): call the staff."),
  closed: () => t("The hall is closed now, by its opening hours: the machines do not play."),
  message: () => t("The hall could not read this machine's request: call the staff."),
  internal: () => t("The hall could not carry this out: nothing was charged unless it was shown. Try again in a moment."),
  daily_limit: (p) => t("Your daily limit is {limit}; you have spent {spent} today, so you may spend {left} more.",
    { limit: euros(p.limit_cents), spent: euros(p.spent_cents), left: euros(p.left_cents) }),
  self_excluded: (p) => t("You excluded yourself from play until {date}.", { date: I18n.day(p.until) }),
  sign_in_refused: () => t("The account number or the PIN is wrong, or the account is locked after too many wrong "
    + "PINs; try again later or ask the cashier."),
  account_text: (p) => tn("An account number has at most {n} character.", "An account number has at most {n} characters.",
    p.limit),
  pin_text: (p) => tn("A PIN has at most {n} digit.", "A PIN has at most {n} digits.", p.limit),
  occupied: () => t("Another player is signed in on this station: they sign out first."),
  one_station: (p) => t("You are signed in on station {station} of machine {machine}: sign out there first. A player "
    + "holds one station at a time.", { station: p.station, machine: p.machine }),
  amount: (p) => t("At most {amount} is put on the machine at a time.", { amount: euros(p.max_cents) }),
  sign_in_to_take: () => t("Sign in with your account and PIN to take credit from it."),
  account_short: (p) => t("Your account holds {held}: it cannot put {amount} on the machine.",
    { held: euros(p.held_cents), amount: euros(p.amount_cents) }),
  cash_note: () => t("This cash is not credited: the hall refused the note of the machine's bill acceptor. Call the staff."),
  no_cash_device: () => t("This machine takes no cash: the cashier puts credit on it at the cash desk."),
  nothing_to_pay: () => t("There is no credit on this station to pay out."),
  identify: (p) => t("This credit holds a win of {amount} or more: the winner is identified before it is paid. Sign in "
    + "with your account and PIN (the cashier opens one with your identity document) and pay the credit into it.",
  { amount: euros(p.large_win_cents) }),
  cash_box: (p) => t("The machine's cash box holds {held}, less than the {amount} to pay: pay it into your account, or "
    + "call the staff.", { held: euros(p.held_cents), amount: euros(p.amount_cents) }),
  sign_in_to_pay: () => t("Sign in with your account and PIN to pay the credit into it."),
  cards: (p) => t("A play holds 1 to {max} cards on this machine.", { max: p.max }),
  keep_none: () => t("There is no previous play on this station: take new cards."),
  keep_count: (p) => tn("The previous play held {n} card, not {cards}: keep them all, or take new cards.",
    "The previous play held {n} cards, not {cards}: keep them all, or take new cards.", p.held, { cards: p.cards }),
  credit_short: (p) => tn("Not enough credit: {n} card costs {stake} and the credit is {credit}. Add credit, or play "
    + "fewer cards.", "Not enough credit: {n} cards cost {stake} and the credit is {credit}. Add credit, or play "
    + "fewer cards.", p.cards, { stake: euros(p.stake_cents), credit: euros(p.credit_cents) }),
});

// The names of the example paytables' patterns (protocol/videobingo/paytables) in the player's language;
// a name of another paytable is shown as the paytable writes it.
function patternName(name) {
  const lines = /^lines? (\d(?:\+\d)*)$/.exec(name);
  if (lines) return lines[1].includes("+") ? t("lines {lines}", { lines: lines[1] }) : t("line {n}", { n: lines[1] });
  const known = {
    "top line": () => t("top line"),
    "middle line": () => t("middle line"),
    "bottom line": () => t("bottom line"),
    "top and middle lines": () => t("top and middle lines"),
    "middle and bottom lines": () => t("middle and bottom lines"),
    "top and bottom lines": () => t("top and bottom lines"),
    corners: () => t("corners"),
    frame: () => t("frame"),
  }[name];
  return known ? known() : name;
}

// A percentage as the player's language writes its number (83,55 in Catalan).
function percent(text) {
  return new Intl.NumberFormat(document.documentElement.lang || "en", { minimumFractionDigits: 2,
    maximumFractionDigits: 2 }).format(Number(text));
}

// A refusal in the player's language when its reason is known; else the hall's own message.
function said(reason, params, message) {
  const known = reason ? REFUSALS()[reason] : null;
  return known ? known(params || {}) : message;
}

const state = {
  socket: null, retry: 1000, refused: false, machine: null, station: null, token: null,
  welcome: null, credit: 0, account: null, count: 1, keep: false, warningTurn: 0,
  recalled: null,      // a play of the machine's recall shown instead of the game
  last: null,          // the last committed play shown
  preview: false,      // the cards chosen for the next play are shown instead of the last play
  animating: null,     // the timer of the balls being shown
  pending: null,       // the request sent and not answered: sent again, same id, after a reconnect
  plain: [],           // sign-in / sign-out waiting for their answers, in order
};

// --- The station's credentials: given once by staff (URL fragment), kept on this device -------
function credentials() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("machine") && fragment.get("station") && fragment.get("token")) {
    localStorage.setItem("vb-machine", fragment.get("machine"));
    localStorage.setItem("vb-station", fragment.get("station"));
    localStorage.setItem("vb-token", fragment.get("token"));
    history.replaceState(null, "", location.pathname); // the token leaves the address bar
  }
  state.machine = localStorage.getItem("vb-machine");
  state.station = Number(localStorage.getItem("vb-station"));
  state.token = localStorage.getItem("vb-token");
  return Boolean(state.machine && Number.isInteger(state.station) && state.station > 0 && state.token);
}

const euros = I18n.money;

function credits(n) {
  return TEXT.credits(n);
}

// An account number on a public screen: its last four digits only.
function masked(account) {
  const digits = String(account).replace(/\D/g, "");
  return `•••• ${digits.slice(-4)}`;
}

function requestId() {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `${state.machine}.${state.station}-${Date.now().toString(36)}${random[0].toString(36)}${random[1].toString(36)}`.slice(0, 64);
}

// --- The connection --------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/vb/ws`);
  state.socket = socket;
  socket.onopen = () => {
    state.retry = 1000;
    socket.send(JSON.stringify({ type: "hello", protocol: PROTOCOL, machine: state.machine, station: state.station,
      token: state.token }));
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    online(false);
    state.plain = [];
    if (state.socket === socket && !state.refused) {
      setTimeout(connect, state.retry); // reconnect; welcome brings the last committed play back
      state.retry = Math.min(state.retry * 2, 10000);
    }
  };
}

function online(up) {
  $("link").textContent = up ? TEXT.online : TEXT.offline;
  $("link").className = up ? "online" : "offline";
  controls();
}

function send(message) {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) {
    say(() => TEXT.notConnected);
    return false;
  }
  state.socket.send(JSON.stringify(message));
  return true;
}

function request(message) {
  state.pending = { ...message, request: requestId() };
  if (!send(state.pending)) state.pending = null;
  controls();
}

function plain(message, kind) {
  if (send(message)) state.plain.push(kind);
}

function receive(message) {
  switch (message.type) {
    case "welcome": return welcomed(message);
    case "play": return played(message);
    case "credit": return credited(message);
    case "signed_in": state.plain.shift(); return signedIn(message.account);
    case "signed_out": state.plain.shift(); return signedOut(message);
    case "recall": state.plain.shift(); return recalled(message.plays);
    case "error": return refused(message);
    default: return undefined;
  }
}

// R97.2: the operator's warnings, one at a time, and the help page; a default is a text of the
// catalog, said in the player's language, the operator's own words read as written.
function showWarning() {
  const warnings = (state.welcome && state.welcome.warnings) || [];
  $("warning").hidden = !warnings.length;
  $("warning").textContent = warnings.length ? t(warnings[state.warningTurn % warnings.length]) : "";
}

function showNotices() {
  showWarning();
  const help = (state.welcome && state.welcome.help) || "";
  $("help").hidden = !help;
  $("help-text").replaceChildren(...t(help).split(/\n\s*\n/).filter(Boolean).map((text) =>
    Object.assign(document.createElement("p"), { textContent: text })));
}

function welcomed(message) {
  state.welcome = message;
  showNotices();
  state.credit = message.credit_cents;
  $("enrol").hidden = true;
  $("screen").hidden = false;
  $("machine").textContent = TEXT.station(message.machine, message.station);
  online(true);
  paytable(message);
  signedIn(message.signed_in);
  if (message.state !== "playing") {
    say(() => (message.why_reason ? said(message.why_reason, message.why_params, message.why)
      : TEXT.doesNotPlay(message.why)), false, true);
  }
  if (message.last_play && !state.animating && (!state.last || state.last.seq !== message.last_play.seq)) {
    state.last = message.last_play;
    state.count = message.last_play.cards.length;
    state.preview = false;
    showPlay(message.last_play, false);
  } else if (!state.last) {
    render();
  }
  showCredit(state.credit);
  if (state.pending) send(state.pending); // answered once: a play already committed comes back as it was
}

function played(message) {
  if (state.pending && state.pending.request === message.request) state.pending = null;
  if (state.last && state.last.seq === message.seq) { controls(); return; }
  state.last = message;
  state.preview = false;
  showPlay(message, true);
  if (typeof message.jackpot_cents === "number") setTimeout(() => showJackpot(message.jackpot_cents),
    BALL_MS * (message.balls.length + 1)); // with the result, not before it
}

function credited(message) {
  const out = state.pending && state.pending.type === "credit_out" ? state.pending.destination : null;
  if (state.pending && state.pending.request === message.request) state.pending = null;
  state.credit = message.credit_after_cents;
  showCredit(state.credit);
  if (out) say(() => TEXT.paidOut(euros(message.amount_cents), out === "account"), true);
  else say(() => TEXT.added(euros(message.amount_cents)), true);
  controls();
}

function refused(message) {
  if (message.request && state.pending && state.pending.request === message.request) state.pending = null;
  else if (!message.request && state.plain.length) state.plain.shift();
  if (!state.welcome && ["not_enrolled", "hello", "protocol", "certificate"].includes(message.code)) {
    state.refused = true;
    $("screen").hidden = true;
    $("enrol").hidden = false;
  }
  say(() => said(message.reason, message.params, message.message));
  controls();
}

function signedOut(message) {
  // The hall has put the station's credit back into the account: the station holds nothing now.
  state.credit = message.credit_cents;
  showCredit(state.credit);
  signedIn(null);
  say(() => TEXT.signedOut(message.returned_cents ? euros(message.returned_cents) : null), true);
}

function signedIn(account) {
  state.account = account;
  $("who").textContent = account ? TEXT.signedIn(masked(account)) : "";
  $("sign-in-form").hidden = Boolean(account);
  $("account-credit").hidden = !account;
  $("pin").value = "";
  controls();
}

let messageTimer = null;
// A message to the player, written by ``text()`` again when the player picks another language.
let saying = null;
function say(text, ok = false, stays = false) {
  const box = $("message");
  saying = text;
  box.textContent = text();
  box.className = ok ? "ok" : "";
  box.hidden = false;
  clearTimeout(messageTimer);
  if (!stays) messageTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

// --- What the screen shows ----------------------------------------------------------------
function showCredit(cents) {
  const value = state.welcome ? state.welcome.credit_value_cents : 0;
  $("credit").textContent = euros(cents);
  $("credits").textContent = value ? credits(Math.floor(cents / value)) : "";
}

function ranked() {
  // The paytable's patterns in the order a card is paid: the highest first, ties to the first listed.
  const patterns = state.welcome.paytable.patterns.map((p, i) => ({ ...p, index: i }));
  return patterns.sort((a, b) => b.pays - a.pays || a.index - b.index);
}

function showJackpot(cents) {
  $("jackpot").textContent = cents ? TEXT.jackpot(euros(cents)) : "";
  $("jackpot").hidden = !cents;
}

function paytable(welcome) {
  const table = welcome.paytable;
  $("paytable-name").textContent = TEXT.paytable(table.name);
  const body = $("paytable").tBodies[0];
  body.textContent = "";
  for (const pattern of ranked()) {
    const row = body.insertRow();
    row.dataset.pattern = pattern.name;
    row.insertCell().textContent = patternName(pattern.name);
    row.insertCell().textContent = `${pattern.pays}`;
    row.insertCell().textContent = euros(pattern.pays * welcome.credit_value_cents);
  }
  $("rtp").textContent = TEXT.rules(table.balls, table.pool, percent(table.rtp_percent), euros(welcome.credit_value_cents));
  showJackpot(welcome.jackpot_cents);
  const counts = $("counts");
  counts.textContent = "";
  for (let n = 1; n <= table.cards_max; n += 1) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "count";
    button.dataset.count = String(n);
    button.textContent = String(n);
    button.addEventListener("click", () => { state.count = n; state.preview = true; render(); });
    counts.appendChild(button);
  }
}

function cardElement(numbers, index) {
  const table = state.welcome.paytable;
  const card = document.createElement("div");
  card.className = "card";
  card.dataset.card = String(index);
  const title = document.createElement("div");
  title.className = "card-title";
  title.textContent = TEXT.card(index + 1);
  card.appendChild(title);
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.style.gridTemplateColumns = `repeat(${table.columns}, 1fr)`;
  for (let i = 0; i < table.rows * table.columns; i += 1) {
    const cell = document.createElement("div");
    cell.className = numbers ? "cell" : "cell blank";
    cell.textContent = numbers ? String(numbers[i]) : "?";
    grid.appendChild(cell);
  }
  card.appendChild(grid);
  return card;
}

function rack(count) {
  const balls = $("balls");
  balls.textContent = "";
  for (let i = 0; i < count; i += 1) balls.appendChild(document.createElement("li"));
}

function render() {
  // The cards chosen for the next play (kept ones, or new ones to be dealt), or the last play.
  if (!state.welcome || state.animating) return;
  if (state.last && !state.preview) return controls();
  const keep = state.keep && state.last && state.last.cards.length === state.count;
  const cards = $("cards");
  cards.textContent = "";
  cards.dataset.count = String(state.count);
  delete cards.dataset.seq;
  for (let i = 0; i < state.count; i += 1) cards.appendChild(cardElement(keep ? state.last.cards[i] : null, i));
  rack(state.welcome.paytable.balls);
  $("ball-now").textContent = "";
  $("win").textContent = "";
  $("win").className = "";
  for (const row of $("paytable").tBodies[0].rows) row.classList.remove("lit");
  controls();
}

function recalled(plays) {
  // GLI-11 game recall: the machine's last ten plays, latest first; one touched is shown whole.
  const list = $("recall-list");
  list.textContent = "";
  if (!plays.length) list.appendChild(Object.assign(document.createElement("li"), { textContent: TEXT.noPlayYet }));
  for (const play of plays) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.seq = String(play.seq);
    const time = I18n.dateTime(play.at_ms);
    button.textContent = TEXT.recallLine(play.number, time, play.station, play.cards.length,
      euros(play.won_cents + jackpotCents(play)), euros(play.credit_after_cents));
    button.addEventListener("click", () => {
      $("recall-panel").hidden = true;
      state.recalled = play;
      $("recalled-text").textContent = TEXT.recalled(play.number, play.station, euros(play.credit_after_cents));
      $("recalled").hidden = false;
      $("count-row").hidden = true;
      showPlay(play, false, true);
    });
    item.appendChild(button);
    list.appendChild(item);
  }
  $("recall-panel").hidden = false;
}

function backToTheGame() {
  state.recalled = null;
  $("recalled").hidden = true;
  $("count-row").hidden = false;
  if (state.last) showPlay(state.last, false);
  else render();
}

function showPlay(play, animate, recall = false) {
  const table = state.welcome.paytable;
  const cards = $("cards");
  cards.textContent = "";
  cards.dataset.count = String(play.cards.length);
  cards.dataset.seq = String(play.seq);
  play.cards.forEach((numbers, i) => cards.appendChild(cardElement(numbers, i)));
  rack(play.balls.length);
  $("win").textContent = "";
  $("win").className = "";
  const order = ranked();
  const where = play.cards.map((numbers) => new Map(numbers.map((n, i) => [n, i])));
  const drawn = new Set();
  let shown = 0;
  const step = () => {
    const ball = play.balls[shown];
    drawn.add(ball);
    const slot = $("balls").children[shown];
    slot.textContent = String(ball);
    slot.className = "drawn";
    $("ball-now").textContent = String(ball);
    play.cards.forEach((numbers, c) => {
      const position = where[c].get(ball);
      if (position !== undefined) cards.children[c].querySelectorAll(".cell")[position].classList.add("hit");
      light(cards.children[c], numbers, drawn, order, table.columns);
    });
    lightPaytable();
    shown += 1;
  };
  clearInterval(state.animating);
  state.animating = null;
  if (animate) {
    showCredit(play.credit_after_cents - play.won_cents - jackpotCents(play));
    state.animating = setInterval(() => {
      step();
      if (shown === play.balls.length) { clearInterval(state.animating); state.animating = null; settled(play); }
    }, BALL_MS);
    controls();
  } else {
    while (shown < play.balls.length) step();
    settled(play, recall);
  }
}

function jackpotCents(play) {
  return play.jackpots.reduce((sum, won) => sum + won.cents, 0);
}

function light(card, numbers, drawn, order, columns) {
  // The best pattern the card has completed so far lights up, as it will be paid.
  const best = order.find((p) => p.cells.every(([r, c]) => drawn.has(numbers[r * columns + c])));
  const cells = card.querySelectorAll(".cell");
  cells.forEach((cell) => cell.classList.remove("lit"));
  const title = card.querySelector(".card-title");
  const index = Number(card.dataset.card);
  if (!best) { card.classList.remove("won"); title.textContent = TEXT.card(index + 1); card.dataset.pattern = ""; return; }
  best.cells.forEach(([r, c]) => cells[r * columns + c].classList.add("lit"));
  card.classList.add("won");
  card.dataset.pattern = best.name;
  title.textContent = TEXT.cardWon(index + 1, patternName(best.name), best.pays);
}

function lightPaytable() {
  const lit = new Set([...$("cards").children].map((card) => card.dataset.pattern).filter(Boolean));
  for (const row of $("paytable").tBodies[0].rows) row.classList.toggle("lit", lit.has(row.dataset.pattern));
}

function settled(play, recall = false) {
  // The hall's result is what counts: each card shows the pattern it was paid.
  const cards = $("cards").children;
  play.results.forEach((result, i) => {
    cards[i].dataset.paid = result.pattern || "";
    cards[i].classList.toggle("won", Boolean(result.pattern));
  });
  const value = state.welcome.credit_value_cents;
  const jackpot = jackpotCents(play);
  const win = $("win");
  if (play.won_cents || jackpot) {
    const won = play.results.reduce((sum, r) => sum + r.credits, 0);
    win.textContent = TEXT.win(credits(won), euros(play.won_cents), jackpot ? euros(jackpot) : null);
    win.className = "done won";
  } else {
    win.textContent = TEXT.noWin(credits(play.stake_cents / value), euros(play.stake_cents));
    win.className = "done";
  }
  if (!recall) {
    state.credit = play.credit_after_cents;
    showCredit(state.credit);
  }
  controls();
}

function controls() {
  const connected = $("link").className === "online";
  const busy = Boolean(state.animating || state.pending || state.recalled);
  const playing = state.welcome && state.welcome.state === "playing";
  for (const button of document.querySelectorAll("#counts .count")) {
    button.classList.toggle("chosen", Number(button.dataset.count) === state.count);
    button.disabled = busy;
  }
  const keepable = Boolean(state.last && state.last.cards.length === state.count);
  if (!keepable) state.keep = false;
  $("keep").disabled = busy || !keepable;
  $("keep").setAttribute("aria-pressed", String(state.keep));
  $("keep").classList.toggle("chosen", state.keep);
  $("play").disabled = busy || !connected || !playing;
  $("play").textContent = state.welcome
    ? TEXT.play(state.count, euros(state.count * state.welcome.credit_value_cents))
    : TEXT.playPlain;
  $("cash-out").disabled = busy || !connected || state.credit <= 0;
  for (const button of document.querySelectorAll("#account-credit button")) button.disabled = busy || !connected;
  $("sign-in").disabled = !connected;
  $("recall").disabled = Boolean(state.animating) || !connected;
}

// --- The player's touches ------------------------------------------------------------------
function play() {
  $("message").hidden = true;
  request({ type: "play", cards: state.count, keep: state.keep });
}

function start() {
  $("enrol-form").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("vb-machine", $("enrol-machine").value.trim());
    localStorage.setItem("vb-station", $("enrol-station").value.trim());
    localStorage.setItem("vb-token", $("enrol-token").value.trim());
    location.reload();
  });
  $("play").addEventListener("click", play);
  $("keep").addEventListener("click", () => { state.keep = !state.keep; state.preview = true; render(); });
  $("cash-out").addEventListener("click", () => request({ type: "credit_out",
    destination: state.account ? "account" : "cash" }));
  for (const button of document.querySelectorAll("#account-credit .take")) {
    button.textContent = euros(Number(button.dataset.cents));
    button.addEventListener("click", () => request({ type: "credit_in", source: "account",
      amount_cents: Number(button.dataset.cents) }));
  }
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    plain({ type: "sign_in", account: $("account").value.trim(), pin: $("pin").value }, "sign_in");
  });
  $("sign-out").addEventListener("click", () => plain({ type: "sign_out" }, "sign_out"));
  $("recall").addEventListener("click", () => { backToTheGame(); plain({ type: "recall" }, "recall"); });
  $("recall-close").addEventListener("click", () => { $("recall-panel").hidden = true; });
  $("help").addEventListener("click", () => { $("recall-panel").hidden = true; $("help-panel").hidden = false; });
  $("help-close").addEventListener("click", () => { $("help-panel").hidden = true; });
  setInterval(() => { state.warningTurn += 1; showWarning(); }, 20000);
  $("recall-back").addEventListener("click", backToTheGame);
  if (!credentials()) {
    $("enrol").hidden = false;
    return;
  }
  connect();
}

// A language picked by the player is kept on this station; the screen is written again in it.
function relabel() {
  for (const button of document.querySelectorAll("#account-credit .take")) button.textContent = euros(Number(button.dataset.cents));
  if (saying && !$("message").hidden) $("message").textContent = saying();
  if (!state.welcome) return;
  showNotices();
  $("machine").textContent = TEXT.station(state.welcome.machine, state.welcome.station);
  $("link").textContent = $("link").className === "online" ? TEXT.online : TEXT.offline;
  paytable(state.welcome);
  signedIn(state.account);
  showCredit(state.credit);
}

I18n.onChange(relabel);
I18n.start(start, { remember: true, chooser: $("language") });
