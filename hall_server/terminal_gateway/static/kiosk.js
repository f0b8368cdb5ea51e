// The player terminal: the protocol of docs/terminal-protocol.md over /kiosk/ws.
// The hall decides everything; this page shows it: credit (R92.8), the sale time
// (R93.1), the purchase screen, the cards marked as balls fall with "n to go" (R93.10),
// the draw, the prizes, winnings (R85.9) and the session's last game (R93.15); and beside
// it the network game played across the halls (R92.1): its sale time, its cards with their
// numbers and "n to go", its balls, its prizes and its winners with hall and terminal (R92.11);
// and the game played with the partner hall (R3.5.b): the main hall's balls, this room's
// sale time and the player's cards in it, the prizes of the joint pool, the winners of both rooms.
"use strict";

const VERSION = 1;
const MAX_CARDS = 96; // R83.7: per player, per terminal, per game
const MAX_LIMIT_CENTS = 10000000; // the highest daily limit a terminal may ask for (protocol/terminal_messages.py)
const $ = (id) => document.getElementById(id);
const { t, tn } = I18n;

const state = {
  socket: null, outbound: 0, inbound: 0, terminal: null, token: null,
  game: null, player: null, cards: [], drawn: [], won: [], clockOffset: 0,
  pending: {}, retry: 1000, announced: new Set(),
  noCertificate: false, // the hall refuses this device: no terminal certificate (checkCertificate)
  // Each kind of game's purchase asked for and not answered yet, by the "game" its "buy" names:
  // sent again, same id, after a reconnect.
  purchases: { hall: null, network: null, joint: null },
  warnings: [], help: "", warningTurn: 0, care: false,
  megabingo: null, // the megabingo announced (R90.2), as the hall's "megabingo" message gives it
  recall: false, lastGames: null, // the "Last games" view and the hall's answer to "recall"
  // The network game, as the hall's net_* messages give it; "known" once the hall says it takes part.
  net: { known: false, game: null, linkUp: false, cards: [], drawn: [], won: [], announced: new Set() },
  // The hall-annex game, as the hall's joint_* messages give it; "known" once the hall says it plays one.
  joint: { known: false, game: null, linkUp: true, cards: [], drawn: [], won: [], announced: new Set() },
};

// --- Terminal credentials: given once by staff (URL fragment), kept on this device ----------
function credentials() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("terminal") && fragment.get("token")) {
    localStorage.setItem("terminal", fragment.get("terminal"));
    localStorage.setItem("token", fragment.get("token"));
    history.replaceState(null, "", location.pathname); // the token leaves the address bar
  }
  state.terminal = localStorage.getItem("terminal");
  state.token = localStorage.getItem("token");
  return Boolean(state.terminal && state.token);
}

// --- The connection -------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/kiosk/ws`);
  state.socket = socket;
  state.outbound = 0; // every connection numbers its messages from 1
  state.inbound = 0;
  let opened = false;
  socket.onopen = () => {
    opened = true; state.retry = 1000;
    if (state.noCertificate) { state.noCertificate = false; render(); }
    send("hello", { terminal: state.terminal, token: state.token });
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
  socket.onclose = () => {
    $("link").textContent = t("offline"); $("link").className = "offline";
    if (!opened) checkCertificate();
    if (state.socket === socket && !state.refused) {
      setTimeout(connect, state.retry); // reconnect; hello brings the whole picture back
      state.retry = Math.min(state.retry * 2, 10000);
    }
  };
}

// A WebSocket refused at its handshake tells the page nothing of why (close code 1006): the same
// address asked over HTTP answers 403 when the hall refuses a device without its terminal
// certificate, and the page then says so plainly instead of a sign-in that cannot work.
async function checkCertificate() {
  let refused = false;
  try {
    const answer = await fetch("/kiosk/ws", { cache: "no-store", credentials: "same-origin" });
    refused = answer.status === 403;
  } catch (error) {
    return; // the hall cannot be reached: "offline" says it
  }
  if (refused !== Boolean(state.noCertificate)) { state.noCertificate = refused; render(); }
}

function send(type, fields = {}) {
  state.outbound += 1;
  state.pending[state.outbound] = { type, game: fields.game }; // what an error in reply to it answers
  state.socket.send(JSON.stringify({ v: VERSION, seq: state.outbound, type, ...fields }));
  return state.outbound;
}

// A purchase's id, kept with it: the hall answers a purchase sent again once more and charges it once.
function requestId() {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `${state.terminal}-${Date.now().toString(36)}${random[0].toString(36)}${random[1].toString(36)}`.slice(0, 64);
}

// The game a purchase of each kind is for: the hall's own is the one on sale, named by no id.
const GAME_IDS = { hall: () => "", network: () => state.net.game.game_id, joint: () => state.joint.game.game_id };

// One purchase in any game: "hall", "network" or "joint" (docs/terminal-protocol.md).
function buy(game, quantity, stakePct) {
  const purchase = { game, game_id: GAME_IDS[game](), account: state.player.account, quantity, stake_pct: stakePct,
    request: requestId() };
  state.purchases[game] = purchase;
  send("buy", purchase);
}

// A purchase answered (bought or refused) is no longer sent again.
function answered(game, request) {
  const purchase = state.purchases[game];
  if (purchase && (request === undefined || purchase.request === request)) state.purchases[game] = null;
}

function receive(message) {
  if (message.v !== VERSION || message.seq !== state.inbound + 1) {
    state.socket.close(); // out of order: start again with a full picture
    return;
  }
  state.inbound = message.seq;
  const handler = handlers[message.type];
  if (handler) handler(message);
}

