"""Exact exploitability on the mini variant (hanamikoji_env.exact, hanamikoji-exploit --method exact).

The exact best response is checked three ways: against OpenSpiel's own ``nash_conv`` (slow:
OpenSpiel walks the tree in Python), by playing its moves in the AEC env against the target
(the values it claims are what it scores), and by its bounds (no strategy does better; a best
response to a pure strategy wins what it can)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import extra

from hanamikoji_env import exact, raw_env
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.training.exploit import main as exploit_main


@pytest.fixture(scope="module")
def tree() -> exact.Tree:
    return exact.game_tree("mini")


def test_the_tree_holds_every_deal_and_decision(tree: exact.Tree) -> None:
    assert len(tree.children[0]) == exact.decks_of(exact.MINI) == 1260
    assert tree.chance[tree.children[0]].sum() == pytest.approx(1.0)
    terminal = tree.mover < 0
    terminal[0] = False
    assert set(np.unique(tree.value[terminal])) <= {-1.0, 0.0, 1.0}
    # every information state's nodes agree on its legal moves and its seat
    for node in np.flatnonzero(tree.mover >= 0)[:5000]:
        kids = [int(tree.action[k]) for k in tree.children[node]]
        info = tree.infostate[node]
        assert kids == np.flatnonzero(tree.masks[info]).tolist() and tree.info_mover[info] == tree.mover[node]


def play_against(tree: exact.Tree, choice: np.ndarray, seat: int, target, games: int, seed: int) -> float:
    """Seat ``seat`` plays the best response's moves, the other seat samples the target, in the env."""
    rng = np.random.default_rng(seed)
    total = 0.0
    e = raw_env(variant="mini")
    for g in range(games):
        e.reset(seed=seed * 100_000 + g)
        while not all(e.terminations.values()):
            agent = e.agent_selection
            me = int(agent[-1])
            view = e.observe(agent, observation_version=2)
            info = tree.keys[exact.infostate_key(view["observation"])]
            if me == seat:
                action = int(choice[info])
            else:
                p = target(view["observation"][None], view["action_mask"][None])[0]
                action = int(rng.choice(23, p=p))
            e.step(action)
        total += e.rewards[f"player_{seat}"]
    return total / games


def test_the_best_response_scores_what_it_claims_when_played_in_the_env(tree: exact.Tree) -> None:
    probs = exact.target_probabilities(tree, exact.uniform_target)
    for seat in (0, 1):
        value, choice = exact.best_response(tree, probs, seat)
        assert (choice[tree.info_mover == seat] >= 0).all()
        got = play_against(tree, choice, seat, exact.uniform_target, games=1500, seed=seat + 1)
        assert abs(got - value) < 4 * 1.0 / np.sqrt(1500), (seat, got, value)


def test_the_local_best_response_is_at_most_the_best_and_scores_what_it_claims(tree: exact.Tree) -> None:
    heuristic = parse_player("heuristic").make(0, None)
    probs = exact.target_probabilities(tree, exact.player_target(heuristic))
    target = exact.player_target(heuristic)
    for seat in (0, 1):
        best, _ = exact.best_response(tree, probs, seat)
        local, choice = exact.local_best_response(tree, probs, seat)
        on_policy = exact._policy_value(tree, probs) * (1 if seat == 0 else -1)
        assert on_policy < local <= best + 1e-12  # it improves on the target's own play
        got = play_against(tree, choice, seat, target, games=1500, seed=seat + 7)
        assert abs(got - local) < 4 / np.sqrt(1500), (seat, got, local)


def test_no_strategy_beats_the_best_response(tree: exact.Tree) -> None:
    """The target's own strategy, the uniform one and random pure strategies all score at most
    the best response against it."""
    heuristic = parse_player("heuristic").make(0, None)
    probs = exact.target_probabilities(tree, exact.player_target(heuristic))
    rng = np.random.default_rng(0)
    for seat in (0, 1):
        best, _ = exact.best_response(tree, probs, seat)
        for k in range(4):
            other = tree.masks * rng.random(tree.masks.shape) if k else tree.masks.astype(float)
            if k > 1:  # pure strategies: one move at each information state
                other = (other == other.max(axis=1, keepdims=True)) * tree.masks
            other = other / other.sum(axis=1, keepdims=True)
            mixed = np.where((tree.info_mover == seat)[:, None], other, probs)
            value = exact._policy_value(tree, mixed) * (1 if seat == 0 else -1)
            assert value <= best + 1e-12


def test_a_head_to_head_score_is_what_mirrored_games_score(tree: exact.Tree) -> None:
    """The exact expected score of one player against another, both seatings, is what their games
    in the env score (the heuristic's own probabilities sampled against the uniform policy)."""
    heuristic = exact.player_target(parse_player("heuristic").make(0, None))
    want = exact.head_to_head(heuristic, exact.uniform_target)
    assert want == pytest.approx(1 - exact.head_to_head(exact.uniform_target, heuristic))
    assert exact.head_to_head(heuristic, heuristic) == pytest.approx(0.5)
    rng, games, total = np.random.default_rng(3), 1600, 0.0
    e = raw_env(variant="mini")
    for g in range(games):
        e.reset(seed=g)
        mine = f"player_{g % 2}"
        while not all(e.terminations.values()):
            view = e.observe(e.agent_selection, observation_version=2)
            fn = heuristic if e.agent_selection == mine else exact.uniform_target
            p = fn(view["observation"][None], view["action_mask"][None])[0]
            e.step(int(rng.choice(23, p=p)))
        total += (1 + e.rewards[mine]) / 2
    assert 0.55 < want < 0.95 and abs(total / games - want) < 4 * 0.5 / np.sqrt(games), (total / games, want)


