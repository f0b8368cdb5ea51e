// The board's voice (R92.11-12, R93.15, R90.2): each ball as it is drawn, in the order drawn,
// "Line!" and "Bingo!" as they are won, the session's last game as it opens, and the megabingo
// announced (its date, time and amount) when it is announced and at each game's sale until it
// is played.  The clips are the hall's (/voice/<lang>/...), spoken in the board's language (the
// hall's, or the page's ?lang=: I18n.language), their texts from the same catalog as the board's.
// They play one after the other: none overlaps and none is dropped; a clip that does not load
// is skipped with a console warning.  What is on the screen when the page opens is not spoken.
// A browser plays sound only after a click unless the screen allows autoplay: the button then
// says so and a click turns the sound on.
"use strict";

const BoardVoice = (() => {
  const { t } = I18n;
  const LABELS = () => ({ on: t("Sound: on"), off: t("Sound: off"), blocked: t("Click to turn the sound on") });
  // A clip that neither ends nor fails within this time is given up, so the queue never stalls.
  const STALL_MS = 20000;
  // States in which a game is over (as board.js reads them): its last-game flag is not news.
  const OVER = new Set(["cards collected", "suspended for good", "refunded", "finished by hand"]);
  const voice = {
    on: window.localStorage.getItem("board-voice") !== "off", blocked: false,
    queue: [], played: [], skipped: [], playing: null, seen: null,
  };

  function clip(name, query) {
    return `/voice/${I18n.language}/${name}.wav${query ? `?${new URLSearchParams(query)}` : ""}`;
  }

  function megabingoClip(megabingo) {
    return clip("megabingo", { date: megabingo.date, time: megabingo.time, minimum_cents: String(megabingo.minimum_cents) });
  }

  function showButton() {
    const button = document.getElementById("voice-toggle");
    if (!button) return;
    const state = voice.blocked ? "blocked" : voice.on ? "on" : "off";
    button.textContent = LABELS()[state];
    button.dataset.state = state;
    button.setAttribute("aria-pressed", String(voice.on && !voice.blocked));
  }

  function next() {
    voice.playing = null;
    if (!voice.on || voice.blocked || !voice.queue.length) return;
    const url = voice.queue.shift();
    const audio = new Audio(url);
    let done = false;
    const finish = (played, why) => {
      if (done) return;
      done = true;
      window.clearTimeout(stall);
      if (played) voice.played.push(url);
      else {
        voice.skipped.push(url);
        if (why) console.warn(`board voice: ${url} skipped: ${why}`);
      }
      next();
    };
    const stall = window.setTimeout(() => { audio.pause(); finish(false, "it did not play"); }, STALL_MS);
    voice.playing = { url, stop: () => { audio.pause(); finish(false, null); } };
    audio.addEventListener("ended", () => finish(true));
    audio.addEventListener("error", () => finish(false, `it did not load (${audio.error ? audio.error.code : "?"})`));
    audio.play().catch((error) => {
      if (error && error.name === "NotAllowedError") {
        // No autoplay without a click: the sound waits for the button, and nothing piles up meanwhile.
        voice.blocked = true;
        voice.queue.length = 0;
        showButton();
      }
      finish(false, `the browser did not play it (${error && error.name})`);
    });
  }

  function say(url) {
    if (!voice.on || voice.blocked) return;
    voice.queue.push(url);
    if (!voice.playing) next();
  }

  // What a picture says that the last one did not; the first picture only sets what was seen.
  function follow(view) {
    const game = view.game;
    const megabingo = view.megabingo ? JSON.stringify([view.megabingo.date, view.megabingo.time, view.megabingo.minimum_cents]) : null;
    const now = {
      game: game ? game.game_id : null, balls: game ? game.balls.slice() : [],
      won: new Set(game ? game.winners.map((w) => w.pattern) : []),
      lastGame: game && game.last_game ? game.game_id : null, megabingo,
    };
    const seen = voice.seen;
    voice.seen = now;
    if (seen === null) return;
    const same = seen.game === now.game;
    if (game) {
      // Balls: the ones after what was spoken; a corrected ball is spoken again from where it changed.
      let from = 0;
      if (same) while (from < seen.balls.length && from < now.balls.length && seen.balls[from] === now.balls[from]) from++;
      now.balls.slice(from).forEach((n) => say(clip(`ball-${n}`)));
      for (const pattern of ["line", "bingo"]) {
        if (now.won.has(pattern) && !(same && seen.won.has(pattern))) say(clip(pattern));
      }
      if (now.lastGame !== null && seen.lastGame !== now.lastGame && !OVER.has(game.state)) say(clip("last-game"));
    }
    const newSale = game && game.state === "selling" && !same;
    if (view.megabingo && (megabingo !== seen.megabingo || newSale)) say(megabingoClip(view.megabingo));
  }

  function toggle() {
    if (voice.blocked || !voice.on) {
      voice.on = true;
      voice.blocked = false;
    } else {
      voice.on = false;
      voice.queue.length = 0;
      if (voice.playing) voice.playing.stop();
    }
    window.localStorage.setItem("board-voice", voice.on ? "on" : "off");
    showButton();
  }

  function start() {
    const button = document.getElementById("voice-toggle");
    if (button) button.addEventListener("click", toggle);
    showButton();
  }
  I18n.onChange(showButton);  // the board's language loaded: the button in it
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  Object.defineProperty(voice, "lang", { get: () => I18n.language, enumerable: true });
  return Object.assign(voice, { follow, toggle, clip });
})();
window.boardVoice = BoardVoice;
