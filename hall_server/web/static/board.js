// The information board for hall screens (R85.5, R92.11): public and read-only.  It shows
// what the hall committed: the sale of the next game with the terminals' countdown, the
// draw, a LINE / BINGO banner with the winning cards and what each is paid, and between
// games the next game's screen with the last game's result and the operator's
// responsible-play messages (R97.2).  A megabingo announced shows on every screen with its
// date, time and amount until it is played (R90.2).  When the hall takes part in one, the
// network game played across the halls: its sale time, balls, prizes and its winners with
// the hall and the terminal where each card was bought (R92.1, R92.11); the whole screen
// when it is the only game in play, half of it beside the hall's game.  Nothing is cut: a
// list shows what its box holds, then how many more (docs/console.md).
"use strict";

const $ = (id) => document.getElementById(id);
const { t, tn, money } = I18n;  // the texts in the board's language (?lang=, else the hall's), CLDR money
const Board = { view: null, offsetMs: 0, warnings: [], turn: 0 };
// States in which the game is over and its cards are put away: the board waits for the next one.
const OVER = new Set(["cards collected", "suspended for good", "refunded", "finished by hand"]);
const PRIZE_NAMES = {
  get line() { return t("Line"); }, get bingo() { return t("Bingo"); }, get jackpot() { return t("Jackpot"); },
  get superbingo() { return t("Superbingo"); }, get grand_superbingo() { return t("Grand superbingo"); },
  get megabingo() { return t("Megabingo"); }, get superbingo_last_game() { return t("Superbingo fund"); },
};
// The game's state as the board shows it, in words.
const GAME_STATES = {
  get selling() { return t("cards on sale"); }, get sale_closed() { return t("sale closed"); },
  get drawing() { return t("drawing"); }, get suspended() { return t("suspended"); },
  get "suspended for good"() { return t("called off"); }, get "cards collected"() { return t("cards collected"); },
  get closed() { return t("game over"); }, get "finished by hand"() { return t("finished by hand"); },
  get refunded() { return t("refunded"); },
};
function stateName(state) { return GAME_STATES[state] || String(state).replace(/_/g, " "); }
// A paper card as players read it: "series 1001 card 17".
function paperCard(card) { return t("series {series} card {card}", { series: card.series, card: card.card_number }); }

for (let n = 1; n <= 90; n++) {
  const cell = Hall.el("span", n, "cell");
  cell.id = `ball-${n}`;
  $("ball-grid").appendChild(cell);
  const netCell = Hall.el("span", n, "cell");
  netCell.id = `net-ball-${n}`;
  $("net-grid").appendChild(netCell);
}
// Whether ``box`` shows all it holds: a hall screen cannot scroll, and nothing may be cut.
function fits(box) {
  return box.scrollHeight <= box.clientHeight + 1 && box.scrollWidth <= box.clientWidth + 1;
}

function moreCards(count) {
  return Hall.el("li", tn("and {n} more winning card", "and {n} more winning cards", count), "more");
}

// As many of ``items`` in ``list`` as ``box`` holds, then how many more there are; ``after``
// (the pots won) always shown.  Every screen size gets what it has room for.
function fitInto(box, list, items, after = [], total = items.length) {
  for (let shown = items.length; shown >= 0; shown--) {
    const rest = total - shown;
    list.replaceChildren(...items.slice(0, shown), ...(rest ? [moreCards(rest)] : []), ...after);
    if (fits(box)) return;
  }
}

function put(id, text) {
  const el = $(id);
  el.textContent = text;
  if (el.classList.contains("one-line")) fitLine(el);
}

// A one-line text longer than its box in this language (board.css: .one-line): a step smaller, never wrapped.
function fitLine(el) {
  el.classList.remove("fit-1", "fit-2", "fit-3", "fit-4");
  for (let step = 1; step <= 4 && !fits(el); step++) el.classList.add(`fit-${step}`);
}

