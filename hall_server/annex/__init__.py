"""The hall's side of the hall-annex game (R3.5.b): one traditional game with a partner hall.

* :mod:`~hall_server.annex.module` - the joint game at this hall on the command core:
  the cards this hall may sell declared to the partner and checked against its (R82.6),
  sales, the main hall's balls, claims, the virtual cards' wins at each ball, the joint
  pool, the payments and what is owed to the partner, folded from the journal;
* :mod:`~hall_server.annex.terminals` - the joint game's virtual cards on this room's
  terminals: the sale window, purchases, the cards each player holds;
* :mod:`~hall_server.annex.link` - the stream to and from the partner over the link to
  the central server (``annex_post``, ``annex_fetch``, ``annex_delivered``).
"""
