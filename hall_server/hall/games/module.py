"""The hall's traditional game as one module of the command loop: its roles, its commands."""

from __future__ import annotations

from typing import Callable

import numpy as np
from twisted.internet.defer import DeferredLock

from hall_server.hall.catalog import CardCatalog
from hall_server.hall.games.claims import ClaimCommands
from hall_server.hall.games.closing import ClosingCommands
from hall_server.hall.games.common import BallSourceFactory, CashDesks, DeferredBallSource
from hall_server.hall.games.draw import DrawCommands
from hall_server.hall.games.failures import FailureCommands
from hall_server.hall.games.payments import PaymentCommands
from hall_server.hall.games.pots import PotCommands
from hall_server.hall.games.projection import Projection
from hall_server.hall.games.sale import SaleCommands
from hall_server.hall.games.state import GamesState
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.roles import Role
from hall_server.hall.session import SessionModule
from protocol.balls import BallSource
from protocol.errors import N_
from protocol.settlement import PrizeRules
from server_kit.journal.projection import ProjectedState
from server_kit.core import CommandCore, CommandSpec

R = Role
#: The wait with no new claim after which a prize found closes by itself, by default (R85.6).
DEFAULT_PRIZE_WAIT_S = 10
PERMISSIONS = {
    "announce_sale": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "sell_cards": {R.SELLER_CALLER},
    "open_second_series": {R.SELLER_CALLER, R.ROOM_CHIEF},
    "announce_pots": {R.ROOM_CHIEF},
    "announce_last_game": {R.ROOM_CHIEF},
    "announce_reserve_boost": {R.ROOM_CHIEF},
    "announce_megabingo": {R.ROOM_CHIEF},
    "contribute_to_pot": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "recover_jackpot_contribution": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "close_sale": {R.ROOM_CHIEF},
    "draw_ball": {R.SELLER_CALLER},
    "correct_ball": {R.ROOM_CHIEF, R.TABLE_CHIEF},
    "cancel_ball_correction": {R.ROOM_CHIEF, R.TABLE_CHIEF},
    "verify_claim": {R.TABLE_CHIEF},
    "refuse_card": {R.TABLE_CHIEF},
    "close_prize": {R.SELLER_CALLER, R.SYSTEM},
    "pay_prizes": {R.CASHIER, R.ROOM_CHIEF},
    "identify_paper_winner": {R.CASHIER, R.ROOM_CHIEF},
    "close_game": {R.ROOM_CHIEF},
    "suspend_game": {R.ROOM_CHIEF, R.SYSTEM},
    "resume_game": {R.ROOM_CHIEF},
    "suspend_game_for_good": {R.ROOM_CHIEF},
    "enter_ball": {R.ROOM_CHIEF},
    "finish_game": {R.ROOM_CHIEF},
    "collect_cards": {R.ROOM_CHIEF, R.SELLER_CALLER},
}


