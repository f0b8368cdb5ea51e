"""The operator's commands to a running central server (R96.2), declared as plain data.

The operator of the network speaks to the central server over the same communications
endpoint as the halls (AMP inside mutual TLS), presenting an ``operator`` certificate
of the operator's authority.  The certificate's name is the operator's name in the
journal; a connection with an ``operator`` certificate may send the commands below
and nothing else, and a hall's connection may not send them.  There is no ``hello``:
the operator's tool ships with the server it speaks to.

The messages use the field types, error codes and AMP mapping of
:mod:`protocol.central_messages` (``server_kit.amp.commands.amp_commands`` turns
:data:`OPERATOR_MESSAGES` into AMP commands).  ``docs/central-server.md`` describes
them with an example each.
"""

from __future__ import annotations

from typing import Mapping

from protocol.central_messages import (
    BALL_COUNT,
    CARD_COUNT,
    CARRY,
    CENTS,
    GAME_ID,
    HALL_ID,
    PHASES,
    REASON,
    REQUEST_ID,
    SEQ,
    SERIES_LABEL,
    TIME_MS,
    Choice,
    Text,
    Field,
    Flag,
    Items,
    Message,
    Paging,
    Whole,
)

#: Games in one page of ``operator_games``.
GAMES_PAGE = 50
#: The storage's alarm, in the operator's list and programme while it is raised.
STORAGE_ALARM = Field("storage_alarm", Text(600), optional=True,
                      doc="the central server's storage cannot take a commit (the fault, where): every command "
                          "is refused until it is back")

_GAME = Field("game_id", GAME_ID, doc="the network game")
_ERRORS = ("bad_argument", "internal_error", "standby", "storage_unavailable")

#: One network game as the operator's list shows it.
GAME_ROW = Items(
    (
        _GAME,
        Field("phase", Choice(PHASES), doc="where the game stands"),
        Field("series", SERIES_LABEL, doc="the series its cards come from"),
        Field("price_cents", CENTS, doc="the card's price"),
        Field("hall_count", Whole(1, 1000), doc="the halls taking part"),
        Field("opens_at_ms", TIME_MS, optional=True, doc="scheduled: when the sale opens by itself (central clock)"),
        Field("closes_at_ms", TIME_MS, optional=True, doc="once open: the end of the sale (central clock)"),
        Field("cards_in_play", CARD_COUNT, doc="cards assigned and not refunded"),
        Field("sales_cents", CENTS, doc="their stakes"),
        Field("ball_count", BALL_COUNT, doc="balls drawn"),
        Field("winner_count", SEQ, doc="winning cards"),
    ),
    max_items=GAMES_PAGE,
)

OPERATOR_GAMES = Message(
    "operator_games",
    "operator",
    "The central server's network games in the order they were scheduled, a page after "
    "the first after games, with where each stands.",
    arguments=(Field("after", SEQ, doc="games to skip: those of the pages already read"),),
    answer=(
        Field("games", GAME_ROW, doc="the next games, in the order they were scheduled"),
        Field("more", Flag(), doc="later games exist: ask again after the ones read"),
        Field("game_count", SEQ, doc="the network games in all"),
        STORAGE_ALARM,
    ),
    errors=_ERRORS,
    paging=Paging("after", "games"),
)

OPERATOR_OPEN_SALE = Message(
    "operator_open_sale",
    "operator",
    "Open the game's sale now, for its configured window (R93.1); the halls are told at "
    "once and their terminals count down to the deadline.",
    arguments=(_GAME,),
    answer=(
        _GAME,
        Field("closes_at_ms", TIME_MS, doc="the deadline of the sale, central clock"),
        Field("remaining_ms", TIME_MS, doc="the sale's window, from now"),
    ),
    errors=(*_ERRORS, "unknown_game", "not_now"),
)

