"""Playing against a bot: the game model, the terminal board (driven by Textual's pilot) and
the browser server's API (FastAPI's test client).  The real browser is in test_browser.py."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import gc
import io
import json
import re
import socket
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers import OpponentPolicy, extra, swapped_deals

from hanamikoji_env import records
from hanamikoji_env.actions import (
    CARD,
    CARD_BASE,
    NUM_ACTIONS,
    TOKEN,
    TOKEN_NAMES,
    TOKEN_SIZES,
    TRADEOFF,
    decode_action,
)
from hanamikoji_env.aec import AGENTS
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.observation import decode
from hanamikoji_env.play import geishas
from hanamikoji_env.play.geishas import card_names
from hanamikoji_env.play.replays import bot_game, replay_frames
from hanamikoji_env.play.session import VIEW_KEYS, GameSession
from hanamikoji_env.play.views import board
from hanamikoji_env.rules import cards_of

extra("textual")
extra("fastapi")

from fastapi import HTTPException  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from hanamikoji_env.play import tui  # noqa: E402
from hanamikoji_env.play.server import create_app  # noqa: E402
from hanamikoji_env.play.store import GameStore  # noqa: E402

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
        if event["kind"] == "scoring":  # the round-end screen: only what the scoring reveals
            summary = session.env.history().round_summaries[event["round"] - 1]
            me, opp = session.seat, 1 - session.seat
            assert event["secrets"] == [summary["secrets"][me], summary["secrets"][opp]]
            assert event["placed"] == [summary["placed"][me], summary["placed"][opp]]
            assert set(event) == SCORING_KEYS
        else:
            assert set(event) == {"who", "kind", "cards", "text", "n"}


SCORING_KEYS = {
    "who",
    "kind",
    "cards",
    "text",
    "n",
    "round",
    "secrets",
    "placed",
    "markers_before",
    "markers",
}
SCORING_KEYS |= {"points", "geishas", "final"}


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
        ended = [s.view() for s in sessions]
        assert ended[0]["events"] == ended[1]["events"]  # round 1's scoring too
        assert ended[0]["last_round"] == ended[1]["last_round"] and ended[0]["score"] == ended[1]["score"]


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


def test_a_view_holds_the_opponents_moves_since_the_persons_as_steps_to_show() -> None:
    session = GameSession("heuristic", seat=1, seed=5)  # the bot starts
    assert session.view()["steps"], "the bot's opening moves"
    shown = 0
    for _ in range(40):
        view = session.view()
        steps = view["steps"]
        shown += len(steps)
        if not steps:  # the person moves again (an answer, then their own turn): nothing to show
            assert view["your_move"]
        else:
            counts = [st["events"] for st in steps]
            assert counts == sorted(set(counts)) and counts[-1] == len(view["events"])  # each told something
            assert steps[-1]["board"] == view["board"]  # the last step is the position the person answers
            assert steps[-1]["score"] == view["score"]
        before = len(view["events"])
        if view["turn"] is not None:
            turn = view["turn"]
            token = turn["tokens"][0]
            session.play_turn(view["board"]["hand"][: token["cards"]], token["token"])
        else:
            session.play(view["choices"][0]["action"])
        if session.over:
            break
        # only the bot's moves after the person's are steps now
        assert all(st["events"] > before for st in session.view()["steps"])
    assert shown >= 4  # the opponent moved between the person's moves, and each was a step


def test_a_rounds_last_move_is_shown_before_its_scoring() -> None:
    """Whoever makes it, the move that ends a round is a step of its own (phase ``ROUND_OVER``)
    told before the scoring: every token spent, hands empty, the cards on the table with both
    Secrets still face down, the markers not moved yet."""
    for seat in (0, 1):
        session = GameSession("heuristic", seat=seat, seed=22)  # three rounds, then two
        rounds = 0
        while not session.over:
            before = session.view()
            if before["turn"] is not None:
                token = before["turn"]["tokens"][-1]
                session.play_turn(before["board"]["hand"][: token["cards"]], token["token"])
            else:
                session.play(before["choices"][-1]["action"])
            view = session.view()
            scorings = [e for e in view["events"][len(before["events"]) :] if e["kind"] == "scoring"]
            if not scorings:
                assert all(st["phase"] != "ROUND_OVER" for st in view["steps"])
                continue
            rounds += 1
            (scoring,) = scorings
            (end,) = [st for st in view["steps"] if st["phase"] == "ROUND_OVER"]
            assert end["events"] == scoring["n"]  # told up to the last move, not the scoring
            b = end["board"]
            assert not any(b["your_tokens"]) and not any(b["their_tokens"]) and b["playing"] is None
            assert b["hand"] == [] and b["their_hand_size"] == 0 and b["offer"] == []
            secrets = scoring["secrets"]
            for side, placed, secret in (("your_side", 0, secrets[0]), ("their_side", 1, secrets[1])):
                assert [n + (g == secret) for g, n in enumerate(b[side])] == scoring["placed"][placed]
            assert b["secret"] == secrets[0]  # the person's own Secret, known to them
            assert b["markers"] == scoring["markers_before"]
            later = [st for st in view["steps"] if st["events"] > end["events"]]
            assert all(st["round"] == end["round"] + 1 for st in later)  # the next deal's moves follow
        assert rounds >= 2


def test_the_token_on_the_table_belongs_to_whoever_plays_it() -> None:
    """``board["playing"]``: an offered Gift or Competition is the offerer's until answered, a
    split is the splitter's; the page lights that token on that side and nothing else."""
    session = GameSession("heuristic", seat=0, seed=3)
    seen = set()
    for _ in range(200):
        if session.over:
            break
        view = session.view()
        for position in [*view["steps"], view]:
            b, phase = position["board"], position["phase"]
            mover = "you" if b["your_decision"] else "opponent"
            other = "opponent" if mover == "you" else "you"
            want = {
                "GIFT_ANSWER": {"token": 2, "by": other, "offer": "gift"},
                "SPLIT": {"token": 3, "by": mover, "offer": "competition"},
                "COMP_ANSWER": {"token": 3, "by": other, "offer": "competition"},
            }.get(phase)
            if phase == "SELECT" and b["token"] >= 0:
                want = {"token": b["token"], "by": mover, "offer": None}
            assert b["playing"] == want, (phase, b["playing"])
            if want:
                seen.add((phase, want["by"]))
        if view["turn"] is not None:
            token = view["turn"]["tokens"][-1]
            session.play_turn(view["board"]["hand"][: token["cards"]], token["token"])
        else:
            session.play(view["choices"][0]["action"])
    assert {("GIFT_ANSWER", "opponent"), ("COMP_ANSWER", "opponent"), ("SPLIT", "opponent")} <= seen, seen


def test_every_choice_carries_what_a_board_draws_and_sends() -> None:
    """The page computes no action id: each legal action comes decoded, its kind and cards
    matching :func:`decode_action` and the offer on the table."""
    session = GameSession("heuristic", seat=1, seed=4)
    kinds = set()
    while not session.over:
        view = session.view()
        b = view["board"]
        for c in view["choices"]:
            kind, index = decode_action(c["action"])
            assert c["kind"] == kind
            kinds.add(kind)
            if kind == TOKEN:
                assert c["token"] == index and c["cards"] == []
            elif kind in (CARD, "gift-take"):
                assert c["cards"] == [index]
            elif kind == "split":
                assert sorted(c["sets"][0] + c["sets"][1]) == b["offer"]
            else:
                assert c["pair"] == index and c["cards"] == (b["set_b"] if index else b["set_a"])
        session.play(view["choices"][-1]["action"])
    assert kinds == {TOKEN, CARD, "split", "gift-take", "comp-take"}


