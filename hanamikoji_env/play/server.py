"""Play Hanamikoji in the browser: a small FastAPI server with one page.

    hanamikoji-serve [--host 127.0.0.1] [--port 8000] [--opponent heuristic]

Open http://127.0.0.1:8000 and play with the mouse; when the game is over,
download its record or step through it in the replay view (which also opens
any record file you upload).  The page and its script ship in the package
(``hanamikoji_env/play/static``): no CDN, no build step.

The server sends a browser only its own player's view (:meth:`GameSession.view`),
never the opponent's cards or the deck.  It is built to keep serving everyone
while one client misbehaves:

- **Bounded input.**  A request body is at most
  :data:`~hanamikoji_env.play.bodies.MAX_BODY_BYTES` (16 KiB;
  a replay :data:`records.MAX_LINE_BYTES`), refused (413) before it is parsed;
  only ``application/json`` is accepted (415); ``NaN``, ``Infinity`` and numbers
  longer than 20 digits are 422s; an error never echoes more than a short excerpt.
- **No client's work runs on another's time.**  A bot's move (but a light bot's:
  random, heuristic), a watched bot game and a replay's frames run in worker
  processes, one per core (``--workers``; :mod:`hanamikoji_env.play.workers`): a
  CPU-heavy request waits for a worker, never the event loop or another client's
  light request.  A person's move and a view run in a thread, each game under its
  own lock.  A replay is at most
  :data:`~hanamikoji_env.play.workers.MAX_REPLAY_DECISIONS` decisions, and at most
  :data:`REPLAYS_AT_ONCE` replays and :data:`WATCHED_AT_ONCE` bot games are in
  hand at once (503).
- **Slots.**  At most ``max_games`` games are in play, :data:`~hanamikoji_env.play.store.PER_CLIENT_GAMES` from
  one address (429); a finished game frees its slot at once and keeps only its
  view and record (downloadable among the latest :data:`~hanamikoji_env.play.store.FINISHED_KEPT`), and a game
  with no move for ``idle_seconds`` is dropped (reading a game does not keep it
  alive; a game nobody has moved in goes after :data:`~hanamikoji_env.play.store.UNSTARTED_SECONDS`); when the
  server is full, a new visitor's game takes the place of the game idle longest, or
  of the address holding the most games (:meth:`~hanamikoji_env.play.store.GameStore._free_a_slot`).  A
  client (by address) starts at most :data:`NEW_GAMES_PER_MINUTE` games and replays
  a minute (429), and watches at most :data:`PER_CLIENT_WATCHES` bot games at once.
- **Connections.**  A request must arrive whole (its body too) within
  :data:`hanamikoji_env.play.protocol.REQUEST_SECONDS`, framed one way (``Content-Length``
  and ``Transfer-Encoding`` both: 400); a body cut off is answered nobody and
  logged nowhere, and uvicorn's error log has at most one line of a kind a minute
  (:class:`~hanamikoji_env.play.protocol.OnePerPeriod`); an idle connection closes
  :data:`KEEP_ALIVE_SECONDS` after its last reply; one address holds at most
  :data:`hanamikoji_env.play.protocol.PER_ADDRESS_CONNECTIONS` connections, and all
  together at most :func:`connection_limit` (the open-file limit, raised to the hard
  limit) at once (:func:`uvicorn_options`).
- **Same origin only.**  A request whose ``Host`` is not one this server answers
  to is refused (400), and so is a write whose ``Origin`` is another site (403):
  serve on another host name with ``--allowed-host NAME``.  Every reply forbids
  framing (``X-Frame-Options: DENY``) and carries a content-security policy that
  allows only this server's own script, style and images (:data:`SECURITY_HEADERS`).
- **Addresses are the connection's.**  ``X-Forwarded-For`` is ignored, so a header
  buys no new quota, unless the operator names the proxies it trusts
  (``--forwarded-allow-ips``, e.g. the reverse proxy's address).
- **Seeds.**  Games the server deals take 128 bits from the operating system; a
  client-chosen seed makes a *practice* game, marked in its view and its record.
- Games live in this server's memory only: a restart ends them (a 404 says so).

API (JSON):

- ``POST /api/games`` ``{"opponent": "heuristic", "seat": 0, "seed": null}`` -> the view and ``"id"``
- ``GET /api/games/{id}`` -> the view
- ``POST /api/games/{id}/actions`` ``{"action": 4}`` -> the view after your move and the bot's replies;
  a split may name the cards the person calls pair A (``"pair_a": [1, 6]``), which the log keeps
- ``POST /api/games/{id}/turn`` ``{"token": 2, "cards": [5, 0, 3]}`` -> a token (at the start of a
  turn; leave it out while selecting) and its cards in any order, all or nothing: a selection that
  is not legal is refused (400) with the legal choices named, and the game is unchanged
- ``DELETE /api/games/{id}`` -> the person leaves the game: the view of it ended, abandoned (its
  record kept, with a null result); its slot is free at once
- ``GET /api/games/{id}/record`` -> the finished game's record (JSON lines, 409 while playing)
- ``POST /api/replay`` (one record: the JSON object of one line of a record file) ->
  ``{"players", "names", "round_limit", "frames"}`` (``names``: how the board calls each seat)
- ``POST /api/watch`` ``{"players": ["heuristic", "search"], "seed": null}`` -> a whole game of two
  bots, ``{"players", "names", "frames", "record"}``, which the page shows move by move
- ``GET /api/opponents`` -> the opponents a browser may choose (also the bots it may watch), the
  default, each geisha's name, charm and colour (:mod:`hanamikoji_env.play.geishas`) and each
  action token's name and number of cards: with each view's ``choices`` (every legal action
  decoded: its id, kind and cards) all a page needs of the game's contract
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import threading
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from hanamikoji_env import records
from hanamikoji_env.actions import TOKEN_NAMES, TOKEN_SIZES
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import clip
from hanamikoji_env.first_run import warm_up
from hanamikoji_env.play import geishas
from hanamikoji_env.play.bodies import (
    MAX_BODY_BYTES,
    Move,
    NewGame,
    Turn,
    Watch,
    has_body,
    parse_json,
    read_body,
    validate,
)
from hanamikoji_env.play.protocol import BodyError
from hanamikoji_env.play.session import GameSession
from hanamikoji_env.play.store import (
    PER_CLIENT_GAMES,
    FinishedGame,
    GameStore,
    HeldGame,
    RateLimit,
    view,
)
from hanamikoji_env.play.workers import PooledBot, Workers, replayed, watched
from hanamikoji_env.rules import check_round_limit

if TYPE_CHECKING:
    import uvicorn

BUILTIN_OPPONENTS = ("random", "heuristic", "search")
NEW_GAMES_PER_MINUTE = 30
"""New games a client may start a minute, played and watched together."""
WATCHED_AT_ONCE = 4
"""Bot games the server plays for watchers at the same time (each queued for a worker)."""
REPLAYS_AT_ONCE = 4
"""Replays the server prepares at the same time (each queued for a worker)."""
PER_CLIENT_WATCHES = 2
"""Bot games one address may be watching at the same time."""
KEEP_ALIVE_SECONDS = 5
"""An idle connection is closed this long after its last response."""
MAX_FILES = 65_536
"""The most open files the server raises its limit to (from the system's soft limit, up to its
hard limit)."""
RESERVED_FILES = 200
"""Open files kept from the connection cap: the package's files, logs, pipes, threads."""
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""On every reply: the page may not be framed, and it runs only this server's own files."""