def test_results_are_in_one_unit_and_the_known_orders_hold() -> None:
    uniform = exact.exploitability(exact.uniform_target)
    random_bot = exact.exploitability(parse_player("random").make(0, None))
    assert random_bot == uniform  # the random bot is the uniform policy
    assert uniform.nash_conv == pytest.approx(sum(uniform.br_values))
    assert uniform.br_score == pytest.approx(0.5 + uniform.nash_conv / 4)
    assert sum(uniform.target_values) == pytest.approx(0.0, abs=1e-12)
    assert 0 < uniform.nash_conv <= 4 and 0.5 < uniform.br_score <= 1


def test_cfr_plus_drives_the_exact_exploitability_towards_zero() -> None:
    uniform = exact.exploitability(exact.uniform_target).nash_conv
    first = exact.exploitability(exact.table_target(exact.cfr_plus(1))).nash_conv
    assert first == pytest.approx(uniform)  # its first average is the uniform policy
    ten = exact.exploitability(exact.table_target(exact.cfr_plus(10))).nash_conv
    thirty = exact.exploitability(exact.table_target(exact.cfr_plus(30))).nash_conv
    assert 0 < thirty < ten < uniform / 2
    with pytest.raises(ValueError, match="iterations must be a positive int"):
        exact.cfr_plus(0)
    with pytest.raises(ValueError, match="a table needs shape"):
        exact.table_target(np.zeros((3, 23)))


def test_bad_targets_are_refused_in_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match="search cannot give its move probabilities"):
        exact.exploitability(parse_player("search").make(0, None))
    with pytest.raises(ValueError, match="trained on the full game, not the mini variant"):
        exact.exploitability(parse_player("pretrained").make(0, None))
    with pytest.raises(ValueError, match="too large to solve exactly"):
        exact.exploitability(exact.uniform_target, "full")

    def leaky(infostates: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.full(masks.shape, 1 / 23)  # mass on illegal moves

    with pytest.raises(ValueError, match="not a distribution over its legal moves"):
        exact.exploitability(leaky)


def test_the_command_writes_its_json(tmp_path, capsys) -> None:
    out = tmp_path / "heuristic.json"
    exploit_main(["--target", "heuristic", "--method", "exact", "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["method"] == "exact" and report["variant"] == "mini"
    assert report["br_score"] == report["ci95"][0] == report["ci95"][1]
    assert report["exploitability"] == pytest.approx(report["nash_conv"] / 2)
    assert f"best response scores {report['br_score']:.6f}" in capsys.readouterr().out
    exploit_main(["--target", "heuristic", "--method", "lbr", "--out", str(tmp_path / "lbr.json")])
    local = json.loads((tmp_path / "lbr.json").read_text())
    assert local["method"] == "lbr" and local["bound"] == "lower" and report["bound"] == "exact"
    assert 0.5 < local["br_score"] <= report["br_score"]
    assert "local best response scores" in capsys.readouterr().out
    for bad, said in (
        (["--variant", "tiny"], "unknown variant"),
        (["--target", "search"], "cannot give"),
        (["--variant", "full"], "too large to solve exactly"),
        (["--method", "lbr", "--samples", "5"], "are for --method lbr on the full game"),
        (["num_envs=8"], "--method exact trains nothing"),
    ):
        args = ["--target", "heuristic", "--method", "exact", *bad]
        with pytest.raises(SystemExit):
            exploit_main(args)
        assert said in capsys.readouterr().err


def first_legal(infostates: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A pure strategy: always the lowest legal move id."""
    probs = np.zeros(masks.shape, dtype=np.float64)
    probs[np.arange(len(masks)), masks.argmax(axis=1)] = 1.0
    return probs


@pytest.mark.slow(25)  # OpenSpiel's nash_conv walks the tree in Python
def test_agrees_with_openspiels_nash_conv() -> None:
    """Of a pure strategy, which OpenSpiel's best response walks only where it plays (the uniform
    policy's walk, twice as long, is benchmarks/exact_calibration.py's; the weights of a mixed
    target are checked by playing the best response against the uniform one above)."""
    pyspiel = extra("pyspiel")
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability as os_exploitability

    import hanamikoji_env.openspiel  # noqa: F401  (registers the game)

    class FirstLegal(os_policy.Policy):
        def action_probabilities(self, state, player_id=None) -> dict[int, float]:
            return {state.legal_actions()[0]: 1.0}

    game = pyspiel.load_game("python_hanamikoji(variant=mini)")
    theirs = os_exploitability.nash_conv(game, FirstLegal(game, [0, 1]))
    assert exact.exploitability(first_legal).nash_conv == pytest.approx(theirs, abs=1e-9)
    # (benchmarks/exact_calibration.py compares the heuristic and CFR+'s average too, and reads
    # OpenSpiel's policies back through exact.openspiel_table)
