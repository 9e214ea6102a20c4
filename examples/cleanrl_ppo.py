"""A single-file PPO in the style of CleanRL's ``ppo.py``: Gymnasium's ``SyncVectorEnv`` of
:class:`~hanamikoji_env.wrappers.SingleAgentEnv`, action masking, every hyperparameter in
:class:`Args`, and ``collect`` / ``advantages`` / ``update`` each on one screen.

    python -m hanamikoji_env.examples.cleanrl_ppo [--updates 200] [--opponent self] [--out agent.mlp]

The learner plays a random seat each game.  Its opponent is ``self`` (a frozen copy of its own
actor, refreshed every ``refresh`` updates, sampling its moves: self-play from nothing) or any
player spec (``random``, ``heuristic``, ...).  ``--out`` writes the actor as a ``.mlp`` player,
``ckpt:agent.mlp`` in the tournament.

Gymnasium's default autoreset (``NEXT_STEP``) spends the step after a game's end on a reset: that
step's action is ignored and ``action_masks()`` allows every action there (so the masked policy
can always sample); :func:`collect` marks those steps and the loss leaves them out.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.mlp import save_mlp
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.observation import OBS_SIZE
from hanamikoji_env.rules import check_variant
from hanamikoji_env.wrappers import SingleAgentEnv


@dataclass
class Args:
    seed: int = 0
    variant: str = "full"
    """the game learned: ``full``, or ``mini`` (small enough to measure exactly)"""
    opponent: str = "self"
    """``self`` (a frozen copy of the actor) or a player spec: ``random``, ``heuristic``, ..."""
    refresh: int = 10
    """with ``opponent: self``: updates between copies of the actor into the opponent"""
    num_envs: int = 8
    num_steps: int = 128
    """learner steps each env collects a rollout"""
    updates: int = 200
    learning_rate: float = 2.5e-4
    anneal_lr: bool = False
    gamma: float = 1.0
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    torch_threads: int = 1

    def check(self) -> Args:
        for name in (
            "refresh",
            "num_envs",
            "num_steps",
            "updates",
            "num_minibatches",
            "update_epochs",
            "hidden",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ValueError("num_envs * num_steps must be a multiple of num_minibatches")
        check_variant(self.variant)  # a one-line ValueError naming the known ones
        if self.opponent != "self":
            parse_player(self.opponent)  # a one-line ValueError for an unknown player or a bad file
        return self


def layer(n_in: int, n_out: int, std: float = 2**0.5) -> nn.Linear:
    linear = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.zeros_(linear.bias)
    return linear


class Agent(nn.Module):
    """CleanRL's actor and critic, two tanh MLPs; illegal logits go to -1e9."""

    def __init__(self, n_obs: int, hidden: int) -> None:
        super().__init__()

        def mlp(n_out: int, std: float) -> nn.Sequential:
            return nn.Sequential(
                layer(n_obs, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, n_out, std)
            )

        self.actor, self.critic = mlp(NUM_ACTIONS, 0.01), mlp(1, 1.0)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def policy(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        return torch.distributions.Categorical(logits=self.actor(obs).masked_fill(~mask, -1e9))


class Frozen:
    """The ``self`` opponent: a copy of the actor, sampling its moves from its own generator."""

    def __init__(self, agent: Agent, seed: int) -> None:
        self.actor = copy.deepcopy(agent.actor)
        self.rng = np.random.default_rng(seed)

    @torch.no_grad()
    def __call__(self, obs: dict) -> int:
        logits = self.actor(torch.as_tensor(obs["observation"])).numpy().astype(np.float64)
        logits[obs["action_mask"] == 0] = -np.inf
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(NUM_ACTIONS, p=p / p.sum()))


@dataclass
class Rollout:
    """``num_steps x num_envs`` of everything the loss needs; ``valid`` is False on reset steps."""

    obs: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    logp: torch.Tensor
    value: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    valid: torch.Tensor
    next_value: torch.Tensor


@dataclass
class Progress:
    """What :func:`learn` yields after each update."""

    update: int
    decisions: int
    """learner steps so far, reset steps left out"""
    games: int
    won: float
    """the share of the update's finished games the learner won"""
    agent: Agent
    opponent: Frozen | None
    """the ``self`` opponent (None against a player spec)"""


class Runner:
    """The vector env and where each env stands between rollouts."""

    def __init__(self, args: Args, agent: Agent) -> None:
        self.frozen = Frozen(agent, args.seed + 1) if args.opponent == "self" else None
        opponent = self.frozen or args.opponent
        envs = [lambda: SingleAgentEnv(opponent, variant=args.variant) for _ in range(args.num_envs)]
        self.envs = gym.vector.SyncVectorEnv(envs)
        obs, _ = self.envs.reset(seed=args.seed)
        self.obs = torch.as_tensor(obs)
        self.resetting = torch.zeros(args.num_envs, dtype=torch.bool)
        self.gen = torch.Generator().manual_seed(args.seed + 2)
        """The run's own generator: the learner's moves and the minibatches (no global state)."""

    def mask(self) -> torch.Tensor:
        return torch.as_tensor(np.stack(self.envs.call("action_masks")), dtype=torch.bool)


