"""Whole games told with every card shown: a recorded game's positions, one frame a move
(:func:`replay_frames`), and games of two bots to watch (:func:`bot_game`).  A record holds every
deck, so nothing is hidden here; these are for replays and watched games, never a live game.
"""

from __future__ import annotations

import secrets
from typing import Any

from hanamikoji_env import engine, records
from hanamikoji_env.actions import (
    CARD,
    GIFT_TAKE,
    SPLIT,
    TOKEN,
    TOKEN_NAMES,
    decode_action,
    split_sets,
)
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import short
from hanamikoji_env.games import play_env
from hanamikoji_env.play.geishas import card_label, card_names
from hanamikoji_env.play.session import HUMAN, SWAPPED_SPLITS
from hanamikoji_env.play.views import game_summary, on_table
from hanamikoji_env.rules import (
    DRAW,
    Phase,
    State,
    cards_of,
    score,
)


def bot_game(
    players: tuple[str, str], seed: int | None = None, round_limit: int | None = None
) -> records.GameRecord:
    """A whole game of two bots (player specs; ``players[0]`` is player_0), for watching: its
    record, which :func:`replay_frames` shows move by move.  Without a ``seed`` the deals take
    128 bits from the operating system."""
    seed = secrets.randbits(128) if seed is None else seed
    bots = tuple(parse_player(spec).make(seed, round_limit) for spec in players)
    for i, bot in enumerate(bots):
        bot.reset(seed=seed + 1 + i)
    env = play_env((bots[0], bots[1]), seed, round_limit)
    return records.from_env(env, players, {"source": "hanamikoji-serve watch"})


def replay_frames(record: records.GameRecord) -> list[dict[str, Any]]:
    """Every position of a recorded game with all cards shown (a record holds every deck):
    the first deal, one frame per move with the move that led to it in words (a token and
    its cards are one move, shown once the cards are chosen, as at the table), and for each
    round that ends, the scored table (Secrets revealed, markers moved) before the next
    deal, so a replay shows what the players saw at the table.  Each frame's ``at`` is how
    many of the record's actions led to it."""
    records.verify(record)
    states = records.replay(record)
    names = seat_names(record.players)
    stopped = [] if record.finished else [_frame(states[-1], "The game was stopped here, unfinished.", names)]
    swapped = swapped_splits(record)
    swap = False  # the open Competition's pairs named as the person built them
    frames = [_frame(states[0], "The first deal.", names)]
    for at, ((seat, action), before, state) in enumerate(
        zip(record.actions, states[:-1], states[1:], strict=True), start=1
    ):
        told, kind = len(frames), decode_action(action).kind
        selecting = state.phase == Phase.SELECT and state.round == before.round
        if selecting and kind in (TOKEN, CARD):
            continue  # a token's cards are being chosen: one frame once they all are
        if kind == SPLIT:
            swap = at - 1 in swapped
        text = move_text(before, seat, action, names, swap)
        ended = state.round != before.round or state.phase == Phase.GAME_OVER
        if ended:  # the action ended the round: its table, the scoring, the next deal
            scored = engine.apply(before, action)
            played = _frame(scored, text, names, seat)
            played.update(
                phase="ROUND_OVER",
                markers=list(before.markers),
                score=dict(zip(("points", "geishas"), map(list, score(before.markers)), strict=True)),
                scoring=None,
                result=None,
                winner=None,
            )
            frames.append(played)
            frames.append(_frame(scored, _scored_text(scored, names), names))
            if state.phase != Phase.GAME_OVER:
                deal = f"Round {state.round} dealt; {_does(names[state.starter], 'start')}."
                frames.append(_frame(state, deal, names))
        else:
            frames.append(_frame(state, text, names, seat, swap))
        for frame in frames[told:]:
            frame["at"] = at
    for frame in stopped:
        frame["at"] = len(record.actions)
    return frames + stopped


def seat_names(players: tuple[str, ...] | list[str]) -> tuple[str, str]:
    """How a replay or a watched game names its two players: ``"you"`` for a person's seat
    (a record's ``human``), otherwise the player spec; the seat is added only where both
    would read the same (``"heuristic, seat 1"``)."""
    shown = ["you" if p == HUMAN else p for p in players]
    if shown[0] == shown[1]:
        shown = [f"{p}, seat {i + 1}" for i, p in enumerate(shown)]
    return shown[0], shown[1]


def _does(who: str, verb: str) -> str:
    """``who`` doing ``verb`` in the present: ``"You take"``, ``"heuristic takes"``."""
    return f"You {verb}" if who == "you" else f"{who} {verb}s"