function fill(id, items) {
  $(id).replaceChildren(...items);
}

// A card as players read it: "1001-17" for paper, "V1-17" for a terminal's virtual card.
function cardName(game, card) {
  if (card.series === null) return card.label;
  return `${game.virtual_series[String(card.series)] || card.series}-${card.card_number}`;
}

function isVirtual(game, card) {
  return card.series !== null && String(card.series) in game.virtual_series;
}

// What each winning card of ``prize`` was paid, from the prize_paid records, by card name,
// and what the split left unpaid for stakes below 100% (carried to the next game, R88.5).
function paidFor(game, prize) {
  const paid = game.paid.find((p) => p.prize === prize);
  if (!paid) return null;
  return { amount: paid.amount_cents, carry: paid.carry_cents || 0,
    cards: new Map(paid.payments.map((c) => [cardName(game, c), c.cents])) };
}

// A card's stake beside its share: a share is the prize split by card, scaled by the card's stake (R88.4).
function stakeText(card) {
  return t("stake {pct}%", { pct: card.stake_pct === undefined ? 100 : card.stake_pct });
}

// The ball count at which a prize was won: a count of balls, not a ball's number.
function afterBalls(count) {
  return tn("after {n} ball", "after {n} balls", count);
}

// What of a prize went to no card, and where it goes: the next game's same prize (R88.5).
function carriedText(pattern, cents) {
  if (!cents) return "";
  return " · " + (pattern === "line" ? t("{amount} to the next game's line", { amount: money(cents) })
    : t("{amount} to the next game's bingo", { amount: money(cents) }));
}

function potsShown(pots) {
  const shown = [];
  if (pots.jackpot_threshold) shown.push(t("Jackpot within {balls} balls: {amount}", { balls: pots.jackpot_threshold, amount: money(pots.jackpot_cents) }));
  if (pots.superbingo_limit) shown.push(t("Superbingo within {balls} balls: {amount}", { balls: pots.superbingo_limit, amount: money(pots.superbingo_cents) }));
  if (pots.grand_superbingo_limit) {
    shown.push(t("Grand superbingo within {balls} balls: {amount}", { balls: pots.grand_superbingo_limit, amount: money(pots.grand_superbingo_cents) }));
  }
  if (pots.megabingo_cents !== null && pots.megabingo_cents !== undefined) {
    shown.push(t("Megabingo: its whole fund, at least {amount}", { amount: money(pots.megabingo_cents) }));
  }
  return shown;
}

// The jackpot's reserve added to this game's prizes, told to the players before the draw (R91.7).
function boostShown(boost) {
  if (!boost || !(boost.line_cents || boost.bingo_cents)) return [];
  const parts = [];
  if (boost.line_cents) parts.push(t("{amount} more for the line", { amount: money(boost.line_cents) }));
  if (boost.bingo_cents) parts.push(t("{amount} more for the bingo", { amount: money(boost.bingo_cents) }));
  return [t("From the jackpot reserve: {amounts}", { amounts: parts.join(", ") })];
}

function potItems(game) {
  const shown = [...boostShown(game.reserve_boost), ...potsShown(game.pots || {})];
  return (shown.length ? shown : [t("No pot in this game")]).map((text) => Hall.el("li", text));
}

// One prize as won: the cards, the ball, and the amounts once it is paid.
function prizeLines(game, pattern) {
  const cards = game.winners.filter((w) => w.pattern === pattern);
  if (!cards.length) return null;
  const paid = paidFor(game, pattern);
  const total = paid ? paid.amount : game.prizes[pattern];
  const items = cards.map((card) => {
    const name = cardName(game, card);
    const li = Hall.el("li", "", isVirtual(game, card) ? "virtual" : "paper");
    li.append(Hall.el("span", name, "card-name"), Hall.el("span", isVirtual(game, card) ? t("terminal") : t("paper"), "card-kind"),
      Hall.el("span", stakeText(card), "card-stake card-kind"));
    const cents = paid ? paid.cards.get(name) : undefined;
    li.append(Hall.el("span", cents === undefined ? "" : money(cents), "card-amount"));
    return li;
  });
  const each = (cards.length > 1 ? " " + t("shared by {n} cards", { n: cards.length }) : "") + (paid ? carriedText(pattern, paid.carry) : "");
  return { ball: cards[0].ball_count, total, each, items, paid: Boolean(paid) };
}