const handlers = {
  welcome(m) {
    $("hall").textContent = m.hall; $("who").textContent = t("Terminal {terminal}", { terminal: m.terminal });
    $("link").textContent = t("online"); $("link").className = "online";
    state.clockOffset = m.time_ms - Date.now();
  },
  state(m) {
    state.clockOffset = m.time_ms - Date.now();
    state.game = m.game; state.player = m.player; state.cards = m.cards;
    state.drawn = m.game ? m.game.drawn.slice() : [];
    render();
  },
  signed_in(m) {
    state.player = { account: m.account, credit_cents: m.credit_cents }; note("");
    for (const purchase of Object.values(state.purchases)) {
      if (purchase && purchase.account === m.account) send("buy", purchase); // its answer was lost
    }
  },
  signed_out() {
    state.player = null; state.cards = []; state.net.cards = []; state.net.won = []; state.joint.cards = [];
    state.joint.won = []; render();
  },
  bought(m) {
    answered("hall", m.request);
    const held = new Set(state.cards.map((c) => c.card)); // a purchase sent again may be in the state already
    state.cards = state.cards.concat(m.cards.filter((c) => !held.has(c.card)));
    state.player.credit_cents = m.credit_cents;
    note(tn("{n} card bought: {first}", "{n} cards bought: {first} to {last}", m.cards.length,
      { first: m.cards[0].card, last: m.cards[m.cards.length - 1].card }), true);
    render();
  },
  credit(m) { if (state.player) { state.player.credit_cents = m.credit_cents; renderCredit(); } },
  ball(m) {
    if (!state.game || state.game.game_id !== m.game_id) return;
    state.drawn.push(m.ball); state.game.drawn = state.drawn.slice();
    // The first ball starts the draw; the hall sends no new game picture for it.
    if (state.game.state === "sale_closed") state.game.state = "drawing";
    render();
  },
  ball_voided(m) {
    if (state.drawn[state.drawn.length - 1] === m.ball) state.drawn.pop();
    if (state.game) state.game.drawn = state.drawn.slice();
    render();
  },
  game(m) {
    if (!m.game || !state.game || m.game.game_id !== state.game.game_id) { state.cards = []; state.won = []; state.announced.clear(); }
    state.game = m.game; state.drawn = m.game ? m.game.drawn.slice() : [];
    if (state.recall && m.game && m.game.over) send("recall"); // a game just ended: the view shows it
    render();
  },
  last_games(m) { state.lastGames = m.games; render(); },
  won(m) {
    state.won.push(m);
    winNote("hall", m);
    signal("win");
    render();
  },
  notices(m) { state.warnings = m.warnings; state.help = m.help; renderCare(); },
  megabingo(m) { state.megabingo = m.announcement; renderMegabingo(); },
  net_game(m) {
    const net = state.net;
    if (!m.game || !net.game || m.game.game_id !== net.game.game_id) { net.cards = []; net.won = []; net.announced.clear(); }
    net.known = true; net.game = m.game; net.linkUp = m.link_up;
    net.drawn = m.game ? m.game.drawn.slice() : [];
    render();
  },
  net_ball(m) {
    const net = state.net;
    if (!net.game || net.game.game_id !== m.game_id || m.ball_count !== net.drawn.length + 1) return;
    net.drawn.push(m.ball); net.game.drawn = net.drawn.slice();
    if (net.game.state === "selling" || net.game.state === "sale_closed") net.game.state = "drawing";
    render();
  },
  net_cards(m) {
    if (!state.net.game || state.net.game.game_id !== m.game_id) return;
    state.net.cards = m.cards; render();
  },
  net_bought(m) {
    const net = state.net;
    answered("network", m.request);
    if (net.game && net.game.game_id === m.game_id) {
      const held = new Set(net.cards.map((c) => c.card));
      net.cards = net.cards.concat(m.cards.filter((c) => !held.has(c.card)));
    }
    if (state.player) state.player.credit_cents = m.credit_cents;
    note(tn("{n} network card bought: {first}", "{n} network cards bought: {first} to {last}", m.cards.length,
      { first: m.cards[0].card, last: m.cards[m.cards.length - 1].card }), true);
    render();
  },
  net_won(m) {
    state.net.won.push(m);
    winNote("net", m);
    signal("win");
    render();
  },
  joint_game(m) {
    const joint = state.joint;
    if (!m.game || !joint.game || m.game.game_id !== joint.game.game_id) { joint.cards = []; joint.won = []; joint.announced.clear(); }
    joint.known = true; joint.game = m.game; joint.linkUp = m.link_up;
    joint.drawn = m.game ? m.game.drawn.slice() : [];
    render();
  },
  joint_ball(m) {
    const joint = state.joint;
    if (!joint.game || joint.game.game_id !== m.game_id || m.ball_count !== joint.drawn.length + 1) return;
    joint.drawn.push(m.ball); joint.game.drawn = joint.drawn.slice();
    if (joint.game.state === "sale_closed") joint.game.state = "drawing";
    render();
  },
  joint_cards(m) {
    if (!state.joint.game || state.joint.game.game_id !== m.game_id) return;
    state.joint.cards = m.cards; render();
  },
  joint_bought(m) {
    const joint = state.joint;
    answered("joint", m.request);
    if (joint.game && joint.game.game_id === m.game_id) {
      const held = new Set(joint.cards.map((c) => c.card));
      joint.cards = joint.cards.concat(m.cards.filter((c) => !held.has(c.card)));
    }
    if (state.player) state.player.credit_cents = m.credit_cents;
    note(tn("{n} card bought for the game with the partner hall: {first}",
      "{n} cards bought for the game with the partner hall: {first} to {last}", m.cards.length,
      { first: m.cards[0].card, last: m.cards[m.cards.length - 1].card }), true);
    render();
  },
  joint_won(m) {
    state.joint.won.push(m);
    winNote("joint", m);
    signal("win");
    render();
  },
  error(m) {
    const sent = state.pending[m.in_reply_to];
    if (sent && sent.type === "buy") answered(sent.game); // answered: refused
    if (m.code === "not_enrolled") { state.refused = true; localStorage.removeItem("token"); }
    note(refusalText(m));
    if (m.code === "not_enrolled") show("enrol");
  },
};