@dataclass
class Server:
    """What the routes share, kept on the app (``app.state.server``): the opponents a browser may
    pick, the games, the rate limit, the watched games' slots, the host names served and the
    worker processes."""

    opponent: str
    allowed: list[str]
    round_limit: int | None
    store: GameStore
    limiter: RateLimit
    watching: threading.BoundedSemaphore
    hosts: set[str] | None
    workers: Workers
    replaying: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(REPLAYS_AT_ONCE)
    )
    watchers: Counter[str] = field(default_factory=Counter)
    """Bot games each address is watching now (guarded by ``lock``)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, request: Request, players: list[str], refusal: str) -> None:
        """A new game, played or watched: only listed bots (never a file a browser names), and
        at most ``limiter.per_minute`` a minute from one address."""
        for spec in players:
            if spec not in self.allowed:
                raise HTTPException(400, f"{refusal} {self.allowed}, got {clip(spec, 50)!r}")
        if not self.limiter.allow(client_of(request)):
            raise HTTPException(
                429, f"at most {self.limiter.per_minute} new games and replays a minute from one address"
            )


STATIC = resources.files("hanamikoji_env.play") / "static"
router = APIRouter()


def server(request: Request) -> Server:
    return request.app.state.server


def client_of(request: Request) -> str:
    """The connection's address (a trusted proxy's ``X-Forwarded-For`` only with
    ``--forwarded-allow-ips``)."""
    return request.client.host if request.client else "?"


def shielded(work: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
    """``work`` run to its end even if the client goes away meanwhile: a game is never left
    between the person's move and the bot's reply, nor a slot held by work no one awaits."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read: never logged as lost
    return asyncio.shield(task)


