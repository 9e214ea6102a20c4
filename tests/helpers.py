"""Helpers shared by the tests: intent-level action scripts and random play."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hanamikoji_env import rules
from hanamikoji_env.actions import (
    CARD_BASE,
    COMP_TAKE_A,
    COMP_TAKE_B,
    COMPETITION,
    GIFT,
    GIFT_TAKE_BASE,
    SECRET,
    SPLIT_BASE,
    TRADEOFF,
)


def cards(*geishas: int) -> list[int]:
    """Selection actions for these cards (sorted, as the contract requires)."""
    return [CARD_BASE + g for g in sorted(geishas)]


def secret(g: int) -> list[int]:
    return [SECRET, *cards(g)]


def tradeoff(a: int, b: int) -> list[int]:
    return [TRADEOFF, *cards(a, b)]


def gift(offer: tuple[int, int, int], take: int) -> list[int]:
    """The turn player offers three cards; the opponent takes ``take``."""
    return [GIFT, *cards(*offer), GIFT_TAKE_BASE + take]


def competition(offer: tuple[int, int, int, int], split: int, take_a: bool) -> list[int]:
    """Offer four cards, split them with ``split`` (0..2), the opponent takes set A or B."""
    return [COMPETITION, *cards(*offer), SPLIT_BASE + split, COMP_TAKE_A if take_a else COMP_TAKE_B]


def deck(removed: int, hand0: list[int], hand1: list[int], pile: list[int]) -> list[int]:
    d = [removed, *hand0, *hand1, *pile]
    rules.validate_deck(d)
    return d


# Round 1, player_0 starts.  See test_rules.py for the expected outcome.
DECK_1 = deck(0, [6, 6, 6, 5, 5, 1], [3, 3, 3, 4, 4, 4], [6, 6, 5, 5, 2, 2, 0, 1])


def round_1_script(last_split: int = 0, last_take_a: bool = False) -> list[int]:
    return [
        *secret(6),  # T1 player_0
        *tradeoff(3, 6),  # T2 player_1
        *gift((5, 6, 6), take=6),  # T3 player_0; player_1 takes a 6
        *competition((3, 3, 4, 4), split=0, take_a=True),  # T4 player_1; player_0 takes {3,3}
        *tradeoff(1, 2),  # T5 player_0
        *gift((2, 4, 5), take=5),  # T6 player_1; player_0 takes the 5
        *competition((0, 5, 5, 6), split=last_split, take_a=last_take_a),  # T7 player_0
        *secret(1),  # T8 player_1
    ]


# Round 2, player_1 starts; markers from round 1 persist.
DECK_2 = deck(6, [0, 0, 1, 1, 2, 2], [5, 5, 5, 5, 3, 3], [4, 3, 4, 4, 6, 6, 6, 6])
ROUND_2_SCRIPT = [
    *tradeoff(3, 5),  # T1 player_1
    *tradeoff(0, 0),  # T2 player_0
    *secret(5),  # T3 player_1
    *gift((1, 1, 4), take=4),  # T4 player_0; player_1 takes the 4
    *gift((4, 5, 6), take=4),  # T5 player_1; player_0 takes the 4
    *secret(3),  # T6 player_0
    *competition((3, 4, 5, 6), split=0, take_a=False),  # T7 player_1; player_0 takes {5,6}
    *competition((2, 2, 6, 6), split=0, take_a=False),  # T8 player_0; player_1 takes {6,6}
]

# A mirrored round: both sides end identical, every geisha ties.
DECK_MIRROR = deck(6, [0, 6, 6, 1, 5, 5], [0, 3, 4, 1, 5, 5], [2, 2, 3, 3, 4, 4, 6, 6])
MIRROR_SCRIPT = [
    *secret(0),
    *secret(0),
    *tradeoff(6, 6),
    *tradeoff(3, 4),
    *gift((1, 5, 5), take=1),
    *gift((1, 5, 5), take=1),
    *competition((2, 3, 4, 6), split=0, take_a=True),
    *competition((2, 3, 4, 6), split=0, take_a=True),
]


def random_game(
    rng: np.random.Generator, round_limit: int | None = None, max_rounds: int = 1000
) -> Iterator[tuple[rules.State, int | None]]:
    """Yield (state, action) through one random game of the engine; action None at the end."""
    state = rules.new_game(rules.shuffled_deck(rng), round_limit)
    while True:
        if state.phase == rules.Phase.GAME_OVER:
            yield state, None
            return
        if state.phase == rules.Phase.ROUND_OVER:
            assert state.round < max_rounds, "game did not terminate"
            state = rules.next_round(state, rules.shuffled_deck(rng))
            continue
        legal = rules.legal_actions(state)
        action = legal[int(rng.integers(len(legal)))]
        yield state, action
        state = rules.apply(state, action)


def random_action(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    assert len(legal) > 0, "the acting agent has an empty mask"
    return int(legal[rng.integers(len(legal))])