// --- Showing --------------------------------------------------------------------------
const money = I18n.money;

// A message goes away by itself (a refusal after NOTE_MS, a win after WIN_MS) or with the next one.
const NOTE_MS = 8000;
const WIN_MS = 15000;
let noteTimer = null;
function note(text, ok = false, lasts = NOTE_MS) {
  const box = $("message");
  box.hidden = !text; box.textContent = text ? text[0].toUpperCase() + text.slice(1) : ""; box.className = ok ? "ok" : "";
  clearTimeout(noteTimer);
  if (text) noteTimer = setTimeout(() => note(""), lasts);
}

// A win's banner names every card of the player that won the prize: the hall sends one "won" per
// card, and a second card of the same game's prize joins the banner still showing the first.
let winning = null; // { key, cards: [{card, cents}] } of the banner on screen
function winNote(kind, m) {
  const key = `${kind} ${m.game_id} ${m.prize}`;
  const box = $("message");
  if (!winning || winning.key !== key || box.hidden || box.textContent !== winning.text) winning = { key, cards: [] };
  winning.cards.push({ card: m.card, cents: m.cents });
  const prize = prizeName(m.prize);
  const cards = winning.cards;
  if (cards.length === 1) {
    const one = { prize, card: m.card, amount: money(m.cents) };
    note({
      hall: () => t("You won the {prize} with card {card}: {amount}, credited to your account", one),
      net: () => t("Network game: you won the {prize} with card {card}: {amount}, credited to your account", one),
      joint: () => t("Game with the partner hall: you won the {prize} with card {card}: {amount}, credited to your account", one),
    }[kind](), true, WIN_MS);
    winning.text = box.textContent;
    return;
  }
  const several = { prize, n: cards.length, amount: money(cards.reduce((sum, c) => sum + c.cents, 0)),
    cards: cards.map((c) => t("{card} ({amount})", { card: c.card, amount: money(c.cents) })).join(", ") };
  note({
    hall: () => t("You won the {prize} with {n} cards, {cards}: {amount} in all, credited to your account", several),
    net: () => t("Network game: you won the {prize} with {n} cards, {cards}: {amount} in all, credited to your account", several),
    joint: () => t("Game with the partner hall: you won the {prize} with {n} cards, {cards}: {amount} in all, credited to your account", several),
  }[kind](), true, WIN_MS);
  winning.text = box.textContent;
}

function show(panel) {
  for (const id of ["enrol", "no-certificate", "sign-in-panel", "play", "care", "recall"]) $(id).hidden = id !== panel;
  // Sign out only with a player signed in: the help and recall pages are open to anyone at the kiosk.
  $("sign-out").hidden = !state.player || (panel !== "play" && panel !== "care" && panel !== "recall");
  $("care-open").hidden = panel === "care" || panel === "enrol" || panel === "no-certificate";
  $("recall-open").hidden = panel === "recall" || panel === "enrol" || panel === "no-certificate";
}

// --- Responsible play (R97.2): the operator's warnings, the help page, the player's limit ------
function centsFromEuros(text) {
  const match = text.trim().replace(",", ".").match(/^(\d{1,6})(?:\.(\d{1,2}))?$/);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] || "").padEnd(2, "0"));
}

function renderCare() {
  // A default warning or help is a text of the catalog, said in the player's language; the operator's own reads as written.
  const warning = state.warnings.length ? t(state.warnings[state.warningTurn % state.warnings.length]) : "";
  $("warning").textContent = warning; $("warning").hidden = !warning;
  $("care-help").replaceChildren(...t(state.help).split(/\n\s*\n/).map((text) => {
    const p = document.createElement("p"); p.textContent = text; return p;
  }));
  const limits = state.player && state.player.limits;
  $("care-account").hidden = !limits;
  if (limits) {
    const now = limits.daily_limit_cents === null ? t("You have no daily limit.")
      : t("Your limit today is {limit}; you have spent {spent}.",
        { limit: money(limits.daily_limit_cents), spent: money(limits.spent_today_cents) });
    const next = !limits.next_limit ? "" : limits.next_limit.limit_cents === null
      ? t("From {date}: no limit.", { date: limits.next_limit.from })
      : t("From {date}: {limit}.", { date: limits.next_limit.from, limit: money(limits.next_limit.limit_cents) });
    $("care-limit").textContent = [now, next, t("A lower limit applies at once, a higher one from tomorrow.")]
      .filter(Boolean).join(" ");
  }
}

