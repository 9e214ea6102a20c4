"""EnumBot (hanamikoji_env/bots/enum.py): the compiled bot plays what its readable reference
(enum_reference.py, on the rules of record) plays wherever the reference values exactly; its
deals are each distinct order once; its options and its place among the held-out players."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from helpers import choice_positions, random_game

from hanamikoji_env import rules
from hanamikoji_env.actions import CARD_BASE, NUM_ACTIONS, NUM_TOKENS, TOKEN_SIZES
from hanamikoji_env.bots.enum import (
    LEAVES,
    MAX_LEAVES,
    EnumBot,
    enum_actions,
)
from hanamikoji_env.bots.enum_reference import LEAVES_OF, action, all_deals, candidates, exact_values
from hanamikoji_env.bots.search import PLAN_WIDTH
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.infoset import deals, next_arrangement
from hanamikoji_env.observation import decode, encode
from hanamikoji_env.training.config import Config


def last_turn_decisions(seed: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` decisions with a choice (token, split, answers) of random games' last turns of a
    round, as (observation, mask) of the player to move."""
    rng = np.random.default_rng(seed)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    while len(out) < n:
        for state, move in random_game(rng):
            if move is None or state.turn != rules.TURNS_PER_ROUND - 1 or state.selection:
                continue  # a selection under way continues the plan chosen at its start
            mask = np.array(rules.legal_mask(state), dtype=np.int8)
            if mask.sum() > 1:
                out.append((encode(state, state.to_move), mask))
    return out[:n]


def test_deals_are_every_distinct_order_of_the_unseen_cards_once() -> None:
    unseen = (2, 0, 1, 0, 0, 1, 0)  # 2 x geisha 0, one each of 2 and 5
    orders = list(all_deals(unseen))
    expected = sorted(set(itertools.permutations([0, 0, 2, 5])))
    assert [tuple(o) for o in orders] == expected and deals(np.array(unseen)) == len(expected) == 12
    a = np.array([0, 0, 2, 5], dtype=np.int64)
    compiled = [tuple(a)]
    while next_arrangement(a):
        compiled.append(tuple(a))
    assert compiled == expected and list(a) == [0, 0, 2, 5]  # sorted again after the last


def test_the_compiled_bot_plays_the_readable_references_move_wherever_it_is_exact() -> None:
    """Every last-turn decision of random games' rounds (every deal, the round scored in the
    turn: no random number matters): the candidates, the best-responded turn, the mean over
    the deals and the tie rule, against the rules of record."""
    bot = EnumBot(seed=0)
    checked = 0
    phases = set()
    for vector, mask in last_turn_decisions(seed=1, n=400):
        values = exact_values(vector, mask)
        if values is None:
            continue
        top = max(values)
        move = next(m for m, v in zip(candidates(vector, mask), values, strict=True) if v >= top - 1e-12)
        assert move == action(vector, mask, key=12345)  # no random number matters here
        assert bot.act_batch(vector[None], mask[None])[0] == move[0], (move, values)
        checked += 1
        phases.add(decode(vector).phase)
    assert checked >= 300, checked
    assert phases == {rules.Phase.SPLIT, rules.Phase.GIFT_ANSWER, rules.Phase.COMP_ANSWER}


def test_the_compiled_bot_plays_the_readable_references_move_with_the_same_random_numbers() -> None:
    """Decisions of every kind from random games (token plans, selections handed mid-turn,
    splits, answers), sampled deals and playouts: with the same key, the same values and so
    the same move and plan."""
    positions = choice_positions(60, seed=7, rate=0.05)
    obs = np.stack([p[0] for p in positions])
    mask = np.stack([p[1] for p in positions])
    keys = np.random.default_rng(0).integers(0, 2**63, size=len(obs), dtype=np.int64)
    plans = np.full((len(obs), PLAN_WIDTH), -1, dtype=np.int64)
    got = enum_actions(obs, mask, plans, keys, samples=3, budget=600)  # 1 or 2 deals of a full hand
    phases = set()
    for i in range(len(obs)):
        move = action(obs[i], mask[i], int(keys[i]), samples=3, budget=600)
        assert got[i] == move[0], (i, move, got[i])
        phase = decode(obs[i]).phase
        if phase in (rules.Phase.TOKEN, rules.Phase.SELECT) and plans[i, 0] >= 0:  # the plan it keeps
            kept = [c for c in plans[i, 3:] if c >= 0]
            chosen = [a - CARD_BASE for a in move if a >= CARD_BASE]
            assert kept[len(kept) - len(chosen) :] == chosen, (i, kept, move)
        phases.add(phase)
    assert phases == set(rules.Phase) - {rules.Phase.ROUND_OVER, rules.Phase.GAME_OVER}, phases


def test_each_tokens_leaves_are_what_the_rules_give_a_best_responded_turn() -> None:
    """The budget's unit: Secret and Trade-off end the turn, a Gift has three answers, a
    Competition three splits of two answers (the reference counts them from the rules)."""
    assert list(LEAVES) == [LEAVES_OF[token] for token in range(NUM_TOKENS)]
    assert sum(comb(7, TOKEN_SIZES[t]) * LEAVES_OF[t] for t in range(NUM_TOKENS)) == MAX_LEAVES


def test_a_decision_values_every_deal_when_few_and_samples_when_many() -> None:
    vector, mask = last_turn_decisions(seed=3, n=1)[0]
    assert exact_values(vector, mask) is not None
    assert exact_values(vector, mask, samples=1) is None  # more deals than one: sampled instead


def test_the_same_seed_plays_the_same_moves_batched_or_alone() -> None:
    positions = last_turn_decisions(seed=5, n=20)
    obs = np.stack([p[0] for p in positions])
    mask = np.stack([p[1] for p in positions])
    rngs = [np.random.default_rng(i) for i in range(20)]
    batched = EnumBot(seed=0, samples=8, budget=MAX_LEAVES).act_batch(obs, mask, rngs=rngs)
    alone = [
        EnumBot(seed=0, samples=8, budget=MAX_LEAVES).act_batch(
            obs[[i]], mask[[i]], rngs=[np.random.default_rng(i)]
        )[0]
        for i in range(20)
    ]
    assert list(batched) == alone
    assert all(mask[i, a] for i, a in enumerate(batched)) and batched.max() < NUM_ACTIONS


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("enum:budget=100", rf"budget of enum must be an int in \[{MAX_LEAVES}, "),
        ("enum:samples=0", r"samples of enum must be an int in \[1, "),
        ("enum:depth=3", r"bad option 'depth=3' for enum; options: \['budget', 'samples'\]"),
    ],
)
def test_bad_options_are_one_line_errors(spec, message) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        parse_player(spec)
    assert "\n" not in str(caught.value)


def test_no_training_config_may_play_the_enumeration_bot() -> None:
    with pytest.raises(ValueError, match="is the held-out opponent enum"):
        Config.from_dict({"bot_shares": {"enum": 0.1}})
