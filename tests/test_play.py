"""Playing against a bot: the game model, the terminal board (driven by Textual's pilot) and
the browser server's API (FastAPI's test client).  The real browser is in test_browser.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hanamikoji_env import records
from hanamikoji_env.actions import TRADEOFF
from hanamikoji_env.aec import AGENTS
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.observation import decode
from hanamikoji_env.play.session import VIEW_KEYS, GameSession, board, replay_frames
from hanamikoji_env.rules import cards_of

pytest.importorskip("textual")
pytest.importorskip("fastapi")

from fastapi.testclient import TestClient
from helpers import OpponentPolicy, swapped_deals

from hanamikoji_env.play import tui
from hanamikoji_env.play.server import GameStore, create_app

PRIVATE_KINDS = {"secret", "trade-off", "draw"}


def check_view_holds_only_the_players_information(session: GameSession, view: dict) -> None:
    """The board is exactly the decoding of the person's own observation; the opponent's
    private moves carry no cards; nothing else is in a view."""
    assert set(view) == set(VIEW_KEYS)
    obs = session.env.observe(AGENTS[session.seat])["observation"]
    assert view["board"] == board(decode(obs))
    for event in view["events"]:
        if event["who"] == "opponent" and event["kind"] in PRIVATE_KINDS:
            assert event["cards"] == [], event
        assert set(event) <= {"who", "kind", "cards", "text", "n", "points", "geishas", "markers"}


def play_out(session: GameSession, pick=lambda choices: choices[0]) -> int:
    moves = 0
    while not session.over:
        view = session.view()
        check_view_holds_only_the_players_information(session, view)
        session.play(pick([c["action"] for c in view["choices"]]))
        moves += 1
    check_view_holds_only_the_players_information(session, session.view())
    return moves


@pytest.mark.parametrize(("seat", "opponent"), [(0, "random"), (1, "heuristic")])
def test_a_person_plays_a_whole_game_and_its_record_verifies(seat: int, opponent: str) -> None:
    session = GameSession(opponent, seat=seat, seed=21)
    play_out(session, pick=lambda c: c[-1])
    view = session.view()
    assert view["result"]["winner"] in ("you", "opponent", "draw")
    record = session.record()
    records.verify(record)
    assert record.players[seat] == "human" and record.players[1 - seat] == opponent
    kinds = [e["kind"] for e in view["events"]]
    assert kinds.count("scoring") == record.rounds and kinds[-1] == "end"
    # every move of the game shows in the log: both players' four tokens a round
    for who in ("you", "opponent"):
        tokens = [e for e in view["events"] if e["who"] == who and e["kind"] in PRIVATE_KINDS - {"draw"}]
        assert len(tokens) == 2 * record.rounds


class HidingBot(Bot):
    """helpers.OpponentPolicy (hides one reserved card with a token) acting on its own observation."""

    def __init__(self, policy: OpponentPolicy) -> None:
        super().__init__(0)
        self.policy = policy

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        info = decode(vector)
        me = self.policy.seat
        hands = {me: info.hand, 1 - me: None}
        state = SimpleNamespace(
            phase=info.phase, selection=cards_of(info.selection), hands=hands, token=info.token
        )
        return self.policy.act(state, mask)  # type: ignore[arg-type]


@pytest.mark.parametrize("seat", [0, 1])
def test_cards_the_person_cannot_know_change_nothing_they_are_shown(seat: int) -> None:
    """Two deals that differ only in the removed card and a card the bot hides with Trade-off:
    every view the person gets, log and scoring included, is the same in both."""
    rng = np.random.default_rng(seat)
    for game in range(5):
        deck_a, deck_b, card_a, card_b = swapped_deals(rng, seat, draw=game % 2 == 1)
        sessions = [
            GameSession(
                "hider",
                seat,
                seed=game,
                bot=HidingBot(OpponentPolicy(1 - seat, card, TRADEOFF, game)),
                decks=[deck],
            )
            for deck, card in ((deck_a, card_a), (deck_b, card_b))
        ]
        assert sessions[0].env.game != sessions[1].env.game
        while sessions[0].view()["round"] == 1 and not sessions[0].over:
            views = [s.view() for s in sessions]
            assert views[0] == views[1]
            for s in sessions:
                s.play(views[0]["choices"][0]["action"])
        assert sessions[0].view()["events"] == sessions[1].view()["events"]  # round 1's scoring too


def test_the_same_seed_gives_the_same_game() -> None:
    a, b = GameSession("heuristic", seed=5), GameSession("heuristic", seed=5)
    play_out(a)
    play_out(b)
    assert a.record().to_json() == b.record().to_json()


def test_a_move_that_is_not_legal_changes_nothing() -> None:
    session = GameSession("random", seat=0, seed=2)
    before = (session.view(), session.env.history())
    for bad in (22, 99, -1, "4", True, 4.0):
        with pytest.raises(ValueError):
            session.play(bad)  # type: ignore[arg-type]
    assert (session.view(), session.env.history()) == before
    play_out(session)
    with pytest.raises(ValueError, match="over"):
        session.play(0)


def test_replay_frames_step_through_every_position_with_all_cards() -> None:
    session = GameSession("random", seed=8)
    play_out(session)
    record = session.record()
    frames = replay_frames(record)
    assert len(frames) == len(record.actions) + 1
    assert frames[0]["move"] is None and frames[1]["move"].startswith("human (player_0): token:")
    assert frames[-1]["winner"] == record.winner
    assert sum(map(len, frames[0]["hands"])) == 13  # the starter's draw included


# ------------------------------------------------------------------ terminal ---


async def _drive(app: tui.PlayApp, limit: int = 300) -> int:
    """Press "1" (the first choice) until the game is over or ``limit`` presses."""
    async with app.run_test(size=(110, 45)) as pilot:
        await pilot.press("9")  # no 9th choice in Hanamikoji: a bell, nothing played
        presses = 0
        while not app.session.over and presses < limit:
            await pilot.press("1")
            presses += 1
        await pilot.pause()
        await pilot.press("q")
    return presses


def test_the_terminal_board_takes_numbered_choices() -> None:
    app = tui.PlayApp(GameSession("random", seat=0, seed=4), None)
    asyncio.run(_drive(app, limit=2))
    hand = app.session.view()["board"]["hand"]
    (token, card) = app.session.env.history().actions[:2]
    assert token == (0, 0)  # [1] is Secret, and the 9 pressed first played nothing
    assert card[0] == 0 and 4 <= card[1] <= 10
    assert app.shown_status.count("You play Secret") == 0  # the status shows the table, the log the moves
    assert "Your hand: " + " ".join(f"G{g}" for g in hand) in app.shown_status
    assert app.shown_log[0].startswith("You play Secret")


@pytest.mark.slow
def test_the_terminal_board_plays_a_whole_game_by_keys_and_appends_records(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    for seed in (1, 2):
        app = tui.PlayApp(GameSession("heuristic", seat=seed % 2, seed=seed), path)
        presses = asyncio.run(_drive(app))
        assert presses == sum(1 for s, _ in app.session.record().actions if s == seed % 2)
        assert app.recorded and "Game over" in app.shown_status and "Press q to quit" in app.shown_status
        assert app.shown_log[-1].startswith("The game record was appended")
    saved = list(records.read_records(path))
    assert len(saved) == 2  # the second game was appended, not written over the first
    for r in saved:
        records.verify(r)


def test_the_terminal_board_shows_the_table_as_the_person_sees_it() -> None:
    session = GameSession("random", seat=0, seed=3)
    view = session.view()
    text = str(tui.status_text(view))
    assert "Your hand: " + " ".join(f"G{g}" for g in view["board"]["hand"]) in text
    assert "[1] Secret (1 card)" in text and "[4] Competition (4 cards)" in text


def test_hanamikoji_play_refuses_bad_arguments(capsys, tmp_path: Path) -> None:
    for argv, message in [
        (["--opponent", "nobody"], "unknown player"),
        (["--seed", "-1"], "--seed"),
        (["--round-limit", "0"], "--round-limit"),
        (["--record", str(tmp_path / "missing" / "x.jsonl")], "No such file"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            tui.main(argv)
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err


# ------------------------------------------------------------------- server ---


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app("random", max_games=3, idle_seconds=60))


def new_game(client: TestClient, **body) -> dict:
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_server_plays_whole_games_and_sends_only_the_players_view(client: TestClient) -> None:
    store: GameStore = client.app.state.store  # type: ignore[attr-defined]
    for seat in (0, 1):
        view = new_game(client, seat=seat, seed=10 + seat, opponent="heuristic")
        gid = view.pop("id")
        assert view["practice"]  # a chosen seed: whoever chose it knows the deal
        while view["result"] is None:
            session = store.games[gid].session
            check_view_holds_only_the_players_information(session, view)
            view = client.post(
                f"/api/games/{gid}/actions", json={"action": view["choices"][0]["action"]}
            ).json()
            assert view.pop("id") == gid
        record = client.get(f"/api/games/{gid}/record")
        assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
        (game,) = [records.parse_line(line) for line in record.text.splitlines()]
        records.verify(game)
        assert game.meta["practice"] is True and game.meta["seed"] == 10 + seat
        assert gid not in store.games and gid in store.finished  # its slot is free at once
        frames = client.post("/api/replay", json=json.loads(record.text)).json()["frames"]
        assert len(frames) == len(game.actions) + 1


def test_server_validates_every_request_and_leaves_the_game_unchanged(client: TestClient) -> None:
    view = new_game(client, seed=1)
    gid = view["id"]
    legal = [c["action"] for c in view["choices"]]
    illegal = next(a for a in range(23) if a not in legal)
    cases = [
        ({"action": illegal}, 400, "not legal now"),
        ({"action": 23}, 422, ""),
        ({"action": "4"}, 422, ""),
        ({"action": True}, 422, ""),
        ({"action": 1.0}, 422, ""),
        ({"move": 1}, 422, ""),
        ({}, 422, ""),
    ]
    for body, status, message in cases:
        response = client.post(f"/api/games/{gid}/actions", json=body)
        assert response.status_code == status, (body, response.text)
        assert message in response.text
    oops = client.post(
        f"/api/games/{gid}/actions", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert oops.status_code == 422
    assert client.get(f"/api/games/{gid}").json() == view
    assert client.get(f"/api/games/{gid}/record").status_code == 409  # would show the deck
    assert client.get("/api/games/not-a-game").status_code == 404
    for body in (
        {"seat": 2},
        {"seed": -1},
        {"seat": "0"},
        {"colour": "red"},
        {"opponent": "ckpt:/etc/passwd"},
    ):
        response = client.post("/api/games", json=body)
        assert response.status_code in (400, 422), body
    assert "opponent must be one of" in client.post("/api/games", json={"opponent": "ckpt:x.pt"}).text


def test_games_of_different_browsers_are_isolated(client: TestClient) -> None:
    a, b = new_game(client, seed=4), new_game(client, seed=4)
    assert a["id"] != b["id"] and len(a["id"]) >= 20
    moved = client.post(f"/api/games/{a['id']}/actions", json={"action": a["choices"][0]["action"]}).json()
    assert (moved["phase"], moved["board"]) != (a["phase"], a["board"])
    assert client.get(f"/api/games/{b['id']}").json() == b


def test_the_number_of_games_and_their_idle_lifetime_are_bounded(client: TestClient) -> None:
    store: GameStore = client.app.state.store  # type: ignore[attr-defined]
    now = [0.0]
    store.clock = lambda: now[0]
    views = [new_game(client) for _ in range(3)]
    full = client.post("/api/games", json={})
    assert full.status_code == 503 and "limit of 3 games in play" in full.text
    now[0] = 30.0
    first = views[0]
    client.post(f"/api/games/{first['id']}/actions", json={"action": first["choices"][0]["action"]})  # moved
    client.get(f"/api/games/{views[1]['id']}")  # only read: a read does not keep a game alive
    now[0] = 70.0
    assert new_game(client)["id"]  # the two idle games were dropped
    gone = client.get(f"/api/games/{views[1]['id']}")
    assert gone.status_code == 404 and "live in this server's memory only" in gone.text
    assert client.get(f"/api/games/{first['id']}").status_code == 200


def test_the_replay_upload_is_bounded_and_checked(client: TestClient) -> None:
    jsonl = {"content-type": "application/json"}
    huge = client.post("/api/replay", content=b"x" * (records.MAX_LINE_BYTES + 1), headers=jsonl)
    assert huge.status_code == 413
    bad = client.post("/api/replay", json={"schema": 1})
    assert bad.status_code == 400 and "missing keys" in bad.json()["detail"]
    session = GameSession("random", seed=6)
    play_out(session)
    d = session.record().to_dict()
    d["actions"][2][1] = 22
    tampered = client.post("/api/replay", json=d)
    assert tampered.status_code == 400 and "illegal" in tampered.json()["detail"]
    two = session.record().to_json() + "\n" + session.record().to_json()
    assert client.post("/api/replay", content=two, headers=jsonl).status_code == 422  # not one JSON value
    text = client.post(
        "/api/replay", content=session.record().to_json(), headers={"content-type": "text/plain"}
    )
    assert text.status_code == 415  # a form could send text/plain from any site


def test_the_page_and_its_assets_ship_in_the_package(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for asset in ("app.js", "style.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert "http" not in page.text.replace("http-equiv", "")  # no CDN
    assert client.get("/api/opponents").json() == {
        "opponents": ["random", "heuristic", "search"],
        "default": "random",
    }


def test_hanamikoji_serve_checks_its_opponent_before_starting(capsys) -> None:
    from hanamikoji_env.play.server import main

    with pytest.raises(SystemExit) as exit_:
        main(["--opponent", "ckpt:/no/such.pt"])
    assert exit_.value.code == 2
    assert "no/such.pt" in capsys.readouterr().err


def test_hostile_bodies_are_refused_before_they_are_parsed() -> None:
    client = TestClient(create_app("random"))
    jsonl = {"content-type": "application/json"}
    big = client.post("/api/games", content=b'{"opponent": "' + b"x" * 30_000_000 + b'"}', headers=jsonl)
    assert big.status_code == 413 and len(big.content) < 200  # refused unread, nothing echoed
    for body, fragment in [
        (b'{"action": NaN}', "numbers must be finite"),
        (b'{"action": Infinity}', "numbers must be finite"),
        (b'{"action": 1e400}', "numbers must be finite"),
        (b'{"action": ' + b"9" * 5000 + b"}", "at most 20 digits"),
        (b"[" * 100_000, "not valid JSON"),
    ]:
        game = new_game(client)
        response = client.post(f"/api/games/{game['id']}/actions", content=body, headers=jsonl)
        assert response.status_code in (413, 422), (body[:30], response.text)
        assert response.status_code == 413 or fragment in response.json()["detail"]
        assert len(response.content) < 400
    wordy = client.post("/api/games", json={"opponent": "x" * 10_000})
    assert wordy.status_code == 422 and len(wordy.content) < 400  # the excerpt, not the input
    form = client.post(
        "/api/games", content=b"seat=0", headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert form.status_code == 415


def test_cross_origin_writes_and_unknown_hosts_are_refused() -> None:
    app = create_app("random", allowed_hosts=["127.0.0.1", "localhost", "testserver"])
    client = TestClient(app)
    assert client.post("/api/games", json={}, headers={"origin": "http://testserver"}).status_code == 200
    evil = client.post("/api/games", json={}, headers={"origin": "https://evil.example"})
    assert evil.status_code == 403 and "cross-origin" in evil.text
    assert client.post("/api/games", headers={"origin": "https://evil.example"}).status_code == 403  # no body
    rebound = client.get("/api/opponents", headers={"host": "evil.example:8000"})
    assert rebound.status_code == 400 and "unknown Host" in rebound.text


def test_new_games_are_rate_limited_per_client() -> None:
    client = TestClient(create_app("random", max_games=100, new_games_per_minute=5))
    codes = [client.post("/api/games", json={}).status_code for _ in range(7)]
    assert codes == [200] * 5 + [429] * 2


def test_server_seeds_are_secret_and_chosen_seeds_make_practice_games(client: TestClient) -> None:
    store: GameStore = client.app.state.store  # type: ignore[attr-defined]
    dealt = new_game(client)
    assert dealt["practice"] is False
    session = store.games[dealt["id"]].session
    assert session.seed.bit_length() > 96  # 128 bits from the OS: no brute force from one's own cards
    play_out(session)
    record = session.record()
    assert "seed" not in record.meta and record.meta["practice"] is False
    assert str(session.seed) not in record.to_json()
    assert new_game(client, seed=5)["practice"] is True


def test_the_replay_endpoint_and_the_records_cli_read_the_same_bytes(
    client: TestClient, tmp_path: Path
) -> None:
    """A byte-order mark or a raw U+2028 in a name: the server and ``records verify`` agree."""
    session = GameSession("random", seed=8)
    play_out(session)
    line = session.record().to_json()
    for variant in (
        "\ufeff" + line,
        line.replace('"hanamikoji-serve"', '"a\u2028b"').replace('"hanamikoji-play"', '"a\u2028b"'),
    ):
        data = variant.encode()
        served = client.post("/api/replay", content=data, headers={"content-type": "application/json"})
        path = tmp_path / "game.jsonl"
        path.write_bytes(data + b"\n")
        try:
            records.verify(next(records.read_records(path)))
            read = True
        except records.RecordError:
            read = False
        assert (served.status_code == 200) == read, (variant[:20], served.text[:200])


def test_finished_games_give_their_slot_back_at_once(client: TestClient) -> None:
    """max_games is 3: three games in play fill the server; finishing one frees its slot, and its
    record stays downloadable."""
    views = [new_game(client) for _ in range(3)]
    assert client.post("/api/games", json={}).status_code == 503
    view = views[0]
    while view["result"] is None:
        view = client.post(
            f"/api/games/{view['id']}/actions", json={"action": view["choices"][0]["action"]}
        ).json()
    assert new_game(client)["id"]  # the finished game's slot
    assert client.get(f"/api/games/{view['id']}/record").status_code == 200


def test_hanamikoji_serve_refuses_a_round_limit_it_cannot_play(capsys) -> None:
    from hanamikoji_env.play.server import main

    with pytest.raises(SystemExit):
        main(["--round-limit", str(10**21)])
    assert "round_limit must be None or an int in [1, 1000]" in capsys.readouterr().err


def test_games_nobody_moved_in_go_after_five_minutes() -> None:
    client = TestClient(create_app("random", max_games=3, idle_seconds=3600))
    store: GameStore = client.app.state.store  # type: ignore[attr-defined]
    now = [0.0]
    store.clock = lambda: now[0]
    orphan, played = new_game(client), new_game(client)
    client.post(f"/api/games/{played['id']}/actions", json={"action": played["choices"][0]["action"]})
    now[0] = 301.0
    assert client.get(f"/api/games/{orphan['id']}").status_code == 404  # abandoned at the start
    assert client.get(f"/api/games/{played['id']}").status_code == 200  # in play: an hour's grace
