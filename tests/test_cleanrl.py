"""examples/cleanrl_ppo.py: the single-file PPO keeps reset steps out of the loss, its self-play
opponent follows the actor, its exported player is its actor, and it learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hanamikoji_env.bots.mlp import MLPBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.examples import cleanrl_ppo
from hanamikoji_env.examples.cleanrl_ppo import Agent, Args, Runner, collect, learn
from hanamikoji_env.observation import OBS_SIZE
from hanamikoji_env.tournament import run_tournament


def test_reset_steps_are_marked_and_left_out_of_the_decisions() -> None:
    args = Args(num_envs=4, num_steps=200, opponent="random")
    torch.manual_seed(0)
    agent = Agent(OBS_SIZE, args.hidden)
    r = collect(Runner(args, agent), agent, args.num_steps)
    done, valid = r.done.numpy(), r.valid.numpy()
    assert done.sum() >= 8  # several games ended in each rollout
    # a step is a reset step exactly when the step before it ended the env's game
    assert (valid[1:] == ~done[:-1]).all() and valid[0].all()
    # the moves the loss sees were legal; the reset steps' masks allow everything
    picked = r.mask.gather(2, r.action.unsqueeze(-1)).squeeze(-1).numpy()
    assert picked[valid].all() and r.mask[torch.as_tensor(~valid)].all()
    # only a game's last step pays, +1 or -1 (no draws at this length)
    assert set(np.unique(np.abs(r.reward.numpy()[done]))) == {1.0} and not r.reward.numpy()[~done].any()


def test_the_self_opponent_is_refreshed_from_the_actor_every_refresh_updates() -> None:
    def same(a: torch.nn.Module, b: torch.nn.Module) -> bool:
        return all(
            torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True)
        )

    copies = []
    for p in learn(Args(num_envs=2, num_steps=16, updates=3, refresh=2, num_minibatches=2)):
        assert p.opponent is not None
        assert same(p.opponent.actor, p.agent.actor) == (p.update == 2)
        copies.append({k: v.clone() for k, v in p.opponent.actor.state_dict().items()})
    torch.manual_seed(0)  # learn's seed: the copy held the initial actor until the first refresh
    initial = Agent(OBS_SIZE, Args().hidden)
    assert all(torch.equal(copies[0][k], v) for k, v in initial.actor.state_dict().items())
    assert all(torch.equal(copies[1][k], copies[2][k]) for k in copies[1])  # kept between refreshes


def test_the_exported_player_plays_the_actors_likeliest_legal_move(tmp_path) -> None:
    progress = next(learn(Args(num_envs=2, num_steps=32, num_minibatches=2, opponent="random")))
    path = tmp_path / "agent.mlp"
    cleanrl_ppo.export(progress.agent, path)
    bot = MLPBot(path)
    rng = np.random.default_rng(0)
    for _ in range(50):
        vector = rng.integers(0, 3, OBS_SIZE).astype(np.float32)
        mask = (rng.random(23) < 0.4).astype(np.int8)
        mask[rng.integers(23)] = 1
        logits = progress.agent.actor(torch.as_tensor(vector)).detach().numpy()
        logits[mask == 0] = -np.inf
        assert bot.act({"observation": vector, "action_mask": mask}) == int(np.argmax(logits))


def test_the_mini_variant_is_learned_and_its_export_names_it(tmp_path) -> None:
    """``variant: mini`` (the algorithm table's exact rows): every env plays the mini game, the
    exported player says so, so an exact best response takes it and a full-game one does not."""
    progress = next(learn(Args(num_envs=2, num_steps=32, num_minibatches=2, variant="mini")))
    assert progress.games >= 4  # mini games are short: a 32-step rollout of 2 envs ends several
    runner = Runner(Args(num_envs=2, variant="mini"), progress.agent)
    assert {e.env.variant.name for e in runner.envs.envs} == {"mini"}
    cleanrl_ppo.export(progress.agent, tmp_path / "mini.mlp", "mini")
    bot = parse_player(f"sampled:ckpt={tmp_path / 'mini.mlp'}").make(0)
    assert bot.variant == "mini"
    bot.check_modelled("mini")
    with pytest.raises(ValueError, match="trained on the mini game, not the full variant"):
        bot.check_modelled("full")
    with pytest.raises(ValueError, match="unknown variant 'tiny'"):
        Args(variant="tiny").check()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--num-envs", "0"], "num_envs must be at least 1, got 0"),
        (["--num-steps", "10", "--num-envs", "3"], "must be a multiple of num_minibatches"),
        (["--opponent", "nosuchbot"], "unknown player 'nosuchbot'"),
        (["--opponent", "ckpt:missing.pt"], "missing.pt"),
    ],
)
def test_bad_settings_are_one_line_errors(argv, message, capsys) -> None:
    with pytest.raises(SystemExit):
        cleanrl_ppo.main(argv)
    assert message in capsys.readouterr().err


@pytest.mark.slow(16)
def test_it_learns_to_beat_random(tmp_path) -> None:
    """Trained, the agent beats random clearly more than after its first update (a network barely
    trained, played greedily, is some fixed player: 0.57 on these deals), on the same 400
    mirrored deals."""

    def score(agent: object, name: str) -> float:
        path = tmp_path / f"{name}.mlp"
        cleanrl_ppo.export(agent, path)
        players = [parse_player(f"ckpt:{path}"), parse_player("random")]
        results = run_tournament(players, 400, seed=1, workers=1, progress=False)
        (pair,) = [row for row in results["pairs"] if row["a"] == results["players"][0]]
        return pair["win_rate"]

    first = None
    for progress in learn(Args(updates=100, opponent="random")):
        if first is None:  # the agent learns in place: scored now, after its first update
            first = score(progress.agent, "first")
    trained = score(progress.agent, "last")
    assert trained >= first + 0.05 and trained > 0.6, (first, trained)  # 0.57 -> 0.66 (seed 0)


def test_the_same_seed_trains_the_same_agent_whatever_the_caller_does_between_updates() -> None:
    def weights(seed: int, meddle: bool) -> list[torch.Tensor]:
        agent = None
        for progress in learn(Args(seed=seed, num_envs=2, num_steps=32, updates=3, num_minibatches=2)):
            agent = progress.agent
            if meddle:  # the caller's own use of torch's global generator between updates
                torch.rand(7)
        return [t.clone() for t in agent.state_dict().values()]

    first = weights(0, meddle=False)
    assert all(torch.equal(a, b) for a, b in zip(first, weights(0, meddle=True), strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first, weights(1, meddle=False), strict=True))