// The game's state in words: never the machine's own names ("sale_closed").
const STATE_WORDS = () => ({
  scheduled: t("not on sale yet"), selling: t("on sale"), sale_closed: t("the draw begins soon"),
  drawing: t("drawing"), line_found: t("Line! Another card?"), line_won: t("drawing"),
  bingo_found: t("Bingo! Another card?"), bingo_won: t("bingo won"), last_prize_won: t("bingo won"),
  closed: t("game over"), suspended: t("suspended"), suspended_for_good: t("called off"), refunded: t("refunded"),
  finishing_by_hand: t("drawing"), won_by_hand: t("bingo won"), finished: t("game over"),
  not_played: t("not played"),
});
function stateWords(state) { return STATE_WORDS()[state] || state.replace(/_/g, " "); }

// The prizes by their names in the regulation's words; a prize the page does not know keeps the hall's name.
function prizeName(prize) {
  const names = {
    line: t("line"), bingo: t("bingo"), jackpot: t("jackpot"), superbingo: t("superbingo"),
    grand_superbingo: t("grand superbingo"), megabingo: t("megabingo"), superjackpot: t("superjackpot"),
  };
  return names[prize] || String(prize).replace(/_/g, " ");
}

// A refusal in the player's words: the hall's reason and its figures when the page knows the
// reason, else its code, else the hall's own sentence (docs/languages.md).
function refusalText(m) {
  const known = REFUSALS()[m.reason] || REFUSALS()[m.code];
  if (!known) return m.message;
  return known(m.params || {});
}
const REFUSALS = () => ({
  no_sale: () => t("No sale is open: cards are bought during the sale time only."),
  sale_time: () => t("The sale time for terminals is over or has not begun."),
  cards_max: (p) => t("At most {max} cards per player on one terminal in a game: you hold {held}, so you may buy {left} more.",
    { max: p.max, held: p.held, left: p.left }),
  credit_short: (p) => tn("{n} card at {stake} costs {amount}; your credit is {credit}.",
    "{n} cards at {stake} cost {amount}; your credit is {credit}.", p.quantity,
    { stake: money(p.stake_cents), amount: money(p.amount_cents), credit: money(p.credit_cents) }),
  daily_limit: (p) => t("Your daily limit is {limit}; you have spent {spent} today, so you may spend {left} more.",
    { limit: money(p.limit_cents), spent: money(p.spent_cents), left: money(p.left_cents) }),
  self_excluded: (p) => t("You excluded yourself from play until {date}.", { date: I18n.day(p.until) }),
  signed_in_elsewhere: () => t("Your account was signed in on another terminal; you are signed out here."),
  internal: () => t("The hall could not do this; staff have been told. Try again in a moment."),
  sign_in_refused: () => t("The account number or the PIN is wrong, or the account is locked after too many wrong "
    + "PINs; try again later or ask the cashier."),
  signed_out: () => t("Sign in with your account and PIN first."),
  unavailable: () => t("The hall cannot take this just now; try again in a moment."),
  not_enrolled: () => t("This terminal is not enrolled, or its token is wrong: staff must enrol it again."),
  // The player's own limit and self-exclusion (R97.2).
  no_visitor_record: () => t("Your account has no visitor record today: ask at the cashier's desk to exclude yourself."),
  // The network game's: the hall's link, and the central server's reasons (protocol/central_messages.py REFUSALS).
  link_down: () => t("The link to the network game is down, so the purchase cannot be sent now; nothing was charged. Try again when this screen shows the link back."),
  sale_not_open: () => t("The sale of this game has not opened yet."),
  sale_over: () => t("The sale time is over; no card can be bought any more. Nothing was charged."),
  not_played: () => t("This game was declared not played; no card can be bought. Nothing was charged."),
  series_exhausted: () => t("Not enough cards are left in this game for your purchase; nothing was charged. Try fewer cards."),
  terminal_failed: () => t("This terminal was declared failed in this game and sells no more cards in it; nothing was charged."),
  card_limit: () => t("You already hold the most cards a player may hold on one terminal in this game; nothing was charged."),
  stake_too_small: () => t("At this stake a card would cost less than one cent; choose a higher stake. Nothing was charged."),
  unknown_game: () => t("This game is no longer on sale; nothing was charged."),
});

function renderCredit() {
  $("credit").textContent = state.player ? money(state.player.credit_cents) : "-";
  $("credit-box").hidden = !state.player; // nothing of an account until one is signed in
}

function toGo(cells, drawn) {
  const missing = [0, 1, 2].map((r) => cells.slice(r * 9, r * 9 + 9).filter((n) => n && !drawn.has(n)).length);
  return { line: Math.min(...missing), bingo: missing.reduce((a, b) => a + b, 0) };
}

// The megabingo announced (R90.2): its date, time and amount, on every screen until it is played.
function renderMegabingo() {
  const m = state.megabingo;
  $("megabingo").hidden = !m;
  $("megabingo").textContent = m ? t("Megabingo on {date} at {time}: {fund}, the whole fund, at least {minimum}",
    { date: I18n.day(m.date), time: m.time, fund: money(m.fund_cents), minimum: money(m.minimum_cents) }) : "";
}

