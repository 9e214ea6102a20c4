"""OpenSpiel's learners on the information-state tensor, and their networks as tournament players."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import torch
from helpers import extra

from hanamikoji_env import raw_env
from hanamikoji_env.bots.heuristic import HeuristicBot
from hanamikoji_env.bots.mlp import MLPBot, load_mlp, save_mlp, seat_of
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.games import play_game
from hanamikoji_env.vector import random_actions


def test_the_seat_is_read_from_any_observation() -> None:
    rng = np.random.default_rng(0)
    for version in (1, 2):
        e = raw_env(observation_version=version)
        for game in range(5):
            e.reset(seed=game)
            for agent in e.agent_iter():
                obs, _, term, trunc, _ = e.last()
                assert seat_of(obs["observation"]) == int(agent[-1])
                e.step(None if term or trunc else int(random_actions(obs["action_mask"][None], rng)[0]))


def test_nfsp_learns_a_network_that_plays_as_openspiel_computes_it(tmp_path) -> None:
    """The saved network is each seat's average policy: MLPBot's logits are OpenSpiel's on the same
    information-state tensor, which is the env's observation version 2."""
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env.training.openspiel_learners import learner

    run = learner("nfsp", seed=0)
    run.train_until(time.perf_counter() + 3)
    assert run.progress()["decisions"] > 100
    run.save(tmp_path / "policy.mlp")
    bot = parse_player(f"ckpt:{tmp_path / 'policy.mlp'}").make(0)
    assert isinstance(bot, MLPBot) and bot.algo == "nfsp" and bot.observation_version == 2
    e = raw_env(observation_version=2)
    e.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(40):
        agent = e.agent_selection
        obs = e.observe(agent)
        seat = int(agent[-1])
        with torch.no_grad():
            theirs = run.agents[seat]._avg_network(torch.as_tensor(obs["observation"])[None])[0].numpy()
        theirs[obs["action_mask"] == 0] = -np.inf
        assert bot.act(obs) == int(np.argmax(theirs))
        e.step(int(random_actions(obs["action_mask"][None], rng)[0]))
    assert play_game((bot, HeuristicBot()), deal_seed=2, round_limit=None)[0] in (-1.0, 0.0, 1.0)


def test_learners_that_cannot_run_say_why() -> None:
    from hanamikoji_env.training.openspiel_learners import learner

    with pytest.raises(
        ValueError, match=r"neurd cannot learn python_hanamikoji: .*walks the whole game tree"
    ):
        learner("neurd")
    with pytest.raises(ValueError, match="unknown learner 'cfr'"):
        learner("cfr")


def two_seats(sizes: list[int]) -> list[torch.nn.Module]:
    torch.manual_seed(0)
    layers = [torch.nn.Linear(a, b) for a, b in itertools.pairwise(sizes)]
    return [torch.nn.Sequential(*layers), torch.nn.Sequential(*layers)]


def test_a_bad_mlp_file_is_refused_in_one_line(tmp_path) -> None:
    good = tmp_path / "good.mlp"
    save_mlp(good, two_seats([669, 32, 23]), "test")
    assert load_mlp(good)["algo"] == "test"
    cases = {
        "narrow.mlp": (two_seats([109, 32, 23]), 2, "layer 0 does not chain from 669 inputs"),
        "actions.mlp": (two_seats([669, 32, 20]), 2, "to 23 actions"),
        "version.mlp": (two_seats([669, 23]), 7, "reads observation version 7"),
    }
    poisoned = two_seats([669, 32, 23])
    with torch.no_grad():
        poisoned[1][1].bias[3] = float("inf")
    cases["nan.mlp"] = (poisoned, 2, "layer 1 holds NaN or infinite values")
    for name, (nets, version, message) in cases.items():
        save_mlp(tmp_path / name, nets, "test", observation_version=version)
        with pytest.raises(ValueError, match=message):
            load_mlp(tmp_path / name)
    torch.save({"format": "something else"}, tmp_path / "other.mlp")
    with pytest.raises(ValueError, match="is not a hanamikoji-mlp file"):
        load_mlp(tmp_path / "other.mlp")
    (tmp_path / "junk.mlp").write_bytes(b"\x00" * 100)
    with pytest.raises(ValueError, match="is not a hanamikoji-mlp file"):
        load_mlp(tmp_path / "junk.mlp")
    with pytest.raises(ValueError, match="does not exist"):
        parse_player(f"ckpt:{tmp_path / 'missing.mlp'}")
    # an observation_version of lists sharing children, 23 deep: 1 KB that would take 10 s and
    # 120 MB to print; a version that is no int is named by a bounded look, and the walk refuses
    # the tree at once
    for shape, refused in (((3, 23), "a crafted file"), ((1, 2), "reads observation version")):
        x: object = 0
        for _ in range(shape[1]):
            x = [x] * shape[0]
        save_mlp(tmp_path / "dag.mlp", two_seats([669, 23]), "test", observation_version=x)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=refused) as e:
            load_mlp(tmp_path / "dag.mlp")
        assert len(str(e.value)) < 400


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--algo", "nfsp", "--minutes", "0", "--out", "x"], "--minutes must be positive"),
        (["--algo", "neurd", "--minutes", "1", "--out", "x"], "neurd cannot learn python_hanamikoji"),
    ],
)
def test_the_command_refuses_bad_input_in_one_line(args: list[str], message: str, capsys) -> None:
    from hanamikoji_env.training.openspiel_learners import main

    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(("activation", "module"), [("relu", torch.nn.ReLU), ("tanh", torch.nn.Tanh)])
