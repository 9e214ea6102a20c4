"""The browser server under load, on loopback: requests/s and latency per endpoint, and memory.

Starts ``hanamikoji-serve``'s app (opponent ``random``, its per-address limits
lifted: every client here is 127.0.0.1) on 127.0.0.1 in its own process, as the
command serves it, and runs 1, 50 and 200 clients for ``--seconds`` each; every
client starts a game, then reads it and moves until it ends, and starts another.
``--replays K`` adds K clients, from K loopback addresses (127.0.1.1, ...), that
upload a record of about 4,900 decisions (:func:`hanamikoji_env.records.long_game`,
as long as a replay accepts) for replay, again and again (a replay-heavy mix: at
most 4 are prepared at once, the rest are 503s), while ``--idle N`` connections stay open: silent, or with
``--half`` half a request sent, from ``--addresses K`` loopback addresses
(127.0.0.2, ...; the measured clients are 127.0.0.1), each reopened at once when
the server closes it (its request deadline, or the per-address cap), as an
attacker holding the server's connections would.
The server's worker processes are the command's (one per core; ``--workers N``,
0 for the serving process's threads, the design before them).
Prints, per client count: requests/s, p50 and p99 latency of each endpoint,
the errors seen, and the server process's peak RSS.  Loopback only, bounded in time.

``--audit`` runs instead the misbehaving clients of the fourth audit against a server with the
command's own limits, each beside its target: a body trickled a byte every 2 s (closed within
the request deadline); 1,000 bodies half sent then hung up (the server's log grows under
100 KB); 100 games held by 10 addresses (an 11th address starts a game, 10 tries of 10); ten
addresses replaying long records (a ``search`` game's move p99 under 1 s); one address playing
ten games against a heavy search (another address's move p99 within 3x its quiet p99, both
measured in this run).

Usage: ``python benchmarks/serve_load.py [--seconds 10] [--clients 1,50,200] [--replays 10]
[--idle 805 [--half] [--addresses 200]] [--workers N]``, or ``--audit [--workers N]``
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections import defaultdict

import httpx
import numpy as np
import uvicorn

from hanamikoji_env import records
from hanamikoji_env.play.protocol import REQUEST_SECONDS
from hanamikoji_env.play.server import build_parser, create_app, uvicorn_options, uvicorn_server

HEAVY = "search:samples=2000"
"""The audit's heavy opponent: a search bot ten times the default's samples."""


def _run_server(port: int, workers: int, audit: str | None = None) -> None:
    """The load test's server (limits lifted: every client is 127.0.0.1), or with ``audit`` (its
    log file) the command's own limits, the heavy search allowed, and its log in that file."""
    if audit is None:
        app = create_app(
            "random", max_games=1000, new_games_per_minute=100_000, per_client_games=1000, workers=workers
        )
    else:
        log = os.open(audit, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        app = create_app(HEAVY, workers=workers)
    app.state.server.workers.start()
    args = build_parser().parse_args(["--port", str(port)])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # uvicorn passes it on: the finally runs
    try:
        if audit is None:
            uvicorn.run(app, **{**uvicorn_options(args), "log_level": "error"})
        else:  # as the command serves: its log level, its rate-limited error log
            uvicorn_server(app, args).run()
    finally:
        app.state.server.workers.close()


def visitor(url: str, address: str, timeout: float = 120) -> httpx.Client:
    """A client whose requests come from ``address`` (any 127.x.y.z: the server's limits are per
    address, so each stands for another visitor)."""
    return httpx.Client(base_url=url, timeout=timeout, transport=httpx.HTTPTransport(local_address=address))


def replayer(
    url: str, until: float, line: str, times: dict[str, list[float]], errors: dict[int, int], address: str
) -> None:
    with visitor(url, address, timeout=60) as http:
        while time.perf_counter() < until:
            start = time.perf_counter()
            response = http.post("/api/replay", content=line, headers={"content-type": "application/json"})
            times["POST /api/replay"].append(time.perf_counter() - start)
            if response.status_code != 200:
                errors[response.status_code] += 1
                time.sleep(0.05)


def serve(workers: int, audit: str | None = None) -> tuple[str, multiprocessing.Process]:
    """The server in its own process (so the clients' threads do not share its interpreter)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = multiprocessing.get_context("spawn").Process(target=_run_server, args=(port, workers, audit))
    process.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/api/opponents").status_code == 200:
                return url, process
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (Linux: VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def client(url: str, until: float, times: dict[str, list[float]], errors: dict[int, int]) -> None:
    with httpx.Client(base_url=url, timeout=30) as http:
        game = None
        while time.perf_counter() < until:
            start = time.perf_counter()
            if game is None or game["result"] is not None:
                name, response = "POST /api/games", http.post("/api/games", json={})
            elif len(times["GET /api/games/{id}"]) <= len(times["POST /api/games/{id}/actions"]):
                name, response = "GET /api/games/{id}", http.get(f"/api/games/{game['id']}")
            else:
                move = {"action": game["choices"][0]["action"]}
                name = "POST /api/games/{id}/actions"
                response = http.post(f"/api/games/{game['id']}/actions", json=move)
            times[name].append(time.perf_counter() - start)
            if response.status_code != 200:
                errors[response.status_code] += 1
                game = None
                continue
            game = response.json()


def holder(port: int, count: int, addresses: int, half: bool, until: float, opened: list[int]) -> None:
    """Keep ``count`` connections open until ``until``, spread over ``addresses`` source
    addresses, each silent or half a request in, reopened as soon as the server closes it."""
    import selectors

    def connect(k: int) -> socket.socket | None:
        try:
            conn = socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.{2 + k % addresses // 250}.{2 + k % addresses % 250}", 0), timeout=5)  # fmt: skip
            if half:
                conn.sendall(b"GET /api/opponents HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            conn.setblocking(False)
            opened[0] += 1
            return conn
        except OSError:
            return None

    sel = selectors.DefaultSelector()
    for k in range(count):
        conn = connect(k)
        if conn is not None:
            sel.register(conn, selectors.EVENT_READ, k)
    while time.perf_counter() < until:
        for key, _ in sel.select(timeout=0.2):
            conn, k = key.fileobj, key.data
            try:
                data = conn.recv(4096)  # type: ignore[union-attr]
            except OSError:
                data = b""
            if not data:  # closed by the server: open another in its place
                sel.unregister(conn)
                conn.close()  # type: ignore[union-attr]
                again = connect(k)
                if again is not None:
                    sel.register(again, selectors.EVENT_READ, k)
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]


# ------------------------------------------------------------ the audit ---


def play_moves(http: httpx.Client, opponent: str, until: float, times: list[float]) -> None:
    """Games against ``opponent``, one after another, each move timed (with the bot's replies)."""
    game = None
    while time.perf_counter() < until:
        if game is None or game["result"] is not None:
            started = http.post("/api/games", json={"opponent": opponent})
            if started.status_code == 429:  # 30 new games a minute: a quick player waits its turn
                time.sleep(1.0)
                continue
            if started.status_code != 200:
                raise RuntimeError(
                    f"a new game against {opponent}: {started.status_code} {started.text[:200]}"
                )
            game = started.json()
            continue
        start = time.perf_counter()
        reply = http.post(f"/api/games/{game['id']}/actions", json={"action": game["choices"][0]["action"]})
        times.append(time.perf_counter() - start)
        if reply.status_code != 200:
            raise RuntimeError(f"a move against {opponent}: {reply.status_code} {reply.text[:200]}")
        game = reply.json()


def _p99_ms(times: list[float]) -> float:
    return float(np.percentile(np.array(times) * 1000, 99)) if times else float("nan")


def trickled(port: int) -> tuple[str, bool]:
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n{")  # fmt: skip
    start = time.perf_counter()
    closed = None
    conn.settimeout(2.0)
    while time.perf_counter() - start < 3 * REQUEST_SECONDS and closed is None:
        try:
            if conn.recv(100) == b"":
                closed = time.perf_counter() - start
            else:
                break  # answered: the body was never whole, so a reply is a failure too
        except TimeoutError:
            try:
                conn.sendall(b" ")
            except OSError:
                closed = time.perf_counter() - start
        except OSError:
            closed = time.perf_counter() - start
    conn.close()
    ok = closed is not None and closed <= REQUEST_SECONDS + 2
    return f"closed after {closed:.1f} s" if closed is not None else "still open", ok


def hung_up(port: int, log: str) -> tuple[str, bool]:
    before = os.path.getsize(log)
    for k in range(1000):
        with socket.create_connection(
            ("127.0.0.1", port), source_address=(f"127.0.4.{1 + k % 200}", 0)
        ) as half:
            half.sendall(b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 5000\r\n\r\n{\"schema\"")  # fmt: skip
    time.sleep(1.0)
    grown = os.path.getsize(log) - before
    return f"log grew {grown / 1024:.1f} KB", grown < 100 * 1024


def held_games(url: str) -> tuple[str, bool]:
    for a in range(10):
        with visitor(url, f"127.0.2.{a + 1}") as http:
            for _ in range(10):
                http.post("/api/games", json={"opponent": "random"}).raise_for_status()
    started = 0
    with visitor(url, "127.0.2.100") as http:
        for _ in range(10):
            started += http.post("/api/games", json={"opponent": "random"}).status_code == 200
    return f"{started} of 10 tries started a game", started == 10


def beside_replays(url: str, seconds: float) -> tuple[str, bool]:
    line = records.long_game(4900).to_json()
    times: dict[str, list[float]] = defaultdict(list)
    errors: dict[int, int] = defaultdict(int)
    until = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=replayer, args=(url, until, line, times, errors, f"127.0.1.{k + 1}"))
        for k in range(10)
    ]
    moves: list[float] = []
    with visitor(url, "127.0.5.1") as http:
        for t in threads:
            t.start()
        play_moves(http, "search", until, moves)
        for t in threads:
            t.join()
    p99 = _p99_ms(moves)
    return f"move p99 {p99:.0f} ms ({len(moves)} moves, {len(times['POST /api/replay'])} replays)", p99 < 1000


def beside_heavy_games(url: str, seconds: float) -> tuple[str, bool]:
    """Moves against ``search`` quiet, then beside ten heavy games of one address (127.0.7.1)."""
    quiet: list[float] = []
    with visitor(url, "127.0.6.1") as http:
        play_moves(http, "search", time.perf_counter() + seconds, quiet)
    heavy_until = time.perf_counter() + seconds
    heavy = [threading.Thread(target=_heavy_player, args=(url, heavy_until)) for _ in range(10)]
    for t in heavy:
        t.start()
    time.sleep(1.0)  # their games under way
    loaded: list[float] = []
    with visitor(url, "127.0.6.2") as http:  # another address of the same kind: its own rate of new games
        play_moves(http, "search", heavy_until, loaded)
    for t in heavy:
        t.join()
    quiet_p99, loaded_p99 = _p99_ms(quiet), _p99_ms(loaded)
    said = (
        f"move p99 {loaded_p99:.0f} ms beside them, {quiet_p99:.0f} ms quiet ({loaded_p99 / quiet_p99:.1f}x)"
    )
    return said, loaded_p99 <= 3 * quiet_p99


def _heavy_player(url: str, until: float) -> None:
    with visitor(url, "127.0.7.1") as http, contextlib.suppress(httpx.HTTPError):
        play_moves(http, HEAVY, until, [])


def audit(workers: int, seconds: float) -> None:
    """Each misbehaviour against a server of its own (the command's limits, its log in a file)."""
    import tempfile

    print("| misbehaving clients | measured | target met |")
    print("|---|---|---|")
    for name, check in (
        ("a body trickled a byte every 2 s", lambda url, log: trickled(int(url.rsplit(":", 1)[1]))),
        ("1,000 bodies half sent, then hung up", lambda url, log: hung_up(int(url.rsplit(":", 1)[1]), log)),
        ("100 games held by 10 addresses; an 11th starts one", lambda url, log: held_games(url)),
        ("ten addresses replaying 4,900-decision records", lambda url, log: beside_replays(url, seconds)),
        (f"one address playing ten games against {HEAVY}", lambda url, log: beside_heavy_games(url, seconds)),
    ):
        log = os.path.join(tempfile.mkdtemp(), "server.log")
        url, server = serve(workers, audit=log)
        try:
            said, ok = check(url, log)
        finally:
            server.terminate()
            server.join(30)
        print(f"| {name} | {said} | {'yes' if ok else 'NO'} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--clients", default="1,50,200")
    p.add_argument("--replays", type=int, default=0, help="clients uploading replays meanwhile")
    p.add_argument("--idle", type=int, default=0, help="connections held open (and reopened) meanwhile")
    p.add_argument("--half", action="store_true", help="the held connections send half a request")
    p.add_argument(
        "--addresses", type=int, default=1, help="loopback addresses the held connections come from"
    )
    p.add_argument(
        "--workers", type=int, default=len(os.sched_getaffinity(0)), help="the server's worker processes"
    )
    p.add_argument(
        "--audit", action="store_true", help="the misbehaving clients of the audit, each beside its target"
    )
    args = p.parse_args()
    if args.audit:
        audit(args.workers, args.seconds)
        return
    line = records.long_game(4900).to_json() if args.replays else ""
    url, server = serve(args.workers)
    with httpx.Client(base_url=url) as http:  # warm up: the first game compiles the engine's kernels
        http.post("/api/games", json={})
    print("| clients | requests/s | endpoint | p50 ms | p99 ms | ok | errors | held opened | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for count in (int(c) for c in args.clients.split(",")):
        times: dict[str, list[float]] = defaultdict(list)
        errors: dict[int, int] = defaultdict(int)
        port = int(url.rsplit(":", 1)[1])
        opened, attacker = [0], None
        if args.idle:  # in a process of its own: its reconnect loop must not slow the measured clients
            context = multiprocessing.get_context("spawn")
            opened_at = context.Array("q", 1)
            held_until = time.perf_counter() + 2.0 + args.seconds
            attacker = context.Process(
                target=holder, args=(port, args.idle, args.addresses, args.half, held_until, opened_at)
            )
            attacker.start()
            time.sleep(2.0)  # the connections are held before the clients start
        until = time.perf_counter() + args.seconds
        threads = [threading.Thread(target=client, args=(url, until, times, errors)) for _ in range(count)]
        threads += [
            threading.Thread(target=replayer, args=(url, until, line, times, errors, f"127.0.1.{k + 1}"))
            for k in range(args.replays)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if attacker is not None:
            attacker.join()
            opened = [opened_at[0]]
        total = sum(len(v) for v in times.values())
        ok = 1 - sum(errors.values()) / max(total, 1)
        rss = peak_rss_mb(server.pid)
        for name, values in sorted(times.items()):
            ms = np.array(values) * 1000
            print(
                f"| {count} | {total / args.seconds:,.0f} | {name} | {np.percentile(ms, 50):.1f} | "
                f"{np.percentile(ms, 99):.1f} | {ok:.1%} | {dict(errors) or '-'} | {opened[0]} | {rss:.0f} |",
                flush=True,
            )
    server.terminate()  # uvicorn stops on SIGTERM, and the server's workers with it
    server.join(30)


if __name__ == "__main__":
    main()