def _hostname(url: str) -> str | None:
    """The host name of ``url`` (``""`` if it has none), or None if it cannot be parsed (``[``,
    ``[::1``, a bad port): a client's header, answered with a 400, never a traceback."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsed lazily: a bad port raises here
        return parts.hostname or ""
    except ValueError:
        return None


async def same_origin(request: Request, call_next: Callable) -> Response:
    """Only this server's own host names; writes only from its own pages; no framing, and only
    this server's own resources in its page."""
    host = request.headers.get("host", "")
    name = _hostname(f"//{host}")
    hosts = server(request).hosts
    origin = request.headers.get("origin")
    if name is None or (origin is not None and _hostname(origin) is None):  # e.g. Host: [
        response: Response = JSONResponse({"detail": "malformed Host or Origin header"}, 400)
    elif "content-length" in request.headers and "transfer-encoding" in request.headers:
        # two framings of one body: a proxy in front may read the other one (request smuggling)
        detail = "send Content-Length or Transfer-Encoding, not both"
        response = JSONResponse({"detail": detail}, 400, headers={"connection": "close"})
    elif hosts is not None and name not in hosts:
        response = JSONResponse({"detail": "unknown Host: this server answers to its own address only"}, 400)
    elif request.method not in ("GET", "HEAD") and origin is not None and urlsplit(origin).netloc != host:
        response = JSONResponse({"detail": "cross-origin writes are refused"}, 403)
    else:
        response = await call_next(request)
    response.headers.update(SECURITY_HEADERS)
    return response


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(str(STATIC / "index.html"), media_type="text/html")


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    return FileResponse(str(STATIC / "favicon.svg"), media_type="image/svg+xml")


@router.get("/api/opponents")
def opponents(request: Request) -> dict[str, Any]:
    srv = server(request)
    tokens = [{"name": n, "cards": c} for n, c in zip(TOKEN_NAMES, TOKEN_SIZES, strict=True)]
    return {"opponents": srv.allowed, "default": srv.opponent, "geishas": geishas.as_json(), "tokens": tokens}


@router.post("/api/games")
async def new_game(request: Request) -> dict[str, Any]:
    srv = server(request)
    body = validate(
        NewGame, parse_json(await read_body(request, MAX_BODY_BYTES)) if has_body(request) else None
    )
    chosen = body.opponent or srv.opponent
    srv.admit(request, [chosen], "opponent must be one of")

    def start() -> tuple[str, HeldGame]:
        pooled = srv.workers.bot(chosen)  # a light bot replies within the session, in this thread
        session = GameSession(
            chosen,
            body.seat,
            body.seed,
            srv.round_limit,
            bot=pooled,
            source="hanamikoji-serve",
            bot_replies=pooled is None,
        )
        gid = srv.store.add(session, client_of(request))
        return gid, srv.store.get(gid)  # type: ignore[return-value]

    gid, game = await run_in_threadpool(start)
    return await shielded(_play_and_reply(srv, gid, game, None))


