"""Observation version 2 has perfect recall.

What a player has observed is, by definition, the sequence of every change of its version-1 view
(the env shows it nothing else); a chained digest of those changes stands for it here.  Over many
pairs of game prefixes, two prefixes with different digests must give different version-2
vectors, and two with the same digest the same vector (and the same OpenSpiel information state).
Pairs come from a random game and a twin of it (:data:`KINDS`); the twin's prefixes are compared
with the game's at the same and the next step, and the game's with its own next step.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from helpers import extra

from hanamikoji_env import engine
from hanamikoji_env.actions import NUM_ACTIONS, SECRET, TRADEOFF
from hanamikoji_env.engine import (
    C_CURRENT,
    C_PHASE,
    C_ROUND,
    C_TOKEN,
    C_TURN,
    GAME_OVER,
    ROUND_OVER,
    SELECT_PHASE,
)
from hanamikoji_env.observation import OFFSETS, RECALL_ROUNDS, ROUND_SIZE, VERSIONS
from hanamikoji_env.rules import HAND_SIZE, NUM_CARDS, TURNS_PER_ROUND, shuffled_deck

V1, V2 = VERSIONS[1], VERSIONS[2]
LIMIT = 12  # OpenSpiel's default round limit, so the same games play there
ROUNDS = 8

Choose = Callable[[int, np.ndarray, np.ndarray], "int | None"]
"""``choose(step, row, mask)``: the move at ``step``, or None to stop the game there."""


class Prefix:
    """One prefix of a game, as ``seat`` knows it."""

    def __init__(self, digest: bytes, v1: bytes, v2: bytes, world: bytes, decision: bool) -> None:
        self.digest, self.v1, self.v2 = digest, v1, v2
        self.world = world
        """The whole position (both hands, the pile, the removed card)."""
        self.decision = decision
        self.round = round(float(np.frombuffer(v1, np.float32)[OFFSETS["round"].start]))
        self.info: str | None = None
        """OpenSpiel's information-state string here (decisions only, where it is checked)."""


def play(decks: list[np.ndarray], choose: Choose, seat: int) -> tuple[list[Prefix], list[int]]:
    """Every prefix of the game ``choose`` plays on ``decks`` (each deal, move and scoring is a
    step), and the moves played."""
    row = engine.blank_row()
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    o1, o2 = np.zeros(V1.size, np.float32), np.zeros(V2.size, np.float32)
    digest, last, prefixes, moves = b"", b"", [], []
    rnd = 0

    def record() -> None:
        nonlocal digest, last
        V1.encode_row(row, 0, seat, o1, mask)
        V2.encode_row(row, 0, seat, o2, mask)
        view = o1.tobytes()
        if view != last:
            digest, last = hashlib.blake2b(digest + view, digest_size=16).digest(), view
        world = row[0, : engine.GAME_WIDTH].tobytes()
        prefixes.append(Prefix(digest, view, o2.tobytes(), world, row[0, C_PHASE] < ROUND_OVER))

    while True:
        if row[0, C_PHASE] == ROUND_OVER:
            engine.deal(row, 0, decks[rnd], rnd == 0)
            rnd += 1
            record()
        engine.legal(row, 0, mask)
        a = choose(len(moves), row, mask)
        if a is None or not mask[a]:
            return prefixes, moves
        moves.append(a)
        engine.apply_one(row, 0, a, LIMIT)
        record()
        if row[0, C_PHASE] == GAME_OVER:
            return prefixes, moves


def at_random(rng: np.random.Generator) -> Choose:
    return lambda step, row, mask: int(rng.choice(np.flatnonzero(mask)))


def hidden_selection(row: np.ndarray, seat: int) -> bool:
    """The opponent of ``seat`` is choosing the cards of its Secret or Trade-off."""
    return (
        row[0, C_PHASE] == SELECT_PHASE
        and row[0, C_CURRENT] != seat
        and row[0, C_TOKEN] in (SECRET, TRADEOFF)
    )


KINDS = ("swap", "hidden", "diverge", "draws", "order", "swap+hidden")
"""How a twin differs: two cards of a deck swapped, the opponent's hidden cards chosen again,
another move at one step, two of the player's draws swapped, two turns of one player played in
the other order, or a swap and hidden cards."""


