// The information board for hall screens (R85.5, R92.11): public and read-only.
"use strict";
Hall.buildGrid(document.getElementById("ball-grid"));

// Between games the board shows the operator's responsible-play messages in turn (R97.2).
const Board = { warnings: [], turn: 0, between: true };
const BETWEEN_GAMES = new Set(["cards collected", "suspended for good", "refunded", "closed", "finished by hand"]);

function showWarning() {
  const footer = document.getElementById("warning");
  footer.hidden = !Board.between || !Board.warnings.length;
  if (!footer.hidden) footer.textContent = Board.warnings[Board.turn % Board.warnings.length];
}
setInterval(() => { Board.turn += 1; showWarning(); }, 15000);

Hall.connect("/board/ws", (message) => {
  if (message.type !== "board") return;
  const view = message.view;
  document.getElementById("hall-name").textContent = view.hall;
  Hall.showBalls(view.game);
  Hall.showFacts(view.game);
  Board.warnings = view.warnings || [];
  Board.between = !view.game || BETWEEN_GAMES.has(view.game.state);
  showWarning();
}, (up) => Hall.linkState(up));