@router.get("/api/games/{gid}")
async def get_game(gid: str, request: Request) -> dict[str, Any]:
    srv = server(request)
    game = await run_in_threadpool(srv.store.get, gid)
    if isinstance(game, FinishedGame):
        return game.view
    if isinstance(game.session.bot, PooledBot):  # after the bot's reply in hand, or one a failed
        return await shielded(_play_and_reply(srv, gid, game, None))  # request left (a worker killed)

    def read() -> dict[str, Any]:
        with game.lock:
            return view(gid, game.session)

    return await run_in_threadpool(read)


async def apply_move(srv: Server, gid: str, move: Callable[[GameSession], None]) -> dict[str, Any]:
    """The view after ``move`` (the person's) and the bot's replies; a move the session refuses
    is a 400, the game unchanged."""
    game = await run_in_threadpool(srv.store.get, gid)
    if isinstance(game, FinishedGame):
        raise HTTPException(409, "the game is over: start a new one")
    return await shielded(_play_and_reply(srv, gid, game, move))


async def _play_and_reply(
    srv: Server, gid: str, game: HeldGame, move: Callable[[GameSession], None] | None
) -> dict[str, Any]:
    """``move`` (None: none, a new game), then the bot's moves until it is the person's turn
    again, one request of the game at a time.  The person's move and the view are made in a
    thread under the game's lock; a pooled bot's moves in a worker (:class:`Workers`)."""

    def locked(work: Callable[[GameSession], Any]) -> Any:
        with game.lock:
            return work(game.session)

    def person(session: GameSession) -> None:
        if move is None:
            return
        try:
            move(session)
        except ValueError as e:
            raise HTTPException(400, clip(str(e), 300)) from None

    async with game.turn:
        await _bot_replies(srv, game, locked)  # any left by a request that failed midway
        await run_in_threadpool(locked, person)
        await _bot_replies(srv, game, locked)
        if move is not None:
            srv.store.after_move(gid, game)
        return await run_in_threadpool(locked, lambda session: view(gid, session))


async def _bot_replies(
    srv: Server, game: HeldGame, locked: Callable[[Callable[[GameSession], Any]], Any]
) -> None:
    """The bot's moves in a worker, each applied in a thread (a light bot has made its replies
    within the person's move)."""
    if not isinstance(game.session.bot, PooledBot):
        return
    while (obs := await run_in_threadpool(locked, GameSession.bot_observation)) is not None:
        action = await srv.workers.act(game.session.bot, obs, game.client)
        await run_in_threadpool(locked, lambda session: session.bot_play(action))  # noqa: B023 - awaited here


@router.post("/api/games/{gid}/actions")
async def play(gid: str, request: Request) -> dict[str, Any]:
    chosen = validate(Move, parse_json(await read_body(request, MAX_BODY_BYTES)))
    return await apply_move(server(request), gid, lambda session: session.play(chosen.action, chosen.pair_a))


@router.post("/api/games/{gid}/turn")
async def turn(gid: str, request: Request) -> dict[str, Any]:
    chosen = validate(Turn, parse_json(await read_body(request, MAX_BODY_BYTES)))
    return await apply_move(
        server(request), gid, lambda session: session.play_turn(chosen.cards, chosen.token)
    )


@router.post("/api/watch")
async def watch(request: Request) -> dict[str, Any]:
    srv = server(request)
    body = validate(Watch, parse_json(await read_body(request, MAX_BODY_BYTES)))
    srv.admit(request, body.players, "players must be among")

    client = client_of(request)
    with srv.lock:
        if srv.watchers[client] >= PER_CLIENT_WATCHES:
            raise HTTPException(429, f"one address may watch {PER_CLIENT_WATCHES} bot games at once")
        if not srv.watching.acquire(blocking=False):
            raise HTTPException(503, f"the server plays {WATCHED_AT_ONCE} bot games at once; try again later")
        srv.watchers[client] += 1

    async def play_out() -> bytes:
        try:
            players = (body.players[0], body.players[1])
            return await srv.workers.run(
                watched, players, body.seed, srv.round_limit, client=client, bulk=True
            )
        finally:  # when the game is over, not when the client leaves: a slot is the work's
            with srv.lock:
                srv.watchers[client] -= 1
                if not srv.watchers[client]:
                    del srv.watchers[client]
            srv.watching.release()

    return Response(await shielded(play_out()), media_type="application/json")