def test_the_log_and_table_call_the_pairs_as_the_person_built_them() -> None:
    """A split sent with ``pair_a`` (the cards the person put in pair A) keeps those names in
    the log, on the table while the Competition is open and in the opponent's answer, though
    the engine's pair A is the one holding the lowest card."""
    for seed in range(40):
        session = GameSession("heuristic", seat=0, seed=seed)
        hand = session.view()["board"]["hand"]
        if len(set(hand[:4])) == 4:
            break
    with pytest.raises(ValueError, match="pairs of a split"):
        session.play(3, pair_a=hand[:2])  # a token is no split
    session.play_turn(hand[:4], 3)  # Competition with four different geishas
    view = session.view()
    split = next(c for c in view["choices"] if c["kind"] == "split")
    engine_a, engine_b = split["sets"]
    with pytest.raises(ValueError, match="neither pair"):
        session.play(split["action"], pair_a=[engine_a[0], engine_b[0]])
    told = len(view["events"])
    session.play(split["action"], pair_a=list(reversed(engine_b)))  # the person calls the engine's B "A"
    events = session.view()["events"][told:]
    assert f"pair A {card_names(engine_b)} | pair B {card_names(engine_a)}" in events[0]["text"]
    (answer,) = [e for e in events if e["kind"] == "take"]
    taken = "A" if answer["cards"] == engine_b else "B"
    assert f"takes pair {taken} ({card_names(answer['cards'])})" in answer["text"]
    opened = [st for st in session.view()["steps"] if st["phase"] == "COMP_ANSWER"]
    assert all(st["board"]["set_a"] == engine_b for st in opened)
    # the record keeps the names, so its replay calls the pairs as the person did
    play_out(session)
    record = session.record()
    frames = replay_frames(records.parse_line(record.to_json(), "the game"))
    (said,) = [f for f in frames if "the Competition cards" in f["move"] and f["seat"] == 0][:1]
    assert f"pair A {card_names(engine_b)} | pair B {card_names(engine_a)}" in said["move"]
    answered = frames[frames.index(said) + 1]
    assert f"pair {taken} ({card_names(answer['cards'])})" in answered["move"]
    assert said["pairs"] == [engine_b, engine_a] or said["phase"] != "COMP_ANSWER"
    for bad in ("x", "0 1 2", str(len(record.actions))):  # not indices, not splits, past the end
        crafted = dataclasses.replace(record, meta={**record.meta, "swapped_splits": bad})
        with pytest.raises(records.RecordError, match="swapped_splits"):
            replay_frames(crafted)


def test_each_geisha_has_a_name_a_colour_and_her_value_in_every_label() -> None:
    from hanamikoji_env.rules import NUM_GEISHAS, VALUES

    table = geishas.as_json()
    assert [g["charm"] for g in table] == list(VALUES) and len(table) == NUM_GEISHAS
    assert len({g["name"][0] for g in table}) == NUM_GEISHAS  # one initial each: the terminal's short form
    assert all(len(g["name"]) <= 6 for g in table)  # a card's width, a column of the terminal's table
    assert len({g["colour"] for g in table}) == NUM_GEISHAS
    assert all(len(g["colour"]) == 7 and int(g["colour"][1:], 16) >= 0 for g in table)
    assert card_names([3, 6]) == f"{table[3]['name']} 3, {table[6]['name']} 5" and card_names([]) == "-"


def test_replays_name_the_seats_as_the_board_does() -> None:
    from hanamikoji_env.play.replays import seat_names

    assert seat_names(("human", "heuristic")) == ("you", "heuristic")
    assert seat_names(("search", "human")) == ("search", "you")
    assert seat_names(("heuristic", "heuristic")) == ("heuristic, seat 1", "heuristic, seat 2")


def test_replay_frames_step_through_every_position_with_all_cards() -> None:
    session = GameSession("random", seed=8)
    play_out(session)
    record = session.record()
    frames = replay_frames(record)
    assert record.rounds >= 2
    # the first deal, a frame a move (a token and its cards are one), and at each round's end the
    # scoring as a position of its own, then the deal
    token_plays = sum(decode_action(a).kind == TOKEN for _, a in record.actions)
    cards_chosen = sum(decode_action(a).kind == CARD for _, a in record.actions)
    assert len(frames) == 1 + len(record.actions) - cards_chosen + record.rounds + record.rounds - 1
    assert frames[0]["move"] == "The first deal." and frames[1]["move"].startswith("You play ")
    selections = [
        f["move"] for f in frames if ": " in f["move"] and f["move"].split()[2].rstrip(":") in TOKEN_NAMES
    ]
    assert len(selections) == token_plays  # each token once, with all its cards named
    assert all(f["phase"] != "SELECT" for f in frames)  # no frame shows half a selection
    assert not any("card:" in f["move"] or "split:" in f["move"] for f in frames)  # words, not engine names
    scored = [f for f in frames if f["scoring"] is not None]
    assert [f["phase"] for f in scored] == ["ROUND_OVER"] * (record.rounds - 1) + ["GAME_OVER"]
    for f, summary in zip(scored, record.round_summaries, strict=True):
        assert f["scoring"] == summary and f["markers"] == summary["markers"]
        assert f["placed"] == summary["placed"]  # the Secrets are on the table
        assert f["move"].startswith(f"Round {summary['round']} scored: charm points")
        # the round's last move is a position of its own before it: cards placed, markers unmoved
        last = frames[frames.index(f) - 1]
        assert last["scoring"] is None and last["result"] is None and last["seat"] is not None
        assert last["placed"] == summary["placed"] and last["phase"] == "ROUND_OVER"
        assert last["markers"] == (
            frames[0]["markers"] if summary["round"] == 1 else scored[summary["round"] - 2]["markers"]
        )
    # the token on the table and its player: an offer is its offerer's, a selection its mover's
    for f in frames:
        p = f["playing"]
        if f["phase"] == "GIFT_ANSWER":
            assert p == {"token": 2, "by": 1 - f["to_move"], "offer": "gift"}
        elif f["phase"] in ("SPLIT", "COMP_ANSWER"):
            by = f["to_move"] if f["phase"] == "SPLIT" else 1 - f["to_move"]
            assert p == {"token": 3, "by": by, "offer": "competition"}
            assert f["pairs"] == (None if f["phase"] == "SPLIT" else [f["offer"][:2], f["offer"][2:]])
        else:
            assert p is None
        assert f["draw_pile"] == sorted(f["draw_pile"])  # what is left, never the order it comes in
    after = frames[frames.index(scored[0]) + 1]
    assert after["move"].startswith("Round 2 dealt") and after["round"] == 2
    assert (
        frames[-1]["winner"] == record.winner
        and frames[-1]["result"]["points"] == record.round_summaries[-1]["points"]
    )
    assert sum(map(len, frames[0]["hands"])) == 13  # the starter's draw included


# ------------------------------------------------------------------ terminal ---


def _check_nothing_is_cut(app: tui.PlayApp) -> None:
    """Every panel fits the terminal, and no log line runs under the scrollbar."""
    screen = app.screen.region
    log = app.query_one("#log", tui.RichLog)
    for widget in app.query("#header, #board, #status, #log"):
        region = widget.region
        assert region.height > 0 and screen.contains_region(region), (widget.id, region, screen)
        if widget.id != "log":
            assert widget.virtual_size.height <= region.height, widget.id  # nothing clipped below
    assert log.region.height >= 4
    status = app.query_one("#status", tui.Static)
    # no status line wraps: each fits the panel's width as written
    assert all(len(line) <= status.content_region.width for line in app.shown_status.splitlines()), (
        status.content_region.width,
        app.shown_status,
    )
    header = app.query_one("#header", tui.Static)
    assert header.virtual_size.height == 1 and header.region.height == 1  # one line, as it says
    width = log.scrollable_content_region.width
    assert all(line.cell_length <= width for line in log.lines), width
    assert not wrapped_lines(app)


