"""The Lichess JSON the bot reads, as TypedDicts: one name for each shape, with the fields the bot uses.

The shapes follow Lichess's API description (its schema's name in each docstring); only the fields the
bot reads, or that a reader of the code would look for, are listed. A leaf module: it imports nothing
of bot, so `bot/lichess.py` and everything above it can name these types.

Types, not checks. Every shape is `total=False`, but for a stream line's `type`: the server may leave
a field out, and a fuzzed or future server may send one of the wrong type. So the code keeps reading
with `.get` and `isinstance`, and a value it cannot use is logged in one line and skipped: odd data
never ends a game or the process (docs/CONTRACTS.md). The types say what the server means to send.
"""

from __future__ import annotations

from typing import Literal, Required, TypedDict

# ---------------------------------------------------------------- people


class Perf(TypedDict, total=False):
    """A rating in one perf (Perf): `prov` when it is provisional."""

    rating: int
    games: int
    rd: int
    prog: int
    prov: bool


class User(TypedDict, total=False):
    """A user (User): a line of `/api/bot/online`. `perfs` is keyed by speed or variant ("blitz", ...)."""

    id: str
    username: str
    title: str | None
    perfs: dict[str, Perf]
    online: bool


class Account(User, total=False):
    """`/api/account` (UserExtended): the token's own user. The bot needs `title` to be "BOT"."""


class ChallengeUser(TypedDict, total=False):
    """The challenger or the challenged (ChallengeUser): `rating` in the challenge's own perf."""

    id: str
    name: str
    rating: int
    title: str | None
    provisional: bool
    online: bool
    lag: int


# ---------------------------------------------------------------- challenges


class Variant(TypedDict, total=False):
    """A variant (Variant): `key` is what the bot reads ("standard", "chess960", "fromPosition", ...)."""

    key: str
    name: str
    short: str


class TimeControl(TypedDict, total=False):
    """A challenge's clock (TimeControl): `limit` and `increment` in seconds for "clock",
    `daysPerTurn` for "correspondence", nothing more for "unlimited"."""

    type: Literal["clock", "correspondence", "unlimited"]
    limit: int
    increment: int
    show: str
    daysPerTurn: int


class Challenge(TypedDict, total=False):
    """A challenge (ChallengeJson, and ChallengeDeclinedJson's two decline fields). The event stream
    has no `direction` (lila's event stream leaves it out): an own challenge is told by its challenger."""

    id: str
    url: str
    status: str
    challenger: ChallengeUser
    destUser: ChallengeUser | None
    variant: Variant
    rated: bool
    speed: str  # ultraBullet, bullet, blitz, rapid, classical, correspondence
    timeControl: TimeControl
    color: str
    finalColor: str
    perf: dict[str, str]  # icon, name
    direction: Literal["in", "out"]
    initialFen: str
    rematchOf: str
    declineReason: str  # challengeDeclined only: human words, maybe translated
    declineReasonKey: str  # challengeDeclined only: generic, later, toofast, ... (case varies)


# ---------------------------------------------------------------- games between moves


class Compat(TypedDict, total=False):
    """Which APIs can play the game (GameCompat)."""

    bot: bool
    board: bool


class GameStatus(TypedDict, total=False):
    """A game's status as an object (GameStatus): {"id": 30, "name": "mate"}."""

    id: int
    name: str


class GameOpponent(TypedDict, total=False):
    """The other side of a game (GameEventOpponent): `id` is None for Lichess's AI."""

    id: str | None
    username: str
    rating: int
    ratingDiff: int
    ai: int


class GameEventInfo(TypedDict, total=False):
    """A game as the event stream's gameStart/gameFinish and `/api/account/playing` give it
    (GameEventInfo). `gameId` is the id (`id` too, in events); `tournamentId` marks an arena game;
    `speed` "correspondence" marks a game of days per move or of no clock."""

    gameId: str
    fullId: str
    id: str
    color: Literal["white", "black"]
    fen: str
    lastMove: str
    source: str
    status: GameStatus
    variant: Variant
    speed: str
    perf: str
    rated: bool
    hasMoved: bool
    opponent: GameOpponent
    isMyTurn: bool
    secondsLeft: int
    winner: Literal["white", "black"]
    ratingDiff: int
    compat: Compat
    tournamentId: str


class ExportedPlayer(TypedDict, total=False):
    """One side of an exported game: `user` (name, id, title) and `rating`."""

    user: dict[str, str]
    rating: int