OPERATOR_NOT_PLAYED = Message(
    "operator_not_played",
    "operator",
    "Force majeure (R96.2): declare the game not played.  Every stake comes back to its "
    "player through the player's hall; prizes already won and credited stand.",
    arguments=(_GAME, Field("reason", REASON, doc="why the game cannot run, for the record")),
    answer=(
        _GAME,
        Field("refunded_cards", CARD_COUNT, doc="the cards whose stakes are returned"),
        Field("refunded_cents", CENTS, doc="the stakes returned"),
        Field("hall_count", Whole(0, 1000), doc="the halls with players to refund"),
    ),
    errors=(*_ERRORS, "unknown_game", "not_now"),
)

# --- The programme: the games the central server schedules itself, their carries chained ---

#: Why the programme schedules no game now, as a person reads it.
_WAITING = Field("waiting_for", Text(200), optional=True,
                 doc="why no game of the programme is scheduled now (the game under way, the pause, the hours)")
_PROGRAMME_ERRORS = (*_ERRORS, "not_now")

OPERATOR_PROGRAMME = Message(
    "operator_programme",
    "operator",
    "Where the programme stands: running or paused, the chain's last game and what it "
    "carried out, the one-off game waiting, and why no game is scheduled now.",
    arguments=(),
    answer=(
        Field("configured", Flag(), doc="the central server has a programme ([programme] in central.toml)"),
        Field("state", Choice(("running", "paused")), doc="whether the programme schedules its games"),
        Field("reason", REASON, optional=True, doc="paused: why, as the operator said"),
        Field("games_played", SEQ, doc="games the programme has scheduled"),
        Field("games_limit", SEQ, optional=True, doc="the games it plays in all, if limited"),
        Field("last_game", GAME_ID, optional=True, doc="the chain's last game"),
        Field("last_phase", Choice(PHASES), optional=True, doc="where that game stands"),
        Field("carries", CARRY, optional=True, doc="what the chain's last game carried out, once it is over (R88.5)"),
        Field("queued_game", GAME_ID, optional=True, doc="the operator's one-off game waiting for the last game's end"),
        _WAITING,
        STORAGE_ALARM,
    ),
    errors=_ERRORS,
)

OPERATOR_SCHEDULE_GAME = Message(
    "operator_schedule_game",
    "operator",
    "Add a one-off game of the programme's template to the chain, with what the chain "
    "carried (R88.5): scheduled now if the chain's last game is over, else queued to "
    "follow it.  The settings left out are the template's.  Sent again with the same "
    "request id (a connection lost before the answer), it schedules nothing more.",
    arguments=(
        Field("game_id", GAME_ID, optional=True, doc="the game's id (default: the programme's id scheme)"),
        Field("price_cents", CENTS, optional=True, doc="the card's price, at most the approved maximum (R93.5)"),
        Field("sale_window_ms", TIME_MS, optional=True, doc="the sale's length"),
        Field("ball_interval_ms", TIME_MS, optional=True, doc="the time between balls"),
        Field("opens_after_ms", TIME_MS, optional=True, doc="its sale opens this long after it is scheduled"),
        Field("request_id", REQUEST_ID, optional=True,
              doc="the operator's id of this request: the same id sent again is answered with the game the first "
                  "one scheduled or queued, and schedules nothing more"),
    ),
    answer=(
        _GAME,
        Field("status", Choice(("scheduled", "queued")), doc="scheduled now, or queued after the game under way"),
        Field("repeated", Flag(), optional=True,
              doc="the request id was carried out before: the answer is the game it made, nothing new is scheduled"),
        Field("after_game", GAME_ID, optional=True, doc="the game of the chain before it"),
        Field("opens_at_ms", TIME_MS, optional=True, doc="scheduled: when its sale opens (central clock)"),
        Field("carries", CARRY, optional=True, doc="scheduled: what it carries in, per prize"),
    ),
    errors=(*_PROGRAMME_ERRORS, "bad_config"),
)

OPERATOR_PAUSE_PROGRAMME = Message(
    "operator_pause_programme",
    "operator",
    "Pause the programme: no game of it is scheduled until it is resumed; the games "
    "under way play on, and their carries wait for the next game of the chain.",
    arguments=(Field("reason", REASON, doc="why, for the record"),),
    answer=(
        Field("state", Choice(("running", "paused")), doc="the programme's state now"),
        Field("last_game", GAME_ID, optional=True, doc="the chain's last game"),
    ),
    errors=_PROGRAMME_ERRORS,
)