function potsWon(game) {
  return game.paid.filter((p) => !(p.prize in { line: 1, bingo: 1 }) && p.amount_cents > 0)
    .map((p) => Hall.el("li", t("{prize} won: {amount}", { prize: PRIZE_NAMES[p.prize] || p.prize, amount: money(p.amount_cents) }), "pot-won"));
}

function showBanner(game) {
  const balls = game.balls.length;
  const bingo = prizeLines(game, "bingo");
  const line = prizeLines(game, "line");
  const pause = game.pause;  // a prize found and still open: "Line! Another card?" (R85.6)
  // The bingo stays up until the cards are collected; the line while it is open, then until the next ball.
  const lineShown = line && ((pause && pause.patterns.includes("line")) || line.ball === balls || (pause && pause.balls_drawn === balls));
  const pattern = bingo ? "bingo" : lineShown ? "line" : null;
  const banner = $("banner");
  banner.hidden = !pattern;
  if (!pattern) return;
  const won = pattern === "bingo" ? bingo : line;
  const open = Boolean(pause && pause.patterns.includes(pattern));
  banner.className = `banner ${pattern}${open ? " open" : ""}`;
  put("banner-title", open ? (pattern === "bingo" ? t("Bingo! Another card?") : t("Line! Another card?")) : PRIZE_NAMES[pattern].toUpperCase());
  put("banner-detail", (won.paid ? t("{after} · paid {amount}", { after: afterBalls(won.ball), amount: money(won.total) })
    : t("{after} · prize {amount}", { after: afterBalls(won.ball), amount: money(won.total) })) + won.each
    + (open ? " · " + t("call now: the prize closes soon") : ""));
  const pots = pattern === "bingo" ? potsWon(game) : [];
  banner.classList.toggle("many", won.items.length + pots.length > 3);
  fitInto(banner, $("banner-cards"), won.items, pots);
}

function showDraw(game) {
  const balls = game.balls;
  const drawn = new Set(balls);
  const last = balls.length ? balls[balls.length - 1] : null;
  for (let n = 1; n <= 90; n++) {
    const cell = $(`ball-${n}`);
    cell.classList.toggle("drawn", drawn.has(n));
    cell.classList.toggle("last", n === last);
  }
  put("last-ball", last === null ? "" : String(last));
  $("last-ball").classList.toggle("empty", last === null);
  put("ball-count", balls.length ? t("Ball {n} of 90", { n: balls.length }) : t("No ball drawn yet"));
  fill("recent-balls", balls.slice(-6, -1).reverse().map((b) => Hall.el("li", b)));
  put("cards-sold", game.cards_sold);
  put("price", money(game.price_cents));
  put("line-prize", "line" in game.prizes ? money(game.prizes.line) : "-");
  put("bingo-prize", "bingo" in game.prizes ? money(game.prizes.bingo) : "-");
  fill("pots", potItems(game));
  const winners = game.winners.slice().reverse().map((w) => {
    const paid = paidFor(game, w.pattern);
    const cents = paid ? paid.cards.get(cardName(game, w)) : undefined;
    const card = isVirtual(game, w) ? t("{card} (terminal)", { card: cardName(game, w) }) : paperCard(w);
    const text = t("{prize} {after}: {card}", { prize: (PRIZE_NAMES[w.pattern] || w.pattern).toUpperCase(), after: afterBalls(w.ball_count), card }) +
      (cents === undefined ? "" : ` · ${money(cents)} · ${stakeText(w)}`);
    return Hall.el("li", text, w.pattern);
  });
  // The facts in their usual size if they fit with at least "and N more winning cards", else in the smaller one.
  const facts = $("draw-facts");
  facts.classList.remove("tight");
  fill("winners", winners.length ? [moreCards(winners.length)] : []);
  facts.classList.toggle("tight", !fits(facts));
  fitInto(facts, $("winners"), winners);
  showBanner(game);
}