class GamesModule(SaleCommands, PotCommands, DrawCommands, ClaimCommands, PaymentCommands, ClosingCommands,
                  FailureCommands, Projection, ProjectedState):
    """The hall's traditional game: commands in, journal records out, state from the journal."""

    def __init__(
        self,
        core: CommandCore,
        session: SessionModule,
        ledger: LedgerModule,
        catalog: CardCatalog,
        ball_sources: BallSourceFactory,
        rules: PrizeRules,
        desks: CashDesks | None = None,
        prize_wait_s: int = DEFAULT_PRIZE_WAIT_S,
    ) -> None:
        # A configuration that could pay out less than 70% never starts a game (R88.1).
        rules.check()
        self.core = core
        self.session = session
        self.ledger = ledger
        self.catalog = catalog
        self.ball_sources = ball_sources
        self.rules = rules
        #: The cashier's desks: prizes on paper cards are paid in cash at an open one (R78).
        self.desks = desks
        #: The wait with no new claim after which a prize found closes by itself (R85.6).
        self.prize_wait_s = prize_wait_s
        self._wait_call = None
        self._wait_mark = None
        self.state = GamesState()
        self._source: BallSource | DeferredBallSource | None = None
        # One draw at a time: a draw asked while a ball is being taken waits its turn.
        self._draw_turn = DeferredLock()
        #: Virtual series in play by their number in the game (R82.9): card k is row k-1.
        self.virtual_series: dict[int, np.ndarray] = {}
        #: Other reasons a sale may not open now, each giving the refusal or None: another game of
        #: this room whose cards are not collected yet (the hall-annex game's, R82.4).
        self.sale_checks: list[Callable[[], str | None]] = []
        #: Why a suspended game may not resume now, told by the modules that know (the session's
        #: verification after a restart from a crash, R92.5e): each returns the reason, or None.
        self.resume_checks: list[Callable[[], str | None]] = []
        session.closing_checks.append(self.closing_refusal)
        if desks is not None:
            desks.drawer_holds.append(self.stakes_in_drawer)
        core.add_module(self)
        core.allow(PERMISSIONS)
        core.after_commit.append(self.arm_prize_wait)
        for name, handler, params, summary in (
            ("announce_sale", self.announce_sale, {"series": int},
             N_("open a game's sale on a series: its price and first card")),
            ("sell_cards", self.sell_cards, {"series": int, "first": int, "last": int},
             N_("record paper cards first..last of a series sold by this seller")),
            ("open_second_series", self.open_second_series, {"series": int},
             N_("sell a second series of the same set once the first runs out")),
            ("announce_pots", self.announce_pots,
             {"superbingo_limit": int, "grand_superbingo_limit": int, "jackpot_threshold": int, "megabingo": bool},
             N_("put pots in play for this game (0: not in play)")),
            ("announce_last_game", self.announce_last_game, {}, N_("announce this game as the session's last")),
            ("announce_reserve_boost", self.announce_reserve_boost, {"line_cents": int, "bingo_cents": int},
             N_("tell the players the jackpot's reserve adds to this game's line and bingo (R91.7)")),
            ("announce_megabingo", self.announce_megabingo, {"date": str, "time": str},
             N_("announce a megabingo at least 10 days ahead: it pays its whole fund, at least the fund now")),
            ("contribute_to_pot", self.contribute_to_pot, {"pot": str, "amount_cents": int},
             N_("pay an operator contribution into a pot")),
            ("recover_jackpot_contribution", self.recover_jackpot_contribution, {"amount_cents": int},
             N_("take back what the operator contributed to the jackpot and players have not won (R91.9)")),
            ("close_sale", self.close_sale, {}, N_("close the sale and announce the prizes")),
            ("draw_ball", self.draw_ball, {}, N_("draw the next ball")),
            ("correct_ball", self.correct_ball, {"ball": int, "corrected": int, "reason": str},
             N_("sign the correction of a misread last ball: the number announced, the ball read again (both chiefs)")),
            ("cancel_ball_correction", self.cancel_ball_correction, {},
             N_("withdraw a ball correction only one chief has signed")),
            ("verify_claim", self.verify_claim, {"series": int, "card_number": int}, N_("verify a claimed card")),
            ("refuse_card", self.refuse_card, {"series": int, "card_number": int, "reason": str},
             N_("refuse a claimed card as invalid: tampered, damaged, not the card sold")),
            ("close_prize", self.close_prize, {}, N_("no other card: close the line or bingo found, the draw goes on")),
            ("pay_prizes", self.pay_prizes, {"desk": str}, N_("pay the settled prizes in cash at an open cash desk")),
            ("identify_paper_winner", self.identify_paper_winner, {"cards": list[str], "document": str, "name": str},
             N_("record the identity document of a paper winner of 15,000 EUR or more in this game (R75.6)")),
            ("close_game", self.close_game, {}, N_("close the game once the bingo is verified")),
            ("suspend_game", self.suspend_game, {"reason": str}, N_("suspend the game on a failure")),
            ("resume_game", self.resume_game, {}, N_("resume the suspended game")),
            ("suspend_game_for_good", self.suspend_game_for_good, {"reason": str},
             N_("suspend the game for good: refund, or finish by hand")),
            ("enter_ball", self.enter_ball, {"ball": int}, N_("enter a ball by hand while finishing the game")),
            ("finish_game", self.finish_game, {}, N_("end the game finished by hand")),
            ("collect_cards", self.collect_cards, {}, N_("record that the game's cards are collected")),
        ):
            core.register(CommandSpec(name, handler, params, summary))