async def _play_by_keys(app: tui.PlayApp, size: tuple[int, int], limit: int = 400) -> dict[str, Any]:
    """Play a whole game with the keys as a person would: the last token left, its cards chosen
    from the right of the hand (descending), one selection cancelled, each Gift or pair answer
    chosen by its number and confirmed with Enter (the first one changed with Esc first), each
    round end read and dismissed with Enter, every other decision by its number."""
    seen: dict[str, Any] = {"round_ends": [], "cancelled": 0, "presses": 0, "answers": 0}
    async with app.run_test(size=size) as pilot:
        await pilot.press("9")  # no 9th choice: a bell, nothing played
        await pilot.press("question_mark")  # the rules, whole on screen, then back to the game
        (rules,) = app.screen.query("Static")
        assert isinstance(app.screen, tui.Notice) and app.screen.region.contains_region(rules.region)
        assert (
            rules.virtual_size.height <= rules.region.height
            and rules.virtual_size.width <= rules.region.width
        )
        await pilot.press("space")
        while not app.session.over or isinstance(app.screen, tui.RoundEnd):
            assert seen["presses"] < limit, "the game did not end"
            seen["presses"] += 1
            if isinstance(app.screen, tui.RoundEnd):
                seen["round_ends"].append(app.screen.shown)
                _check_modal_fits(app)
                e, under = app.screen.event, app.shown_view  # the table of the round it scores
                mine = [n - (g == e["secrets"][0]) for g, n in enumerate(e["placed"][0])]
                assert under["round"] == e["round"] and under["board"]["your_side"] == mine, (e, under)
                assert under["board"]["hand"] == [] and "round over" in str(
                    app.query_one("#header", tui.Static).content
                )
                await pilot.press("enter")
                continue
            _check_nothing_is_cut(app)
            view = app.session.view()
            if app.pending is None and view["turn"] is not None:
                await pilot.press(str(len(view["turn"]["tokens"])))  # the last token left
                continue
            if app.pending is not None:
                hand, need = len(view["board"]["hand"]), app.pending["needed"]
                if not seen["cancelled"] and need >= 2:
                    await pilot.press(str(hand))
                    assert app.pending["cards"] == [hand - 1]
                    await pilot.press("escape")
                    assert app.pending is None
                    seen["cancelled"] += 1
                    continue
                for i in range(hand, hand - need, -1):
                    await pilot.press(str(i))
                assert "Enter confirms" in app.shown_status
                await pilot.press("enter")
                continue
            if view["phase"] in ("GIFT_ANSWER", "COMP_ANSWER"):
                seen.setdefault("answered", set()).add(view["phase"])
                await pilot.press("1")  # chosen, not played: Enter confirms
                assert app.answer is not None and "Enter confirms" in app.shown_status
                assert app.session.view()["events"] == view["events"]
                if not seen["answers"]:
                    await pilot.press("escape")
                    assert app.answer is None and "Your move:" in app.shown_status
                    await pilot.press(str(len(view["choices"])))
                await pilot.press("enter")
                seen["answers"] += 1
                continue
            await pilot.press("1")
        await pilot.pause()
        _check_nothing_is_cut(app)
        seen["status"] = app.shown_status
        await pilot.press("q")
    return seen


def wrapped_lines(app: tui.PlayApp) -> list[str]:
    """The lines on screen that do not fit their panel's width (so the terminal wraps them): every
    text and table drawn at the panel's width against the same drawn wide, and every log line."""
    from rich.cells import cell_len
    from rich.console import Console
    from textual.widgets import RichLog, Static

    def drawn(renderable: Any, width: int) -> list[str]:
        console = Console(width=width, file=io.StringIO(), color_system=None)
        return [
            "".join(seg.text for seg in line).rstrip()
            for line in console.render_lines(renderable, console.options.update_width(width), pad=False)
        ]

    wrapped = []
    for widget in app.screen.query(Static):
        width = widget.content_region.width
        if width and widget.content:
            narrow, wide = drawn(widget.content, width), drawn(widget.content, 1000)
            if len(narrow) != len(wide):
                wrapped += [line for line in wide if cell_len(line) > width] or wide
    if not isinstance(app.screen, tui.ModalScreen):
        log = app.query_one("#log", RichLog)
        wrapped += [line for line in app.shown_log if cell_len(line) > log.scrollable_content_region.width]
    return wrapped


def _check_modal_fits(app: tui.PlayApp) -> None:
    """The round-end screen shows all of its table and text inside the terminal."""
    screen = app.screen
    table, text = screen.query("Static")
    assert table.region.height >= 9 and text.region.height >= 3  # a title, a header, 7 geishas
    for widget in (table, text):
        assert screen.region.contains_region(widget.region), widget.region
        assert widget.virtual_size.height <= widget.region.height
        assert widget.virtual_size.width <= widget.region.width
    assert not wrapped_lines(app)


def test_the_terminal_board_chooses_cards_in_any_order() -> None:
    session = GameSession("random", seat=0, seed=4)
    app = tui.PlayApp(session, None)
    hand = session.view()["board"]["hand"]

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("3")  # Gift
            assert "Gift: selected -; choose 3 more" in app.shown_status
            for key in "531":  # the fifth, third and first cards of the hand
                await pilot.press(key)
            await pilot.press("3")  # put the third back
            assert app.pending is not None and app.pending["cards"] == [4, 0]
            await pilot.press("2", "enter")
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(drive())
    chosen = sorted([hand[4], hand[0], hand[1]])
    actions = [a for seat, a in session.env.history().actions if seat == 0][:4]
    assert actions == [2] + [CARD_BASE + g for g in chosen]  # the token, then the cards ascending
    assert app.shown_log[0] == f"You offer a Gift: {card_names(chosen)}."


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_terminal_board_plays_a_whole_game_by_keys_and_appends_records(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    path = tmp_path / "games.jsonl"
    for seed in (8, 2):
        app = tui.PlayApp(GameSession("heuristic", seat=seed % 2, seed=seed), path)
        seen = asyncio.run(_play_by_keys(app, size))
        record = app.session.record()
        assert seen["cancelled"] == 1 and len(seen["round_ends"]) == record.rounds
        assert seen["answered"] == {"GIFT_ANSWER", "COMP_ANSWER"}  # every kind of answer, no line wrapped
        assert all("Secrets revealed" in r and "Totals" in r for r in seen["round_ends"])
        assert "Game over" in seen["round_ends"][-1] and "charm points" in seen["round_ends"][-1]
        assert app.recorded and "Press n to play again, q to quit" in seen["status"]
        headline = {"you": "You won!", "opponent": "You lost.", "draw": "A draw."}[
            app.session.result()["winner"]
        ]
        assert headline in seen["status"], seen["status"]
        assert "(revealed)" in seen["status"] and "down: Secret" not in seen["status"]  # scored
        assert any(row.startswith("The game record was appended") for row in app.shown_log[-4:])
    saved = list(records.read_records(path))
    assert len(saved) == 2  # the second game was appended, not written over the first
    assert saved[0].rounds >= 2
    for r in saved:
        records.verify(r)


def test_the_terminal_board_shows_the_rules_and_asks_before_a_game_is_abandoned() -> None:
    session = GameSession("random", seat=0, seed=4)
    app = tui.PlayApp(session, None)

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, tui.Notice) and "Competition (4 cards)" in app.screen.text
            await pilot.press("x")  # any key goes back to the game
            assert not isinstance(app.screen, tui.Notice)
            await pilot.press("q")  # mid-game: a question, not an exit
            assert isinstance(app.screen, tui.Notice) and "not finished" in app.screen.text
            await pilot.press("n")
            assert not isinstance(app.screen, tui.Notice) and app.is_running
            await pilot.press("1")  # still playing: the Secret token is chosen
            assert app.pending is not None and app.pending["token"] == 0
            await pilot.press("q", "y")
            await pilot.pause()
            assert not app.is_running

    asyncio.run(drive())
    assert not session.over and not app.recorded  # no --record: nothing written


