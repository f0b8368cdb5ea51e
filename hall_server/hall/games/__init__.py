"""The traditional game of the hall: sale, draw, claims, prizes, pots, failures.

One game at a time, with paper cards, the way the hall's staff run it (R85):

1. the sale is announced: series, price (the series' face value) and first card, the
   card after the last one sold of that series (R82.5) - and only once the previous
   game's cards are collected (R82.4);
2. sellers record the cards they sell by numbered range (R82.5), a second series of
   the same set and face value may follow when the first runs out (R82.6); the room
   chief may put pots in play (superbingo, grand superbingo, megabingo, jackpot;
   R89-R91) and announce the session's last game (R93.15);
3. the room chief closes the sale: cards sold, collection, line and bingo prizes (with
   the carries of earlier games, R88.5) are announced, the pots' shares set aside;
4. balls are drawn from the ball source; each ball's record names the cards that have
   just completed a line or the whole card, so consoles and boards show them (R85.5,
   R92.11); a drawn ball never goes back: a blower's ball misread is corrected by the
   room chief and the table chief together, before any claim on it (R85.5);
5. the table chief verifies each claimed card by series and number (R85.6, R85.11), or
   refuses it as invalid (R82.8); a line or bingo found - a paper card verified, a
   virtual card on its ball - stops the draw until the caller closes the prize after
   asking for another card, or the wait passes with no new claim (R85.6); every card
   found on the winning ball before the close shares it (R87);
6. the prizes are paid in cash from a drawer (R78): the line once its prize is closed,
   the bingo and the pots it wins once the game is closed; what a split leaves goes to
   the same prize of the next game (R88.5);
7. the game is closed: the house's share and the tax (R98) are posted; then the cards
   are collected and the next sale may open.

On a failure (R86) the room chief suspends the game and resumes it, or suspends it for
good: the stakes are refunded when no prize was won, otherwise the room chief finishes
the game by hand, entering the balls, and the table chief verifies the claims.

The package follows :mod:`hall_server.hall.session`: its state is rebuilt by
:meth:`GamesModule.apply` from journal records only, and each command's ``decide``
works on a fork of that state, so a refused command (or a commit that fails) leaves
nothing changed.  The game's lifecycle is :class:`protocol.game.TraditionalGame`; the
paper numbering :class:`protocol.sale.GameSale`; claims :func:`protocol.claims.check_claim`;
the per-ball detection :class:`protocol.wins.WinDetector`; every money figure - the
close's shares, the splits and carries, the pots the bingo wins, the operator's
contributions, the tax and the refunds - :mod:`protocol.settlement`, the computation
``bingo replay`` runs too.  The commands, roles and records are listed in
``docs/hall-game.md``.

One concern a module:

==============  =======================================================================
``common``      errors, ledger accounts, the records of events and postings, the shared queries
``state``       the games as the journal tells them; the forks decisions work on
``sale``        announcing, selling paper cards, a second series, closing the sale
``pots``        pots in play, the last game, the megabingo, operator contributions
``draw``        drawing, correcting and entering balls; virtual cards' wins
``claims``      the table chief's verification or refusal of a claimed card; the claim pause
``payments``    what is due, and paying it in cash or to players' accounts
``closing``     the game's end, its house share and tax, the cards' collection
``failures``    suspending, resuming, giving up: refund or finish by hand
``projection``  records in, state out; the snapshot
``module``      :class:`GamesModule`: the parts above as one module of the command loop
==============  =======================================================================
"""

from hall_server.hall.games.common import BallSourceFactory, DeferredBallSource, GameModuleError, recorded
from hall_server.hall.games.module import PERMISSIONS, GamesModule
from hall_server.hall.games.state import Game, GamesState, Settlement, _fork, feed, fork_to_sell

__all__ = [
    "BallSourceFactory",
    "DeferredBallSource",
    "Game",
    "GameModuleError",
    "GamesModule",
    "GamesState",
    "PERMISSIONS",
    "Settlement",
    "_fork",
    "fork_to_sell",
    "feed",
    "recorded",
]
