"""Observation encoding: layout docs, decoding, bounds, and the hidden-information boundary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import random_game

from hanamikoji_env import observation, raw_env, rules
from hanamikoji_env.actions import CARD_BASE, SECRET, TOKEN_SIZES, TRADEOFF
from hanamikoji_env.observation import (
    OBS_HIGH,
    OBS_LAYOUT,
    OBS_SIZE,
    STATE_HIGH,
    STATE_LAYOUT,
    decode,
    encode,
    encode_state,
    layout_table,
)
from hanamikoji_env.rules import Phase

ROOT = Path(__file__).resolve().parents[1]


def test_layout_tables_are_documented_exactly() -> None:
    doc = observation.__doc__ or ""
    assert layout_table(OBS_LAYOUT) in doc
    assert layout_table(STATE_LAYOUT) in doc
    assert layout_table(OBS_LAYOUT) in (ROOT / "README.md").read_text()
    assert f"(``OBS_SIZE`` = {OBS_SIZE})" in doc
    assert OBS_LAYOUT[-1].offset + OBS_LAYOUT[-1].length == OBS_SIZE == len(OBS_HIGH)
    assert STATE_LAYOUT[-1].offset + STATE_LAYOUT[-1].length == len(STATE_HIGH)


def test_decode_matches_the_engine_and_vectors_stay_in_bounds() -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(150):
        for state, _action in random_game(rng):
            for seat in (0, 1):
                v = encode(state, seat)
                assert v.dtype == np.float32 and v.shape == (OBS_SIZE,)
                assert (v >= 0).all() and (v <= OBS_HIGH).all()
                info = decode(v)
                opp = 1 - seat
                assert info.phase == state.phase
                assert info.hand == state.hands[seat]
                assert info.secret == state.secrets[seat]
                assert info.tradeoff == state.tradeoffs[seat]
                assert info.placed_me == state.placed[seat] and info.placed_opp == state.placed[opp]
                assert info.markers == tuple(
                    -1 if m == -1 else (0 if m == seat else 1) for m in state.markers
                )
                assert info.spent_me == state.spent[seat] and info.spent_opp == state.spent[opp]
                assert info.hand_size == sum(state.hands[seat])
                assert info.opp_hand_size == sum(state.hands[opp])
                assert info.draw_pile_size == len(state.draw_pile)
                assert info.round == state.round and info.i_started == (state.starter == seat)
                acting = state.phase < Phase.ROUND_OVER
                assert info.my_decision == (acting and state.to_move == seat)
                if state.phase == Phase.SELECT and state.current == seat:
                    assert info.token == state.token
                    assert sum(info.selection) == len(state.selection)
                    assert info.cards_needed == TOKEN_SIZES[state.token] - len(state.selection)
                # unseen = opponent's hand + Secret + Trade-off + removed card + draw pile
                hidden = np.array(state.hands[opp]) + np.array(state.tradeoffs[opp])
                hidden += rules._counts(
                    [
                        *state.draw_pile,
                        state.removed,
                        *([state.secrets[opp]] if state.secrets[opp] >= 0 else []),
                    ]
                )
                assert info.unseen == tuple(int(x) for x in hidden)
                checked += 1
            g = encode_state(state)
            assert (g >= 0).all() and (g <= STATE_HIGH).all()
    assert checked > 10_000


def test_decode_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"shape \(109,\)"):
        decode(np.zeros(5))


# ------------------------------------------------------ hidden information ---


class OpponentPolicy:
    """A random opponent that hides one specific card with one token on its first turn.

    The reserved card is the only difference between the two deals of a
    hidden-information test; every other choice is drawn from cards that are
    the same in both deals, so both games get the same choices.
    """

    def __init__(self, seat: int, reserved: int, token: int, seed: int) -> None:
        self.seat, self.reserved, self.token = seat, reserved, token
        self.rng = np.random.default_rng(seed)
        self.plan: list[int] = []
        self.used = False

    def act(self, state: rules.State, mask: np.ndarray) -> int:
        if state.phase == Phase.TOKEN and not self.used:
            return self.token  # hide the reserved card at the first turn: always playable
        if state.phase == Phase.SELECT:
            if not state.selection:
                hand = [g for g in range(7) for _ in range(state.hands[self.seat][g])]
                if not self.used:
                    hand.remove(self.reserved)
                k = TOKEN_SIZES[state.token]
                if state.token == self.token:
                    chosen = [self.reserved, *self.rng.choice(hand, k - 1, replace=False)]
                    self.used = True
                else:
                    chosen = list(self.rng.choice(hand, k, replace=False))
                self.plan = [CARD_BASE + int(g) for g in sorted(chosen)]
            return self.plan[len(state.selection)]
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])


def swapped_deals(
    rng: np.random.Generator, observer: int, draw: bool
) -> tuple[list[int], list[int], int, int]:
    """Two decks that differ only in the removed card and one card the opponent gets."""
    opp = 1 - observer
    while True:
        deck = list(rules.shuffled_deck(rng))
        # the opponent's first draw (deck[13] for player_0, deck[14] for player_1) or its hand
        slots = [13 + opp] if draw else list(range(1 + 6 * opp, 7 + 6 * opp))
        slots = [i for i in slots if deck[i] != deck[0]]
        if slots:
            i = slots[int(rng.integers(len(slots)))]
            other = list(deck)
            other[0], other[i] = deck[i], deck[0]
            return deck, other, deck[i], deck[0]


def views(e: raw_env, agent: str) -> tuple:
    obs = e.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        repr(e.infos[agent]),
        e.rewards[agent],
        e.render(),
        e.render_for(agent),
    )


@pytest.mark.parametrize("observer", [0, 1])
@pytest.mark.parametrize(("token", "draw"), [(TRADEOFF, False), (TRADEOFF, True), (SECRET, False)])
def test_unknowable_cards_do_not_change_what_a_player_sees(observer: int, token: int, draw: bool) -> None:
    """Swap the removed card with a card the opponent hides (Trade-off, or Secret until scoring)."""
    rng = np.random.default_rng(1000 * observer + 10 * token + draw)
    agent = f"player_{observer}"
    for game in range(60):
        deck_a, deck_b, card_a, card_b = swapped_deals(rng, observer, draw)
        envs = [raw_env(render_mode="ansi"), raw_env(render_mode="ansi")]
        opponents = [OpponentPolicy(1 - observer, c, token, seed=game) for c in (card_a, card_b)]
        mine = [np.random.default_rng(game), np.random.default_rng(game)]
        for e, d in zip(envs, (deck_a, deck_b), strict=True):
            e.reset(seed=game, options={"decks": [d]})
        assert envs[0].game != envs[1].game
        steps = 0
        while True:
            scored = envs[0].game.round > 1 or envs[0].game.phase == Phase.GAME_OVER
            if token == TRADEOFF or not scored:  # a Secret is revealed at the scoring, not before
                assert views(envs[0], agent) == views(envs[1], agent), f"game {game} step {steps}"
            if envs[0].game.round > 1 or not envs[0].agents or envs[0].terminations[agent]:
                break
            actions = []
            for e, opp, r in zip(envs, opponents, mine, strict=True):
                obs = e.observe(e.agent_selection)
                if e.agent_selection == agent:
                    legal = np.flatnonzero(obs["action_mask"])
                    actions.append(int(legal[r.integers(len(legal))]))
                else:
                    actions.append(opp.act(e.game, obs["action_mask"]))
            for e, a in zip(envs, actions, strict=True):
                e.step(a)
            steps += 1
        assert all(o.used for o in opponents)
        if token == TRADEOFF:
            s0, s1 = (e.infos[agent]["round_summary"] for e in envs)
            assert s0 == s1  # the scoring too is the same for both deals