function countdownText(game) {
  const sale = game.terminal_sale;
  if (!sale) return t("Paper cards at the tables; terminals' sale not open yet");
  const now = Date.now() + Board.offsetMs;
  if (now < sale.opens_at_ms) return t("Terminals' sale opens soon");
  const left = sale.closes_at_ms - now;
  if (left <= 0) return t("Terminals' sale closed · paper cards at the tables");
  const s = Math.ceil(left / 1000);
  return t("Terminals' sale closes in {time}", { time: `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` });
}

function showSale(game) {
  put("sale-game", game.number ? t("Game {number}", { number: game.number }) : t("Next game"));
  const series = game.series.map((s) => t("series {series} from card {card}", { series: s.series, card: s.first_card })).join(", ");
  put("sale-price", t("{price} a card", { price: money(game.price_cents) }) + " · " + series);
  put("sale-countdown", countdownText(game));
  put("sale-sold", tn("{n} card sold", "{n} cards sold", game.cards_sold));
  fill("sale-pots", potItems(game));
  $("sale-last-game").hidden = !game.last_game;
}

function showNext(view) {
  const game = view.game;
  if (!view.session_open) {
    put("next-heading", view.games_played ? t("The session is over") : t("Welcome"));
    put("next-when", view.games_played ? t("Thank you for playing") : t("The session opens soon"));
  } else if (game && game.last_game) {
    put("next-heading", t("The last game is over"));
    put("next-when", t("That was the last game of the session"));
  } else {
    put("next-heading", t("Next game"));
    put("next-when", t("The sale opens in a moment"));
  }
  $("previous").hidden = !game;
  if (!game) return;
  put("previous-title", (game.number ? t("Game {number}", { number: game.number }) : t("The last game")) + ": " + stateName(game.state));
  const rows = [];
  for (const pattern of ["line", "bingo"]) {
    const won = prizeLines(game, pattern);
    if (!won) continue;
    const head = Hall.el("li", "", `result ${pattern}`);
    head.append(Hall.el("span", PRIZE_NAMES[pattern].toUpperCase(), "result-name"),
      Hall.el("span", `${afterBalls(won.ball)} · ${money(won.total)}${won.each}`, "result-detail"));
    const cards = Hall.el("ul", "", "result-cards");
    cards.append(...won.items);
    head.append(cards);
    rows.push(head);
  }
  rows.push(...potsWon(game));
  fill("previous-prizes", rows.length ? rows : [Hall.el("li", t("No prize was won"), "result")]);
  // Too many winning cards for the screen: the longest list gives up cards first, "and N more" said.
  const lists = [...$("previous-prizes").querySelectorAll(".result-cards")]
    .map((ul) => ({ ul, items: [...ul.children], shown: ul.children.length }));
  while (!fits($("next-screen")) && lists.some((l) => l.shown > 0)) {
    const longest = lists.reduce((a, b) => (b.shown > a.shown ? b : a));
    longest.shown -= 1;
    const rest = longest.items.length - longest.shown;
    longest.ul.replaceChildren(...longest.items.slice(0, longest.shown), moreCards(rest));
  }
}

function modeOf(view) {
  const game = view.game;
  if (!game || OVER.has(game.state)) return "between";
  return game.state === "selling" ? "sale" : "draw";
}

