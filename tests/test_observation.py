"""Observation encoding: layout docs, decoding, bounds, and the hidden-information boundary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import play_swapped, random_action, random_game

from hanamikoji_env import observation, rules
from hanamikoji_env.actions import SECRET, TOKEN_SIZES, TRADEOFF
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


@pytest.mark.parametrize("version", sorted(observation.VERSIONS))
def test_every_observation_version_is_documented_exactly(version: int) -> None:
    v = observation.VERSIONS[version]
    doc = observation.__doc__ or ""
    assert v.number == version and v.layout[-1].offset + v.layout[-1].length == v.size == len(v.high)
    assert f"| {version} | {v.size} |" in doc  # its row in the versions table
    for table in (v.layout, *v.parts):
        assert layout_table(table) in (ROOT / "docs" / "environment.md").read_text()
    space = observation.observation_space(version)
    assert space["observation"].shape == (v.size,) and (space["observation"].high == v.high).all()


def test_layout_tables_are_documented_exactly() -> None:
    doc = observation.__doc__ or ""
    assert layout_table(OBS_LAYOUT) in doc
    assert layout_table(STATE_LAYOUT) in doc
    assert layout_table(OBS_LAYOUT) in (ROOT / "docs" / "environment.md").read_text()
    assert f"(``OBS_SIZE`` = {OBS_SIZE})" in doc
    assert OBS_LAYOUT[-1].offset + OBS_LAYOUT[-1].length == OBS_SIZE == len(OBS_HIGH)
    assert STATE_LAYOUT[-1].offset + STATE_LAYOUT[-1].length == len(STATE_HIGH)


@pytest.mark.parametrize("games", [30, pytest.param(300, marks=pytest.mark.slow)])
def test_decode_matches_the_engine_and_vectors_stay_in_bounds(games: int) -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(games):
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
                hidden += rules.count_cards(
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
    assert checked > 50 * games  # decisions x seats


def test_decode_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"shape \(109,\)"):
        decode(np.zeros(5))


# ------------------------------------------------------ hidden information ---


@pytest.mark.parametrize("version", sorted(observation.VERSIONS))
@pytest.mark.parametrize("observer", [0, pytest.param(1, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("token", "draw"), [(TRADEOFF, False), (TRADEOFF, True), (SECRET, False)])
def test_unknowable_cards_do_not_change_what_a_player_sees(
    observer: int, token: int, draw: bool, version: int
) -> None:
    """Swap the removed card with a card the opponent hides (Trade-off, or Secret until scoring);
    for every observation version."""
    rng = np.random.default_rng(1000 * observer + 10 * token + draw)
    for game in range(60):
        r0, r1 = np.random.default_rng(game), np.random.default_rng(game)
        trace_a, trace_b = play_swapped(
            observer, token, draw, game, rng, [lambda o, r=r: random_action(o, r) for r in (r0, r1)], version
        )
        assert len(trace_a) == len(trace_b) > 10
        for step, (a, b) in enumerate(zip(trace_a, trace_b, strict=True)):
            if token == TRADEOFF or not a.scored:  # a Secret is revealed at the scoring, not before
                assert a == b, f"game {game} step {step}"
        if token == TRADEOFF:
            assert "round_summary" in trace_a[-1].views[2]  # the scoring too was the same


# ------------------------------------------------------------ sufficiency ---


@pytest.mark.parametrize("version", sorted(observation.VERSIONS))
def test_every_version_determines_the_legal_moves(version: int) -> None:
    """What a player may do is a function of what it sees: over many random positions, no
    observation vector comes with two different masks (nor with two different deciders)."""
    from hanamikoji_env.vector import BatchEngine, random_actions

    v = BatchEngine(256, seed=version, observation_version=version)
    obs, mask, _ = v.reset()
    rng = np.random.default_rng(0)
    seen: dict[bytes, bytes] = {}
    for _ in range(300):
        for o, m in zip(obs, mask, strict=True):
            assert seen.setdefault(o.tobytes(), m.tobytes()) == m.tobytes()
        obs, mask, *_ = v.step(random_actions(mask, rng))
    assert len(seen) > 20_000


def test_a_version_1_observation_is_everything_a_determinization_needs() -> None:
    """Version 1 holds all a player knows: every full game dealt from it (the unseen cards
    anywhere the player cannot see) gives the player back the same observation and mask."""
    from hanamikoji_env.infoset import determinize

    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        for state, _action in random_game(rng):
            if state.phase >= Phase.ROUND_OVER:
                continue
            seat = state.to_move
            v = encode(state, seat)
            world = determinize(v, rng)  # the player as seat 0
            assert (encode(world, 0) == v).all()
            assert rules.legal_mask(world) == rules.legal_mask(state)
            checked += 1
    assert checked > 1000