def test_a_game_quit_in_the_terminal_is_recorded_as_far_as_it_went(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    session = GameSession("heuristic", seat=0, seed=4)
    app = tui.PlayApp(session, path)

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("1", "1", "enter")  # a Secret: the first card of the hand
            await pilot.pause()
            await pilot.press("q")
            assert "appended to" in app.screen.text and "unfinished" in app.screen.text
            await pilot.press("y")
            await pilot.pause()

    asyncio.run(drive())
    (record,) = list(records.read_records(path))
    records.verify(record)  # it replays, and it does not end
    assert not record.finished and record.winner is None and record.to_dict()["result"] is None
    assert list(record.actions) == list(session.env.history().actions) and len(record.actions) >= 2
    frames = replay_frames(record)
    assert frames[-1]["move"] == "The game was stopped here, unfinished." and frames[-1]["result"] is None
    # a record that says the game was stopped while its actions end it is refused
    finished = GameSession("random", seed=8)
    play_out(finished)
    data = finished.record().to_dict()
    data["result"] = None
    with pytest.raises(records.RecordError, match="stopped, but its actions end it"):
        records.verify(records.parse_record(data))


def test_the_terminal_board_shows_the_table_as_the_person_sees_it() -> None:
    session = GameSession("random", seat=0, seed=3)
    view = session.view()
    text = str(tui.status_text(view))
    assert "Your hand: " + " ".join(geishas.short_label(g) for g in view["board"]["hand"]) in text
    assert "[1] Secret (1 card)" in text and "[4] Competition (4 cards)" in text
    assert "random: 6 in hand · left: Secret, Trade-off, Gift, Competition" in text
    header = tui.header_text(view).plain
    assert (
        "Round 1" in header and "your move" in header and "pile 7" in header
    )  # 21 - 1 removed - 12 dealt - 1 drawn
    assert "charm 0-0 · geishas 0-0 (you-opp)" in header and "practice" in header  # a chosen seed
    table = tui.board_table(view)
    assert [str(c.header) for c in table.columns[1:]] == [g.name for g in geishas.GEISHAS]
    # the end: who won as a headline, and why
    play_out(session)
    text = str(tui.status_text(session.view()))
    result = session.result()
    assert {"you": "You won! ", "opponent": "You lost. ", "draw": "A draw. "}[result["winner"]] in text
    assert result["reason"][1:] in text and "Press n to play again, q to quit." in text


def test_hanamikoji_play_says_it_is_starting_before_the_opponent_loads(capsys, monkeypatch) -> None:
    """Loading a network opponent takes seconds: a line says so before, not a blank screen."""
    said_before: list[str] = []

    def session(*args: Any) -> GameSession:
        said_before.append(capsys.readouterr().out)
        return GameSession(*args)

    monkeypatch.setattr(tui, "GameSession", session)
    monkeypatch.setattr(tui.PlayApp, "run", lambda self: None)
    tui.main(["--opponent", "heuristic", "--seed", "1"])
    assert "starting a game against heuristic..." in said_before[0]


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
    store: GameStore = client.app.state.server.store  # type: ignore[attr-defined]
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
        assert frames == replay_frames(game)  # a scored table a round, one frame a move


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
    store: GameStore = client.app.state.server.store  # type: ignore[attr-defined]
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


def test_a_full_server_frees_the_least_recently_active_game_for_a_new_visitor() -> None:
    """A full server takes the place of the game idle longest, once idle a short while, while a
    game moved in just now is never taken (here each address holds one game: no holder pays)."""
    from hanamikoji_env.play.store import FULL_IDLE_SECONDS

    now = [0.0]
    store = GameStore(max_games=100, idle_seconds=3600, clock=lambda: now[0])
    ids = {}
    for k in range(100):
        now[0] = k * 0.01  # game k is the k-th least recently active
        ids[k] = store.add(GameSession("random", seed=k), client=f"10.0.{k}.1")
    now[0] = 2.0
    with pytest.raises(HTTPException) as full:  # nobody idle long enough yet: a real 503
        store.add(GameSession("random", seed=100), client="10.0.200.1")
    assert full.value.status_code == 503
    now[0] = FULL_IDLE_SECONDS + 1.0
    store.after_move(ids[0], store.get(ids[0]))  # game 0's player comes back: now the most recent
    store.add(GameSession("random", seed=100), client="10.0.200.1")  # a new address, at once
    assert ids[1] not in store.games and ids[0] in store.games and len(store.games) == 100


def test_addresses_holding_many_games_give_way_to_a_new_visitor() -> None:
    """100 half-played games held by 10 addresses, all moving every 20 s: an 11th address starts
    a game at once, 10 times of 10, each taking the least recently moved game of an address
    holding the most, which then may take one back the same way."""
    now = [0.0]
    store = GameStore(max_games=100, idle_seconds=3600, clock=lambda: now[0])
    ids = []
    for k in range(100):
        now[0] = k * 0.2  # every game moved within the last 20 s; game k by address k % 10
        ids.append(store.add(GameSession("random", seed=k), client=f"10.0.0.{k % 10}"))
    now[0] = 20.0
    for t in range(10):  # all hold 10, then address 0 holds 9: address t gives its oldest, game t
        before = set(store.games)
        store.add(GameSession("random", seed=100 + t), client="10.0.1.1")
        assert before - set(store.games) == {ids[t]}
    held = Counter(game.client for game in store.games.values())
    assert held["10.0.1.1"] == 10 and all(held[f"10.0.0.{a}"] == 9 for a in range(10))
    mine = {g: game.last_move for g, game in store.games.items() if game.client == "10.0.1.1"}
    store.add(GameSession("random", seed=200), client="10.0.0.0")  # the 11th holds the most now: it gives way
    assert set(mine) - set(store.games) == {min(mine, key=mine.__getitem__)}


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
    lone = session.record().to_json().replace('"random"', '"\\ud800"', 1)  # a lone surrogate, escaped
    surrogate = client.post("/api/replay", content=lone, headers=jsonl)
    assert surrogate.status_code == 400 and "lone surrogate" in surrogate.json()["detail"]


def test_the_page_computes_no_action_id() -> None:
    """The page takes the game's contract from the server (each view's decoded ``choices``, the
    tokens and geishas of ``/api/opponents``): no number that could be an action id, a token id
    or a card count (2 to 22) is written in its scripts, outside comments."""
    from hanamikoji_env.play.server import STATIC

    scripts = sorted(p for p in STATIC.iterdir() if p.name.endswith(".js"))
    assert {p.name for p in scripts} >= {"main.js", "board.js", "words.js"}
    for script in scripts:
        code = re.sub(r"/\*.*?\*/", "", script.read_text(), flags=re.S)
        for n, line in enumerate(code.splitlines(), 1):
            line = re.sub(r'"[^"]*"', '""', line)  # a string's text is words; a template's ${...} is code
            line = re.sub(r"`[^`]*`", lambda m: " ".join(re.findall(r"\$\{([^}]*)\}", m.group())), line)
            line = re.sub(r"//.*", "", line)
            literals = [int(x) for x in re.findall(r"(?<![\w.$])\d+(?![\w.])", line)]
            assert not [x for x in literals if 2 <= x < NUM_ACTIONS], f"{script.name}:{n}: {line.strip()}"


def test_the_page_and_its_assets_ship_in_the_package(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<script type="module" src="/static/main.js">' in page.text
    for asset in ("main.js", "board.js", "words.js", "dom.js", "state.js", "style.css"):
        got = client.get(f"/static/{asset}")
        assert got.status_code == 200 and got.headers["content-type"].startswith(
            "text/css" if asset.endswith("css") else "text/javascript"  # a module needs a script type
        )
    assert "http" not in page.text.replace("http-equiv", "")  # no CDN
    assert client.get("/api/opponents").json() == {
        "opponents": ["random", "heuristic", "search"],
        "default": "random",
        "geishas": geishas.as_json(),
        "tokens": [{"name": n, "cards": c} for n, c in zip(TOKEN_NAMES, TOKEN_SIZES, strict=True)],
    }


def test_hanamikoji_serve_checks_its_opponent_before_starting(capsys) -> None:
    from hanamikoji_env.play.server import main

    with pytest.raises(SystemExit) as exit_:
        main(["--opponent", "ckpt:/no/such.pt"])
    assert exit_.value.code == 2
    assert "no/such.pt" in capsys.readouterr().err


def test_hanamikoji_serve_compiles_every_opponent_before_it_accepts_visitors(monkeypatch) -> None:
    import uvicorn

    from hanamikoji_env.play import server

    calls = []
    monkeypatch.setattr(server, "warm_up", lambda specs, limit: calls.append(("warm", list(specs), limit)))

    def serve(self, sockets=None) -> None:  # the socket bound before the warm-up, served as it is
        calls.append(("serve", self.config.port, sockets[0].getsockname()[1]))
        sockets[0].close()

    monkeypatch.setattr(uvicorn.Server, "run", serve)
    server.main(["--opponent", "search:samples=20", "--round-limit", "3", "--port", "8123"])
    assert calls == [
        ("warm", ["search:samples=20", "random", "heuristic", "search"], 3),
        ("serve", 8123, 8123),
    ]


@contextlib.contextmanager
def serving(app, *flags: str):
    """``app`` served by uvicorn in a thread as ``hanamikoji-serve FLAGS`` would serve it; its URL."""

    from hanamikoji_env.play.server import build_parser, uvicorn_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn_server(app, build_parser().parse_args([*flags, "--port", str(port)]))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def test_x_forwarded_for_buys_no_new_quota_unless_the_proxy_is_trusted() -> None:
    import httpx

    session = GameSession("random", seed=6)
    play_out(session)
    line = session.record().to_json()

    def statuses(*flags: str) -> list[int]:  # replays: rate-limited like new games, and slot-free
        with serving(create_app("random"), *flags) as url:
            return [
                httpx.post(f"{url}/api/replay", content=line, headers={"content-type": "application/json",
                           "X-Forwarded-For": f"203.0.113.{k}"}, timeout=30).status_code
                for k in range(40)
            ]  # fmt: skip

    assert statuses() == [200] * 30 + [429] * 10  # every local client shares one quota
    assert statuses("--forwarded-allow-ips", "127.0.0.1") == [200] * 40  # the proxy names each client


def test_a_person_who_leaves_games_can_always_start_another() -> None:
    """Twelve games started, moved in and left from one address, then a thirteenth: a left game
    is over (abandoned, its record kept with a null result) and frees its slot at once, so the
    per-address limit of 10 games in play never locks the person out."""
    client = TestClient(create_app("random", max_games=100))
    for _ in range(12):
        game = new_game(client)
        moved = client.post(f"/api/games/{game['id']}/actions", json={"action": game["choices"][0]["action"]})
        assert moved.status_code == 200 and moved.json()["result"] is None
        left = client.delete(f"/api/games/{game['id']}")
        assert left.status_code == 200, left.text
        view = left.json()
        assert view["result"]["abandoned"] and view["result"]["winner"] is None and view["choices"] == []
        assert client.get(f"/api/games/{game['id']}").json() == view  # over, as left
        record = records.parse_line(client.get(f"/api/games/{game['id']}/record").content, "left game")
        assert not record.finished and len(record.actions) >= 1  # what was played, kept
        again = client.post(f"/api/games/{game['id']}/actions", json={"action": 0})
        assert again.status_code == 409  # no move in a game left
    assert new_game(client)["id"]  # the thirteenth
    assert client.delete("/api/games/no-such-game").status_code == 404


def test_one_address_holds_a_bounded_share_of_games_watches_and_replays() -> None:
    client = TestClient(create_app("random", max_games=100))
    state = client.app.state.server  # type: ignore[attr-defined]
    for _ in range(10):
        assert new_game(client)["id"]
    eleventh = client.post("/api/games", json={})
    assert eleventh.status_code == 429 and "one address may hold 10 games in play" in eleventh.text
    state.watchers["testclient"] = 2  # two bot games this address is watching now
    watch = client.post("/api/watch", json={"players": ["random", "random"]})
    assert watch.status_code == 429 and "watch 2 bot games at once" in watch.text
    for _ in range(4):  # every replay slot busy
        state.replaying.acquire()
    session = GameSession("random", seed=6)
    play_out(session)
    busy = client.post(
        "/api/replay", content=session.record().to_json(), headers={"content-type": "application/json"}
    )
    assert busy.status_code == 503 and "4 replays at once" in busy.text
    for _ in range(4):
        state.replaying.release()


def test_a_finished_game_keeps_its_view_and_record_not_its_bot() -> None:
    client = TestClient(create_app("random"))
    store: GameStore = client.app.state.server.store  # type: ignore[attr-defined]
    view = new_game(client, seed=3)
    gid = view["id"]
    session = weakref.ref(store.games[gid].session)
    while view["result"] is None:
        view = client.post(f"/api/games/{gid}/actions", json={"action": view["choices"][0]["action"]}).json()
    gc.collect()
    assert session() is None  # the session, its env and its bot are gone
    assert client.get(f"/api/games/{gid}").json() == view
    assert client.get(f"/api/games/{gid}/record").text.startswith("{")
    again = client.post(f"/api/games/{gid}/actions", json={"action": 0})
    assert again.status_code == 409 and "the game is over" in again.text


def test_connections_that_never_finish_a_request_are_closed_and_hold_nobody_up(monkeypatch) -> None:
    import httpx

    from hanamikoji_env.play import protocol

    monkeypatch.setattr(protocol, "REQUEST_SECONDS", 1.0)

    def slowest_of_20() -> float:
        slowest = 0.0
        for _ in range(20):
            start = time.perf_counter()
            assert httpx.get(f"{url}/api/opponents").status_code == 200
            slowest = max(slowest, time.perf_counter() - start)
        return slowest

    with serving(create_app("random")) as url:
        port = int(url.rsplit(":", 1)[1])
        quiet = slowest_of_20()  # the baseline, measured in this run: nobody else connected
        idle = [  # from four other addresses, each within its share of connections
            socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.0.{2 + k % 4}", 0))
            for k in range(200)
        ]
        half = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        half.sendall(b"GET /api/opponents HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        slowest = slowest_of_20()  # meanwhile everyone else is served at once
        assert slowest < 10 * quiet, (slowest, quiet)
        for conn in [half, *idle[:5]]:
            conn.settimeout(10)
            assert conn.recv(100) == b""  # closed by the server
        for conn in [half, *idle]:
            conn.close()


def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_deadline(monkeypatch) -> None:
    from hanamikoji_env.play import protocol

    monkeypatch.setattr(protocol, "REQUEST_SECONDS", 1.0)
    with serving(create_app("random")) as url:
        port = int(url.rsplit(":", 1)[1])
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{")  # fmt: skip
        start = time.perf_counter()
        cut = None
        with contextlib.suppress(OSError):  # a reset or a broken pipe: cut too
            for _ in range(40):  # a byte every 0.25 s: never idle, never done
                time.sleep(0.25)
                slow.sendall(b" ")
            slow.settimeout(1)
            cut = slow.recv(100)
        assert cut in (None, b""), cut  # closed, never answered
        assert time.perf_counter() - start < 5, "the body kept the connection past its deadline"
        slow.close()


def test_a_client_hanging_up_mid_body_leaves_the_log_quiet() -> None:
    """A body cut off is answered nobody and logged nowhere (it was a 70-line traceback each)."""
    import logging

    import httpx

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(self.format(record))

    kept = Kept()
    with serving(create_app("random")) as url:
        logging.getLogger("uvicorn.error").addHandler(kept)
        try:
            port = int(url.rsplit(":", 1)[1])
            for _ in range(100):
                with socket.create_connection(("127.0.0.1", port)) as half:
                    half.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"se")  # fmt: skip
            assert httpx.post(f"{url}/api/games", json={}, timeout=10).status_code == 200
        finally:
            logging.getLogger("uvicorn.error").removeHandler(kept)
    assert not [line for line in kept.lines if "Exception" in line or "Traceback" in line], kept.lines[:3]


def test_the_server_logs_one_line_of_a_kind_a_period() -> None:
    import logging

    from hanamikoji_env.play.protocol import OnePerPeriod

    now = [0.0]
    quiet = OnePerPeriod(period=60.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, msg, None, None)

    assert quiet.filter(record("Exception in ASGI application"))
    assert quiet.filter(record("Invalid HTTP request received."))  # another kind: its own line
    assert not any(quiet.filter(record("Exception in ASGI application")) for _ in range(999))
    now[0] = 61.0
    summary = record("Exception in ASGI application")
    assert quiet.filter(summary)
    assert (
        summary.getMessage()
        == "Exception in ASGI application (999 more like this in the last 60 s not logged)"
    )
    assert not quiet.filter(record("Exception in ASGI application"))


def test_a_request_framed_two_ways_is_refused() -> None:
    """Content-Length and Transfer-Encoding both: a proxy in front may read the other framing (a
    smuggled request), so neither is trusted."""
    with serving(create_app("random")) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")  # fmt: skip
            conn.settimeout(10)
            reply = b""
            while chunk := conn.recv(4096):  # until the server closes it, as the reply says it will
                reply += chunk
    reply = reply.decode()
    assert reply.startswith("HTTP/1.1 400") and "not both" in reply, reply[:300]
    assert "x-frame-options: deny" in reply.lower()  # the security headers too


def test_one_address_holds_a_bounded_share_of_the_connections(monkeypatch) -> None:
    """Past its share, an address's new connection is held unread until the request deadline
    closes it (no reconnect loop invited), and past its held ones too, closed as it opens;
    nobody else notices: another address (127.0.0.2, loopback too) is served at once, and a
    connection closed gives its slot back."""
    import httpx

    from hanamikoji_env.play import protocol

    monkeypatch.setattr(protocol, "PER_ADDRESS_CONNECTIONS", 8)
    monkeypatch.setattr(protocol, "TARPIT_PER_ADDRESS", 2)
    monkeypatch.setattr(protocol, "REQUEST_SECONDS", 3.0)
    request = b"GET /api/opponents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    with serving(create_app("random")) as url:
        port = int(url.rsplit(":", 1)[1])
        served = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        time.sleep(0.2)  # the server has taken them all in
        closed = socket.create_connection(("127.0.0.1", port))
        closed.settimeout(2)
        assert closed.recv(100) == b""  # over the held ones too: closed as it opens
        held[0].sendall(request)
        held[0].settimeout(1)
        with pytest.raises(TimeoutError):
            held[0].recv(100)  # not answered: held unread
        held[0].settimeout(10)
        with contextlib.suppress(ConnectionResetError):  # a reset: what it sent was never read
            assert held[0].recv(100) == b""  # until the deadline closes it
        other = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
        other.sendall(request)
        other.settimeout(10)
        assert other.recv(100).startswith(b"HTTP/1.1 200")
        served.pop().close()
        time.sleep(0.2)  # the server sees the close
        assert httpx.get(f"{url}/api/opponents", timeout=10).status_code == 200  # the freed slot
        for conn in [closed, other, *held, *served]:
            conn.close()


def test_the_connection_cap_comes_from_the_raised_open_file_limit() -> None:
    import resource

    from hanamikoji_env.play.server import MAX_FILES, RESERVED_FILES, connection_limit

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        limit = connection_limit()
        raised = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert raised == min(hard, MAX_FILES) or hard == resource.RLIM_INFINITY
        assert limit == raised - RESERVED_FILES
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_every_reply_forbids_framing_and_foreign_resources() -> None:
    client = TestClient(create_app("random"))
    for reply in (client.get("/"), client.get("/api/opponents"), client.get("/api/games/nope"),
                  client.get("/", headers={"host": "evil.example"})):  # fmt: skip
        assert reply.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
        assert "default-src 'self'" in reply.headers["content-security-policy"]
    page = client.get("/").text  # the policy allows what the page uses: its own files, nothing inline
    assert "<style" not in page and "style=" not in page and "<script>" not in page


def test_hanamikoji_serve_refuses_ports_that_do_not_exist(capsys) -> None:
    from hanamikoji_env.play.server import main

    for port in ("99999", "-1", "0", "http"):
        with pytest.raises(SystemExit) as exit_:
            main(["--port", port])
        assert exit_.value.code == 2
        assert "must be a port number in [1, 65535]" in capsys.readouterr().err


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


@pytest.mark.parametrize(
    "headers",
    [{"host": "["}, {"host": "]"}, {"host": "[::1"}, {"host": "127.0.0.1:99999"}, {"origin": "http://["}],
)
def test_a_malformed_host_or_origin_is_a_400_with_the_usual_headers(headers, caplog) -> None:
    """Each was a 500 without the security headers and a 26-line traceback in the log."""
    client = TestClient(create_app("random"), raise_server_exceptions=False)
    for method in ("get", "post"):
        reply = getattr(client, method)(
            "/api/opponents" if method == "get" else "/api/games", headers=headers
        )
        assert reply.status_code == 400 and "malformed Host or Origin" in reply.text, reply.text
        assert reply.headers["x-frame-options"] == "DENY" and "content-security-policy" in reply.headers
    assert "Traceback" not in caplog.text


def test_a_port_in_use_is_said_at_once_before_the_warm_up(monkeypatch, capsys) -> None:
    from hanamikoji_env.play import server as module

    warmed: list[object] = []
    monkeypatch.setattr(module, "warm_up", lambda *a: warmed.append(a))
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as caught:
            module.main(["--port", str(port), "--opponent", "random"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and f"cannot listen on 127.0.0.1:{port}: Address already in use" in err, err
    assert warmed == []


def test_new_games_are_rate_limited_per_client() -> None:
    client = TestClient(create_app("random", max_games=100, new_games_per_minute=5))
    codes = [client.post("/api/games", json={}).status_code for _ in range(7)]
    assert codes == [200] * 5 + [429] * 2


def test_server_seeds_are_secret_and_chosen_seeds_make_practice_games(client: TestClient) -> None:
    store: GameStore = client.app.state.server.store  # type: ignore[attr-defined]
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
    store: GameStore = client.app.state.server.store  # type: ignore[attr-defined]
    now = [0.0]
    store.clock = lambda: now[0]
    orphan, played = new_game(client), new_game(client)
    client.post(f"/api/games/{played['id']}/actions", json={"action": played["choices"][0]["action"]})
    now[0] = 301.0
    assert client.get(f"/api/games/{orphan['id']}").status_code == 404  # abandoned at the start
    assert client.get(f"/api/games/{played['id']}").status_code == 200  # in play: an hour's grace


# ------------------------------------------------ selections, watching ---


@pytest.mark.slow
def test_a_selection_in_any_order_plays_as_the_engine_takes_it_or_changes_nothing() -> None:
    """Over many random positions: play_turn accepts a token and cards exactly when playing the
    token and then the cards in ascending order, one action at a time, is legal; a refusal names
    the legal choices and leaves the game as it was."""
    rng = np.random.default_rng(0)
    accepted = refused = 0
    for game in range(40):
        session = GameSession("random", seat=game % 2, seed=game)
        while not session.over:
            view = session.view()
            turn = view["turn"]
            if turn is None:
                session.play(int(rng.choice([c["action"] for c in view["choices"]])))
                continue
            hand = view["board"]["hand"]
            token = None if turn["token"] is not None else int(rng.integers(0, 5))
            size = int(rng.integers(1, 5))
            cards = [int(g) for g in rng.choice(7, size=size)] if rng.random() < 0.4 else None
            if cards is None:
                n = turn["needed"] if token is None else [1, 2, 3, 4][token % 4]
                cards = [int(g) for g in rng.permutation(hand)[:n]]
            legal = _sequential_is_legal(session, token, cards)
            before = (session.view(), session.env.history())
            if legal:
                session.play_turn(cards, token)
                accepted += 1
            else:
                with pytest.raises(ValueError) as refusal:
                    session.play_turn(cards, token)
                assert (session.view(), session.env.history()) == before
                message = str(refusal.value)
                assert "hand" in message or "token" in message or "not your move" in message, message
                refused += 1
    assert accepted > 300 and refused > 300


def _sequential_is_legal(session: GameSession, token: int | None, cards: list[int]) -> bool:
    """Whether the env takes the token and the cards (ascending) one action at a time."""
    env = copy.deepcopy(session.env)
    agent = AGENTS[session.seat]
    steps = ([] if token is None else [token]) + [CARD_BASE + g for g in sorted(cards)]
    for i, action in enumerate(steps):
        mask = env.observe(agent)["action_mask"]
        if env.agent_selection != agent or not 0 <= action < len(mask) or not mask[action]:
            return False
        env.step(action)
        if i < len(steps) - 1 and env.game.phase.name != "SELECT":
            return False  # the token's cards are all chosen before the list ends
    return env.game.phase.name != "SELECT" or env.agent_selection != agent  # the selection is complete


def test_the_server_takes_a_whole_selection_or_refuses_it_unchanged(client: TestClient) -> None:
    view = new_game(client, seed=4)  # hand G0 G1 G1 G3 G5 G5 G6 for player_0
    gid, hand = view["id"], view["board"]["hand"]
    for body, status, message in [
        ({"token": 2, "cards": [hand[0], hand[1]]}, 400, "needs 3 more card(s)"),
        ({"token": 2, "cards": [4, 4, 4]}, 400, "not all in your hand"),
        ({"cards": [hand[0]]}, 400, "choose a token first"),
        ({"token": 4, "cards": [0]}, 422, ""),
        ({"token": 2, "cards": [7, 0, 1]}, 422, ""),
        ({"token": 2, "cards": []}, 422, ""),
        ({"token": 2, "cards": [0, 1, 2, 3, 4]}, 422, ""),
        ({"token": 2, "cards": "G0 G1"}, 422, ""),
    ]:
        response = client.post(f"/api/games/{gid}/turn", json=body)
        assert response.status_code == status, (body, response.text)
        assert message in response.text
        assert client.get(f"/api/games/{gid}").json() == view  # unchanged
    descending = sorted(hand[-3:], reverse=True)
    after = client.post(f"/api/games/{gid}/turn", json={"token": 2, "cards": descending}).json()
    assert after["events"][0]["text"] == f"You offer a Gift: {card_names(sorted(descending))}."


def test_watching_two_bots_is_bounded_like_playing(client: TestClient) -> None:
    watched = client.post("/api/watch", json={"players": ["heuristic", "random"], "seed": 3})
    assert watched.status_code == 200, watched.text
    data = watched.json()
    (record,) = [records.parse_line(line) for line in data["record"].splitlines()]
    records.verify(record)
    assert record.players == ("heuristic", "random") and data["frames"] == replay_frames(record)
    assert client.post("/api/watch", json={"players": ["heuristic", "random"], "seed": 3}).json() == data
    for body, status in [
        ({"players": ["heuristic", "ckpt:/etc/passwd"]}, 400),  # a browser never names a file
        ({"players": ["heuristic"]}, 422),
        ({"players": ["heuristic", "random", "search"]}, 422),
        ({"players": ["heuristic", "random"], "seed": -1}, 422),
        ({"players": ["x" * 300, "random"]}, 422),
    ]:
        assert client.post("/api/watch", json=body).status_code == status, body
    app = create_app("random", new_games_per_minute=2)
    limited = TestClient(app)
    assert limited.post("/api/games", json={}).status_code == 200
    assert limited.post("/api/watch", json={"players": ["random", "random"]}).status_code == 200
    refused = limited.post("/api/watch", json={"players": ["random", "random"]})
    assert refused.status_code == 429  # played and watched games share the per-client rate


def test_bot_games_are_watched_a_few_at_a_time(monkeypatch) -> None:
    from hanamikoji_env.play import server, workers

    started, release = threading.Event(), threading.Event()

    def slow_game(players: tuple[str, str], seed: int | None, round_limit: int | None) -> records.GameRecord:
        started.set()
        release.wait(10)
        return bot_game(players, 1, round_limit)

    monkeypatch.setattr(server, "WATCHED_AT_ONCE", 1)
    monkeypatch.setattr(workers, "bot_game", slow_game)  # the app's workers are threads here
    client = TestClient(server.create_app("random"))
    body = {"players": ["random", "random"]}
    first: list[int] = []
    worker = threading.Thread(target=lambda: first.append(client.post("/api/watch", json=body).status_code))
    worker.start()
    assert started.wait(10)
    busy = client.post("/api/watch", json=body)
    assert busy.status_code == 503 and "at once" in busy.json()["detail"]
    assert client.get("/api/opponents").status_code == 200  # everyone else is still served
    release.set()
    worker.join(10)
    assert first == [200]
    assert client.post("/api/watch", json=body).status_code == 200  # the slot came back


def test_the_page_has_an_icon(client: TestClient) -> None:
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert client.get("/static/favicon.svg").status_code == 200


def test_counts_read_in_the_right_number() -> None:
    from hanamikoji_env.play.views import game_summary
    from hanamikoji_env.records import counted

    assert [counted(n, "geisha") for n in (0, 1, 2)] == ["0 geishas", "1 geisha", "2 geishas"]
    assert counted(2, "round summary") == "2 round summaries"
    one = game_summary([11, 3], [2, 1], 0, ("you", "the opponent"), 1)["text"]
    assert one.startswith("Game over after 1 round: you win") and "round(s)" not in one
    assert "after 3 rounds" in game_summary([8, 9], [4, 3], 0, ("you", "the opponent"), 3)["text"]


def _served_game(app, seat: int, seed: int, moves: int | None = None) -> tuple[TestClient, dict]:
    """A practice game against the app's default bot, the person's moves drawn from a generator
    of its own; ``moves`` of them (None: to the end)."""
    client = TestClient(app)
    view = new_game(client, seat=seat, seed=seed)
    rng = np.random.default_rng(seed)
    while view["result"] is None and moves != 0:
        action = int(rng.choice([c["action"] for c in view["choices"]]))
        response = client.post(f"/api/games/{view['id']}/actions", json={"action": action})
        assert response.status_code == 200, response.text
        view, moves = response.json(), None if moves is None else moves - 1
    return client, view


def test_a_bot_in_a_worker_process_plays_the_game_it_plays_in_the_server() -> None:
    """The search bot (a generator and a plan for its turn) moving in a worker process, both
    shipped with every move, plays the very game it plays in the serving process: same seed,
    same record, the bot starting (its first moves made for the new game) and answering."""
    from hanamikoji_env.play.workers import PooledBot

    played = []
    for workers in (0, 1):
        app = create_app("search", workers=workers)
        try:
            client, view = _served_game(app, seat=1, seed=7, moves=1)
            bot = app.state.server.store.games[view["id"]].session.bot
            assert isinstance(bot, PooledBot) == bool(workers)
            client, view = _served_game(app, seat=1, seed=7)
            played.append(client.get(f"/api/games/{view['id']}/record").text)
        finally:
            app.state.server.workers.close()
    assert played[0] == played[1] and '"search"' in played[0]


def test_a_killed_worker_costs_no_request_and_the_game_goes_on() -> None:
    """A worker process killed mid-game (out of memory, an operator): the move whose reply it
    owed is made again in a new worker, and the game plays on."""
    app = create_app("search", workers=1)
    try:
        app.state.server.workers.start()
        client, view = _served_game(app, seat=0, seed=3, moves=1)
        for process in list(app.state.server.workers.pool._processes.values()):
            process.kill()
            process.join(10)
        for _ in range(10):  # past the move that the bot answers (not one more card of a selection)
            moved = client.post(
                f"/api/games/{view['id']}/actions", json={"action": view["choices"][0]["action"]}
            )
            assert moved.status_code == 200, moved.text
            view = moved.json()
        assert view["your_move"] and view["choices"]
    finally:
        app.state.server.workers.close()


def beside_a_sum(bad: Callable[..., Any], *args: Any) -> tuple[object, object]:
    """``bad(*args)`` from one address and ``sum([1, 2, 3])`` from another, at once, in two workers:
    what each came to (a result or an exception)."""
    from hanamikoji_env.play.workers import Workers

    workers = Workers(2, ["random"], None)
    try:
        workers.start()

        async def both() -> list[object]:
            return await asyncio.gather(
                workers.run(bad, *args, client="10.0.0.1"),
                workers.run(sum, [1, 2, 3], client="10.0.0.2"),
                return_exceptions=True,
            )

        first, second = asyncio.run(both())
        assert asyncio.run(workers.run(sum, [4, 5], client="10.0.0.1")) == 9  # the workers serve on
        return first, second
    finally:
        workers.close()


def test_a_task_that_kills_its_worker_fails_alone() -> None:
    """A task whose worker dies under it twice (it kills the worker itself) is a 503; a task on
    the other worker at the time is made again and answered."""
    import os

    from fastapi import HTTPException

    killer, other = beside_a_sum(os._exit, 3)
    assert isinstance(killer, HTTPException) and killer.status_code == 503, killer
    assert other == 6


def test_a_task_past_its_time_limit_is_stopped_and_the_others_made_again(monkeypatch) -> None:
    from fastapi import HTTPException

    from hanamikoji_env.play import workers as pooled

    monkeypatch.setattr(pooled, "TASK_SECONDS", 3.0)
    start = time.perf_counter()
    stuck, other = beside_a_sum(time.sleep, 600)
    assert time.perf_counter() - start < 30
    assert isinstance(stuck, HTTPException) and "took over 3 s" in stuck.detail, stuck
    assert other == 6


def test_addresses_take_the_workers_in_turn() -> None:
    """One worker; one address queues five tasks, then another address one: the second address
    waits behind one task of the first, not five.  With two, one address (and the watched games
    and replays of all) holds one at most: the other is left for everyone else."""
    from hanamikoji_env.play.workers import Turns

    async def served(capacity: int, tasks: list[tuple[str, bool]]) -> list[str]:
        turns, bulk, order = Turns(capacity, per_key=max(capacity - 1, 1)), Turns(max(capacity - 1, 1)), []

        async def task(name: str, is_bulk: bool) -> None:
            async with contextlib.AsyncExitStack() as held:
                if is_bulk:
                    await held.enter_async_context(bulk.slot(name[0]))
                await held.enter_async_context(turns.slot(name[0]))
                order.append(name)
                await asyncio.sleep(0.01)

        running = []
        for name, is_bulk in tasks:
            running.append(asyncio.create_task(task(name, is_bulk)))
            await asyncio.sleep(0)  # queued in this order
        await asyncio.gather(*running)
        return order

    first = [(f"a{k}", False) for k in range(5)]
    assert asyncio.run(served(1, [*first, ("b0", False)])) == ["a0", "a1", "b0", "a2", "a3", "a4"]
    # two workers, four replays (of two addresses), then a move of a third: it never waits on them
    replays = [(f"{'rs'[k % 2]}{k}", True) for k in range(4)]
    assert asyncio.run(served(2, [*replays, ("m0", False)]))[:2] == ["r0", "m0"]
    # two workers, one address's five heavy moves, then another's: one worker is always left
    assert asyncio.run(served(2, [*first, ("b0", False)]))[:2] == ["a0", "b0"]


def test_the_terminal_board_reads_on_dark_and_light_terminals_and_fits_any_name() -> None:
    """Cards are chips, the text on each geisha's colour chosen to contrast at least 4.5:1
    (WCAG AA), so no terminal background matters; a long opponent name never widens the header."""
    for name, style in [*((geishas.GEISHAS[g].name, tui.chip(g)) for g in range(len(geishas.GEISHAS))),
                        *tui.OUTCOME_STYLES.items()]:  # fmt: skip
        text, colour = style.split()[1], style.split()[-1]
        assert tui.contrast(text, colour) >= 4.5, (name, style)
    view = GameSession("random", seat=1, seed=3).view()
    view["opponent"] = "ckpt:" + "a-very-long-checkpoint-name/" * 3 + "policy.pt"
    for to_move in ("you", "opponent", None):
        assert len(tui.header_text({**view, "to_move": to_move}, 80).plain) <= 80


def test_the_terminal_board_plays_again_from_the_other_seat(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    session = GameSession("random", seat=0, seed=4)
    play_out(session)
    app = tui.PlayApp(session, path)

    async def drive() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            while isinstance(app.screen, tui.RoundEnd):
                await pilot.press("enter")
            assert "Press n to play again" in app.shown_status and app.recorded
            await pilot.press("n")
            assert app.session is not session and app.session.seat == 1 and not app.session.over
            assert "A new game: you play second." in app.shown_log and not app.recorded
            assert app.session.view()["your_move"]  # the bot has opened the new game
            await pilot.press("n")  # not while a game is on: a bell, the same game
            assert app.session.seat == 1 and not app.session.over
            await pilot.press("q", "y")

    asyncio.run(drive())
    assert len(list(records.read_records(path))) == 2  # the first game, and what was played of the second
