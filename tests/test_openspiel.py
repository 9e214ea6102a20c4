"""python_hanamikoji in OpenSpiel: its own tests, the same game as our env, no leaks, perfect recall."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DECK_2, DECK_MIRROR, MIRROR_SCRIPT, OpponentPolicy, extra, swapped_deals

pyspiel = extra("pyspiel", reason="the openspiel extra is not installed")

from hanamikoji_env import engine, raw_env, rules  # noqa: E402
from hanamikoji_env.actions import CARD_BASE, SPLIT_BASE  # noqa: E402
from hanamikoji_env.openspiel import DEAL_OUTCOMES, DEFAULT_ROUND_LIMIT, HanamikojiState  # noqa: E402

GAME = pyspiel.load_game("python_hanamikoji")


def test_loads_with_parameters_and_declares_the_game() -> None:
    assert GAME.get_parameters() == {
        "round_limit": DEFAULT_ROUND_LIMIT,
        "observation_version": 1,
        "variant": "full",
    }
    assert pyspiel.load_game("python_hanamikoji(round_limit=3)").get_parameters() == {
        "round_limit": 3,
        "observation_version": 1,
        "variant": "full",
    }
    mini = pyspiel.load_game("python_hanamikoji(variant=mini)")  # the variant's own one round
    assert mini.get_parameters() == {"round_limit": 1, "observation_version": 1, "variant": "mini"}
    assert mini.new_initial_state().chance_outcomes() == [(0, 2 / 9), (3, 3 / 9), (5, 4 / 9)]
    with pytest.raises(ValueError, match="mini variant plays 1 round"):
        pyspiel.load_game("python_hanamikoji(variant=mini,round_limit=3)")
    with pytest.raises(ValueError, match="unknown variant 'tiny': expected one of full, mini"):
        pyspiel.load_game("python_hanamikoji(variant=tiny)")
    assert GAME.num_distinct_actions() == 23 and GAME.max_chance_outcomes() == 7 and GAME.num_players() == 2
    assert GAME.max_game_length() == DEFAULT_ROUND_LIMIT * 55
    kind = GAME.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert GAME.observation_tensor_shape() == [109]
    # the information state has perfect recall: observation version 2, whatever observation_version
    assert kind.provides_information_state_string and kind.provides_information_state_tensor
    assert GAME.information_state_tensor_shape() == [669]
    assert pyspiel.load_game("python_hanamikoji(observation_version=2)").observation_tensor_shape() == [669]
    for bad in (0, 1001):
        with pytest.raises(ValueError, match="round_limit"):
            pyspiel.load_game("python_hanamikoji", {"round_limit": bad})
    with pytest.raises(ValueError, match="observation_version must be one of"):
        pyspiel.load_game("python_hanamikoji", {"observation_version": 9})


@pytest.mark.slow
def test_openspiels_random_simulation_test_with_serialization() -> None:
    pyspiel.random_sim_test(GAME, num_sims=10, serialize=True, verbose=False)
    pyspiel.random_sim_test(
        pyspiel.load_game("python_hanamikoji(round_limit=1)"), num_sims=5, serialize=True, verbose=False
    )


def test_chance_outcomes_are_the_undealt_cards_with_exact_probabilities() -> None:
    state = GAME.new_initial_state()
    assert state.chance_outcomes() == [(g, v / 21) for g, v in enumerate(rules.VALUES)]
    state.apply_action(6)  # the removed card: one of five 6s
    outcomes = dict(state.chance_outcomes())
    assert outcomes[6] == pytest.approx(4 / 20) and sum(outcomes.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("games", "variant"),
    [(60, "full"), (200, "mini"), pytest.param(1000, "full", marks=pytest.mark.slow)],
)
def test_plays_the_same_games_as_the_aec_env(games: int, variant: str) -> None:
    """Same seeded decks and random legal actions: the acting player, legal actions, both players'
    observation tensors and the returns agree at every decision (and cloning and serialization
    keep the game)."""
    rng = np.random.default_rng(3)
    v = rules.VARIANTS[variant]
    game_of = GAME if variant == "full" else pyspiel.load_game(f"python_hanamikoji(variant={variant})")
    limit = v.round_limit or DEFAULT_ROUND_LIMIT
    for game in range(games):
        decks = [list(rules.shuffled_deck(rng, v)) for _ in range(limit)]
        env = raw_env(round_limit=limit, variant=variant)
        env.reset(seed=0, options={"decks": decks})
        state = game_of.new_initial_state()
        rnd, pos = 1, 0  # the round being dealt and the next card of its deck
        while True:
            if state.is_chance_node():
                if env.game.round != rnd:  # the env dealt the next round with the last move
                    rnd, pos = env.game.round, 0
                state.apply_action(decks[rnd - 1][pos])
                pos += 1
                continue
            if state.is_terminal():
                assert all(env.terminations.values())
                assert state.returns() == [env.rewards["player_0"], env.rewards["player_1"]]
                break
            agent = env.agent_selection
            assert state.current_player() == int(agent[-1])
            mask = env.observe(agent)["action_mask"]
            assert state.legal_actions() == np.flatnonzero(mask).tolist()
            for p in (0, 1):
                assert np.array_equal(state.observation_tensor(p), env.observe(f"player_{p}")["observation"])
                recall = env.observe(f"player_{p}", observation_version=2)["observation"]
                assert np.array_equal(state.information_state_tensor(p), recall)
            action = int(rng.choice(state.legal_actions()))
            if game % 25 == 0 and rng.random() < 0.05:
                state = state.clone() if rng.random() < 0.5 else game_of.deserialize_state(state.serialize())
            state.apply_action(action)
            env.step(action)


def random_decisions(games: int, seed: int):
    """Yield every decision state of random games, with the history of each player's own actions."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state, own = GAME.new_initial_state(), ([], [])
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            player = state.current_player()
            yield state, player, tuple(own[player])
            action = int(rng.choice(state.legal_actions()))
            own[player].append(action)
            state.apply_action(action)