OPERATOR_RESUME_PROGRAMME = Message(
    "operator_resume_programme",
    "operator",
    "Resume the programme: its next game is scheduled at once if the chain's last game "
    "is over (within its hours), else when it ends.",
    arguments=(),
    answer=(
        Field("state", Choice(("running", "paused")), doc="the programme's state now"),
        Field("next_game", GAME_ID, optional=True, doc="the game scheduled on resuming, if one was"),
        _WAITING,
    ),
    errors=_PROGRAMME_ERRORS,
)

#: The programme's commands.
PROGRAMME_MESSAGES: Mapping[str, Message] = {
    m.name: m for m in (OPERATOR_PROGRAMME, OPERATOR_SCHEDULE_GAME, OPERATOR_PAUSE_PROGRAMME, OPERATOR_RESUME_PROGRAMME)
}

# --- After a stop of normal play (R92.5e, R95.1) ---------------------------------------

#: One check of the central server's own: what was checked and the fault it found (absent: it passed).
CHECK_ROW = Items(
    (
        Field("check", Text(64), doc="the central server's check (journal, database, library, clock)"),
        Field("fault", Text(600), optional=True, doc="what it found wrong; absent when it passed"),
    ),
    max_items=16,
)
#: How many failed links of halls an answer names (the journal's ``central_verified`` holds them all).
LINK_FAULTS_SHOWN = 64
#: A member hall's link that failed its check, and why.
LINK_FAULT_ROW = Items(
    (
        Field("hall", HALL_ID, doc="the member hall"),
        Field("fault", Text(200), doc="what its link check found"),
    ),
    max_items=LINK_FAULTS_SHOWN,
)

OPERATOR_VERIFY = Message(
    "operator_verify",
    "operator",
    "Verify the central server (its journal, database, library and clock) and every linked "
    "hall's link, and journal the outcome (R92.5e, R95.1).  After a stop that interrupted "
    "play, no network game's sale opens until a verification passed.",
    arguments=(),
    answer=(
        Field("passed", Flag(), doc="every check and every linked hall passed"),
        Field("checks", CHECK_ROW, doc="the central server's own checks"),
        Field("linked", Items((Field("hall", HALL_ID, doc="a member hall whose link passed"),), max_items=1000),
              doc="the member halls linked whose link passed its check"),
        Field("link_faults", LINK_FAULT_ROW,
              doc=f"the linked halls whose link failed its check (the first {LINK_FAULTS_SHOWN})"),
        Field("link_faults_more", Whole(0, 1000), optional=True,
              doc="how many more links failed than the answer names (the journal's record names them all)"),
        Field("not_linked", Items((Field("hall", HALL_ID, doc="a member hall away"),), max_items=1000),
              doc="the member halls not linked, not checked: they take part again when they link"),
        Field("play", Choice(("open", "stopped")), doc="whether new games may open now"),
        Field("stopped", Text(300), optional=True, doc="why play is stopped, while it is"),
    ),
    errors=(*_ERRORS, "not_now"),
)

#: Every command of the operator, by name.
OPERATOR_MESSAGES: Mapping[str, Message] = {
    m.name: m for m in (OPERATOR_GAMES, OPERATOR_OPEN_SALE, OPERATOR_NOT_PLAYED, *PROGRAMME_MESSAGES.values(),
                        OPERATOR_VERIFY)
}

__all__ = [
    "GAMES_PAGE",
    "GAME_ROW",
    "OPERATOR_GAMES",
    "OPERATOR_MESSAGES",
    "OPERATOR_NOT_PLAYED",
    "OPERATOR_OPEN_SALE",
    "OPERATOR_PAUSE_PROGRAMME",
    "OPERATOR_PROGRAMME",
    "OPERATOR_RESUME_PROGRAMME",
    "OPERATOR_SCHEDULE_GAME",
    "OPERATOR_VERIFY",
    "PROGRAMME_MESSAGES",
]
