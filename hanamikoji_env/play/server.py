"""Play Hanamikoji in the browser: a small FastAPI server with one page.

    hanamikoji-serve [--host 127.0.0.1] [--port 8000] [--opponent heuristic]

Open http://127.0.0.1:8000 and play with the mouse; when the game is over,
download its record or step through it in the replay view (which also opens
any record file you upload).  The page and its script ship in the package
(``hanamikoji_env/play/static``): no CDN, no build step.

The server keeps every game and sends a browser only its own player's view
(:meth:`GameSession.view`), never the opponent's cards or the deck.  Every
request is validated: an unknown game id is a 404, a malformed body a 422, an
illegal move a 400 with the legal ones named, and the game is unchanged by any
of them.  Game ids are random 128-bit tokens, so one browser cannot reach
another's game.  At most ``max_games`` games are kept; one idle for
``idle_seconds`` is dropped.  The server binds 127.0.0.1 unless told otherwise.

API (JSON):

- ``POST /api/games`` ``{"opponent": "heuristic", "seat": 0, "seed": null}`` -> the view and ``"id"``
- ``GET /api/games/{id}`` -> the view
- ``POST /api/games/{id}/actions`` ``{"action": 4}`` -> the view after your move and the bot's replies
- ``GET /api/games/{id}/record`` -> the finished game's record (JSON lines, 409 while playing)
- ``POST /api/replay`` (a record file's text, one game) -> ``{"players", "frames"}``
- ``GET /api/opponents`` -> the opponents a browser may choose
"""

from __future__ import annotations

import argparse
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from hanamikoji_env import records
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.play.session import GameSession, replay_frames

BUILTIN_OPPONENTS = ("random", "heuristic", "search")
MAX_SEED = 2**63 - 1


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    opponent: str | None = Field(default=None, max_length=200)
    seat: Annotated[StrictInt, Field(ge=0, le=1)] = 0
    seed: Annotated[StrictInt, Field(ge=0, le=MAX_SEED)] | None = None


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Annotated[StrictInt, Field(ge=0, lt=NUM_ACTIONS)]


@dataclass
class _Game:
    session: GameSession
    touched: float


class GameStore:
    """The live games: bounded in number and idle lifetime; one lock for all of them."""

    def __init__(self, max_games: int, idle_seconds: float, clock: Any = time.monotonic) -> None:
        self.max_games, self.idle_seconds, self.clock = max_games, idle_seconds, clock
        self.games: OrderedDict[str, _Game] = OrderedDict()
        self.lock = threading.Lock()

    def _sweep(self) -> None:
        now = self.clock()
        for gid in [g for g, game in self.games.items() if now - game.touched > self.idle_seconds]:
            del self.games[gid]

    def add(self, session: GameSession) -> str:
        self._sweep()
        if len(self.games) >= self.max_games:
            raise HTTPException(503, f"the server holds its limit of {self.max_games} games; try again later")
        gid = secrets.token_urlsafe(16)
        self.games[gid] = _Game(session, self.clock())
        return gid

    def get(self, gid: str) -> GameSession:
        self._sweep()
        game = self.games.get(gid)
        if game is None:
            raise HTTPException(
                404,
                f"unknown game id (games idle for {self.idle_seconds:.0f} s are dropped); start a new game",
            )
        game.touched = self.clock()
        return game.session


def create_app(
    opponent: str = "heuristic",
    round_limit: int | None = None,
    max_games: int = 100,
    idle_seconds: float = 3600.0,
) -> FastAPI:
    """The app; ``opponent`` (any player spec, checked now) is the default and joins the
    built-in bots a browser may pick: a browser never names a file."""
    parse_player(opponent)
    allowed = list(dict.fromkeys([opponent, *BUILTIN_OPPONENTS]))
    store = GameStore(max_games, idle_seconds)
    app = FastAPI(title="Hanamikoji", docs_url=None, redoc_url=None, openapi_url=None)
    static = resources.files("hanamikoji_env.play") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.state.store = store

    def view(gid: str, session: GameSession) -> dict[str, Any]:
        return {"id": gid, **session.view()}

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    @app.get("/api/opponents")
    def opponents() -> dict[str, Any]:
        return {"opponents": allowed, "default": opponent}

    @app.post("/api/games")
    def new_game(body: NewGame | None = None) -> dict[str, Any]:
        body = body or NewGame()
        chosen = body.opponent or opponent
        if chosen not in allowed:
            raise HTTPException(400, f"opponent must be one of {allowed}, got {chosen[:50]!r}")
        session = GameSession(chosen, body.seat, body.seed, round_limit, source="hanamikoji-serve")
        with store.lock:
            return view(store.add(session), session)

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        with store.lock:
            return view(gid, store.get(gid))

    @app.post("/api/games/{gid}/actions")
    def play(gid: str, move: Move) -> dict[str, Any]:
        with store.lock:
            session = store.get(gid)
            try:
                session.play(move.action)
            except ValueError as e:
                raise HTTPException(400, str(e)) from None
            return view(gid, session)

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> Response:
        with store.lock:
            session = store.get(gid)
            if not session.over:
                raise HTTPException(409, "the game is not over: its record would show the hidden cards")
            line = session.record().to_json() + "\n"
        headers = {"Content-Disposition": f'attachment; filename="hanamikoji-{gid[:8]}.jsonl"'}
        return Response(line, media_type="application/x-ndjson", headers=headers)

    @app.post("/api/replay")
    async def replay(request: Request) -> dict[str, Any]:
        data = (await _read_bounded(request, records.MAX_LINE_BYTES)).decode("utf-8", "replace").strip()
        if not data:
            raise HTTPException(400, "send the text of a record file (one game, JSON lines)")
        lines = [line for line in data.splitlines() if line.strip()]
        if len(lines) != 1:
            raise HTTPException(400, f"send one game record, got {len(lines)} lines")
        try:
            record = records.parse_line(lines[0], "the record")
            frames = replay_frames(record)
        except records.RecordError as e:
            raise HTTPException(400, str(e)) from None
        return {"players": list(record.players), "round_limit": record.round_limit, "frames": frames}

    return app


async def _read_bounded(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes without reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"a record upload is at most {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"a record upload is at most {limit} bytes")
    return bytes(body)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hanamikoji-serve", description="Play Hanamikoji against a bot in the browser."
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--opponent", default="heuristic", help="default opponent: any player spec (default heuristic)"
    )
    p.add_argument("--round-limit", type=int, default=None, help="play at most this many rounds")
    p.add_argument("--max-games", type=int, default=100, help="games kept at once (default 100)")
    p.add_argument("--idle-minutes", type=float, default=60.0, help="drop a game idle this long (default 60)")
    return p


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.round_limit is not None and args.round_limit < 1:
            raise ValueError(f"--round-limit must be >= 1, got {args.round_limit}")
        if args.max_games < 1 or not args.idle_minutes > 0:
            raise ValueError("--max-games must be >= 1 and --idle-minutes > 0")
        app = create_app(args.opponent, args.round_limit, args.max_games, args.idle_minutes * 60)
    except ValueError as e:
        parser.error(str(e))
    import uvicorn

    print(f"Hanamikoji: open http://{args.host}:{args.port} in a browser (Ctrl-C stops the server)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
