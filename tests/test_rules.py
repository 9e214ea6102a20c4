"""One test (or more) per rule of docs/rules.md, mostly as scripted deals.

The scripts and decks live in helpers.py; the expected outcomes below were
worked out by hand from the rules, card by card.  Every test runs on both
engines (the ``impl`` fixture): :mod:`hanamikoji_env.rules`, the readable
specification, and :mod:`hanamikoji_env.engine`, the compiled engine of record
that the envs play on.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import (
    DECK_1,
    DECK_2,
    DECK_MIRROR,
    MIRROR_SCRIPT,
    ROUND_2_SCRIPT,
    Game,
    play,
    round_1_script,
    secret,
)

from hanamikoji_env import engine, raw_env, rules
from hanamikoji_env.actions import COMP_TAKE_B, COMPETITION, GIFT, SECRET, SPLIT_BASE, TRADEOFF
from hanamikoji_env.observation import decode
from hanamikoji_env.rules import CENTRE, DRAW, Phase

ROUND_1_MARKERS = [0, 1, 1, 0, 1, 0, CENTRE]


@pytest.fixture(params=[rules, engine], ids=["specification", "engine"])
def impl(request):
    """The rules implementation under test: both run every hand-worked test."""
    return request.param


def hand(e: Game, agent: str) -> tuple[int, ...]:
    return decode(e.observe(agent)["observation"]).hand


def test_components() -> None:
    assert rules.VALUES == (2, 2, 2, 3, 3, 4, 5)
    assert sum(rules.VALUES) == 21 == rules.NUM_CARDS == len(rules.FULL_DECK)
    assert all(rules.FULL_DECK.count(g) == v for g, v in enumerate(rules.VALUES))


def test_deal_removes_one_card_deals_six_each_and_leaves_eight(impl) -> None:
    s = impl.new_game(DECK_1)
    assert s.removed == DECK_1[0]
    # player_0 starts and has already drawn the top card of the 8-card pile
    assert s.hands[0] == rules._add(rules.count_cards(DECK_1[1:7]), [DECK_1[13]])
    assert s.hands[1] == rules.count_cards(DECK_1[7:13])
    assert sum(s.hands[0]) == 7 and sum(s.hands[1]) == 6
    assert s.draw_pile == tuple(DECK_1[14:]) and len(s.draw_pile) == 7
    assert s.markers == (CENTRE,) * 7
    assert s.round == 1 and s.starter == 0 and s.to_move == 0 and s.phase == Phase.TOKEN


def test_removed_card_is_never_in_play(impl) -> None:
    e = Game(impl, [DECK_1])
    in_play = list(rules.VALUES)
    in_play[DECK_1[0]] -= 1  # one geisha-0 card is out of the round
    for a in round_1_script()[:-1]:
        g = e.game
        everywhere = np.array(g.hands).sum(0) + np.array(g.placed).sum(0) + np.array(g.tradeoffs).sum(0)
        everywhere += rules.count_cards([*g.draw_pile, *g.offer, *(c for c in g.secrets if c >= 0)])
        assert list(everywhere) == in_play
        e.step(a)


def test_draw_happens_before_acting_each_turn(impl) -> None:
    e = Game(impl, [DECK_1])
    pile = DECK_1[13:]
    assert hand(e, "player_0") == rules.count_cards([*DECK_1[1:7], pile[0]])
    for a in secret(6):
        e.step(a)
    # player_1's turn starts with its draw: the second card of the pile
    assert e.agent_selection == "player_1"
    assert hand(e, "player_1") == rules.count_cards([*DECK_1[7:13], pile[1]])
    # and the drawn card can be used in the same turn (Trade-off of the drawn 6)
    e.step(TRADEOFF)
    e.step(4 + 3)
    assert e.observe("player_1")["action_mask"][4 + 6] == 1


def test_each_token_once_per_round_and_all_available_again(impl) -> None:
    e = Game(impl, [DECK_1, DECK_2])
    script = round_1_script()
    used: dict[str, list[int]] = {"player_0": [], "player_1": []}
    for a in script:
        agent = e.agent_selection
        if e.game.phase == Phase.TOKEN:
            mask = e.observe(agent)["action_mask"]
            assert [t for t in range(4) if mask[t]] == [t for t in range(4) if t not in used[agent]]
            used[agent].append(a)
        e.step(a)
    assert sorted(used["player_0"]) == sorted(used["player_1"]) == [0, 1, 2, 3]
    # round 2: all four tokens are available to the new starting player
    assert e.agent_selection == "player_1"
    assert list(e.observe("player_1")["action_mask"][:4]) == [1, 1, 1, 1]


def test_gift_opponent_takes_one_and_the_rest_goes_to_the_giver(impl) -> None:
    e = play(impl, round_1_script()[:9], [DECK_1])  # T1, T2, then Gift (5, 6, 6)
    assert e.game.phase == Phase.GIFT_ANSWER and e.agent_selection == "player_1"
    mask = e.observe("player_1")["action_mask"]
    assert [a for a in range(23) if mask[a]] == [14 + 5, 14 + 6]
    assert not e.observe("player_0")["action_mask"].any()
    e.step(14 + 6)
    assert e.game.placed[1] == (0, 0, 0, 0, 0, 0, 1)
    assert e.game.placed[0] == (0, 0, 0, 0, 0, 1, 1)
    assert e.agent_selection == "player_1"  # and it is player_1's own turn now


def test_competition_split_then_opponent_takes_a_set(impl) -> None:
    script = round_1_script()
    e = play(impl, script[:15], [DECK_1])  # up to player_1's selection of (3, 3, 4, 4)
    assert e.game.phase == Phase.SPLIT and e.agent_selection == "player_1"
    mask = e.observe("player_1")["action_mask"]
    # {33|44} and {34|34}; {34|34} again is masked out
    assert [a for a in range(23) if mask[a]] == [SPLIT_BASE, SPLIT_BASE + 1]
    e.step(SPLIT_BASE)
    assert e.game.phase == Phase.COMP_ANSWER and e.agent_selection == "player_0"
    e.step(script[16])  # player_0 takes set A {3, 3}
    assert e.game.placed[0][3] == 2 and e.game.placed[1][4] == 2


def test_equal_sets_leave_one_answer(impl) -> None:
    e = play(impl, round_1_script()[:15], [DECK_1])
    e.step(SPLIT_BASE + 1)  # {3,4 | 3,4}
    mask = e.observe("player_0")["action_mask"]
    assert [a for a in range(23) if mask[a]] == [21]
    with pytest.raises(ValueError, match="illegal action 22"):
        e.step(COMP_TAKE_B)


def test_round_1_scoring_secret_scored_tradeoff_not_tie_keeps_centre(impl) -> None:
    e = play(impl, round_1_script(), [DECK_1, DECK_2])
    s = e.infos["player_1"]["round_summary"]
    assert s == e.infos["player_0"]["round_summary"]
    assert s["round"] == 1
    assert s["secrets"] == [6, 1]
    # player_0's Secret 6 makes geisha 6 a 2-2 tie (centre stays); player_1's Secret 1 wins
    # geisha 1; the Trade-offs (player_1: 3, 6; player_0: 1, 2) are not counted, or player_1
    # would take geisha 6 and geishas 1 and 2 would be ties.
    assert s["placed"] == [[1, 0, 0, 2, 0, 3, 2], [0, 1, 1, 0, 3, 1, 2]]
    assert s["markers"] == ROUND_1_MARKERS
    assert s["points"] == [9, 7] and s["geishas"] == [3, 3]
    assert e.rewards == {"player_0": 0, "player_1": 0}
    assert not any(e.terminations.values())


def test_new_round_markers_persist_other_player_starts_fresh_deal(impl) -> None:
    e = play(impl, round_1_script(), [DECK_1, DECK_2])
    g = e.game
    assert g.round == 2 and g.starter == 1 and e.agent_selection == "player_1"
    assert list(g.markers) == ROUND_1_MARKERS
    assert g.placed == (rules.EMPTY, rules.EMPTY) and g.tradeoffs == (rules.EMPTY, rules.EMPTY)
    assert g.secrets == (-1, -1) and g.spent == ((False,) * 4, (False,) * 4)
    assert g.removed == DECK_2[0]
    assert g.hands[0] == rules.count_cards(DECK_2[1:7])
    assert g.hands[1] == rules.count_cards([*DECK_2[7:13], DECK_2[13]])
    info = decode(e.observe("player_1")["observation"])
    assert info.markers == (1, 0, 0, 1, 0, 1, CENTRE)  # seen from player_1: 0 = mine
    assert info.round == 2 and info.i_started


def test_ties_keep_previous_owner_and_11_points_beat_4_geishas(impl) -> None:
    e = play(impl, round_1_script() + ROUND_2_SCRIPT, [DECK_1, DECK_2])
    s = e.infos["player_0"]["round_summary"]
    assert s["round"] == 2
    assert s["placed"] == [[0, 2, 2, 1, 1, 1, 1], [0, 0, 0, 1, 2, 2, 3]]
    # geisha 0: 0-0 and geisha 3: 1-1 stay with player_0; 1, 2 flip to player_0; 5 flips to player_1
    assert s["markers"] == [0, 0, 0, 0, 1, 1, 1]
    assert s["points"] == [9, 12] and s["geishas"] == [4, 3]
    assert e.rewards == {"player_0": -1, "player_1": 1}
    assert all(e.terminations.values()) and e.game.winner == 1


def test_11_points_beat_4_geishas_in_the_same_scoring_other_seat(impl) -> None:
    e = play(impl, round_1_script(last_split=0, last_take_a=True), [DECK_1])
    s = e.infos["player_0"]["round_summary"]
    assert s["points"] == [12, 9] and s["geishas"] == [3, 4]
    assert e.rewards == {"player_0": 1, "player_1": -1}


def test_four_geishas_win_without_11_points(impl) -> None:
    e = play(impl, round_1_script(last_split=2, last_take_a=True), [DECK_1])
    s = e.infos["player_0"]["round_summary"]
    assert s["points"] == [7, 9] and s["geishas"] == [2, 4]
    assert e.rewards == {"player_0": -1, "player_1": 1}
    assert e.game.round == 1


def test_no_winner_plays_on_without_a_limit(impl) -> None:
    e = play(impl, MIRROR_SCRIPT, [DECK_MIRROR])
    assert e.infos["player_0"]["round_summary"]["markers"] == [CENTRE] * 7
    assert e.game.round == 2 and e.agent_selection == "player_1"


@pytest.mark.parametrize("limit", [1, 2])
def test_round_limit_more_points_wins(impl, limit: int) -> None:
    e = play(impl, round_1_script(), [DECK_1], round_limit=limit)
    if limit == 1:
        assert e.rewards == {"player_0": 1, "player_1": -1}  # 9 vs 7 points
        assert all(e.terminations.values())
    else:
        assert e.game.round == 2 and not any(e.terminations.values())


def test_round_limit_draw_on_equal_points_and_geishas(impl) -> None:
    e = play(impl, MIRROR_SCRIPT, [DECK_MIRROR], round_limit=1)
    assert e.game.winner == DRAW
    assert e.rewards == {"player_0": 0, "player_1": 0}
    assert all(e.terminations.values())


def last_secret(markers: list[int], geisha: int, rnd: int, round_limit: int | None) -> rules.State:
    """The last decision of a round: seat 1 plays its Secret (geisha ``geisha``, as seat 0's Secret
    already is), no card on any side, so every geisha ties and the markers stay as given."""
    return rules.State(
        round=rnd, starter=0, turn=7, current=1, to_move=1, phase=Phase.SELECT,
        hands=(rules.EMPTY, rules.count_cards([geisha])), secrets=(geisha, -1),
        tradeoffs=(rules.EMPTY, rules.EMPTY), placed=(rules.EMPTY, rules.EMPTY), markers=tuple(markers),
        spent=((True,) * 4, (False, True, True, True)), token=SECRET, selection=(), offer=(),
        draw_pile=(), removed=0, winner=None, round_limit=round_limit, last_round=None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("markers", "secrets_on", "rnd", "limit", "points", "winner"),
    [
        ([0, -1, -1, 0, -1, -1, 1], 1, 3, 3, (5, 5), 0),  # equal points: more geishas (2 to 1) wins
        ([1, -1, -1, 1, -1, -1, 0], 1, 3, 3, (5, 5), 1),
        ([0, 1, -1, 0, 1, -1, -1], 2, 3, 3, (5, 5), DRAW),  # equal points and geishas: a draw
        ([0, -1, -1, -1, -1, 0, 1], 1, 3, 3, (6, 5), 0),  # more points first, fewer geishas or not
        ([0, -1, -1, -1, -1, 0, 1], 1, 2, 3, (6, 5), None),  # before the limit: play on
        ([0, -1, -1, -1, -1, 0, 1], 1, 7, None, (6, 5), None),  # no limit: play on
    ],
)
def test_round_limit_tie_breaks(impl, markers, secrets_on, rnd, limit, points, winner) -> None:
    scored = impl.apply(last_secret(markers, secrets_on, rnd, limit), 4 + secrets_on)
    assert scored.last_round.points == points and list(scored.markers) == markers
    assert scored.winner == winner
    assert scored.phase == (Phase.ROUND_OVER if winner is None else Phase.GAME_OVER)


def test_starting_player_alternates_and_every_round_is_reshuffled(impl) -> None:
    rng = np.random.default_rng(7)
    seen_rounds = 0
    for _ in range(100):
        state = impl.new_game(rules.shuffled_deck(rng))
        while state.phase != Phase.GAME_OVER:
            if state.phase == Phase.ROUND_OVER:
                deck = rules.shuffled_deck(rng)
                prev = state
                state = impl.next_round(state, deck)
                seen_rounds += 1
                assert state.starter == 1 - prev.starter == (state.round - 1) % 2
                assert state.to_move == state.starter
                assert state.markers == prev.markers
                assert state.hands[1 - state.starter] == rules.count_cards(
                    deck[7:13] if state.starter == 0 else deck[1:7]
                )
                assert rules.card_totals(state) == rules.VALUES
                continue
            legal = impl.legal_actions(state)
            state = impl.apply(state, legal[int(rng.integers(len(legal)))])
    assert seen_rounds > 25


def test_later_rounds_are_shuffled_from_the_seed() -> None:
    def round_2_deal(seed: int) -> tuple:
        e = raw_env()
        e.reset(seed=seed, options={"decks": [DECK_1]})
        for a in round_1_script():
            e.step(a)
        assert e.game.round == 2
        return e.game.hands, e.game.draw_pile, e.game.removed

    assert round_2_deal(1) == round_2_deal(1)
    assert len({round_2_deal(s) for s in range(5)}) == 5


def test_selection_is_in_non_decreasing_order_and_completable(impl) -> None:
    e = Game(impl, [DECK_1])  # player_0 holds 1, 5, 5, 6, 6, 6, 6
    e.step(COMPETITION)
    mask = e.observe("player_0")["action_mask"]
    assert [a - 4 for a in range(4, 11) if mask[a]] == [1, 5, 6]
    e.step(4 + 5)
    mask = e.observe("player_0")["action_mask"]
    # after a 5: a lower card is no longer allowed, 5 and 6 can still complete four cards
    assert [a - 4 for a in range(4, 11) if mask[a]] == [5, 6]
    e.step(4 + 6)
    mask = e.observe("player_0")["action_mask"]
    assert [a - 4 for a in range(4, 11) if mask[a]] == [6]
    e2 = Game(impl, [DECK_1])
    e2.step(GIFT)
    e2.step(4 + 6)  # three 6s left: completable; choosing 6 then only 6 remains
    mask = e2.observe("player_0")["action_mask"]
    assert [a - 4 for a in range(4, 11) if mask[a]] == [6]


def test_every_card_multiset_has_exactly_one_selection_sequence(impl) -> None:
    hand = (1, 0, 2, 0, 1, 0, 3)  # 7 cards
    state = impl.new_game(DECK_1)._replace(hands=(hand, rules.EMPTY))
    for token, size in ((SECRET, 1), (TRADEOFF, 2), (GIFT, 3), (COMPETITION, 4)):
        found: list[tuple[int, ...]] = []

        def walk(s: rules.State, picked: tuple[int, ...], size: int = size, found: list = found) -> None:
            if len(picked) == size:
                found.append(picked)
                return
            for a in impl.legal_actions(s):
                walk(s._replace(selection=(*s.selection, a - 4)), (*picked, a - 4))

        walk(impl.apply(state, token), ())
        cards_ = [g for g in range(7) for _ in range(hand[g])]
        expected = sorted(set(itertools.combinations(cards_, size)))
        assert sorted(found) == expected


def test_split_masks_duplicates(impl) -> None:
    base = impl.new_game(DECK_1)
    for offer, legal in [
        ((0, 1, 2, 3), [11, 12, 13]),
        ((3, 3, 4, 4), [11, 12]),
        ((3, 3, 3, 4), [11]),
        ((6, 6, 6, 6), [11]),
        ((0, 5, 5, 6), [11, 13]),
        ((2, 3, 3, 4), [11, 13]),  # {23|34} {23|34} {24|33}
    ]:
        s = base._replace(phase=Phase.SPLIT, offer=offer)
        assert impl.legal_actions(s) == legal, offer


def test_apply_rejects_illegal_and_wrong_types(impl) -> None:
    s = impl.new_game(DECK_1)
    with pytest.raises(ValueError, match=r"illegal action 5 in phase TOKEN.*legal: \[0, 1, 2, 3\]"):
        impl.apply(s, 5)
    with pytest.raises(ValueError, match="illegal action 99"):
        impl.apply(s, 99)
    with pytest.raises(TypeError):
        impl.apply(s, "1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="round is over"):
        impl.next_round(s, DECK_1)
    with pytest.raises(ValueError, match="round_limit"):
        impl.new_game(DECK_1, round_limit=0)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (DECK_1[:20], "21 cards, got 20"),
        ([*DECK_1[:20], 7], r"deck\[20\] = 7 is not a geisha id"),
        ([*DECK_1[:20], -1], "is not a geisha id"),
        ([*DECK_1[:20], 1.0], "is not a geisha id"),
        ([*DECK_1[:20], True], "is not a geisha id"),
        ([6, *DECK_1[1:]], "got counts"),
        ("0123456", "sequence of 21 geisha ids"),
        (None, "sequence of 21 geisha ids"),
    ],
)
def test_validate_deck_errors(bad: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules.validate_deck(bad)