@router.delete("/api/games/{gid}")
async def leave(gid: str, request: Request) -> dict[str, Any]:
    """The person leaves the game: it ends abandoned (its record kept, downloadable), and its
    slot is free at once.  A game already over is left as it is (its view)."""
    srv = server(request)
    game = await run_in_threadpool(srv.store.get, gid)
    if isinstance(game, FinishedGame):
        return game.view
    async with game.turn:  # after any move in flight, whose bot replies then stop
        return await run_in_threadpool(srv.store.abandon, gid, game)


@router.get("/api/games/{gid}/record")
def record(gid: str, request: Request) -> Response:
    game = server(request).store.get(gid)
    if isinstance(game, FinishedGame):
        line = game.record
    else:
        with game.lock:
            if not game.session.over:
                raise HTTPException(409, "the game is not over: its record would show the hidden cards")
            line = game.session.record().to_json() + "\n"
    headers = {"Content-Disposition": f'attachment; filename="hanamikoji-{gid[:8]}.jsonl"'}
    return Response(line, media_type="application/x-ndjson", headers=headers)


@router.post("/api/replay")
async def replay(request: Request) -> Response:
    srv = server(request)
    srv.admit(request, [], "")  # replays count against the address's rate like new games
    client = client_of(request)
    body = await read_body(request, records.MAX_LINE_BYTES)
    if not srv.replaying.acquire(blocking=False):  # before any parsing: a refusal costs nothing
        raise HTTPException(503, f"the server prepares {REPLAYS_AT_ONCE} replays at once; try again shortly")

    async def frames() -> bytes:  # the body parsed in the worker too: 1 MB of JSON takes a while
        try:
            return await srv.workers.run(replayed, body, client=client, bulk=True)
        except BodyError as e:
            raise HTTPException(422, str(e)) from None
        except records.RecordError as e:
            raise HTTPException(400, clip(str(e), 300)) from None
        finally:
            srv.replaying.release()

    return Response(await shielded(frames()), media_type="application/json")


