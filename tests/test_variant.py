"""The mini variant (docs/rules.md): the same rules on three geishas, Secret and Gift, one round.

Hand-worked rounds run on both engines (the specification and the engine of record), then the
differential checks of every other way of playing it, and the errors for bad input.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from helpers import gift, secret
from pettingzoo.test import api_test

from hanamikoji_env import differential, engine, env, raw_env, rules
from hanamikoji_env.actions import GIFT, SECRET, TOKEN_NAMES
from hanamikoji_env.observation import decode
from hanamikoji_env.rules import CENTRE, DRAW, MINI, Phase
from hanamikoji_env.vector import BatchEngine, random_actions

# removed 5; player 0 holds 0, 3; player 1 holds 5, 5; the pile is 3, 0, 5, 3 (top first)
MINI_DECK = [5, 0, 3, 5, 5, 3, 0, 5, 3]


@pytest.fixture(params=[rules, engine], ids=["specification", "engine"])
def impl(request):
    return request.param


def play(impl, deck, script):
    s = impl.new_game(deck, variant=MINI)
    for a in script:
        s = impl.apply(s, a)
    return s


def test_mini_components() -> None:
    assert MINI.geishas == (0, 3, 5) and [MINI.values[g] for g in MINI.geishas] == [2, 3, 4]
    assert MINI.num_cards == 9 == len(MINI.full_deck) and MINI.tokens == (SECRET, GIFT)
    assert (MINI.num_removed, MINI.hand_size, MINI.draw_pile_size, MINI.turns_per_round) == (1, 2, 4, 4)
    assert (MINI.win_points, MINI.win_geishas, MINI.round_limit) == (5, 2, 1)
    assert rules.check_variant("full") is rules.FULL and rules.FULL.hand_size == rules.HAND_SIZE


def test_deal_removes_one_deals_two_each_and_only_secret_and_gift_are_playable(impl) -> None:
    s = impl.new_game(MINI_DECK, variant=MINI)
    assert s.removed == 5 and s.variant == MINI
    assert s.hands[0] == rules.count_cards([0, 3, 3])  # player 0 starts and drew the top card, a 3
    assert s.hands[1] == rules.count_cards([5, 5])
    assert s.draw_pile == (0, 5, 3) and s.round_limit == 1
    assert s.spent == ((False, True, False, True), (False, True, False, True))
    assert impl.legal_actions(s) == [SECRET, GIFT]


def test_a_hand_worked_round_the_more_points_win_after_the_one_scoring(impl) -> None:
    s = play(impl, MINI_DECK, secret(3))
    assert (
        s.to_move == 1
        and s.hands[1] == rules.count_cards([0, 5, 5])
        and impl.legal_actions(s) == [SECRET, GIFT]
    )
    s = play(impl, MINI_DECK, secret(3) + gift((0, 5, 5), take=5))  # player 0 takes a 5
    assert s.placed == (rules.count_cards([5]), rules.count_cards([0, 5])) and s.current == 0
    assert s.hands[0] == rules.count_cards([0, 3, 5])  # drew the 5: a Gift of all three
    assert impl.legal_actions(s) == [GIFT]
    s = play(impl, MINI_DECK, secret(3) + gift((0, 5, 5), 5) + gift((0, 3, 5), take=3) + secret(3))
    # sides after the Secrets: player 0 {0, 3, 5, 5}, player 1 {0, 3, 3, 5}
    assert s.phase == Phase.GAME_OVER and s.turn == 4
    assert s.last_round.placed == (rules.count_cards([0, 3, 5, 5]), rules.count_cards([0, 3, 3, 5]))
    assert s.markers == (CENTRE, CENTRE, CENTRE, 1, CENTRE, 0, CENTRE)  # 0: a 1-1 tie
    assert s.last_round.points == (4, 3) and s.last_round.geishas == (1, 1)
    assert s.winner == 0  # neither reached 5 points or 2 geishas: the one round's more points


def test_goals_and_the_one_rounds_tie_breaks() -> None:
    def winner(markers: dict[int, int]) -> int | None:
        m = [CENTRE] * 7
        for g, owner in markers.items():
            m[g] = owner
        points, geishas = rules.score(m, MINI)
        return rules._winner(points, geishas, 1, MINI.round_limit, MINI)

    assert rules.score([0, CENTRE, CENTRE, 0, CENTRE, 1, CENTRE], MINI) == ((5, 4), (2, 1))
    assert winner({0: 0, 3: 0, 5: 1}) == 0  # 5 points (and 2 geishas) win
    assert winner({5: 1, 0: 0}) == 1  # one geisha each: 4 points beat 2
    assert winner({3: 1}) == 1
    assert winner({}) == DRAW  # all ties
    assert rules._winner((3, 3), (1, 1), 1, None, MINI) is None  # without the cap: no winner yet


def test_the_engines_and_the_envs_play_the_same_mini_games() -> None:
    spec = differential.compare_with_spec(300, seed=4, variant=MINI)
    assert spec["games"] == 300 and spec["rounds"] == 300  # one round a game
    both = differential.compare_engines(300, num_envs=64, seed=5, rounds_scripted=1, variant=MINI)
    assert both["decisions"] > 300 * 4 * 2


def test_a_mini_game_never_offers_a_geisha_or_token_not_in_play() -> None:
    v = BatchEngine(128, seed=0, variant="mini")
    rng = np.random.default_rng(0)
    obs, mask, _ = v.reset()
    absent = [4 + g for g in range(7) if g not in MINI.geishas] + [
        14 + g for g in range(7) if g not in MINI.geishas
    ]
    for _ in range(60):
        assert not mask[:, absent].any() and not mask[:, [1, 3, 11, 12, 13, 21, 22]].any()
        obs, mask, *_ = v.step(random_actions(mask, rng))
    view = decode(obs[0])
    assert view.spent_me[1] == view.spent_me[3] == 1  # Trade-off and Competition: never available
    assert view.draw_pile_size <= 4 and sum(view.unseen) <= 9


def test_the_env_takes_the_variant_and_passes_the_pettingzoo_api_test() -> None:
    with warnings.catch_warnings(record=True) as caught:  # the API test's notes on dict spaces
        warnings.simplefilter("always")
        api_test(env(variant="mini"), num_cycles=200)
    assert not [w for w in caught if "hanamikoji" in str(w.filename)]
    e = raw_env(variant="mini")
    e.reset(seed=1, options={"decks": [MINI_DECK]})
    assert e.game.variant == MINI and e.game.removed == 5
    for a in secret(3) + gift((0, 5, 5), 5) + gift((0, 3, 5), 3) + secret(3):
        e.step(a)
    assert e.rewards == {"player_0": 1, "player_1": -1} and all(e.terminations.values())


def test_same_seed_same_mini_game_in_the_env_and_the_batch_engine() -> None:
    a, b = raw_env(variant="mini"), raw_env(variant="mini")
    a.reset(seed=7)
    b.reset(seed=7)
    assert a.game == b.game and a.history().decks == b.history().decks
    assert len(a.history().decks[0]) == 9


def test_bad_variant_input_is_one_line() -> None:
    with pytest.raises(ValueError, match="unknown variant 'tiny': expected one of full, mini"):
        raw_env(variant="tiny")
    with pytest.raises(ValueError, match="mini variant plays 1 round"):
        BatchEngine(4, round_limit=3, variant="mini")
    assert raw_env(variant="mini", round_limit=1).round_limit == 1
    e = raw_env(variant="mini")
    with pytest.raises(ValueError, match="a deck must hold 9 cards, got 21"):
        e.reset(options={"decks": [list(rules.FULL_DECK)]})
    with pytest.raises(ValueError, match="counts"):
        rules.new_game([0] * 9, variant=MINI)
    with pytest.raises(ValueError, match="unknown variant"):
        engine.Dealer(1, np.random.default_rng(0), "sort", variant=3)  # type: ignore[arg-type]


def test_rows_saved_before_variants_load_as_the_full_game() -> None:
    v = BatchEngine(8, seed=2)
    _, mask, _ = v.reset()
    v.step(random_actions(mask, np.random.default_rng(0)))
    state = v.get_state()
    old = dict(state, rows=np.delete(state["rows"], engine.C_VARIANT, axis=1))  # as saved before
    w = BatchEngine(8, seed=3)
    w.set_state(old)
    assert np.array_equal(w.get_state()["rows"], state["rows"])
    with pytest.raises(ValueError, match="not all of this engine's variant"):
        BatchEngine(8, variant="mini").set_state(state)


def test_the_rules_page_states_the_mini_variants_numbers() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text()
    rows = dict(
        (what, (full, mini))
        for what, full, mini in re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", page, re.M)
    )
    assert rows["geishas in play (ids)"][1] == ", ".join(map(str, MINI.geishas))
    assert rows["their charm values"][1] == ", ".join(str(MINI.values[g]) for g in MINI.geishas)
    assert rows["item cards"] == (str(rules.NUM_CARDS), str(MINI.num_cards))
    assert rows["action tokens per player"][1] == ", ".join(TOKEN_NAMES[t] for t in MINI.tokens)
    sizes = f"{MINI.num_removed} / {MINI.hand_size} / {MINI.draw_pile_size}"
    assert rows["cards removed unseen / dealt to each / draw pile"] == ("1 / 6 / 8", sizes)
    assert rows["turns a round"] == (str(rules.TURNS_PER_ROUND), str(MINI.turns_per_round))
    assert rows["rounds"][1] == str(MINI.round_limit)
    goals = f"{MINI.win_points} charm points, else {MINI.win_geishas} geishas"
    assert rows["goals"] == (f"{rules.WIN_POINTS} charm points, else {rules.WIN_GEISHAS} geishas", goals)
