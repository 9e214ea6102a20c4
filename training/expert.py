"""Expert iteration: the policy learns the moves of a search over itself.

    python -m hanamikoji_env.training.expert --config expert [key=value ...]

Each iteration

1. **collects** positions: the policy (sampling) plays the run's opponents
   exactly as in PPO (:class:`training.collector.Collector`: self-play, past
   snapshots, bots); every decision of the learner with more than one legal
   move is kept, with its return (the value target);
2. **labels** them with :class:`~hanamikoji_env.bots.psearch.PolicySearchBot`'s
   search over the current policy: the ``candidates`` most likely legal moves,
   each valued by ``samples`` determinized playouts of the policy for both
   players (:func:`~hanamikoji_env.bots.psearch.search_values`, many positions
   per network call); the target is the search's improved move distribution,
   ``softmax((q + prior * log p) / temperature)`` over the candidates: with
   ``temperature`` equal to ``prior`` that is ``p * exp(q / prior)``, the policy
   reweighted by the playouts' values; ``temperature: 0`` is the one move
   PolicySearchBot plays, ``argmax(q + prior * log p)``;
3. **distils**: ``epochs`` passes of minibatch Adam on the cross-entropy to the
   targets, plus ``kl_coef`` times KL(policy before the iteration || policy)
   and ``vf_coef`` times the value loss.

After each iteration the greedy policy plays ``eval_games`` games against each
of ``eval_bots`` (the curve goes to ``RUN/curve.csv`` and the terminal), and
``RUN/policy.pt`` is the latest policy, a checkpoint like PPO's that
``init_from`` and every player spec take.  Every hyperparameter is a field of
:class:`ExpertConfig`, the collection's (opponents, envs, steps) as in PPO.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from hanamikoji_env.bots.psearch import candidate_moves, search_values
from hanamikoji_env.nn import PolicyNet, load_policy, policy_probs, save_checkpoint
from hanamikoji_env.training.collector import Collector
from hanamikoji_env.training.config import (
    Config,
    check_ranges,
    dataclass_from_dict,
    from_config,
    ranged,
    read_yaml,
)
from hanamikoji_env.training.critic import Values
from hanamikoji_env.training.monitor import win_rate


@dataclass
class ExpertConfig:
    """Expert iteration's hyperparameters; the collection's become a :class:`training.config.Config`
    (:func:`collection_config`)."""

    run_name: str = "expert"
    runs_dir: str = "runs"
    seed: int = from_config("seed")
    init_from: str = "pretrained"
    """The policy to improve (a checkpoint path, or ``pretrained``)."""
    iterations: int = ranged(10, 1, 10_000)
    positions: int = ranged(20_000, 1, 10**8)
    """Positions labelled per iteration."""
    samples: int = ranged(32, 1, 4096)
    candidates: int = ranged(4, 2, 23)
    prior: float = ranged(0.1, 0, 100)
    temperature: float = ranged(0.1, 0, 100)
    """Of the target distribution (0: the search's one move)."""
    label_batch: int = ranged(64, 1, 4096)
    """Positions searched together (one network call per playout step for all of them)."""
    epochs: int = ranged(2, 1, 100)
    minibatch: int = ranged(512, 1, 65_536)
    learning_rate: float = from_config("learning_rate", 1e-4)
    kl_coef: float = ranged(1.0, 0, 1000)
    vf_coef: float = from_config("vf_coef")
    eval_games: int = ranged(400, 2, 10**6)
    eval_bots: list[str] = field(default_factory=lambda: ["heuristic", "search"])
    # collection, as in PPO (training/config.py): who the policy plays, and the value targets
    num_envs: int = from_config("num_envs")
    rollout_steps: int = from_config("rollout_steps", 32)
    pool_share: float = from_config("pool_share", 0.1)
    """Games against the policy's snapshots (one taken each iteration)."""
    bot_shares: dict[str, float] = field(
        default_factory=lambda: {"heuristic": 0.2, "search:samples=50,candidates=6": 0.3, "random": 0.05}
    )
    pool_size: int = from_config("pool_size", 10)
    shaping: float = from_config("shaping", 1.0)
    gae_lambda: float = from_config("gae_lambda")

    def validate(self) -> ExpertConfig:
        check_ranges(self)
        return self


COLLECTION = ("num_envs", "rollout_steps", "pool_share", "bot_shares", "pool_size", "shaping", "gae_lambda")


def collection_config(cfg: ExpertConfig, model: PolicyNet) -> Config:
    """The PPO config whose collector gathers the positions (with the network's own shape)."""
    data = {key: getattr(cfg, key) for key in COLLECTION}
    data |= {"seed": cfg.seed, "torch_threads": 1, "observation_version": model.observation_version}
    return Config.from_dict(data, "expert config")


def collect(collector: Collector, positions: int) -> dict[str, np.ndarray]:
    """At least ``positions`` learner decisions with a choice: observation, mask, return."""
    parts: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "return": []}
    kept = 0
    while kept < positions:
        buf = collector.collect()
        choice = buf["learner"] & (buf["mask"].sum(-1) > 1)
        for key in parts:
            parts[key].append(buf[key][choice])
        kept += int(choice.sum())
    return {k: np.concatenate(v)[:positions] for k, v in parts.items()}