function render() {
  renderCredit();
  renderCare();
  renderMegabingo();
  if (state.noCertificate) { show("no-certificate"); return; }
  if (state.care) { show("care"); return; }
  if (state.recall && state.token) { renderRecall(); show("recall"); return; }
  const game = state.game;
  $("last-game").hidden = !(state.player && game && game.last_game);
  if (!state.player) { show(state.token ? "sign-in-panel" : "enrol"); return; }
  show("play");
  $("play").classList.toggle("past-sale", Boolean(game) && game.state !== "selling" && game.state !== "scheduled");
  $("game-title").textContent = game ? t("Game {number} · {state}", { number: game.number, state: stateWords(game.state) })
    : t("No game yet");
  const prizes = game && game.prizes;
  $("prizes").textContent = prizes
    ? t("Line {line} · Bingo {bingo}", { line: money(prizes.line), bingo: money(prizes.bingo) }) + " · "
      + tn("{n} card in play", "{n} cards in play", game.cards_sold)
    : (game ? t("Card {price} · series {series}", { price: money(game.price_cents), series: game.series }) : "");
  const last = state.drawn.slice(-5).reverse();
  $("last-balls").replaceChildren(...last.map((b, i) => ball(b, i === 0)));
  // The 1-90 board of called numbers, the latest ringed.
  const called = new Set(state.drawn);
  const latest = state.drawn[state.drawn.length - 1];
  $("drawn").setAttribute("aria-label", t("numbers called"));
  $("drawn").replaceChildren(...Array.from({ length: 90 }, (_, i) => {
    const li = document.createElement("li"); li.textContent = i + 1;
    li.className = (called.has(i + 1) ? "called" : "") + (i + 1 === latest ? " latest" : "");
    return li;
  }));
  $("won").replaceChildren(...state.won.map((w) => { const li = document.createElement("li"); li.textContent = `${prizeName(w.prize)}: ${w.card} +${money(w.cents)}`; return li; }));
  $("held").textContent = t("{count} of {max} cards on this terminal", { count: state.cards.length, max: MAX_CARDS });
  renderSale();
  renderCards();
  renderNet();
  renderJoint();
}

// --- The last games: their balls and winning cards, as any player may see them -------------
function renderRecall() {
  const games = state.lastGames;
  if (games === null) { $("recall-games").replaceChildren(); return; }
  if (!games.length) {
    const li = document.createElement("li"); li.textContent = t("No game has finished yet.");
    $("recall-games").replaceChildren(li); return;
  }
  $("recall-games").replaceChildren(...games.map((g) => {
    const li = document.createElement("li"); li.className = "recall-game"; li.dataset.game = g.game_id;
    const title = document.createElement("div"); title.className = "recall-title";
    title.textContent = t("Game {number} · {state}", { number: g.number, state: stateWords(g.state) }) + " · "
      + tn("{n} ball", "{n} balls", g.balls.length);
    const balls = document.createElement("ol"); balls.className = "recall-balls"; balls.setAttribute("aria-label", t("balls in order"));
    balls.replaceChildren(...g.balls.map((b) => { const n = document.createElement("li"); n.textContent = b; return n; }));
    const prizes = document.createElement("ul"); prizes.className = "recall-prizes";
    prizes.replaceChildren(...g.prizes.map((p) => {
      const n = document.createElement("li");
      n.textContent = t("{prize} on ball {ball}: {cards} · {amount}", { prize: patternName(p.prize), ball: p.ball_count,
        cards: p.cards.join(", "), amount: money(p.amount_cents) });
      return n;
    }));
    li.replaceChildren(title, balls, prizes);
    return li;
  }));
}

function ball(number, latest) {
  const el = document.createElement("span");
  el.className = latest ? "ball latest" : "ball"; el.textContent = number;
  return el;
}

function saleOpen() {
  const game = state.game;
  if (!game || game.state !== "selling" || !game.sale) return false;
  const now = Date.now() + state.clockOffset;
  return now >= game.sale.opens_at_ms && now < game.sale.closes_at_ms;
}

function renderSale() {
  const game = state.game;
  const open = saleOpen();
  $("sale").className = open ? "" : "closed";
  $("buy").disabled = !open || state.cards.length >= MAX_CARDS;
  $("quantity").max = String(Math.max(1, MAX_CARDS - state.cards.length));
  // "sale open, closes in 0:42", "sale not open yet", "sale closed", "drawing": never "closes in closed".
  const label = $("sale-state");
  if (!game) { label.replaceChildren(t("No game on sale")); return; }
  if (game.state !== "selling") {
    const words = stateWords(game.state);
    label.replaceChildren(!game.over ? t("Sale closed · {state}", { state: words })
      : words === t("game over") ? t("Game over") : t("Game over · {state}", { state: words }));
    return;
  }
  if (!game.sale) { label.replaceChildren(t("Sale on terminals not open yet")); return; }
  const now = Date.now() + state.clockOffset;
  if (now < game.sale.opens_at_ms) { label.replaceChildren(t("Sale on terminals not open yet")); return; }
  const left = Math.max(0, game.sale.closes_at_ms - now);
  if (!left) { label.replaceChildren(t("Sale closed for terminals")); return; }
  const s = Math.ceil(left / 1000);
  const countdown = document.createElement("strong"); countdown.id = "countdown";
  countdown.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  label.replaceChildren(t("Sale open, closes in"), " ", countdown);
}

function renderCards() {
  const lineWon = state.game && state.game.won && state.game.won.line !== undefined;
  $("cards").replaceChildren(...cardViews(state.cards, state.drawn, state.won, lineWon, state.announced));
}