@pytest.mark.slow
def test_the_information_state_string_recalls_the_players_own_choices() -> None:
    """Histories in which a player's own choices differ are different information states to it:
    never one string.  The observation string has no recall: there, such histories do collide."""
    by_info: dict[str, tuple] = {}
    for state, player, own in random_decisions(60, seed=1):
        info = state.information_state_string(player)
        assert by_info.setdefault(info, own) == own, "two histories with different own choices share a string"
    # two round-1 histories that differ only in both players' Competition splits; every geisha
    # ties in both, so round 2 starts with the same view: the views collide, the histories must not
    other_split = [SPLIT_BASE + 1 if a == SPLIT_BASE else a for a in MIRROR_SCRIPT]
    starts = []
    for script in (MIRROR_SCRIPT, other_split):
        state = GAME.new_initial_state()
        outcomes = [*DECK_MIRROR, *DECK_2[:14]]  # round 1 (its deal, then its 7 later draws), round 2's deal
        for action in script:
            while state.is_chance_node():
                state.apply_action(outcomes.pop(0))
            state.apply_action(action)
        while state.is_chance_node():
            state.apply_action(outcomes.pop(0))
        assert not outcomes and state.position().round == 2 and state.current_player() == 1
        starts.append(state)
    a, b = starts
    assert a.observation_string(1) == b.observation_string(1) and a.observation_tensor(
        1
    ) == b.observation_tensor(1)
    assert a.information_state_string(1) != b.information_state_string(1)
    assert a.information_state_string(0) != b.information_state_string(0)


def test_resampled_states_keep_the_players_information_and_change_what_it_cannot_see() -> None:
    rng = np.random.default_rng(0)
    hidden_changed = 0
    for k, (state, player, _) in enumerate(random_decisions(20, seed=2)):
        if k % 7:
            continue
        twin = state.resample(player, rng)
        assert twin.information_state_string(player) == state.information_state_string(player)
        assert twin.observation_tensor(player) == state.observation_tensor(player)
        assert twin.information_state_tensor(player) == state.information_state_tensor(player)
        assert twin.legal_actions() == state.legal_actions() and twin.current_player() == player
        hidden_changed += twin.position().hands[1 - player] != state.position().hands[1 - player]
        twin.apply_action(twin.legal_actions()[0])  # and it plays on
    assert hidden_changed > 10


@pytest.mark.parametrize(
    ("observer", "token", "draw"),
    [
        (0, 1, False),
        (1, 0, True),
        pytest.param(0, 0, False, marks=pytest.mark.slow),
        pytest.param(1, 1, True, marks=pytest.mark.slow),
    ],
)
def test_unknowable_cards_change_nothing_a_player_observes(observer: int, token: int, draw: bool) -> None:
    """Two deals differing only in the removed card and one card the opponent hides (in its hand or
    its first draw, then under a Secret or Trade-off): every tensor and string of the observer is
    the same at every node until the round is scored."""
    rng = np.random.default_rng(11 + observer)
    cards = []
    for game in range(8):
        deck_a, deck_b, card_a, card_b = swapped_deals(rng, observer, draw)
        states = [GAME.new_initial_state(), GAME.new_initial_state()]
        opponents = [OpponentPolicy(1 - observer, c, token, seed=game) for c in (card_a, card_b)]
        decks, positions = [deck_a, deck_b], [0, 0]
        actor = np.random.default_rng(game)
        while True:
            if positions[0] >= 14 and states[0].position().phase >= rules.Phase.ROUND_OVER:
                break  # round 1 was scored: the Secrets are public now
            views = [
                (
                    s.observation_tensor(observer), s.observation_string(observer),
                    s.information_state_string(observer), s.information_state_tensor(observer),
                )
                for s in states
            ]  # fmt: skip
            assert views[0] == views[1]
            if states[0].is_chance_node():
                for k, s in enumerate(states):
                    s.apply_action(decks[k][positions[k]])
                    positions[k] += 1
                continue
            if states[0].current_player() == observer:
                action = int(actor.choice(states[0].legal_actions()))
                actions = [action, action]
            else:
                actions = []
                for s, opp in zip(states, opponents, strict=True):
                    mask = np.zeros(23, np.int8)
                    mask[s.legal_actions()] = 1
                    actions.append(opp.act(s.position(), mask))
            for s, a in zip(states, actions, strict=True):
                s.apply_action(a)
        assert all(o.used for o in opponents)
        cards += [card_a]
    assert len(cards) == 8