def test_an_mlp_file_plays_as_its_torch_module(activation: str, module: type, tmp_path) -> None:
    """The file keeps the layers and the activation between them (Tianshou's actors are tanh):
    MLPBot's move is the module's masked argmax, seat by seat."""
    torch.manual_seed(1)
    nets = [torch.nn.Sequential(torch.nn.Linear(109, 16), module(), torch.nn.Linear(16, 23)) for _ in (0, 1)]
    save_mlp(tmp_path / "a.mlp", nets, "test", observation_version=1, activation=activation)
    bot = MLPBot(tmp_path / "a.mlp")
    e = raw_env()
    rng = np.random.default_rng(0)
    for game in range(3):
        e.reset(seed=game)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            with torch.no_grad():
                logits = nets[int(agent[-1])](torch.as_tensor(obs["observation"])[None])[0].numpy()
            logits[obs["action_mask"] == 0] = -np.inf
            assert bot.act(obs) == int(np.argmax(logits))
            e.step(int(random_actions(obs["action_mask"][None], rng)[0]))
    with pytest.raises(ValueError, match="activation must be one of"):
        save_mlp(tmp_path / "b.mlp", nets, "test", activation="gelu")


def test_a_sampled_mlp_plays_its_softmax_over_the_legal_moves(tmp_path) -> None:
    """``sampled:ckpt=X.mlp`` is the network's softmax over the legal moves (how an average policy
    is defined): its probabilities are the module's, its moves follow them, a batch plays as the
    rows one at a time; greedy puts all on the argmax."""
    torch.manual_seed(2)
    nets = [
        torch.nn.Sequential(torch.nn.Linear(109, 16), torch.nn.ReLU(), torch.nn.Linear(16, 23))
        for _ in (0, 1)
    ]
    save_mlp(tmp_path / "a.mlp", nets, "test", observation_version=1)
    sampled = parse_player(f"sampled:ckpt={tmp_path / 'a.mlp'}").make(5)
    greedy = parse_player(f"ckpt:{tmp_path / 'a.mlp'}").make(5)
    assert isinstance(sampled, MLPBot) and not sampled.greedy and greedy.greedy
    e, rng = raw_env(), np.random.default_rng(0)
    obs, masks = [], []
    e.reset(seed=3)
    for _ in e.agent_iter():
        o, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        e.step(int(random_actions(o["action_mask"][None], rng)[0]))
    obs, masks = np.array(obs), np.array(masks)
    with torch.no_grad():
        logits = np.stack([nets[seat_of(v)](torch.as_tensor(v)[None])[0].numpy() for v in obs]).astype(
            np.float64
        )
    logits[masks == 0] = -np.inf
    want = np.exp(logits - logits.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(sampled.play_probabilities(obs, masks), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(greedy.play_probabilities(obs, masks).argmax(1), logits.argmax(1))
    assert set(greedy.play_probabilities(obs, masks).ravel()) == {0.0, 1.0}
    draws = np.array([sampled.act_batch(obs[:1], masks[:1])[0] for _ in range(3000)])
    freq = np.bincount(draws, minlength=23) / len(draws)
    assert np.abs(freq - want[0]).max() < 0.05 and (freq[masks[0] == 0] == 0).all()
    gens = [np.random.default_rng(9) for _ in obs]
    one_by_one = [
        sampled.act_batch(obs[i : i + 1], masks[i : i + 1], [np.random.default_rng(9)])[0]
        for i in range(len(obs))
    ]
    assert sampled.act_batch(obs, masks, gens).tolist() == one_by_one
    with pytest.raises(ValueError, match=r"reads \[N, 109\] observations"):
        sampled.play_probabilities(np.zeros((2, 669), np.float32), masks[:2])


def test_a_learner_on_the_mini_variant_saves_a_network_of_that_variant(tmp_path) -> None:
    """``variant="mini"`` learns ``python_hanamikoji(variant=mini)``; the file names the variant, so
    the exact best response measures it (sampled, as an average policy is defined) and refuses a
    network of the full game."""
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env import exact
    from hanamikoji_env.training.openspiel_learners import learner

    run = learner("nfsp", seed=0, variant="mini")
    assert run.env.game.get_parameters()["variant"] == "mini"
    run.train_until(decisions=300)
    run.save(tmp_path / "mini.mlp")
    bot = parse_player(f"sampled:ckpt={tmp_path / 'mini.mlp'}").make(0)
    assert bot.variant == "mini"
    result = exact.exploitability(bot)
    assert 0 < result.nash_conv <= 4
    learner("nfsp", seed=0).save(tmp_path / "full.mlp")
    with pytest.raises(ValueError, match="trained on the full game, not the mini variant"):
        exact.exploitability(parse_player(f"sampled:ckpt={tmp_path / 'full.mlp'}").make(0))
    with pytest.raises(ValueError, match="unknown variant 'tiny'"):
        learner("nfsp", seed=0, variant="tiny")


def test_deep_cfr_traverses_in_a_thread_deep_enough_for_a_whole_game() -> None:
    """Deep CFR recurses once per node down a whole game, past Python's default limit (a
    30-minute row died of RecursionError): its traversals run in a deep thread."""
    import sys

    from hanamikoji_env.training.openspiel_learners import in_deep_thread

    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    limit, depth, out = sys.getrecursionlimit(), 50_000, []
    with pytest.raises(RecursionError):
        down(depth)
    in_deep_thread(lambda: out.append(down(depth)))
    assert out == [depth] and sys.getrecursionlimit() == limit

    def fails() -> None:
        raise ValueError("from the thread")

    with pytest.raises(ValueError, match="from the thread"):
        in_deep_thread(fails)
    assert sys.getrecursionlimit() == limit


def test_each_learner_counts_its_work_in_its_declared_unit() -> None:
    """The algorithm table's "decisions" of an OpenSpiel row is ``progress()[unit]``: ESCHER's
    are the states it touched, not its iterations (a 30-minute row once reported 27)."""
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env.training.openspiel_learners import LEARNERS, learner

    units = {}
    for name in LEARNERS:
        run = learner(name, seed=0)
        assert run.unit in run.progress(), name
        units[name] = run.unit
    assert units == {"nfsp": "decisions", "deep-cfr": "nodes", "escher": "states"}


@pytest.mark.parametrize("name", ["nfsp", "deep-cfr"])
def test_a_learner_whose_deadline_has_passed_still_trains_once(name: str) -> None:
    """A row whose set-up outlasted its budget (a busy machine, a short row) still trains: its
    first ``train_until`` does one unit of work (a game, 256 nodes), then stops.  (ESCHER's unit,
    an iteration, takes minutes even for one round: its row's test, which asserts work done, covers
    it.)"""
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env.training.openspiel_learners import LEARNERS

    run = LEARNERS[name](seed=0, round_limit=1)
    run.train_until(time.perf_counter() - 1)
    first = run.progress()[run.unit]
    assert first > 0, run.progress()
    run.train_until(time.perf_counter() - 1)  # later calls past the deadline add nothing
    assert run.progress()[run.unit] == first, run.progress()


def test_escher_starts_from_its_seed_not_from_its_networks_42() -> None:
    """OpenSpiel's deep_cfr.MLP seeds numpy and torch with 42 as ESCHER's agent makes its
    networks: the row's seed must come after, so two seeds start apart and one seed alike (every
    ESCHER row had started alike, whatever its --seed)."""
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env.training.openspiel_learners import learner

    def start(seed: int) -> tuple[list[torch.Tensor], float]:
        run = learner("escher", seed, variant="mini")
        return [p.detach().clone() for p in run.agent.avg_policy_net.parameters()], float(np.random.random())

    (w0, r0), (again, r_again), (w1, r1) = start(0), start(0), start(1)
    assert all(torch.equal(x, y) for x, y in zip(w0, again, strict=True)) and r0 == r_again
    assert not all(torch.equal(x, y) for x, y in zip(w0, w1, strict=True)) and r0 != r1
