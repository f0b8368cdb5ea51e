"""The hall's side of the hall-annex game (R3.5.b): one traditional game with a partner hall.

* :mod:`~hall_server.annex.module` - the joint game at this hall on the command core:
  sales, the main hall's balls, claims, the joint pool, the payments and what is owed
  to the partner, folded from the journal;
* :mod:`~hall_server.annex.link` - the stream to and from the partner over the link to
  the central server (``annex_post``, ``annex_fetch``, ``annex_delivered``).
"""
