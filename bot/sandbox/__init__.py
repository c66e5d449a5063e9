"""A local stand-in for lichess.org: a real HTTP server speaking the Lichess bot API.

The real berserk client works against it unchanged::

    from bot.sandbox import Sandbox, ScriptedOpponent
    with Sandbox(keepalive_s=1.0) as sb:            # or sb = Sandbox(...).start(); ...; sb.stop()
        client = berserk.Client(berserk.TokenSession(sb.token), base_url=sb.url)
        cid = sb.send_challenge("alice", clock=(60, 0), opponent=ScriptedOpponent(["e7e5"]))
        ...

Served at the root (berserk drops a base-URL path prefix), 127.0.0.1 only, ephemeral port:
  GET  /api/account, /api/account/playing          POST /api/bot/account/upgrade
  GET  /api/stream/event                           (chunked ndjson; a second stream closes the first;
                                                    at most event_stream_limit connects, else 429)
  POST /api/challenge/{id}/accept, /decline        (JSON {"reason": ...} or form body)
  GET  /api/bot/online[?nb=N]                      (ndjson of the online sparring bots, and the bot itself
                                                    while its event stream is open)
  POST /api/challenge/{username}                   (the bot challenges a sparring bot: form or JSON body;
                                                    keepAliveStream=true: ndjson, then {"done": ...})
  POST /api/challenge/{id}/cancel
  GET  /api/bot/game/stream/{id}                   (gameFull, gameState, chatLine, opponentGone; a second
                                                    stream from the same User-Agent ends the first)
  POST /api/bot/game/{id}/move/{uci}[?offeringDraw=true], /chat, /abort, /resign, /draw/{word},
       /takeback/{word}, /claim-victory, /claim-draw   (any other /api/bot/ path: 404 "No such command")
  POST /api/token/test                             (the tokens as text; no Authorization needed)
  GET  /api/users/status?ids=, /api/user/{name}    (no token needed; false flags left out)
  GET  /game/export/{id}                           (PGN with %clk per move; JSON with Accept: application/
                                                    json; a game in play without its last 3 plies; export.py)
  GET  /, /tv; /tv/events                          the page that follows the games (tv.py, tv.html) and its
                                                   server-sent events; no token, no fault rule, not logged
  POST /team/{id}/join                             (403: a bot token lacks team:write)
  POST /api/tournament/{id}/join, /withdraw        arenas (arenas.py): Sandbox.add_arena(...), pairing
  GET  /api/tournament/{id}                        passes that pick up the joined bot, tournamentId in
  POST /api/swiss/{id}/join, GET /api/swiss/{id}   gameStart/gameFull; a Swiss refuses bots (403)
  GET  /standard?fen=...                           the tablebase service's stand-in (no token; answers
                                                   computed from Syzygy files: Sandbox(tablebase_dir=...);
                                                   404 without it; see tablebase.py)
  GET  /masters, /lichess, /player (ndjson)       the opening explorer's stand-in (401 without the token)
  GET  /api/cloud-eval?fen=&multiPv=               the cloud evaluation's (404: not analysed; no token)
  GET  /cdb.php?action=querybest|queryall&board=   chessdb's (JSON; no token); all three answer from the
                                                   built-in book, switches in .online (see online.py)
Wrong bearer token -> 401 {"error": ...}; refused moves -> 400 {"error": ...}; successes -> {"ok": true};
a route nobody serves -> lila's HTML 404 page, named in one log line (Sandbox.unserved).

Answers as lila gives them (each rule's docstring names the lila file/function it mirrors):
  move: "Invalid UCI: zz" / "Piece on e2 cannot move to e5" / "Not your turn, or game already over" (400);
        offeringDraw=true|false is a draw yes/no *before* the move; a move after the mover's flag fell
        ends the game outoftime and answers 200.
  draw/{word}: always 200; `1 true True on yes` mean yes, any other word no; an offer needs ply >= 2,
        both sides moved, and none by the same side within 20 plies (else silently ignored); an offer
        to a side that cannot mate ends the game insufficientMaterialClaim; system chat lines from
        "lichess" ("White offers draw", "Draw offer accepted").
  takeback/{word}: always 200 (lila BotPlayer.setTakeback); a yes-word accepts the opponent's
        proposal, else proposes one (both sides moved, none standing), any other word declines it or
        withdraws the bot's own; accepting undoes 2 plies when it was proposed on the proposer's own
        turn, else 1, and sends the shorter gameState; the proposal shows as wtakeback/btakeback
        until answered; a move ends every proposal (the other side's with "Takeback declined");
        system chat lines "Takeback accepted"/"Takeback declined". Clocks: the stored times stay (what
        lila's Rewind restores) and the turn of the side now to move starts afresh.
  claim-victory: 200 and nothing unless it is the opponent's turn in a clock game both sides moved in;
        then a long-gone opponent loses by timeout (no winner if the bot cannot mate); 400 "You cannot
        claim the win on this game" unless the bot won. opponentGone comes only on the periodic tick
        (every gone_tick_s: claimWinInSeconds counting down, then 0 on every tick), never on
        subscribe; gone:false only when a long-gone opponent returns.
  chat: text 1-140 characters, room player|spectator, else 400 {"error": {field: [message]}}; the bot's
        own lines come back on its game stream.
  challenges: event-stream challenge JSON without `direction`; challengeDeclined also for the bot's own
        declines (declineReasonKey lower-case, unknown reasons generic); expiry (challenge_ttl_s) is
        silent; accept: canceled/declined -> 400 "The challenge has been canceled."/"... declined.",
        otherwise closed or unknown -> 404 {"error": "Not found"}; a BOT challenger's challenge over
        bot_games_per_day -> 429 {"error": ..., "ratelimit": {"key": "bot.vsBot.day", "seconds": S}}
        without Retry-After (the challenge stays open).
  event stream over event_stream_limit=(credits, window_s) in a fixed window -> 429 {"error": "Please
        don't poll this endpoint, ..."} without Retry-After.
  the bot's challenges (lila Challenge.apiCreate/apiCancel): the answer is the challenge JSON with
        direction "out"; "No such user: X", UltraBullet to a bot, a bad form field -> 400; BotLimit on
        creation: we over bot_games_per_day -> 429, the sparring bot over its own quota -> 400, both with
        {"ratelimit": {"key": "bot.vsBot.day", "seconds": S}}; the sparring bot answers by its policy
        after its delay: accept -> gameStart with the challenge's id, decline -> challengeDeclined (the
        challenger is the bot); cancel: an open one -> canceled (challengeCanceled), an accepted one whose
        game nobody moved in -> aborted, else 404.
  gameFull: no `clock` for correspondence/unlimited games; title null if untitled; provisional only
        when true. Status ids as scalachess (unknownFinish 38, insufficientMaterialClaim 39).

Control API (all waits return instead of raising on timeout)::

    Sandbox(token="sandbox-token", bot_name="umax-bot", bot_account=True, seed=0, *, host="127.0.0.1",
            port=0, keepalive_s=6.0, opponent_think_s=0.05, no_start_s=60.0, no_start_status="aborted",
            gone_claim_s=10.0, challenge_ttl_s=None, upgrade_allowed=True, flag_delay_s=0.0,
            gone_tick_s=1.0, bot_games_per_day=None, bot_limit_reset_s=3600.0,
            event_stream_limit=(30, 600.0), tablebase_dir=None)
        seed: the ids, the colours drawn and the random movers' moves (None: different on every run, as
        `python -m bot.sandbox` without --seed and the demo have them);
        flag_delay_s: how late the referee flags a side nobody acts for (a move still flags at once);
        gone_tick_s: the round tick sending opponentGone (lila: 5 s); bot_games_per_day: lila BotLimit
        (None = no limit) over a window of bot_limit_reset_s; event_stream_limit: None = no limit
    .start() -> Sandbox; .stop(); context manager; .url; .token; .port; .tablebase (the stand-in or None:
                .positions = every FEN it answered); .online: the online services' stand-ins (.explorer,
                .cloud_eval, .chessdb: Switches(delay_s, status, rate_limit, garbage, wrong, need_token);
                .seen(service) -> [Seen(service, path, fen, auth, query)])
    .send_challenge(challenger="alice", challenger_is_bot=False, variant="standard", rated=False,
                    clock=(60, 0), days=None, color="random", initial_fen=None, opponent=None, *,
                    challenger_rating=1500, challenger_title=None, castling_as_king_takes_rook=True,
                    think_s=None, drawn_color=None) -> challenge id   (color is the challenger's, drawn_color
                    what random gives it, None: drawn from the seed; opponent None = random mover)
    .cancel_challenge(cid); .challenge(cid) -> ChallengeInfo(status, decline_reason, decline_body, game_id,
                    bot_color, answered_at; .decline_key); .wait_challenge_answered(cid, timeout=5.0)
                    -> status (created, accepted, declined, canceled, expired)
    .bot_games_today; .set_bot_games_today(n)     (games against bots in the BotLimit window)
    .add_sparring_bot(name, policy=AcceptAll(), *, rating=1500 | {speed: rating}, play=None,
                      answer_delay_s=0.2, online=True)   (play: makes the Opponent of an accepted game)
    .add_sparring_bots(play=None) -> names   (AcceptBot, CasualBot declines rated, SlowBot tooFast for
                      bullet/blitz, BusyBot "later" half the time, SilentBot never answers)
    .set_sparring_online(name, online); .set_sparring_quota(name, seconds); .set_bot_ratings(**speeds)
    .outgoing_challenges() -> [ChallengeInfo] of the bot's own challenges (dest, clock, days, rated,
                      created, status, decline_key)
    .start_game(opponent=None, bot_color="white", clock=(60, 0), initial_fen=None, moves=(), *, days=None,
                variant="standard", rated=False, opponent_name="alice", opponent_is_bot=False,
                opponent_rating=1500, castling_as_king_takes_rook=True, think_s=None) -> game id
                (castling_as_king_takes_rook=False: the older e1g1 form, never in Chess960)
    .game(gid) -> SandboxGame(status, winner, moves, fen, bot_color, wtime_ms, btime_ms, chat, draw_offers,
                pending_draw, bot_move_times, bot_move_latency, rejected_moves, opponent_gone,
                stream_connects, open_streams, ...)
    .games(); .wait_game_over(gid, timeout=10.0) -> status; .wait_moves(gid, n, timeout=5.0) -> bool
    .chat(gid, text, username="spectator1", room="spectator")   (anyone's chat line: a spectator, "lichess")
    .wait_until(predicate, timeout=5.0) -> bool; .wait_event_stream(timeout=5.0, connects=1) -> bool
    .event_stream_connects; .event_stream_refused (429s of the connect limit)
    .request_log -> [RequestRecord(t, method, path, status)]  (status 0 = dropped before a status line)
    .request_details -> [RequestDetail(arrived, t, method, path, status, retry_after, served_status)]
    .requests(path_regex=".*", method=None) -> filtered log; .errors -> sandbox-side problems
    .respond_with(path_regex, status, times=1, headers=None, body=None, method=None) -> Rule
    .cut_event_stream(); .cut_game_stream(gid); .set_opponent_gone(gid, gone=True)
    .propose_takeback(gid)   (the opponent asks now, on either turn; SandboxGame.pending_takeback, .takebacks)
    .restart(downtime_s=2.0, mode="refuse"|"error", wait=False)
    .faults -> FaultInjector: .add(action, path=".*", *, method=None, line=None, keepalive=False,
               times=1, skip=0, probability=1.0, duration=None) with actions Respond (raw= for an
               unreadable body), Drop(after), Delay, CutStream(mid_line), EndStream, Silence(seconds),
               Malformed(replace), Duplicate, Reorder, Stale (see faults.py)
    bot.sandbox.chaos.Chaos(sb, ChaosConfig(rate, seed, ...)).install().start(): random faults of every
               kind plus periodic restarts, with a record of what fired (see chaos.py)

Game rules: moves validated with python-chess (castling taken as e1g1 or e1h1, sent as e1h1 unless
asked otherwise; promotions e7e8n, a bare e7e8 is a queen); Lichess clocks (running once both sides
moved, increment, flag -> outoftime checked by a background timer, or draw if the other side offers one);
a side that does not make its first move within no_start_s -> no_start_status ("aborted");
mate/stalemate/draw (insufficient material, 50 moves, threefold)/resign/abort/draw agreement/
insufficientMaterialClaim/claim-victory ("timeout") with Lichess status names and `winner`.

Opponents (one fresh instance per game): ScriptedOpponent(moves, then=None, think_s=None) with entries
"e7e5", "offer-draw:e7e5", "offer-draw", "accept-draw", "decline-draw", "takeback", "resign", "abort",
"wait:<s>", "gone", "back", "chat:<text>", "idle"; RandomOpponent(seed); IdleOpponent();
EngineOpponent(node_budget) (the project's engine in process); UciOpponent(command) (any UCI engine).
Subclass Opponent and implement act(view) -> Action for anything else. Sparring policies (how a sparring
bot answers the bot's challenges): AcceptAll, DeclineRated, DeclineFast(slowest_refused), LaterSometimes(p),
DeclineAll(reason), NeverAnswers; subclass SparringPolicy.answer(offer, rng) for others.

bot.sandbox.testing has client_for(sb, token=None, timeout=(3, 5)) (a berserk client with request
timeouts) and Reader(iterator) (pumps a stream in a thread: get(timeout), until(pred), rest()).
"""

