"""Background threads: the referee (clocks, first-move aborts, opponentGone countdowns, challenge
expiry) and one driver thread per game that asks the opponent policy what to do on its turn."""

from __future__ import annotations

import threading
import time

from . import opponents as op
from .boards import other
from .state import ApiError, Challenge, Game
from .world import World


class Runner:
    def __init__(self, world: World, default_think_s: float):
        self.world = world
        self.default_think_s = default_think_s
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        world.on_game_created = self.game_created
        world.on_outgoing_challenge = self.outgoing_challenge

    def start(self) -> None:
        self._spawn(self._referee, "sandbox-referee")

    def run_thread(self, target: object, name: str, *args: object) -> None:
        """Another background thread, stopped with the others (the arenas' pairing passes)."""
        self._spawn(target, name, *args)

    def _spawn(self, target: object, name: str, *args: object) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)  # type: ignore[arg-type]
        with self._lock:
            self.threads = [x for x in self.threads if x.is_alive()]
            self.threads.append(t)
        t.start()

    def game_created(self, g: Game) -> None:
        self._spawn(self._drive, f"sandbox-opponent-{g.id}", g)

    def outgoing_challenge(self, c: Challenge) -> None:
        """The bot challenged a sparring bot: it answers after its delay, in a thread of its own."""
        target = self.world.sparring.get(c.dest.id)
        delay = target.answer_delay_s if target is not None else 0.0
        self._spawn(self._answer, f"sandbox-sparring-{c.id}", c.id, delay)

    def _answer(self, cid: str, delay_s: float) -> None:
        if not self.stopping.wait(delay_s):
            self.world.sparring_answer(cid)

    def stop(self, timeout: float = 5.0) -> None:
        self.stopping.set()
        with self.world.cond:
            self.world.cond.notify_all()
        for g in list(self.world.games.values()):
            try:
                g.opponent.close()  # stops a running engine search so its thread can exit
            except Exception:  # noqa: BLE001
                pass
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self.threads)
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))

    # --- referee ---------------------------------------------------------------------------------
    def _referee(self) -> None:
        # Polls at most every 20 ms so a flag falls promptly even when nobody sends a request.
        while not self.stopping.is_set():
            nxt = self.world.tick(time.monotonic())
            self.stopping.wait(min(max(nxt, 0.002), 0.02))

    # --- opponent driver -------------------------------------------------------------------------
    def _sleep(self, g: Game, seconds: float) -> None:
        if seconds <= 0:
            return
        with self.world.cond:
            self.world.cond.wait_for(lambda: self.stopping.is_set() or g.status != "started", timeout=seconds)

    def _view(self, g: Game) -> op.OpponentView:
        now = time.monotonic()
        color = other(g.bot_color)
        return op.OpponentView(
            game_id=g.id, color=color, board=g.board.copy(), moves=list(g.moves),
            initial_fen=g.initial_fen, bot_offers_draw=g.bot_color in g.pending_draw,
            my_time_ms=g.remaining_ms(color, now), their_time_ms=g.remaining_ms(g.bot_color, now),
            increment_ms=g.clock[1] * 1000 if g.clock else 0, clocked=g.clock is not None,
        )

    def _drive(self, g: Game) -> None:
        w = self.world
        policy = g.opponent
        color = other(g.bot_color)
        idle = False
        try:
            while not self.stopping.is_set():
                with w.cond:
                    if idle:
                        w.cond.wait_for(lambda: self.stopping.is_set() or g.status != "started", timeout=0.5)
                    else:
                        w.cond.wait_for(lambda: self.stopping.is_set() or g.status != "started"
                                        or g.turn_color() == color, timeout=0.5)
                    if self.stopping.is_set() or g.status != "started":
                        return
                    if idle or g.turn_color() != color:
                        continue
                    view = self._view(g)
                t0 = time.monotonic()
                try:
                    action = policy.act(view)
                except Exception as e:  # noqa: BLE001 - a broken policy must not kill the sandbox
                    self._error(g, f"policy failed: {e!r}")
                    idle = True
                    continue
                idle = self._apply(g, action, t0)
        finally:
            try:
                policy.close()
            except Exception:  # noqa: BLE001
                pass

    def _apply(self, g: Game, a: op.Action, t0: float) -> bool:
        """Carry out one action; returns True when the opponent goes idle for good."""
        w = self.world
        try:
            if isinstance(a, op.Move):
                think = g.opponent.think_s
                if think is None:
                    think = g.think_s if g.think_s is not None else self.default_think_s
                self._sleep(g, think - (time.monotonic() - t0))
                if self.stopping.is_set() or g.status != "started":
                    return True
                w.opponent_move(g.id, a.uci, offering_draw=a.offer_draw)
            elif isinstance(a, op.Wait):
                self._sleep(g, a.seconds)
            elif isinstance(a, op.Idle):
                return True
            elif isinstance(a, op.OfferDraw | op.AcceptDraw):
                w.opponent_draw(g.id, True)
            elif isinstance(a, op.DeclineDraw):
                w.opponent_draw(g.id, False)
            elif isinstance(a, op.ProposeTakeback):
                w.opponent_takeback(g.id, True)
            elif isinstance(a, op.Resign):
                w.opponent_resign(g.id)
            elif isinstance(a, op.Abort):
                w.opponent_abort(g.id)
            elif isinstance(a, op.Gone):
                w.opponent_gone(g.id, True)
            elif isinstance(a, op.Back):
                w.opponent_gone(g.id, False)
            elif isinstance(a, op.Chat):
                w.opponent_chat(g.id, a.text, a.room)
            else:
                self._error(g, f"unknown action {a!r}")
                return True
        except ApiError as e:
            self._error(g, f"{a!r} refused: {e.message}")
            return True
        return False

    def _error(self, g: Game, msg: str) -> None:
        with self.world.cond:
            g.opponent_errors.append(msg)
            self.world.errors.append(f"{g.id}: {msg}")
