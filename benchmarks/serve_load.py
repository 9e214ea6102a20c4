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

Usage: ``python benchmarks/serve_load.py [--seconds 10] [--clients 1,50,200] [--replays 10]
[--idle 805 [--half] [--addresses 200]] [--workers N]``
"""

from __future__ import annotations

import argparse
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
from hanamikoji_env.play.server import build_parser, create_app, uvicorn_options


def _run_server(port: int, workers: int) -> None:
    app = create_app(
        "random", max_games=1000, new_games_per_minute=100_000, per_client_games=1000, workers=workers
    )
    app.state.server.workers.start()
    args = build_parser().parse_args(["--port", str(port)])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # uvicorn passes it on: the finally runs
    try:
        uvicorn.run(app, **{**uvicorn_options(args), "log_level": "error"})
    finally:
        app.state.server.workers.close()


def replayer(
    url: str, until: float, line: str, times: dict[str, list[float]], errors: dict[int, int], address: str
) -> None:
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=url, timeout=60, transport=transport) as http:
        while time.perf_counter() < until:
            start = time.perf_counter()
            response = http.post("/api/replay", content=line, headers={"content-type": "application/json"})
            times["POST /api/replay"].append(time.perf_counter() - start)
            if response.status_code != 200:
                errors[response.status_code] += 1
                time.sleep(0.05)


def serve(workers: int) -> tuple[str, multiprocessing.Process]:
    """The server in its own process (so the clients' threads do not share its interpreter)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = multiprocessing.get_context("spawn").Process(target=_run_server, args=(port, workers))
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
    args = p.parse_args()
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