// --- The network game ------------------------------------------------------------------
const NET_STATES = {
  get selling() { return t("cards on sale at the terminals of every hall"); },
  get sale_closed() { return t("sale closed · the draw begins soon"); }, get drawing() { return t("drawing"); },
  get closed() { return t("game over"); }, get not_played() { return t("declared not played · every stake returned"); },
};
function patternName(pattern) {
  const words = String(pattern).replace(/_/g, " ");
  return PRIZE_NAMES[pattern] || words[0].toUpperCase() + words.slice(1);
}

function netCountdown(net) {
  if (net.state !== "selling" || net.closes_at_ms === null) return "";
  const left = net.closes_at_ms - (Date.now() + Board.offsetMs);
  if (left <= 0) return t("Sale closed");
  const s = Math.ceil(left / 1000);
  return t("Sale closes in {time}", { time: `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` });
}

// The hall-annex game (R3.5.b) uses the same screen: the main hall's balls, both rooms' winners.
const ANNEX_STATES = {
  get selling() { return t("paper cards on sale in both rooms"); },
  get sale_closed() { return t("sale closed in both rooms · the draw begins soon"); },
  get drawing() { return t("drawing in the main hall"); }, get closed() { return t("game over"); },
};

function annexState(net) {
  if (!net.link_up) return t("link to the partner hall lost · the balls follow when it is back");
  return ANNEX_STATES[net.state] || net.state.replace(/_/g, " ");
}

// The network game is in play from its sale to its last ball; over, it stays beside the hall's screen.
const NET_IN_PLAY = new Set(["selling", "sale_closed", "drawing"]);

// Where the network game goes: "" (none), "full" (the only game in play: the whole screen) or
// "side" (beside the hall's game in play, or over and kept beside the hall's screen).
function netPlace(view, mode) {
  const net = view.network || view.annex;
  if (!net) return "";
  return mode === "between" && NET_IN_PLAY.has(net.state) ? "full" : "side";
}

function showNetwork(view) {
  const net = view.network || view.annex;
  $("net-strip").hidden = !net;
  if (!net) return;
  const annex = net.kind === "annex";
  $("net-strip").classList.toggle("annex-game", annex);
  put("net-heading", annex ? t("Hall-annex game · {main} and {annex}", { main: net.main, annex: net.annex }) : t("Network game"));
  put("net-winners-label", annex ? t("Winners in both rooms") : t("Network winners"));
  put("net-state", annex ? annexState(net)
    : t("series {series}", { series: net.series }) + " · " + (NET_STATES[net.state] || net.state.replace(/_/g, " ")));
  put("net-countdown", netCountdown(net));
  const balls = net.balls;
  put("net-last-ball", net.last_ball === null ? "" : String(net.last_ball));
  $("net-last-ball").classList.toggle("empty", net.last_ball === null);
  const drawn = new Set(balls);
  for (let n = 1; n <= 90; n++) {
    const cell = $(`net-ball-${n}`);
    cell.classList.toggle("drawn", drawn.has(n));
    cell.classList.toggle("last", n === net.last_ball);
  }
  put("net-ball-count", balls.length ? t("Ball {n} of 90", { n: balls.length }) : t("No ball drawn yet"));
  fill("net-recent", balls.slice(-6, -1).reverse().map((b) => Hall.el("li", b)));
  const facts = [[t("Card price"), money(net.price_cents)]];
  if (net.cards_sold !== null) facts.push([t("Cards in play"), String(net.cards_sold)]);
  const patterns = net.patterns || Object.keys(net.prizes);
  for (const pattern of patterns) {
    facts.push([t("{prize} prize", { prize: patternName(pattern) }), pattern in net.prizes ? money(net.prizes[pattern]) : t("at the close")]);
  }
  fill("net-facts", facts.flatMap(([name, value]) => [Hall.el("dt", name), Hall.el("dd", value)]));
  const latest = net.winners.slice().reverse();
  const items = latest.map((w) => {
    const li = Hall.el("li", "", w.pattern);
    const prize = Hall.el("span", `${patternName(w.pattern).toUpperCase()} · ${afterBalls(w.ball_count)}`, "net-winner-prize");
    if (w.cents !== null) prize.append(" · ", Hall.el("span", money(w.cents), "amount"));  // an amount never broken
    li.append(Hall.el("span", w.card, "net-winner-card"), prize,
      Hall.el("span", w.terminal === null ? w.hall : t("{hall} · terminal {terminal}", { hall: w.hall, terminal: w.terminal }), "net-winner-where"));
    return li;
  });
  if (items.length) fitInto($("net-facts-box"), $("net-winners"), items, [], Math.max(net.winner_count, items.length));
  else fill("net-winners", [Hall.el("li", t("No winner yet"), "none")]);
}