def swapped_splits(record: records.GameRecord) -> set[int]:
    """The action indices of the person's splits whose pairs they named the other way round
    (the record's meta :data:`~hanamikoji_env.play.session.SWAPPED_SPLITS`); a
    :class:`~hanamikoji_env.records.RecordError` if it names anything but splits."""
    text = record.meta.get(SWAPPED_SPLITS)
    if text is None:
        return set()
    parts = text.split() if isinstance(text, str) else None
    if (
        parts is None
        or len(parts) > len(record.actions)
        or not all(x.isascii() and x.isdigit() and len(x) < 7 for x in parts)
    ):
        raise records.RecordError(f"meta[{SWAPPED_SPLITS!r}] must list action indices, got {short(text)}")
    indices = {int(x) for x in parts}
    odd = sorted(
        i for i in indices if i >= len(record.actions) or decode_action(record.actions[i][1]).kind != SPLIT
    )
    if odd:
        raise records.RecordError(f"meta[{SWAPPED_SPLITS!r}] names action {odd[0]}, which is no split")
    return indices


def move_text(state: State, seat: int, action: int, names: tuple[str, str], swap: bool = False) -> str:
    """A decision in words, told with full information (for replays and watched games);
    ``swap``: the open Competition's pairs are named the other way round (as the person who
    split them named them)."""
    who = names[seat]
    kind, index = decode_action(action)
    if kind == TOKEN:
        return f"{_does(who, 'play')} {TOKEN_NAMES[index]}."
    if kind == CARD:
        return f"{_does(who, 'play')} {TOKEN_NAMES[state.token]}: {card_names([*state.selection, index])}."
    if kind == SPLIT:
        a, b = split_sets(state.offer, index)
        if swap:
            a, b = b, a
        return (
            f"{_does(who, 'split')} the Competition cards: pair A {card_names(a)} | pair B {card_names(b)}."
        )
    if kind == GIFT_TAKE:
        return f"{_does(who, 'take')} {card_label(index)} from the Gift."
    taken = state.offer[2:] if index else state.offer[:2]
    return f"{_does(who, 'take')} pair {'AB'[index != swap]} ({card_names(taken)})."


def _scored_text(state: State, names: tuple[str, str]) -> str:
    s = state.last_round
    assert s is not None
    return (
        f"Round {s.round} scored: charm points {s.points[0]}-{s.points[1]}, "
        f"geishas {s.geishas[0]}-{s.geishas[1]} ({names[0]} first)."
    )


def frame_playing(state: State) -> dict[str, Any] | None:
    """The token on the table in a full-information position and the seat playing it (as
    :func:`playing` tells it to one player)."""
    return on_table(state.phase, state.token, state.to_move, 1 - state.to_move)


def _frame(
    state: State, text: str, names: tuple[str, str], seat: int | None = None, swap: bool = False
) -> dict[str, Any]:
    scored = state.phase in (Phase.ROUND_OVER, Phase.GAME_OVER)
    last = None if state.last_round is None else state.last_round.as_dict()
    result = None
    if state.phase == Phase.GAME_OVER and state.last_round is not None:
        s, w = state.last_round, state.winner
        summary = game_summary(list(s.points), list(s.geishas), None if w == DRAW else w, names, state.round)
        result = {"winner": w, **summary}
    return {
        "at": 0,
        "move": text,
        "seat": seat,
        "round": state.round,
        "phase": state.phase.name,
        "to_move": None if scored else state.to_move,
        "token": state.token,
        "markers": list(state.markers),
        "placed": [list(p) for p in state.placed],
        "hands": [list(cards_of(h)) for h in state.hands],
        "secrets": list(state.secrets),
        "tradeoffs": [list(cards_of(t)) for t in state.tradeoffs],
        "tokens": [[not s for s in sp] for sp in state.spent],
        "offer": list(state.offer),
        "pairs": _pairs(state, swap) if state.phase == Phase.COMP_ANSWER else None,
        "selection": list(state.selection),
        "removed": state.removed,
        "draw_pile": sorted(state.draw_pile),  # what is left, not the order it comes in
        "playing": None if scored else frame_playing(state),
        "score": dict(zip(("points", "geishas"), map(list, score(state.markers)), strict=True)),
        "scoring": last if scored else None,
        "last_round": last,
        "result": result,
        "winner": state.winner,
    }


def _pairs(state: State, swap: bool) -> list[list[int]]:
    """An open Competition's pairs, pair A first (``swap``: as the person who split it named them)."""
    a, b = list(state.offer[:2]), list(state.offer[2:])
    return [b, a] if swap else [a, b]