class ExportedGame(TypedDict, total=False):
    """`GET /game/export/{id}` as JSON (lila GameApiV2.toJson): `status` a name ("aborted", "mate",
    "started"...), `moves` in SAN, `clock` in seconds, `tournament` an arena's id."""

    id: str
    rated: bool
    variant: str
    speed: str
    createdAt: int
    status: str
    winner: Literal["white", "black"]
    players: dict[str, ExportedPlayer]
    initialFen: str
    moves: str
    clock: dict[str, int]
    tournament: str


class Playing(TypedDict, total=False):
    """`/api/account/playing`: the games in progress, most urgent first."""

    nowPlaying: list[GameEventInfo]
    nbMyTurn: int


class ArenaMe(TypedDict, total=False):
    """An arena's `me`: present when the request's token is a player's (lila JsonView myInfoJson)."""

    rank: int
    withdraw: bool     # withdrawn (paused) from a started arena
    gameId: str
    pauseDelay: int


class Arena(TypedDict, total=False):
    """`GET /api/tournament/{id}` (ArenaTournamentFull): the bot reads whether it is over and, in
    `me`, whether it is in it."""

    id: str
    fullName: str
    isStarted: bool
    isFinished: bool
    secondsToStart: int
    secondsToFinish: int
    me: ArenaMe


# ---------------------------------------------------------------- the event stream


class Event(TypedDict, total=False):
    """One line of `/api/stream/event`. `type` says which of the other keys it carries:

    - "challenge" (ChallengeEvent): `challenge`, and `compat`;
    - "challengeCanceled" (ChallengeCanceledEvent): `challenge`;
    - "challengeDeclined" (ChallengeDeclinedEvent): `challenge`, with its decline fields;
    - "gameStart", "gameFinish" (GameStartEvent, GameFinishEvent): `game`.

    Any other type is logged and ignored."""

    type: Required[str]
    challenge: Challenge
    game: GameEventInfo
    compat: Compat


# ---------------------------------------------------------------- one game's stream


class GamePlayer(TypedDict, total=False):
    """White or Black in a gameFull (GameEventPlayer): `aiLevel` for Lichess's AI, no `id` then."""

    id: str
    name: str
    title: str | None
    rating: int
    provisional: bool
    aiLevel: int


class Clock(TypedDict, total=False):
    """A gameFull's clock, in milliseconds (absent for correspondence and unlimited games)."""

    initial: int
    increment: int


class Expiration(TypedDict, total=False):
    """Before each side's first move: the game is aborted when `idleMillis` reaches `millisToMove`."""

    idleMillis: int
    millisToMove: int


class GameState(TypedDict, total=False):
    """A gameState line (GameStateEvent), and the `state` inside a gameFull. Times in milliseconds;
    `moves` in UCI, space separated; a draw or takeback flag is present only while it is offered."""

    type: Required[Literal["gameState"]]
    moves: str
    wtime: int
    btime: int
    winc: int
    binc: int
    status: str  # a GameStatusName: "created" and "started" while the game runs
    winner: Literal["white", "black"]
    wdraw: bool
    bdraw: bool
    wtakeback: bool
    btakeback: bool
    expiration: Expiration


class GameFull(TypedDict, total=False):
    """The first line of a game's stream (GameFullEvent): the game as a whole and its state now.
    `initialFen` is "startpos" or a FEN; `daysPerTurn` only for correspondence."""

    type: Required[Literal["gameFull"]]
    id: str
    variant: Variant
    clock: Clock | None
    speed: str
    perf: dict[str, str]  # name
    rated: bool
    createdAt: int
    white: GamePlayer
    black: GamePlayer
    initialFen: str
    state: GameState
    daysPerTurn: int
    tournamentId: str


class ChatLine(TypedDict, total=False):
    """A chat line (ChatLineEvent): `room` is "player" or "spectator"."""

    type: Required[Literal["chatLine"]]
    room: str
    username: str
    text: str


class OpponentGone(TypedDict, total=False):
    """The opponent left (OpponentGoneEvent): a win may be claimed in `claimWinInSeconds`, and at 0 now;
    `gone` False when they came back."""

    type: Required[Literal["opponentGone"]]
    gone: bool
    claimWinInSeconds: int


# A line of `/api/bot/game/stream/{id}`; its `type` says which.
GameLine = GameFull | GameState | ChatLine | OpponentGone
