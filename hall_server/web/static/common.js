// Shared by the console and the board: rendering of the ball display from a picture
// the server sends.  The pages hold no rules: they show what was committed.
"use strict";
const Hall = {
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
  buildGrid(container) {
    container.textContent = "";
    for (let n = 1; n <= 90; n++) {
      const cell = Hall.el("span", n, "cell");
      cell.id = `ball-${n}`;
      container.appendChild(cell);
    }
  },
  cardLabel(card) {
    return `series ${card.series} card ${card.card_number}`;
  },
  showBalls(game) {
    const balls = game ? game.balls : [];
    const drawn = new Set(balls);
    for (let n = 1; n <= 90; n++) {
      const cell = document.getElementById(`ball-${n}`);
      if (cell) cell.classList.toggle("drawn", drawn.has(n));
    }
    const last = balls.length ? balls[balls.length - 1] : null;
    const lastCell = last && document.getElementById(`ball-${last}`);
    document.querySelectorAll(".cell.last").forEach((c) => c.classList.remove("last"));
    if (lastCell) lastCell.classList.add("last");
    const lastBall = document.getElementById("last-ball");
    lastBall.textContent = last === null ? "" : String(last);
    lastBall.classList.toggle("empty", last === null);
    document.getElementById("ball-count").textContent = balls.length ? `ball ${balls.length} of 90` : "no ball drawn yet";
    const recent = document.getElementById("recent-balls");
    recent.textContent = "";
    balls.slice(-6, -1).reverse().forEach((b) => recent.appendChild(Hall.el("li", b)));
  },
  // The pots the room chief put in play for the game, as its pots_announced record names them.
  // The megabingo announced (R90.2): its date, time and amount, the whole fund being paid.
  megabingoText(megabingo) {
    if (!megabingo) return "";
    return `Megabingo on ${megabingo.date} at ${megabingo.time}: ${Hall.money(megabingo.fund_cents)}, the whole fund, ` +
      `at least ${Hall.money(megabingo.minimum_cents)}`;
  },
  potsText(pots) {
    const shown = [];
    if (pots.jackpot_threshold) shown.push(`jackpot within ${pots.jackpot_threshold} balls: ${Hall.money(pots.jackpot_cents)}`);
    if (pots.superbingo_limit) shown.push(`superbingo within ${pots.superbingo_limit} balls: ${Hall.money(pots.superbingo_cents)}`);
    if (pots.grand_superbingo_limit) {
      shown.push(`grand superbingo within ${pots.grand_superbingo_limit} balls: ${Hall.money(pots.grand_superbingo_cents)}`);
    }
    if (pots.megabingo_cents !== null && pots.megabingo_cents !== undefined) shown.push(`megabingo: its whole fund, at least ${Hall.money(pots.megabingo_cents)}`);
    return shown.length ? shown.join("; ") : "none";
  },
  showFacts(game) {
    const set = (id, text) => { document.getElementById(id).textContent = text; };
    set("cards-sold", game ? game.cards_sold : "-");
    set("price", game ? Hall.money(game.price_cents) : "-");
    set("line-prize", game && "line" in game.prizes ? Hall.money(game.prizes.line) : "-");
    set("bingo-prize", game && "bingo" in game.prizes ? Hall.money(game.prizes.bingo) : "-");
    set("pots", game ? Hall.potsText(game.pots) : "-");
    set("game-state", game ? `game ${game.game_id}: ${game.state}${game.last_game ? " (last game of the session)" : ""}` : "no game");
    const winners = document.getElementById("winners");
    winners.textContent = "";
    (game ? game.winners : []).forEach((w) => {
      winners.appendChild(Hall.el("li", `${w.pattern.toUpperCase()} on ball ${w.ball_count}: ${Hall.cardLabel(w)}`));
    });
  },
  // A socket that reconnects with a growing pause; each (re)connect brings a snapshot.
  connect(path, onMessage, onState) {
    let pause = 500;
    const open = () => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const socket = new WebSocket(`${scheme}//${location.host}${path}`);
      socket.onopen = () => { pause = 500; onState(true, socket); };
      socket.onmessage = (event) => onMessage(JSON.parse(event.data));
      socket.onclose = () => {
        onState(false, null);
        setTimeout(open, pause);
        pause = Math.min(pause * 2, 8000);
      };
    };
    open();
  },
  linkState(up) {
    const link = document.getElementById("link");
    link.textContent = up ? "live" : "reconnecting";
    link.classList.toggle("offline", !up);
  },
};