from .control import ChallengeInfo, RequestDetail, RequestRecord, Sandbox, SandboxGame
from .faults import (
    CutStream,
    Delay,
    Drop,
    Duplicate,
    EndStream,
    FaultInjector,
    Malformed,
    Reorder,
    Respond,
    Rule,
    Silence,
    Stale,
)
from .lila_json import DECLINE_REASONS, STATUS_IDS
from .opponents import (
    AcceptAll,
    DeclineAll,
    DeclineFast,
    DeclineRated,
    EngineOpponent,
    IdleOpponent,
    LaterSometimes,
    NeverAnswers,
    Offer,
    Opponent,
    OpponentView,
    RandomOpponent,
    ScriptedOpponent,
    SparringPolicy,
    UciOpponent,
)

__all__ = [
    "DECLINE_REASONS", "STATUS_IDS", "AcceptAll", "ChallengeInfo", "CutStream", "DeclineAll", "DeclineFast",
    "DeclineRated", "Delay", "Drop", "Duplicate", "EndStream", "EngineOpponent", "FaultInjector",
    "SandboxGame", "IdleOpponent", "LaterSometimes", "Malformed", "NeverAnswers", "Offer", "Opponent",
    "OpponentView", "RandomOpponent", "Reorder", "RequestDetail", "RequestRecord", "Respond", "Rule",
    "Sandbox", "ScriptedOpponent", "Silence", "SparringPolicy", "Stale", "UciOpponent",
]