def create_app(
    opponent: str = "heuristic",
    round_limit: int | None = None,
    max_games: int = 100,
    idle_seconds: float = 3600.0,
    allowed_hosts: list[str] | None = None,
    new_games_per_minute: int = NEW_GAMES_PER_MINUTE,
    per_client_games: int = PER_CLIENT_GAMES,
    workers: int = 0,
) -> FastAPI:
    """The app; ``opponent`` (any player spec, checked now) is the default and joins the
    built-in bots a browser may pick: a browser never names a file.  ``allowed_hosts``: the
    host names (``Host`` header, port ignored) this server answers to; None: any (for tests
    and embedding; the command passes its own).  ``workers``: the processes that play the bots'
    moves, watched games and replays (0: threads of this process; the command starts one per
    core with :meth:`Workers.start`)."""
    parse_player(opponent)
    allowed = list(dict.fromkeys([opponent, *BUILTIN_OPPONENTS]))
    app = FastAPI(title="Hanamikoji", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.state.server = Server(
        opponent=opponent,
        allowed=allowed,
        round_limit=round_limit,
        store=GameStore(max_games, idle_seconds, per_client=per_client_games),
        limiter=RateLimit(new_games_per_minute),
        watching=threading.BoundedSemaphore(WATCHED_AT_ONCE),
        hosts=None if allowed_hosts is None else {h.lower() for h in allowed_hosts},
        workers=Workers(workers, allowed, round_limit),
    )
    app.middleware("http")(same_origin)
    app.include_router(router)
    return app


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hanamikoji-serve", description="Play Hanamikoji against a bot in the browser."
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=_port, default=8000, help="port to listen on, 1-65535 (default 8000)")
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="ADDRESSES",
        help="the reverse proxies (comma-separated addresses) whose X-Forwarded-For names the client; "
        "by default the header is ignored and a client is its connection's address",
    )
    p.add_argument(
        "--opponent", default="heuristic", help="default opponent: any player spec (default heuristic)"
    )
    p.add_argument("--round-limit", type=int, default=None, help="play at most this many rounds")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes that play the bots' moves, watched games and replays (default: one per core; "
        "0: threads of the serving process)",
    )
    p.add_argument("--max-games", type=int, default=100, help="games kept at once (default 100)")
    p.add_argument("--idle-minutes", type=float, default=60.0, help="drop a game idle this long (default 60)")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name the page is served under (repeatable; the bind address and localhost "
        "are always allowed)",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        round_limit = check_round_limit(args.round_limit)
        if not 1 <= args.max_games <= 100_000 or not 0 < args.idle_minutes <= 7 * 24 * 60:
            raise ValueError("--max-games must be in [1, 100000] and --idle-minutes in (0, 10080]")
        workers = len(os.sched_getaffinity(0)) if args.workers is None else args.workers
        if not 0 <= workers <= 256:
            raise ValueError(f"--workers must be in [0, 256], got {workers}")
        hosts = ["127.0.0.1", "localhost", "::1", args.host, *args.allowed_host]
        app = create_app(
            args.opponent, round_limit, args.max_games, args.idle_minutes * 60, hosts, workers=workers
        )
    except ValueError as e:
        parser.error(str(e))
    try:  # the address first: a port in use is said at once, not after the warm-up
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        listening = socket.create_server((args.host, args.port), family=family)
    except OSError as e:
        parser.error(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}")
    print("Hanamikoji: preparing the engine and every opponent a visitor may pick...", flush=True)
    srv = app.state.server
    warm_up(srv.allowed, round_limit)  # compiled before the first visitor, not on them
    srv.workers.start()  # each worker warms up too
    print(f"Hanamikoji: open http://{args.host}:{args.port} in a browser (Ctrl-C stops the server)")
    # uvicorn passes a SIGTERM on once it has shut down: raised here as SystemExit, so the
    # workers are closed too (the default action would end the process before the finally)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        uvicorn_server(app, args).run(sockets=[listening])
    finally:
        srv.workers.close()


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def uvicorn_server(app: FastAPI, args: argparse.Namespace) -> uvicorn.Server:
    """uvicorn serving ``app`` as :func:`uvicorn_options` says, its error log at most one line of
    a kind a minute (:class:`~hanamikoji_env.play.protocol.OnePerPeriod`)."""
    import uvicorn

    from hanamikoji_env.play.protocol import OnePerPeriod

    config = uvicorn.Config(app, **uvicorn_options(args))  # this configures uvicorn's loggers
    errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, OnePerPeriod) for f in errors.filters):
        errors.addFilter(OnePerPeriod())
    return uvicorn.Server(config)


def uvicorn_options(args: argparse.Namespace) -> dict[str, Any]:
    """How uvicorn serves: proxy headers only from the proxies the operator trusts; every request
    within a deadline (:mod:`hanamikoji_env.play.protocol`), idle keep-alive connections closed
    after :data:`KEEP_ALIVE_SECONDS`, at most :func:`connection_limit` at once (503 beyond)."""
    from hanamikoji_env.play.protocol import DeadlineH11Protocol

    trusted = args.forwarded_allow_ips
    return {
        "host": args.host,
        "port": args.port,
        "log_level": "warning",
        "proxy_headers": trusted is not None,
        "forwarded_allow_ips": trusted,
        "http": DeadlineH11Protocol,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "limit_concurrency": connection_limit(),
    }


def connection_limit() -> int:
    """Connections and requests in progress at once: the process's open-file limit, raised to
    the system's hard limit (at most :data:`MAX_FILES`), less :data:`RESERVED_FILES`.  One
    address holds at most :data:`~hanamikoji_env.play.protocol.PER_ADDRESS_CONNECTIONS` of them."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = MAX_FILES if hard == resource.RLIM_INFINITY else min(hard, MAX_FILES)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # a container that refuses: serve within the soft limit
            pass
    return max(soft - RESERVED_FILES, 64)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number in [1, 65535], got {text[:20]!r}")
    return port


if __name__ == "__main__":
    main()
