from hall_server.hall.games.common import BallSourceFactory, DeferredBallSource, GameModuleError, _entry
from hall_server.hall.games.module import PERMISSIONS, GamesModule
from hall_server.hall.games.state import Game, GamesState, PrizePaid, Settlement, _fork, feed