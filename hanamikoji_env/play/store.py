"""The games a server holds: each in play under its own lock, bounded in number, per address and
idle lifetime (:class:`GameStore`), the latest finished ones' views and records, and the rate at
which one address may start games (:class:`RateLimit`).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fastapi import HTTPException

from hanamikoji_env.play.session import GameSession

PER_CLIENT_GAMES = 10
"""Games in play one address may hold (a person plays one, or a few in tabs)."""
UNSTARTED_SECONDS = 300.0
"""A game nobody has moved in is dropped after this long (or ``idle_seconds``, if shorter): a
client that gave up at once (a timed-out cold start) does not hold a slot for an hour."""
FULL_IDLE_SECONDS = 30.0
"""When the server holds its limit of games, the one idle longest gives its slot to a new game
once idle this long: abandoned games never lock new visitors out, a player thinking over a move
for less than this keeps theirs."""
FINISHED_KEPT = 1000
"""Finished games whose records stay downloadable (the newest)."""


def view(gid: str, session: GameSession) -> dict[str, Any]:
    """What a browser gets of a game: the person's view and the game's id."""
    return {"id": gid, **session.view()}


@dataclass
class HeldGame:
    """A game in play, with what the store needs to bound it."""

    session: GameSession
    last_move: float
    """When the game was created or last moved (reads do not count)."""
    client: str = "?"
    """The address that started it."""
    started: bool = False
    """Whether the person has moved in it yet."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards the session while a thread moves in it or reads its view."""
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One move request at a time, held from the person's move to the bot's last reply."""


class FinishedGame(NamedTuple):
    """What a finished game keeps: its last view and its record, not its session and bot."""

    view: dict[str, Any]
    record: str


class GameStore:
    """The games in play (bounded in number and idle lifetime, each with its own lock), and the
    records of the latest finished ones."""

    def __init__(
        self,
        max_games: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        per_client: int = PER_CLIENT_GAMES,
    ) -> None:
        self.max_games, self.idle_seconds, self.clock, self.per_client = (
            max_games,
            idle_seconds,
            clock,
            per_client,
        )
        self.games: OrderedDict[str, HeldGame] = OrderedDict()
        self.finished: OrderedDict[str, FinishedGame] = OrderedDict()
        self.lock = threading.Lock()
        """Guards the two dicts only, never a game's work."""

    def _sweep(self) -> None:
        now = self.clock()
        unstarted = min(self.idle_seconds, UNSTARTED_SECONDS)
        for gid in [
            g
            for g, game in self.games.items()
            if now - game.last_move > (self.idle_seconds if game.started else unstarted)
        ]:
            del self.games[gid]

    def _free_a_slot(self, client: str) -> None:
        """The server is full: the least recently active game goes if it has been idle for
        :data:`FULL_IDLE_SECONDS`; else the least recently active game of the address holding
        the most, if it holds more than ``client`` does and more than one (held games are paid
        for by their address first: ten addresses holding ten games each, all moving, never lock
        out an eleventh; a visitor's only game is never taken while it moves)."""
        gid, game = min(self.games.items(), key=lambda item: item[1].last_move)
        if self.clock() - game.last_move >= FULL_IDLE_SECONDS:
            del self.games[gid]
            return
        held = Counter(g.client for g in self.games.values())
        most = max(held.values())
        if most > max(held[client], 1):
            gid, _ = min(
                ((g, game) for g, game in self.games.items() if held[game.client] == most),
                key=lambda item: item[1].last_move,
            )
            del self.games[gid]

    def add(self, session: GameSession, client: str = "?") -> str:
        with self.lock:
            self._sweep()
            if len(self.games) >= self.max_games:
                self._free_a_slot(client)
            if len(self.games) >= self.max_games:
                raise HTTPException(
                    503, f"the server holds its limit of {self.max_games} games in play; try again later"
                )
            if sum(game.client == client for game in self.games.values()) >= self.per_client:
                raise HTTPException(
                    429, f"one address may hold {self.per_client} games in play; finish or leave one first"
                )
            gid = secrets.token_urlsafe(16)
            self.games[gid] = HeldGame(session, self.clock(), client)
            return gid

    def get(self, gid: str) -> HeldGame | FinishedGame:
        with self.lock:
            self._sweep()
            game = self.games.get(gid) or self.finished.get(gid)
        if game is None:
            raise HTTPException(
                404,
                f"unknown game id: games live in this server's memory only, so a restart ends them, and a "
                f"game with no move for {self.idle_seconds / 60:.0f} min is dropped (when the server is full, "
                f"one idle for {FULL_IDLE_SECONDS:.0f} s, or one of the address holding the most, gives "
                "its place to a new visitor); start a new game",
            )
        return game

    def after_move(self, gid: str, game: HeldGame) -> None:
        """After a move: the game's idle clock restarts, and a finished game frees its slot."""
        with self.lock:
            game.last_move, game.started = self.clock(), True
            if game.session.over:
                self._finish(gid, game)

    def abandon(self, gid: str, game: HeldGame) -> dict[str, Any]:
        """The person leaves ``game``: it ends unfinished, frees its slot at once and keeps its
        view and record among the finished; its view.  (The caller holds the game's turn, so no
        move is in flight.)"""
        with game.lock:
            game.session.abandon()
        with self.lock:
            self._finish(gid, game)
            return self.finished[gid].view

    def _finish(self, gid: str, game: HeldGame) -> None:
        """A game over (won, drawn or left) leaves play for the finished games (under ``lock``)."""
        if self.games.pop(gid, None) is not None:
            self.finished[gid] = FinishedGame(view(gid, game.session), game.session.record().to_json() + "\n")
            while len(self.finished) > FINISHED_KEPT:
                self.finished.popitem(last=False)


class RateLimit:
    """At most ``per_minute`` events per key in any minute (a sliding window)."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute, self.clock = per_minute, clock
        self.events: dict[str, deque[float]] = {}
        self.lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self.clock()
        with self.lock:
            if len(self.events) > 10_000:  # forget quiet clients
                self.events = {k: q for k, q in self.events.items() if q and now - q[-1] < 60}
            window = self.events.setdefault(key, deque())
            while window and now - window[0] >= 60:
                window.popleft()
            if len(window) >= self.per_minute:
                return False
            window.append(now)
            return True