// Cards as players read them, best first: the numbers marked as balls fall, "n to go", a
// card one number from a prize lit (and sounded once), a winning card green.
function cardViews(cards, drawnList, won, lineWon, announced) {
  const drawn = new Set(drawnList);
  const winners = new Set(won.map((w) => w.card));
  const rows = cards.map((card) => ({ card, known: card.cells.length === 27, ...toGo(card.cells, drawn) }));
  rows.sort((a, b) => b.known - a.known || a.bingo - b.bingo || a.line - b.line);
  return rows.map(({ card, known, line, bingo }) => {
    const el = document.createElement("div");
    const near = known && ((!lineWon && line === 1) || bingo === 1);
    el.className = "card" + (winners.has(card.card) ? " winner" : near ? " near" : "");
    el.dataset.card = card.card;
    const head = document.createElement("div");
    head.className = "card-head";
    head.replaceChildren(Object.assign(document.createElement("span"), { textContent: card.card }),
      Object.assign(document.createElement("span"), { textContent: money(card.price_cents)
        + (card.stake_pct < 100 ? " · " + t("stake {pct}%", { pct: card.stake_pct }) : "") }));
    if (!known) { // the central server sent no numbers: the card plays there all the same
      el.append(head, Object.assign(document.createElement("div"), { className: "unknown",
        textContent: t("In play: the central server marks this card; its numbers are not shown here") }));
      return el;
    }
    const grid = document.createElement("div");
    grid.className = "grid";
    for (let r = 0; r < 3; r++) for (let c = 0; c < 9; c++) {
      const n = card.cells[r * 9 + c];
      const cell = document.createElement("span");
      cell.className = "cell" + (n ? (drawn.has(n) ? " marked" : "") : " blank");
      cell.textContent = n || "";
      grid.appendChild(cell);
    }
    const togo = document.createElement("div");
    togo.className = "togo";
    togo.textContent = (lineWon ? "" : t("line: {n} to go", { n: line }) + " · ") + t("bingo: {n} to go", { n: bingo });
    el.append(head, grid, togo);
    if (card.code) {
      const code = document.createElement("div");
      code.className = "code"; code.textContent = t("code {code}", { code: card.code });
      el.append(code);
    }
    if (near && !announced.has(card.card + line + bingo)) { announced.add(card.card + line + bingo); signal("near"); }
    return el;
  });
}

// --- The network game ------------------------------------------------------------------
const NET_STATE_WORDS = () => ({
  selling: t("on sale"), sale_closed: t("the draw begins soon"), drawing: t("drawing"), closed: t("game over"),
  not_played: t("not played"),
});
function netStateWords(state) { return NET_STATE_WORDS()[state] || state.replace(/_/g, " "); }
function patternName(pattern) {
  const words = prizeName(pattern);
  return words[0].toUpperCase() + words.slice(1);
}

function netSaleOpen() {
  const game = state.net.game;
  if (!game || game.state !== "selling" || !game.sale) return false;
  return Date.now() + state.clockOffset < game.sale.closes_at_ms;
}

function renderNet() {
  const net = state.net;
  const game = net.game;
  $("net-panel").hidden = $("cards-title").hidden = !net.known;
  $("play").classList.toggle("net-first", Boolean(game) && !state.game);
  $("net-cards").hidden = $("net-cards-title").hidden = !net.known || !game;
  if (!net.known) return;
  $("net-title").textContent = game ? t("Network game") + " · " + netStateWords(game.state) : t("Network game");
  $("net-link").textContent = net.linkUp ? t("linked to the network") : t("network link lost");
  $("net-link").className = net.linkUp ? "net-link" : "net-link lost";
  $("net-link-lost").hidden = net.linkUp;
  $("net-link-lost").textContent = t("The hall has lost its link to the network: your network cards stay in play, "
    + "and the balls and prizes you miss come back with the link. No network card can be bought until then.");
  if (!game) {
    $("net-prizes").textContent = ""; $("net-ball-count").textContent = "";
    $("net-last-balls").replaceChildren(); $("net-winners").replaceChildren();
    renderNetSale();
    return;
  }
  const patterns = (game.patterns || []).map(patternName).join(", ");
  if (game.state === "not_played") {
    $("net-prizes").textContent = game.not_played
      ? t("Declared not played: {why}; every stake is returned", { why: game.not_played })
      : t("Declared not played; every stake is returned");
  } else if (game.prizes) {
    const prizes = (game.patterns || Object.keys(game.prizes))
      .filter((p) => p in game.prizes).map((p) => `${patternName(p)} ${money(game.prizes[p])}`);
    $("net-prizes").textContent = `${prizes.join(" · ")} · `
      + tn("{n} card in play across the halls", "{n} cards in play across the halls", game.cards_sold);
  } else {
    $("net-prizes").textContent = t("Card {price} · series {series} · prizes: {prizes}",
      { price: money(game.price_cents), series: game.series, prizes: patterns });
  }
  $("net-ball-count").textContent = net.drawn.length ? t("Ball {n}", { n: net.drawn.length }) : "";
  $("net-last-balls").replaceChildren(...net.drawn.slice(-5).reverse().map((b, i) => ball(b, i === 0)));
  const mine = new Set(net.cards.map((c) => c.card));
  $("net-winners").replaceChildren(...(game.winners || []).slice().reverse().map((w) => {
    const li = document.createElement("li");
    li.className = mine.has(w.card) ? "mine" : "";
    li.textContent = t("{prize} on ball {ball}: {card} · {hall}, terminal {terminal}", { prize: patternName(w.pattern),
      ball: w.ball_count, card: w.card, hall: w.hall, terminal: w.terminal })
      + ` · ${money(w.cents)}` + (mine.has(w.card) ? " · " + t("yours") : "");
    return li;
  }));
  $("net-held").textContent = t("{count} of {max} network cards on this terminal",
    { count: net.cards.length, max: MAX_CARDS });
  renderNetSale();
  const lineWon = game.won && game.won.line !== undefined;
  const won = [...net.won, ...(game.winners || []).filter((w) => mine.has(w.card))];
  $("net-cards").replaceChildren(...cardViews(net.cards, net.drawn, won, lineWon, net.announced));
}