function render() {
  const view = Board.view;
  if (!view) return;
  put("hall-name", view.hall);
  const mode = modeOf(view);
  const place = netPlace(view, mode);
  document.body.dataset.mode = mode;
  document.body.dataset.net = place;
  // Which screens show, and the strips, first: each screen then fits what it lists in the room it has.
  $("draw-screen").hidden = mode !== "draw";
  $("sale-screen").hidden = mode !== "sale";
  // No "Welcome" nor "Next game" while a network game is the game in play: it has the screen.
  $("next-screen").hidden = mode !== "between" || place === "full";
  $("net-strip").hidden = !place;
  showMegabingo(view);
  showWarning(mode);
  showNetwork(view);
  const game = view.game;
  put("game-title", game && mode !== "between" ? (game.number ? t("Game {number}", { number: game.number }) : t("Game")) : "");
  put("game-state", game && mode !== "between"
    ? stateName(game.state) + (game.last_game ? " · " + t("last game of the session") : "")
    : (view.session_open && place !== "full" ? t("between games") : ""));
  if (mode === "draw") showDraw(game);
  else if (mode === "sale") showSale(game);
  else showNext(view);
  document.querySelectorAll(".one-line").forEach(fitLine);  // the screens as they now stand
}

// The megabingo announced, from its announcement to its game, on every screen (R90.2).
function showMegabingo(view) {
  const strip = $("megabingo");
  strip.hidden = !view.megabingo;
  const m = view.megabingo;
  put("megabingo", m ? t("Megabingo on {date} at {time}: {fund}, the whole fund, at least {minimum}",
    { date: I18n.day(m.date), time: m.time, fund: money(m.fund_cents), minimum: money(m.minimum_cents) }) : "");
}

// The operator's responsible-play messages, in turn, whenever no ball is being drawn (R97.2).
function showWarning(mode) {
  const footer = $("warning");
  const net = Board.view && (Board.view.network || Board.view.annex);
  footer.hidden = mode === "draw" || (net && net.state === "drawing") || !Board.warnings.length;
  // A default warning is a text of the catalog, said in the board's language; the operator's own reads as written.
  if (!footer.hidden) footer.textContent = t(Board.warnings[Board.turn % Board.warnings.length]);
}

setInterval(() => { Board.turn += 1; render(); }, 15000);  // the next message, and the screens fitted around it
window.addEventListener("resize", render);
setInterval(() => {
  if (Board.view && modeOf(Board.view) === "sale") put("sale-countdown", countdownText(Board.view.game));
  if (Board.view && Board.view.network) put("net-countdown", netCountdown(Board.view.network));
}, 250);

I18n.start(() => Hall.connect("/board/ws", (message) => {
  if (message.type !== "board") return;
  if (typeof message.time_ms === "number") Board.offsetMs = message.time_ms - Date.now();
  Board.view = message.view;
  Board.warnings = message.view.warnings || [];
  render();
  BoardVoice.follow(message.view);  // voice.js: what is new in the picture, spoken (R92.11-12)
}, (up) => { Hall.linkState(up); put("link", up ? t("live") : t("reconnecting")); }));