def label(
    model: PolicyNet, obs: np.ndarray, mask: np.ndarray, cfg: ExpertConfig, rng: np.random.Generator,
    progress: bool = True,
) -> np.ndarray:  # fmt: skip
    """The search's move distribution in each position (``[N, actions]``, see the module
    docstring): PolicySearchBot's search over ``model``."""
    probs = functools.partial(policy_probs, model)
    p = probs(obs, mask)
    targets = np.zeros(mask.shape, np.float32)
    starts = range(0, len(obs), cfg.label_batch)
    for start in tqdm(starts, desc="labels", unit="batch", disable=not progress, leave=False):
        batch = np.arange(start, min(start + cfg.label_batch, len(obs)))
        cands = [candidate_moves(p[i], mask[i], cfg.candidates) for i in batch]
        q = search_values(probs, obs[batch], cands, rng, cfg.samples, None)
        for i, c, v in zip(batch, cands, q, strict=True):
            score = v + cfg.prior * np.log(p[i, c])
            if cfg.temperature == 0:
                targets[i, c[int(np.argmax(score))]] = 1.0
            else:
                w = np.exp((score - score.max()) / cfg.temperature)
                targets[i, c] = w / w.sum()
    return targets


def distil(
    model: PolicyNet, data: dict[str, np.ndarray], targets: np.ndarray, cfg: ExpertConfig,
    optimizer: torch.optim.Optimizer, gen: torch.Generator,
) -> dict[str, float]:  # fmt: skip
    """Fit the policy to the search's moves, held near where it started; returns the last losses."""
    obs, mask = torch.as_tensor(data["obs"]), torch.as_tensor(data["mask"])
    ret, target = torch.as_tensor(data["return"]), torch.as_tensor(targets)
    with torch.no_grad():
        old_logp = torch.log_softmax(model(obs, mask)[0], -1)
    stats: dict[str, float] = {}
    model.train()
    for _ in range(cfg.epochs):
        for idx in torch.randperm(len(obs), generator=gen).split(cfg.minibatch):
            logits, value = model(obs[idx], mask[idx])
            logp = torch.log_softmax(logits, -1)
            ce = -(target[idx] * logp.nan_to_num(neginf=0.0)).sum(-1).mean()  # targets: 0 off the candidates
            old = old_logp[idx]
            kl = (old.exp() * (old - logp)).nan_to_num().sum(-1).mean()  # illegal moves: 0 * -inf
            vloss = 0.5 * (value - ret[idx]).pow(2).mean()
            loss = ce + cfg.kl_coef * kl + cfg.vf_coef * vloss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            stats = {"cross_entropy": ce.item(), "kl": kl.item(), "value_loss": vloss.item()}
    model.eval()
    with torch.no_grad():
        stats["agreement"] = float((model(obs, mask)[0].argmax(-1) == target.argmax(-1)).float().mean())
    return stats


def run(cfg: ExpertConfig, progress: bool = True) -> Path:
    """Run the iterations; returns the run folder (``policy.pt``, ``curve.csv``)."""
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    model = load_policy(cfg.init_from)
    ppo = collection_config(cfg, model)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    collector = Collector(ppo, ppo.num_envs, Values(model, None, ppo.learning_rate), rng, gen,
                          cfg.seed, cfg.seed + 1)  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=1e-5)
    run_dir = Path(cfg.runs_dir) / cfg.run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    curve = run_dir / "curve.csv"
    with open(curve, "w", newline="") as f:
        csv.writer(f).writerow(["iteration", "positions", "seconds", *cfg.eval_bots, "agreement", "kl"])
    began, labelled = time.monotonic(), 0
    for it in range(1, cfg.iterations + 1):
        collector.add_snapshot(model)
        data = collect(collector, cfg.positions)
        targets = label(model, data["obs"], data["mask"], cfg, rng, progress)
        stats = distil(model, data, targets, cfg, optimizer, gen)
        labelled += len(targets)
        save_checkpoint(
            run_dir / "policy.pt", model, expert_config=dataclasses.asdict(cfg), positions=labelled
        )
        rates = [win_rate(model, bot, cfg.eval_games, 10_000 + it, it, None) for bot in cfg.eval_bots]
        seconds = time.monotonic() - began
        with open(curve, "a", newline="") as f:
            csv.writer(f).writerow([it, labelled, round(seconds), *(f"{r:.3f}" for r in rates),
                                    f"{stats['agreement']:.3f}", f"{stats['kl']:.4f}"])  # fmt: skip
        shown = " ".join(f"{b} {r:.3f}" for b, r in zip(cfg.eval_bots, rates, strict=True))
        print(f"iteration {it}: {labelled:,} positions, {seconds:.0f} s; {shown}; "
              f"agreement {stats['agreement']:.3f}, kl {stats['kl']:.4f}", flush=True)  # fmt: skip
    return run_dir


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.expert", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--config", default=None, help="a YAML file of ExpertConfig keys")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("overrides", nargs="*", metavar="key=value")
    args = p.parse_args(argv)
    try:
        data, source = read_yaml(args.config, args.overrides)
        cfg = dataclass_from_dict(ExpertConfig, data, source).validate()
    except ValueError as e:
        p.error(str(e))
    run(cfg, progress=not args.no_progress)


if __name__ == "__main__":
    main()