def reordered(decks: list[np.ndarray], moves: list[int], rng: np.random.Generator) -> list[int]:
    """``moves`` with two turns of one player in one round exchanged (each turn's moves, its
    answer included, as a block)."""
    keys: list[tuple[int, int]] = []

    def note(step: int, row: np.ndarray, mask: np.ndarray) -> int | None:
        if step == len(moves):
            return None
        keys.append((int(row[0, C_ROUND]), int(row[0, C_TURN])))
        return moves[step]

    play(decks, note, 0)
    rnd = keys[int(rng.integers(len(keys)))][0]
    turns = sorted({k for r, k in keys if r == rnd})
    parity = int(rng.integers(2))
    mine = [k for k in turns if k % 2 == parity]
    if len(mine) < 2:
        return moves
    a, b = sorted(rng.choice(mine, 2, replace=False))
    at = {k: [i for i, key in enumerate(keys) if key == (rnd, k)] for k in (a, b)}
    first, second = at[a], at[b]
    return (
        moves[: first[0]] + [moves[i] for i in second] + moves[first[-1] + 1 : second[0]]
        + [moves[i] for i in first] + moves[second[-1] + 1 :]
    )  # fmt: skip


def twin(moves: list[int], seat: int, kind: str, rng: np.random.Generator) -> Choose:
    """Moves for a twin game: the same moves (it ends where one is illegal) except the opponent's
    hidden cards chosen again (``hidden``), or another move at one step (``diverge``)."""
    at = int(rng.integers(len(moves)))

    def choose(step: int, row: np.ndarray, mask: np.ndarray) -> int | None:
        legal = np.flatnonzero(mask)
        if kind.endswith("hidden") and hidden_selection(row, seat) and rng.random() < 0.5:
            return int(rng.choice(legal))
        if kind == "diverge" and step == at:
            others = legal[legal != moves[at]]
            return int(rng.choice(others if others.size else legal))
        return moves[step] if step < len(moves) else None  # None, or an illegal move: the end

    return choose


def swapped(
    decks: list[np.ndarray], rng: np.random.Generator, draws_of: int | None = None
) -> list[np.ndarray]:
    """The decks with two cards of round 1's or 2's deck exchanged: any two, or two that seat
    ``draws_of`` draws after its first look at its hand (its hand may end the same, its history not)."""
    out = [d.copy() for d in decks]
    r = int(rng.integers(2))
    if draws_of is None:
        i, j = rng.choice(NUM_CARDS, 2, replace=False)
    else:  # seat 0 starts round 1, seat 1 round 2; turn k's player draws the pile's card k
        turns = np.arange(2, TURNS_PER_ROUND, 2) if draws_of == r else np.arange(1, TURNS_PER_ROUND, 2)
        i, j = 1 + 2 * HAND_SIZE + rng.choice(turns, 2, replace=False)
    out[r][i], out[r][j] = out[r][j], out[r][i]
    return out


def pairs_of(a: list[Prefix], b: list[Prefix]) -> list[tuple[Prefix, Prefix]]:
    """The twin's prefixes against the game's at the same step and one step apart."""
    n = min(len(a), len(b))
    return (
        [(a[k], b[k]) for k in range(n)]
        + [(a[k], b[k + 1]) for k in range(n - 1)]
        + [(a[k], a[k + 1]) for k in range(len(a) - 1)]
    )


def game_pairs(
    games: int, seed: int
) -> list[tuple[tuple[list[np.ndarray], list[int]], tuple[list[np.ndarray], list[int]], int]]:
    """``games`` (game, twin, seat) triples, each game as its decks and moves."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        seat = g % 2
        decks = [np.array(shuffled_deck(rng), dtype=np.int64) for _ in range(ROUNDS)]
        _, moves = play(decks, at_random(rng), seat)
        kind = KINDS[g % len(KINDS)]
        twin_decks = (
            decks if kind in ("hidden", "order") else swapped(decks, rng, seat if kind == "draws" else None)
        )
        plan = reordered(decks, moves, rng) if kind == "order" else moves
        _, twin_moves = play(twin_decks, twin(plan, seat, kind, rng), seat)
        out.append(((decks, moves), (twin_decks, twin_moves), seat))
    return out


def replay(game: tuple[list[np.ndarray], list[int]], seat: int) -> list[Prefix]:
    decks, moves = game
    return play(decks, lambda step, row, mask: moves[step] if step < len(moves) else None, seat)[0]


def with_openspiel(game: tuple[list[np.ndarray], list[int]], seat: int, prefixes: list[Prefix]) -> None:
    """Play the game in OpenSpiel's ``python_hanamikoji`` (a deck is its deal's chance outcomes, in
    order): at each decision its information-state tensor is version 2's, and its string is noted."""
    decks, moves = game
    state = extra("pyspiel").load_game("python_hanamikoji").new_initial_state()
    decisions = iter(p for p in prefixes if p.decision)
    rnd, card = 0, 0
    for move in [*moves, None]:
        while state.is_chance_node():
            state.apply_action(int(decks[rnd][card]))
            card += 1
        if state.is_terminal():
            break
        here = next(decisions)
        assert np.frombuffer(here.v2, np.float32).tolist() == state.information_state_tensor(seat)
        here.info = state.information_state_string(seat)
        if move is None:
            break
        state.apply_action(move)
        if state.position().phase == ROUND_OVER:  # the next round's deal
            rnd, card = rnd + 1, 0