@torch.no_grad()
def collect(runner: Runner, agent: Agent, steps: int) -> Rollout:
    keys = ("obs", "mask", "action", "logp", "value", "reward", "done", "valid")
    out: dict[str, list[torch.Tensor]] = {k: [] for k in keys}
    for _ in range(steps):
        obs, mask = runner.obs, runner.mask()
        dist = agent.policy(obs, mask)
        action = torch.multinomial(dist.probs, 1, generator=runner.gen).squeeze(1)
        next_obs, reward, terminated, truncated, _ = runner.envs.step(action.numpy())
        done = torch.as_tensor(terminated | truncated)
        step = (obs, mask, action, dist.log_prob(action), agent.value(obs),
                torch.as_tensor(reward, dtype=torch.float32), done, ~runner.resetting)  # fmt: skip
        for k, v in zip(keys, step, strict=True):
            out[k].append(v)
        runner.obs, runner.resetting = torch.as_tensor(next_obs), done
    return Rollout(**{k: torch.stack(v) for k, v in out.items()}, next_value=agent.value(runner.obs))


@torch.no_grad()
def advantages(r: Rollout, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE, cut at each game's end; a reset step's own advantage is never used."""
    adv, last = torch.zeros_like(r.reward), torch.zeros_like(r.next_value)
    for t in reversed(range(len(r.reward))):
        following = r.next_value if t == len(r.reward) - 1 else r.value[t + 1]
        alive = 1.0 - r.done[t].float()
        delta = r.reward[t] + gamma * alive * following - r.value[t]
        last = delta + gamma * lam * alive * last
        adv[t] = last
    return adv, adv + r.value


def update(agent: Agent, optimizer: torch.optim.Optimizer, r: Rollout, adv: torch.Tensor,
           ret: torch.Tensor, args: Args, gen: torch.Generator) -> None:  # fmt: skip
    """The clipped PPO loss over minibatches of the valid steps, ``update_epochs`` times."""
    valid = r.valid.flatten()
    obs, mask = r.obs.flatten(0, 1)[valid], r.mask.flatten(0, 1)[valid]
    action, logp, value = r.action.flatten()[valid], r.logp.flatten()[valid], r.value.flatten()[valid]
    adv, ret = adv.flatten()[valid], ret.flatten()[valid]
    size = max(1, len(action) // args.num_minibatches)
    for _ in range(args.update_epochs):
        for idx in torch.randperm(len(action), generator=gen).split(size):
            dist, new_value = agent.policy(obs[idx], mask[idx]), agent.value(obs[idx])
            ratio = (dist.log_prob(action[idx]) - logp[idx]).exp()
            a = (adv[idx] - adv[idx].mean()) / (adv[idx].std(unbiased=False) + 1e-8)
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            v_clipped = value[idx] + (new_value - value[idx]).clamp(-args.clip_coef, args.clip_coef)
            v_loss = 0.5 * torch.max((new_value - ret[idx]) ** 2, (v_clipped - ret[idx]) ** 2).mean()
            loss = pg + args.vf_coef * v_loss - args.ent_coef * dist.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()


def learn(args: Args) -> Iterator[Progress]:
    """Train from a random network; yields after each of ``args.updates`` updates."""
    args.check()
    torch.manual_seed(args.seed)  # the networks' initialisation only
    torch.set_num_threads(args.torch_threads)
    agent = Agent(OBS_SIZE, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    runner, decisions = Runner(args, agent), 0
    for u in range(1, args.updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1 - (u - 1) / args.updates)
        r = collect(runner, agent, args.num_steps)
        adv, ret = advantages(r, args.gamma, args.gae_lambda)
        update(agent, optimizer, r, adv, ret, args, runner.gen)
        if runner.frozen is not None and u % args.refresh == 0:
            runner.frozen.actor.load_state_dict(agent.actor.state_dict())
        decisions += int(r.valid.sum())
        ended = r.done.flatten() & r.valid.flatten()
        won = float((r.reward.flatten()[ended] > 0).float().mean()) if ended.any() else float("nan")
        yield Progress(u, decisions, int(ended.sum()), won, agent, runner.frozen)


def export(agent: Agent, path: str | Path, variant: str = "full") -> None:
    """The actor, learned on ``variant``, as a ``.mlp`` player (both seats, tanh, observation
    version 1)."""
    save_mlp(path, [agent.actor, agent.actor], "cleanrl-ppo", 1, activation="tanh", variant=variant)


def main(argv: list[str] | None = None) -> Progress:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    for f in fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default) if f.type != "bool"
                            else lambda s: s.lower() in ("1", "true", "yes"), default=f.default,
                            help=f"(default: {f.default})")  # fmt: skip
    parser.add_argument("--out", type=Path, help="write the actor here as a .mlp player")
    ns = vars(parser.parse_args(argv))
    out = ns.pop("out")
    try:
        args = Args(**ns).check()
    except ValueError as e:
        parser.error(str(e))
    from tqdm import tqdm

    began, bar = time.perf_counter(), tqdm(learn(args), total=args.updates, unit="update")
    for progress in bar:
        bar.set_postfix(decisions=progress.decisions, won=f"{progress.won:.2f}")
    print(f"{progress.update} updates, {progress.decisions:,} decisions in {time.perf_counter() - began:.0f} s: "
          f"won {progress.won:.0%} of the last rollout's {progress.games} games against {args.opponent}")  # fmt: skip
    if out:
        export(progress.agent, out, args.variant)
        print(f"wrote {out}")
    return progress


if __name__ == "__main__":
    main()
