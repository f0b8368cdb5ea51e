"""Video bingo machines (R3.5.d, REGULATION.md section 9): the pure game.

* :mod:`protocol.videobingo.paytable` - the paytable of FORMATS.md section 4, parsed
  and validated;
* :mod:`protocol.videobingo.rtp` - its exact return to player (``bingo vb rtp``);
* :mod:`protocol.videobingo.play` - one play: cards dealt, balls drawn, every card paid
  the highest pattern it completes, in integer credits.

Nothing here touches a clock, a file or a random generator of its own: randomness is
passed in by the caller (the hall server's generator in production).
"""