function renderNetSale() {
  const net = state.net;
  if (!net.known) return;
  const game = net.game;
  const open = netSaleOpen();
  $("net-sale").className = open && net.linkUp ? "" : "closed";
  $("net-buy").disabled = !open || !net.linkUp || Boolean(state.purchases.network) || net.cards.length >= MAX_CARDS;
  $("net-quantity").max = String(Math.max(1, MAX_CARDS - net.cards.length));
  const label = $("net-sale-state");
  if (!game) { label.replaceChildren(t("No network game on sale")); return; }
  if (state.purchases.network) { label.replaceChildren(t("Purchase sent: waiting for the network's answer")); return; }
  if (game.state !== "selling") {
    label.replaceChildren(game.over ? t("Game over") : t("Sale closed · {state}", { state: netStateWords(game.state) }));
    return;
  }
  const left = Math.max(0, game.sale.closes_at_ms - (Date.now() + state.clockOffset));
  if (!left) { label.replaceChildren(t("Sale closed")); return; }
  const s = Math.ceil(left / 1000);
  const countdown = document.createElement("strong"); countdown.id = "net-countdown";
  countdown.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  label.replaceChildren(t("Sale open in every hall, closes in"), " ", countdown);
}

// --- The hall-annex game ------------------------------------------------------------------
const JOINT_STATE_WORDS = () => ({
  selling: t("on sale"), sale_closed: t("the draw begins soon"), drawing: t("drawing"), bingo_won: t("bingo won"),
  closed: t("game over"),
});
function jointStateWords(state) { return JOINT_STATE_WORDS()[state] || state.replace(/_/g, " "); }

function jointSaleOpen() {
  const game = state.joint.game;
  if (!game || game.state !== "selling" || !game.sale || game.sells_nothing) return false;
  const now = Date.now() + state.clockOffset;
  return now >= game.sale.opens_at_ms && now < game.sale.closes_at_ms;
}

function renderJoint() {
  const joint = state.joint;
  const game = joint.game;
  $("joint-panel").hidden = !joint.known || !game;
  $("joint-cards").hidden = $("joint-cards-title").hidden = !joint.known || !game;
  $("play").classList.toggle("joint-first", Boolean(game) && !state.game);
  if (!joint.known || !game) return;
  $("cards-title").hidden = false; // the hall's own cards are told apart from the joint game's
  const partner = game.here === game.main ? game.annex : game.main;
  $("joint-title").textContent = t("Game with {hall}", { hall: partner }) + " · " + jointStateWords(game.state);
  $("joint-link").textContent = joint.linkUp ? t("linked to {hall}", { hall: partner }) : t("link to {hall} lost", { hall: partner });
  $("joint-link").className = joint.linkUp ? "net-link" : "net-link lost";
  $("joint-link-lost").hidden = joint.linkUp;
  $("joint-link-lost").textContent = t("The hall has lost its link to {hall}: your cards stay in play, and the "
    + "balls and winners you miss come back with the link.", { hall: partner });
  if (game.prizes) {
    $("joint-prizes").textContent = t("Line {line} · Bingo {bingo}", { line: money(game.prizes.line), bingo: money(game.prizes.bingo) })
      + " · " + tn("{n} card in play in both rooms", "{n} cards in play in both rooms", game.cards_sold);
  } else {
    $("joint-prizes").textContent = t("Card {price} · series {series} · prizes from both rooms' sales",
      { price: money(game.price_cents), series: game.series });
  }
  $("joint-ball-count").textContent = joint.drawn.length ? t("Ball {n}", { n: joint.drawn.length }) : "";
  $("joint-last-balls").replaceChildren(...joint.drawn.slice(-5).reverse().map((b, i) => ball(b, i === 0)));
  const mine = new Set(joint.cards.map((c) => c.card));
  const here = (w) => w.hall === game.here && w.terminal && mine.has(w.card);
  $("joint-winners").replaceChildren(...(game.winners || []).slice().reverse().map((w) => {
    const li = document.createElement("li");
    li.className = here(w) ? "mine" : "";
    const where = w.hall === game.here ? t("this hall") : w.hall;
    li.textContent = (w.terminal
      ? t("{prize} on ball {ball}: {card} · {hall}, terminal {terminal}", { prize: patternName(w.pattern),
        ball: w.ball_count, card: w.card, hall: where, terminal: w.terminal })
      : t("{prize} on ball {ball}: {card} · {hall}, paper card", { prize: patternName(w.pattern),
        ball: w.ball_count, card: w.card, hall: where }))
      + (w.cents !== null ? ` · ${money(w.cents)}` : "") + (here(w) ? " · " + t("yours") : "");
    return li;
  }));
  $("joint-held").textContent = t("{count} of {max} cards on this terminal", { count: joint.cards.length, max: MAX_CARDS });
  renderJointSale();
  const lineWon = game.won && game.won.line !== undefined;
  const won = [...joint.won, ...(game.winners || []).filter(here)];
  $("joint-cards").replaceChildren(...cardViews(joint.cards, joint.drawn, won, lineWon, joint.announced));
}