def test_from_position_and_round_limit_tie_breaks() -> None:
    state = rules.new_game(rules.shuffled_deck(np.random.default_rng(4)), round_limit=2)
    s = HanamikojiState.from_position(pyspiel.load_game("python_hanamikoji(round_limit=2)"), state)
    assert s.current_player() == 0 and s.legal_actions() == rules.legal_actions(state)
    assert engine.state_from_row(s._row[0], 2, None) == state
    with pytest.raises(ValueError, match="decision"):
        HanamikojiState.from_position(GAME, state._replace(phase=rules.Phase.ROUND_OVER))


def _log_of(state: HanamikojiState) -> list[int]:
    """The current round's log numbers (one a turn) of ``state``."""
    row = state._row[0]
    at = engine.log_at(int(row[engine.C_ROUND]))
    return [int(w) for w in row[at : at + rules.TURNS_PER_ROUND]]


def replayed_from_its_deal(state: HanamikojiState, twin: HanamikojiState, player: int) -> HanamikojiState:
    """A fresh game played to ``twin``'s position from the deal ``twin`` tells of: ``state``'s
    history up to this round's deal, then this round with the opponent's first hand, draws,
    Secret and Trade-off cards and the removed card read from ``twin`` (its position and log),
    ``player``'s own as they were, and every move the same."""
    opp, history = 1 - player, state.history()
    fresh, i = GAME.new_initial_state(), 0
    rnd = twin.position().round
    while not (fresh._dealt == [] and fresh.position().round == rnd - 1):  # this round's deal next
        fresh.apply_action(history[i])
        i += 1
    log, pos = _log_of(twin), twin.position()
    starter = pos.starter
    theirs = [t for t, w in enumerate(log) if w and (starter + t) % 2 == opp]
    played = [
        engine.log_field(log[t], engine.F_CARDS + 3 * k)
        for t in theirs
        for k in range(engine.log_field(log[t], engine.F_COUNT))
    ]
    drawn = [engine.log_field(log[t], engine.F_DRAW) - 1 for t in theirs]
    first_hand = sorted(rules.cards_of(pos.hands[opp]) + tuple(played))
    for card in drawn:
        first_hand.remove(card)
    deal = list(history[i : i + DEAL_OUTCOMES])
    deal[0] = pos.removed
    size = rules.FULL.hand_size
    deal[1 + size * opp : 1 + size * (opp + 1)] = first_hand
    if starter == opp:
        deal[-1] = drawn[0]
    for a in deal:
        fresh.apply_action(a)
    i += DEAL_OUTCOMES
    hidden = {rules.SECRET: [pos.secrets[opp]], rules.TRADEOFF: rules.cards_of(pos.tradeoffs[opp])}
    while len(fresh.history()) < len(history):
        action = history[i]
        i += 1
        if fresh.is_chance_node():  # a turn's draw
            turn = int(fresh._row[0, engine.C_TURN])
            if fresh._drawing == opp:
                action = engine.log_field(log[turn], engine.F_DRAW) - 1
        else:
            p = fresh.position()
            if p.current == opp and p.phase == rules.Phase.SELECT and p.token in hidden:
                action = CARD_BASE + hidden[p.token][len(p.selection)]
        fresh.apply_action(action)
    return fresh


def _views(state: HanamikojiState) -> list:
    return [
        (state.information_state_tensor(p), state.observation_tensor(p), state.information_state_string(p),
         state.observation_string(p))
        for p in (0, 1)
    ]  # fmt: skip


@pytest.mark.slow(5)
def test_a_resampled_state_is_the_game_its_own_deal_would_have_played() -> None:
    """Every view of a resampled state, both players', now and at every step to the round's
    scoring, is that of a fresh game dealt what the resampled state holds (the opponent's first
    hand and draws read back from it) and played with the same moves: the resample keeps no trace
    of the true deal.  Its log once kept the true deal's, so a scoring showed the true Secret."""
    rng = np.random.default_rng(3)
    compared = scored = 0
    for k, (state, player, _) in enumerate(random_decisions(10, seed=5)):
        if k % 9:
            continue
        twin = state.resample(player, rng)
        fresh = replayed_from_its_deal(state, twin, player)
        rnd = twin.position().round
        assert _views(fresh) == _views(twin)
        moves = np.random.default_rng(k)
        while not twin.is_terminal() and twin.position().round == rnd:
            if twin.is_chance_node():
                assert twin.chance_outcomes() == fresh.chance_outcomes()  # the cards left are the same
                outcomes = [o for o, _ in twin.chance_outcomes()]
                action = int(moves.choice(outcomes))
                scored += twin._dealt == []
            else:
                action = int(moves.choice(twin.legal_actions()))
            twin.apply_action(action)
            fresh.apply_action(action)
            assert _views(fresh) == _views(twin)
            compared += 1
    assert compared > 100 and scored >= 5, (compared, scored)
