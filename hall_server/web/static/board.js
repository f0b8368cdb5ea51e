// The information board for hall screens (R85.5, R92.11): public and read-only.
"use strict";
Hall.buildGrid(document.getElementById("ball-grid"));
Hall.connect("/board/ws", (message) => {
  if (message.type !== "board") return;
  const view = message.view;
  document.getElementById("hall-name").textContent = view.hall;
  Hall.showBalls(view.game);
  Hall.showFacts(view.game);
}, (up) => Hall.linkState(up));