function renderJointSale() {
  const joint = state.joint;
  if (!joint.known || !joint.game) return;
  const game = joint.game;
  const open = jointSaleOpen();
  $("joint-sale").className = open ? "" : "closed";
  $("joint-buy").disabled = !open || Boolean(state.purchases.joint) || joint.cards.length >= MAX_CARDS;
  $("joint-quantity").max = String(Math.max(1, MAX_CARDS - joint.cards.length));
  const label = $("joint-sale-state");
  if (game.sells_nothing) {
    label.replaceChildren(t("This room sells no card in this game: {why}", { why: game.sells_nothing })); return;
  }
  if (state.purchases.joint) { label.replaceChildren(t("Purchase sent: waiting for the hall's answer")); return; }
  if (game.state !== "selling") {
    label.replaceChildren(game.over ? t("Game over") : t("Sale closed · {state}", { state: jointStateWords(game.state) }));
    return;
  }
  if (!game.sale) { label.replaceChildren(t("Sale on terminals not open yet")); return; }
  const now = Date.now() + state.clockOffset;
  if (now < game.sale.opens_at_ms) { label.replaceChildren(t("Sale on terminals not open yet")); return; }
  const left = Math.max(0, game.sale.closes_at_ms - now);
  if (!left) { label.replaceChildren(t("Sale closed for terminals")); return; }
  const s = Math.ceil(left / 1000);
  const countdown = document.createElement("strong"); countdown.id = "joint-countdown";
  countdown.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  label.replaceChildren(t("Sale open, closes in"), " ", countdown);
}

// Light is the card's border; sound a short tone (R92.8: may light and sound on a win).
let audio = null;
function signal(kind) {
  try {
    audio = audio || new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = kind === "win" ? 880 : 520;
    gain.gain.value = 0.1;
    tone.connect(gain).connect(audio.destination);
    tone.start(); tone.stop(audio.currentTime + (kind === "win" ? 0.6 : 0.15));
  } catch (error) {
    // No sound device (a silent kiosk): the light is enough.
  }
}

// --- Input -----------------------------------------------------------------------------
function wire() {
  $("enrol-form").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("terminal", $("enrol-terminal").value.trim());
    localStorage.setItem("token", $("enrol-token").value.trim());
    location.reload();
  });
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    send("sign_in", { account: $("account").value.trim(), pin: $("pin").value });
    $("pin").value = "";
  });
  $("buy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    note("");
    const quantity = Number.parseInt($("quantity").value, 10);
    buy("hall", quantity, Number.parseInt($("stake").value, 10));
  });
  $("net-buy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    note("");
    if (!state.net.game) return;
    buy("network", Number.parseInt($("net-quantity").value, 10), Number.parseInt($("net-stake").value, 10));
    renderNetSale();
  });
  $("joint-buy-form").addEventListener("submit", (event) => {
    event.preventDefault();
    note("");
    if (!state.joint.game) return;
    buy("joint", Number.parseInt($("joint-quantity").value, 10), Number.parseInt($("joint-stake").value, 10));
    renderJointSale();
  });
  $("sign-out").addEventListener("click", () => send("sign_out"));
  $("care-open").addEventListener("click", () => { state.care = true; state.recall = false; render(); });
  $("care-close").addEventListener("click", () => { state.care = false; render(); });
  $("recall-open").addEventListener("click", () => { state.recall = true; state.care = false; send("recall"); render(); });
  $("recall-close").addEventListener("click", () => { state.recall = false; render(); });
  $("limit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const cents = centsFromEuros($("limit").value);
    if (cents === null) { note(t("Type the limit in euros, e.g. 20 or 12,50")); return; }
    if (cents > MAX_LIMIT_CENTS) { note(t("A daily limit is at most {amount}", { amount: money(MAX_LIMIT_CENTS) })); return; }
    send("set_limit", { limit_cents: cents });
    $("limit").value = "";
  });
  $("exclude-form").addEventListener("submit", (event) => {
    event.preventDefault();
    send("exclude", { days: Number.parseInt($("exclude-days").value, 10) });
    $("exclude-sure").checked = false; state.care = false;
  });
  setInterval(() => { state.warningTurn += 1; renderCare(); }, 20000);
  if ("BarcodeDetector" in window && navigator.mediaDevices) {
    $("scan").hidden = false;
    $("scan").addEventListener("click", scanQr);
  }
  setInterval(() => { renderSale(); renderNetSale(); renderJointSale(); }, 250); // the countdowns
}

// The account ticket's QR code holds the account number; read it with the camera.
async function scanQr() {
  const video = $("camera");
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
  video.srcObject = stream; video.hidden = false; await video.play();
  const detector = new BarcodeDetector({ formats: ["qr_code"] });
  const look = async () => {
    const codes = await detector.detect(video);
    const digits = codes.length ? codes[0].rawValue.replace(/\D/g, "") : "";
    if (digits.length >= 12) {
      $("account").value = digits.slice(-12);
      stream.getTracks().forEach((t) => t.stop()); video.hidden = true; $("pin").focus();
    } else {
      requestAnimationFrame(look);
    }
  };
  look();
}

// The player picks the language (kept on this terminal); the hall's is the default.
I18n.onChange(() => {
  const online = $("link").className === "online";
  $("link").textContent = online ? t("online") : t("offline");
  if (state.terminal && online) $("who").textContent = t("Terminal {terminal}", { terminal: state.terminal });
  render();
});
I18n.start(() => {
  wire();
  if (credentials()) { show("sign-in-panel"); connect(); } else { show("enrol"); }
}, { remember: true, chooser: $("language") });