def check_recall(games: int, seed: int, openspiel_every: int = 0) -> Counter:
    """Every pair of prefixes of :func:`game_pairs`: version 2 (and, in every ``openspiel_every``-th
    pair of games, OpenSpiel's information state) tells them apart exactly when what the player
    observed differs.  Returns how many pairs of each kind were seen."""
    seen: Counter = Counter()
    for g, (game, other, seat) in enumerate(game_pairs(games, seed)):
        ours, theirs = replay(game, seat), replay(other, seat)
        if openspiel_every and g % openspiel_every == 0:
            with_openspiel(game, seat, ours)
            with_openspiel(other, seat, theirs)
        for x, y in pairs_of(ours, theirs):
            same = x.digest == y.digest
            if not same and max(x.round, y.round) > RECALL_ROUNDS:  # the cap: the oldest round is gone
                seen["beyond the cap"] += 1
                continue
            assert (x.v2 == y.v2) == same, (
                "version 2 " + ("told apart" if same else "merged") + " two histories"
            )
            if x.info is not None and y.info is not None:
                assert (x.info == y.info) == same, "OpenSpiel's information-state string disagrees"
                seen["checked in OpenSpiel"] += 1
            if same:
                seen["same view, another world" if x.world != y.world else "same"] += 1
            else:
                seen["v1 alike, history not" if x.v1 == y.v1 else "different"] += 1
    return seen


def test_version_2_tells_histories_apart_exactly_when_the_player_observed_a_difference() -> None:
    seen = check_recall(games=60, seed=1)
    del seen["beyond the cap"]
    assert sum(seen.values()) > 1000, seen
    assert min(seen.values()) > 50, seen  # each kind of pair well represented


def test_openspiels_information_state_tells_the_same_histories_apart() -> None:
    """Its tensor is version 2 and its string (a digest with no round cap) agrees with it."""
    from hanamikoji_env.openspiel import DEFAULT_ROUND_LIMIT

    extra("pyspiel", reason="the openspiel extra is not installed")
    assert DEFAULT_ROUND_LIMIT == LIMIT
    seen = check_recall(games=30, seed=4, openspiel_every=1)
    assert seen["checked in OpenSpiel"] > 500, seen


@pytest.mark.slow
def test_version_2_has_perfect_recall_over_ten_thousand_prefix_pairs() -> None:
    seen = check_recall(games=400, seed=2)
    del seen["beyond the cap"]
    assert sum(seen.values()) >= 10_000 and min(seen.values()) > 500, seen


def test_version_1_does_not_recall_what_version_2_does() -> None:
    """The reason for version 2: histories the player can tell apart that version 1 merges."""
    seen = check_recall(games=40, seed=3)
    assert seen["v1 alike, history not"] > 20, seen


def test_beyond_the_cap_the_oldest_round_drops_out() -> None:
    """From round RECALL_ROUNDS + 1 on, the blocks shift: the round just scored becomes the block
    after this one, as it was when scored, and the oldest is gone."""
    rng = np.random.default_rng(5)
    while True:  # a random game of more than RECALL_ROUNDS rounds (0.4% of them)
        decks = [np.array(shuffled_deck(rng), dtype=np.int64) for _ in range(ROUNDS)]
        prefixes, moves = play(decks, at_random(rng), 0)
        rounds = [round(float(np.frombuffer(p.v1, np.float32)[OFFSETS["round"].start])) for p in prefixes]
        if max(rounds) > RECALL_ROUNDS:
            break
    for seat in (0, 1):
        views = [np.frombuffer(p.v2, np.float32) for p in replay((decks, moves), seat)]
        blocks = [v[V1.size :].reshape(RECALL_ROUNDS, ROUND_SIZE) for v in views]
        for k in range(1, len(views)):
            present = int(blocks[k][:, 0].sum())
            assert present == min(rounds[k], RECALL_ROUNDS) and blocks[k][:present, 0].all()
            if rounds[k] == rounds[k - 1] + 1:  # a deal: the scored round moved one block down
                assert (blocks[k][1:] == blocks[k - 1][:-1]).all()
                assert blocks[k][1:present, 2].all() and not blocks[k][0, 2]  # the past is scored
