"""PPO self-play on the batch engine: one readable training loop.

The loop is :func:`train`: :meth:`Trainer.collect` (one rollout, with per-seat
GAE by :func:`gae`), :meth:`Trainer.learn` (the PPO update), repeated; each fits
on a screen.  Beside it: the rollouts on the batch engine (``collector.py``; on Ray
workers with ``backend: ray``, ``distributed.py``), who the learner plays (``selfplay.py``), the value
function of the advantages (``critic.py``), the periodic evaluation
(``monitor.py``) and the run on disk (``run_folder.py``).  Every
hyperparameter is a field of :class:`training.config.Config`.

One shared policy (``hanamikoji_env.nn.PolicyNet``) plays both seats from the
perspective observation.  Illegal actions are masked out of the logits before
sampling and in the loss (their probability is exactly 0).

Credit assignment.  A turn is several decisions and the two players'
decisions interleave (a Gift's answer belongs to the opponent), so each
(env, seat) has its own trajectory: the decisions that seat made, in order.
The "next state" of a decision is the same seat's next decision; the
opponent's decisions in between are part of the environment.  Rewards are 0
until the game ends; then +1 / -1 (0 / 0 for a draw) reach the last decision
of *both* seats, whoever made the final move.  GAE runs backward over each
seat's trajectory with ``gamma`` and ``gae_lambda``; a trajectory cut by the
end of the rollout is bootstrapped with the value of that seat's own view of
the position.  Only the learner's decisions are trained on: both seats in a
self-play game, one seat against a snapshot or a bot (see ``selfplay.py``).

Oracle critic (``critic: oracle``): the values of GAE come from a
training-only critic that also reads the opponent's own observation (see
``critic.py``); the policy and ``policy.pt`` are unchanged.

Determinism: one seed; every random draw comes from generators that are
saved in the checkpoint (the engine's deck generator, the opponent and
minibatch generator, the torch sampling generator), so a run that is
interrupted and resumed ends with the same weights as one that was not.
"""

from __future__ import annotations

import copy
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from hanamikoji_env.files import remove_stale_temporaries
from hanamikoji_env.first_run import announce, parts_for
from hanamikoji_env.heldout import heldout_specs
from hanamikoji_env.nn import (
    CheckpointError,
    PolicyNet,
    load_checkpoint,
    policy_from,
    resolve_device,
    save_checkpoint,
    widen,
)
from hanamikoji_env.training.collector import Collector, gae
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.critic import OracleCritic, Values
from hanamikoji_env.training.imitation import imitation_loss, teacher_share
from hanamikoji_env.training.league import RECENT, League, exploiter_config, exploiter_folder, freeze_target
from hanamikoji_env.training.monitor import Curve, win_rate
from hanamikoji_env.training.plot import CURVE
from hanamikoji_env.training.run_folder import (
    BUDGET_KEYS,
    CHECKPOINT,
    POLICY,
    check_resumable,
    lock_run,
    read_saved_config,
    write_saved_config,
)
from hanamikoji_env.training.selfplay import SNAPSHOTS
from hanamikoji_env.training.threads import ThreadChooser

if TYPE_CHECKING:
    from hanamikoji_env.training.distributed import RayCollectors

__all__ = ["CHECKPOINT", "POLICY", "Trainer", "TrainingDivergedError", "check_resumable", "gae", "train"]


class TrainingDivergedError(RuntimeError):
    """The loss or the weights became non-finite; nothing of the failed update was saved."""


def load_init_from(cfg: Config) -> dict[str, Any]:
    """The checkpoint ``cfg.init_from``, if its network fits the config's (same, or narrower)."""
    assert cfg.init_from is not None
    start = load_checkpoint(cfg.init_from)
    version = start.get("observation_version", 1)
    if version != cfg.observation_version:
        raise ValueError(
            f"init_from {cfg.init_from} reads observation version {version}; the config asks "
            f"observation_version {cfg.observation_version}"
        )
    if start.get("variant", "full") != cfg.variant:
        raise ValueError(
            f"init_from {cfg.init_from} was trained on the {start.get('variant', 'full')} game; the config "
            f"trains variant {cfg.variant}"
        )
    shape, asked = start["model_config"], {"hidden": cfg.hidden, "layers": cfg.layers}
    if shape != asked and not (shape["layers"] == cfg.layers and shape["hidden"] < cfg.hidden):
        raise ValueError(
            f"init_from {cfg.init_from} has network {shape}, config asks {asked} "
            "(set hidden and layers to the same, or the same layers and a wider hidden size)"
        )
    return start


class Trainer:
    """Owns the model, optimizer, engine, opponents and every generator of one run."""

    def __init__(self, cfg: Config, run_dir: Path) -> None:
        self.cfg = cfg.validate()
        self.run_dir = Path(run_dir)
        self.device = resolve_device(cfg.device)
        self.threads = ThreadChooser() if cfg.torch_threads == "auto" else None
        """``torch_threads: auto``: the thread count of each update, by measured speed."""
        if self.threads is None:
            torch.set_num_threads(int(cfg.torch_threads))
        torch.manual_seed(cfg.seed)  # network initialisation only
        # on the device before any optimizer state exists: loaded state follows the weights there
        self.model = PolicyNet(cfg.hidden, cfg.layers, cfg.observation_version, cfg.variant).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        if cfg.init_from is not None:
            start = load_init_from(cfg)
            if start["model_config"] == self.model.config:
                self.model.load_state_dict(start["state_dict"])
                if "optimizer" in start:
                    self.optimizer.load_state_dict(start["optimizer"])
            else:  # a narrower network: widened, with a fresh optimizer
                self.model = widen(policy_from(start, cfg.init_from), cfg.hidden).to(self.device)
                self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        critic = (
            OracleCritic(cfg.hidden, cfg.layers, cfg.observation_version).to(self.device)
            if cfg.critic == "oracle"
            else None
        )
        self.values = Values(self.model, critic, cfg.learning_rate, self.device)
        self.magnet = copy.deepcopy(self.model).requires_grad_(False) if cfg.magnet_coef > 0 else None
        """MMD's magnet policy (``magnet_coef``), which follows the policy slowly (``magnet_rate``)."""
        self.gen = torch.Generator().manual_seed(cfg.seed + 1)  # action sampling
        self.rng = np.random.default_rng(cfg.seed + 2)  # opponents, seats, minibatches, bot seeds
        self.collector: Collector | RayCollectors
        if cfg.backend == "ray":
            from hanamikoji_env.training.distributed import RayCollectors

            self.collector = RayCollectors(cfg, self.model, critic)
        else:  # one collector in this process, sharing the model and the generators
            self.collector = Collector(
                cfg,
                cfg.num_envs,
                self.values,
                self.rng,
                self.gen,
                engine_seed=cfg.seed + 3,
                bot_seed=cfg.seed,
            )
        self.league = League(cfg) if cfg.exploiter_every or cfg.pfsp else None
        """The league's exploiters and results (``training/league.py``), or None: a fixed mix."""
        self.apply_league_shares()
        self.update = self.decisions = self.games = 0
        self.seconds = 0.0
        """Wall time the run has trained, evaluations and saves included, over every resume."""
        self._ticked = time.perf_counter()
        """When :meth:`tick` last counted wall time into ``seconds``."""
        self.saved_update = 0
        """The update of the newest checkpoint on disk."""
        self.last_eval: dict[str, float] = {}

    def collect(self) -> dict[str, np.ndarray]:
        """One rollout of every collector, with per-seat GAE (see :class:`Collector`); it starts
        an update, which :meth:`learn` ends."""
        share = None  # after the warm start: PPO's rollouts
        if self.imitating:
            share = teacher_share(self.cfg.teacher_play, self.decisions, self.cfg.imitation_decisions)
        buf = self.collector.collect(share)
        self.decisions += int(buf["learner"].sum())
        self.games += int(buf["done"].sum())
        return buf

    def step(self) -> dict[str, float]:
        """One update: a rollout collected and learned from, counted, and timed (its speed in
        the statistics; with ``torch_threads: auto`` each update tries or keeps a thread count
        by that speed)."""
        count = self.threads.threads() if self.threads is not None else torch.get_num_threads()
        start, before = time.perf_counter(), self.decisions
        stats = self.learn(self.collect())
        seconds = time.perf_counter() - start
        if self.threads is not None:
            self.threads.record(count, self.decisions - before, seconds)
        self.update += 1
        return {**stats, "torch_threads": count, "decisions_per_second": (self.decisions - before) / seconds}

    def tick(self, counted: bool = True) -> float:
        """The run's wall time trained (over every resume), counted up to now; with ``counted``
        False the time since the last tick is left out (setup, not training)."""
        now = time.perf_counter()
        if counted:
            self.seconds += now - self._ticked
        self._ticked = now
        return self.seconds

    @property
    def imitating(self) -> bool:
        """Is the run in its imitation warm start (``training/imitation.py``)?"""
        return self.cfg.teacher is not None and self.decisions < self.cfg.imitation_decisions

    def add_snapshot(self) -> None:
        """The current policy joins the opponents' pool (every collector's)."""
        self.collector.add_snapshot(self.model)

    def apply_league_shares(self) -> None:
        """New games' opponents from now on by the league's shares (a league run only)."""
        if self.league is None:
            return
        shares = self.league.shares()
        self.collector.opponents.schedule.set_shares(shares.pop(SNAPSHOTS), shares)  # type: ignore[union-attr]

    def fold_league(self) -> dict[str, float]:
        """The last rollout's results into the league and its new shares; the scalars to log."""
        if self.league is None:
            return {}
        self.league.fold(self.collector.opponents.take_results())  # type: ignore[union-attr]
        self.apply_league_shares()
        scalars = {f"share/{name}": share for name, share in self.league.shares().items()}
        scalars.update({f"win_rate/{name}": self.league.win_rate(name) for name in self.league.priors()})
        return scalars

    # -------------------------------------------------------------- learn ---

    def _learner_data(self, buf: dict[str, np.ndarray], keys: list[str]) -> dict[str, torch.Tensor]:
        """The learner's decisions of a rollout, on the model's device, once per rollout."""
        keep = buf["learner"].reshape(-1)
        return {
            k: torch.as_tensor(buf[k].reshape(-1, *buf[k].shape[2:])[keep]).to(self.device)
            for k in keys
            if k in buf
        }

    def learn(self, buf: dict[str, np.ndarray]) -> dict[str, float]:
        """The update on the learner's decisions of one rollout: PPO, or imitation in the warm start."""
        if "target" in buf:
            return self.imitate(buf)
        cfg = self.cfg
        keys = ["obs", "mask", "action", "logp", "value", "advantage", "return", "other"]
        data = self._learner_data(buf, keys)
        value_only = self.update < cfg.critic_warmup  # the warm-up trains only the value functions
        self._anneal_learning_rate()
        stats: dict[str, list[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")
        }
        if self.magnet is not None:
            stats["magnet_kl"] = []
        for _ in range(cfg.update_epochs):
            for mb in self._minibatches(data):
                logits, value, aux_loss = self._forward(mb)
                logp_all = torch.log_softmax(logits, -1)  # illegal actions: about -1e9, probability 0
                logp = logp_all.gather(1, mb["action"][:, None]).squeeze(1)
                ratio = (logp - mb["logp"]).exp()
                adv = normalized(mb["advantage"])
                pg_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()
                v_loss = self._value_loss(value, mb["value"], mb["return"])
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                value_loss = cfg.vf_coef * (v_loss + aux_loss)
                loss = value_loss if value_only else pg_loss - cfg.ent_coef * entropy + value_loss
                if self.magnet is not None:  # MMD: the reverse KL to the magnet, over legal moves
                    with torch.no_grad():
                        magnet_logp = torch.log_softmax(self.magnet(mb["obs"], mb["mask"])[0], -1)
                    magnet_kl = (logp_all.exp() * (logp_all - magnet_logp)).sum(-1).mean()
                    stats["magnet_kl"].append(magnet_kl.item())
                    if not value_only:
                        loss = loss + cfg.magnet_coef * magnet_kl
                self._optimize(loss, value_only)
                with torch.no_grad():
                    stats["approx_kl"].append(float(((ratio - 1) - (logp - mb["logp"])).mean()))
                    stats["clipfrac"].append(float(((ratio - 1).abs() > cfg.clip_coef).float().mean()))
                for key, x in (("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy)):
                    stats[key].append(x.item())
            if (
                cfg.target_kl is not None
                and np.mean(stats["approx_kl"][-cfg.num_minibatches :]) > cfg.target_kl
            ):
                break
        if self.magnet is not None:  # the magnet follows the policy, slowly
            with torch.no_grad():
                for m, p in zip(self.magnet.parameters(), self.model.parameters(), strict=True):
                    m.lerp_(p, cfg.magnet_rate)
        return self._finish_update(stats, data)

    def imitate(self, buf: dict[str, np.ndarray]) -> dict[str, float]:
        """The warm start's update: the cross-entropy to the teacher's targets plus ``vf_coef``
        times the value regression to the games' outcomes, ``update_epochs`` passes of minibatches."""
        cfg = self.cfg
        data = self._learner_data(buf, ["obs", "mask", "target", "value", "return", "other"])
        self._anneal_learning_rate()
        stats: dict[str, list[float]] = {
            k: [] for k in ("imitation_loss", "agreement", "value_loss", "entropy")
        }
        for _ in range(cfg.update_epochs):
            for mb in self._minibatches(data):
                logits, value, aux_loss = self._forward(mb)
                ce, agree = imitation_loss(logits, mb["target"])
                v_loss = 0.5 * ((value - mb["return"]) ** 2).mean()
                self._optimize(ce + cfg.vf_coef * (v_loss + aux_loss), value_only=False)
                with torch.no_grad():
                    logp_all = torch.log_softmax(logits, -1)
                    entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                for key, x in (("imitation_loss", ce), ("agreement", agree), ("value_loss", v_loss),
                               ("entropy", entropy)):  # fmt: skip
                    stats[key].append(x.item())
        return self._finish_update(stats, data)

    def _minibatches(self, data: dict[str, torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        """One epoch: ``num_minibatches`` minibatches of ``data`` in a fresh random order."""
        size = len(data["obs"])
        batch = max(1, size // self.cfg.num_minibatches)
        order = torch.as_tensor(self.rng.permutation(size), device=self.device)
        for start in range(0, size - batch + 1, batch):
            yield {k: v[order[start : start + batch]] for k, v in data.items()}

    def _forward(self, mb: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A minibatch's masked logits, the value of its advantages' critic, and the auxiliary
        value loss of the policy's own head (0 without an oracle critic)."""
        logits, own_value = self.model(mb["obs"], mb["mask"])
        value, aux_loss = self.values.for_loss(own_value, mb["obs"], mb.get("other"), mb["return"])
        return logits, value, aux_loss

    def _finish_update(
        self, stats: dict[str, list[float]], data: dict[str, torch.Tensor]
    ) -> dict[str, float]:
        """An update's statistics (means, explained variance, learning rate, threads); a
        ``TrainingDivergedError`` if the weights became non-finite."""
        if not all(torch.isfinite(p).all() for p in self.model.parameters()):
            raise TrainingDivergedError(f"the weights became non-finite at update {self.update + 1}")
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        y, pred = data["return"].cpu().numpy(), data["value"].cpu().numpy()
        var = float(np.var(y))
        out["explained_variance"] = float("nan") if var == 0 else 1 - float(np.var(y - pred)) / var
        out["learning_rate"] = self.optimizer.param_groups[0]["lr"]
        return out

    def _value_loss(self, value: torch.Tensor, old: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
        if not self.cfg.clip_vloss:
            return 0.5 * ((value - returns) ** 2).mean()
        clipped = old + (value - old).clamp(-self.cfg.clip_coef, self.cfg.clip_coef)
        return 0.5 * torch.max((value - returns) ** 2, (clipped - returns) ** 2).mean()

    def _optimize(self, loss: torch.Tensor, value_only: bool) -> None:
        """One gradient step of the policy net (and the oracle critic); ``value_only``: the shared
        trunk and the policy head keep their weights."""
        if not torch.isfinite(loss):  # stop before the optimizer spreads it into the weights
            raise TrainingDivergedError(f"the loss became {loss.item()} at update {self.update + 1}")
        optimizers = [self.optimizer] + ([self.values.optimizer] if self.values.optimizer is not None else [])
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss.backward()
        if value_only:
            for p in (*self.model.trunk.parameters(), *self.model.policy.parameters()):
                p.grad = None
        nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        if self.values.critic is not None:
            nn.utils.clip_grad_norm_(self.values.critic.parameters(), self.cfg.max_grad_norm)
            self.values.optimizer.step()  # type: ignore[union-attr]

    def _anneal_learning_rate(self) -> None:
        if self.cfg.anneal_lr:
            frac = max(1.0 - self.decisions / self.cfg.total_decisions, 0.0)
            for optimizer in (self.optimizer, self.values.optimizer):
                if optimizer is not None:
                    optimizer.param_groups[0]["lr"] = frac * self.cfg.learning_rate

    def train_exploiter(self, progress: bool) -> None:
        """Train the league's next exploiter against the policy as it is now (or finish the one an
        interrupted run left), then make it an opponent.  The checkpoint on disk says which
        exploiter is in training before it starts, so an interruption anywhere resumes it."""
        league = self.league
        assert league is not None
        if not league.pending:  # a new exploiter: say so on disk, then freeze its target
            league.pending = len(league.exploiters) + 1
            self.save()
            freeze_target(self.run_dir, league.pending)
        k, folder = league.pending, exploiter_folder(self.run_dir, league.pending)
        cfg = exploiter_config(self.cfg, self.run_dir, k)
        resume = (folder / CHECKPOINT).is_file()
        print(f"league: {'resuming' if resume else 'training'} exploiter {k} against the policy at "
              f"{self.decisions:,} decisions ({cfg.total_decisions:,} decisions, in {folder})",
              file=sys.stderr, flush=True)  # fmt: skip
        exploiter = train(cfg, folder, resume=resume, progress=progress)
        rate = exploiter.last_eval.get(cfg.eval_bots[0], float("nan"))
        self.tick(counted=False)
        self.seconds += exploiter.seconds  # the league's wall time includes its exploiters' (every resume)
        league.exploiters.append(f"ckpt:{folder / POLICY}")
        league.exploiter_rates.append(rate)
        league.pending = 0
        self.collector.opponents.add_bot(league.exploiters[-1])  # type: ignore[union-attr]
        self.apply_league_shares()
        self.save()
        print(f"league: exploiter {k} beats the policy it was trained on {rate:.3f}; it joins the opponents",
              file=sys.stderr, flush=True)  # fmt: skip

    # ------------------------------------------------ evaluation and disk ---

    def evaluate(self, bot_spec: str, games: int) -> float:
        """Win rate (draws half) of the greedy policy against a bot, half the games in each seat."""
        model = self.model if self.device.type == "cpu" else copy.deepcopy(self.model).cpu()
        return win_rate(
            model, bot_spec, games, 10_000 + self.update, 12_345 + self.update, self.cfg.round_limit
        )

    def evaluations(self) -> dict[str, float]:
        """The periodic evaluation: the win rate against each of ``eval_bots``; with
        ``eval_heldout`` against each fast held-out opponent (``heldout:NAME``) and their mean
        (``heldout``); in a league, the mean against the newest exploiters (``exploiters``)."""
        cfg = self.cfg
        out = {bot: self.evaluate(bot, cfg.eval_games) for bot in cfg.eval_bots}
        if cfg.eval_heldout:
            rates = {
                f"heldout:{Path(s).stem}": self.evaluate(s, cfg.eval_games) for s in heldout_specs(fast=True)
            }
            out.update(rates, heldout=float(np.mean(list(rates.values()))))
        if self.league is not None and self.league.exploiters:
            newest = self.league.exploiters[-RECENT:]
            out["exploiters"] = float(np.mean([self.evaluate(s, cfg.eval_games) for s in newest]))
        return out

    def save(self) -> None:
        """The whole run to ``checkpoint.pt`` and its policy to ``policy.pt``."""
        common = {
            "config": self.cfg.to_dict(),
            "update": self.update,
            "decisions": self.decisions,
            "games": self.games,
            "seconds": self.seconds,
            "optimizer": self.optimizer.state_dict(),
            "torch_generator": self.gen.get_state(),
            "rng": self.rng.bit_generator.state,
            "last_eval": self.last_eval,
        }
        league = {} if self.league is None else {"league": self.league.state()}
        critic = self.values.critic
        extra = (
            {}
            if critic is None
            else {"critic": critic.state_dict(), "critic_optimizer": self.values.optimizer.state_dict()}  # type: ignore[union-attr]
        )
        if self.magnet is not None:
            extra["magnet"] = self.magnet.state_dict()
        save_checkpoint(
            self.run_dir / CHECKPOINT,
            self.model,
            **common,
            **self.collector.state(generators=False),  # the local one shares the trainer's generators
            **extra,
            **league,
        )
        save_checkpoint(self.run_dir / POLICY, self.model, **common)
        self.saved_update = self.update

    def restore(self) -> None:
        """Load ``checkpoint.pt`` of the run folder: the run continues exactly."""
        data = check_resumable(self.cfg, self.run_dir)
        try:
            self.model.load_state_dict(data["state_dict"])
            self.optimizer.load_state_dict(data["optimizer"])
            self.gen.set_state(data["torch_generator"])
            self.rng.bit_generator.state = data["rng"]
            if self.league is not None:  # its exploiters are opponents before the games resume
                self.league.load(data["league"])
                for spec in self.league.exploiters:
                    self.collector.opponents.add_bot(spec)  # type: ignore[union-attr]
                self.apply_league_shares()
            self.collector.load(data)
            if self.values.critic is not None:
                self.values.critic.load_state_dict(data["critic"])
                self.values.optimizer.load_state_dict(data["critic_optimizer"])  # type: ignore[union-attr]
            if self.magnet is not None:
                self.magnet.load_state_dict(data["magnet"])
            self.update, self.decisions, self.games = data["update"], data["decisions"], data["games"]
            self.seconds = float(data.get("seconds", 0.0))  # runs saved before it was kept: 0
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as e:
            raise CheckpointError(
                f"{self.run_dir / CHECKPOINT} cannot be resumed: a saved state in it is damaged "
                f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else 'no detail'})"
            ) from None
        self.saved_update = self.update
        self.last_eval = dict(data["last_eval"])


def train(
    cfg: Config, run_dir: Path, resume: bool = False, progress: bool = True, stop_after: int | None = None
) -> Trainer:
    """Train until ``cfg.total_decisions`` (or ``stop_after`` more updates, for tests)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = lock_run(run_dir)  # one process trains into a run folder at a time: before it writes there
    try:
        opponents = [*cfg.bot_shares, *cfg.eval_bots, *([cfg.teacher] if cfg.teacher else [])]
        announce(parts_for(opponents, env=False, batch=True))
        trainer = Trainer(cfg, run_dir)
        if resume:
            trainer.restore()
            recorded = read_saved_config(run_dir)
            budget = {k: getattr(cfg, k) for k in BUDGET_KEYS}
            if any(recorded.get(k) != v for k, v in budget.items()):  # resumed with a new budget
                write_saved_config(run_dir, {**recorded, **budget})
        else:
            write_saved_config(run_dir, cfg.to_dict())
        for name in (CHECKPOINT, POLICY):
            remove_stale_temporaries(run_dir / name)  # left by a save that was killed midway
        curve = Curve(run_dir / CURVE, curve_columns(cfg))
        curve.keep_until(trainer.update)  # rows an interrupted run wrote after its last save go
        with StopRequest() as stop:  # from here a Ctrl-C keeps the update in progress
            at = f"resuming {run_dir} at update {trainer.update:,} ({trainer.decisions:,} decisions)"
            if resume and trainer.decisions >= cfg.total_decisions:
                at = (f"{run_dir} finished at {trainer.decisions:,} decisions (total_decisions "
                      f"{cfg.total_decisions:,}): nothing to train; to train it further, --resume {run_dir} "
                      "total_decisions=MORE")  # fmt: skip
            said = at if resume else f"training into {run_dir}"
            print(f"{said} (TensorBoard: tensorboard --logdir {run_dir / 'tb'})", file=sys.stderr, flush=True)
            if cfg.teacher is not None and cfg.imitation_decisions >= cfg.total_decisions:
                print(warm_start_only(cfg), file=sys.stderr, flush=True)
            league = trainer.league
            if (
                league is not None
                and trainer.decisions < cfg.total_decisions
                and (
                    league.pending or league.due(trainer.decisions)  # stopped during or before an exploiter
                )
            ):
                trainer.train_exploiter(progress)
            _loop(trainer, cfg, run_dir, curve, progress, stop_after, stop)
    finally:
        lock.close()
    return trainer


def normalized(advantage: torch.Tensor) -> torch.Tensor:
    """A minibatch's advantages to mean 0 and standard deviation 1 (PPO's usual normalization);
    a minibatch of one decision, whose spread is undefined, is only centred (to 0)."""
    centred = advantage - advantage.mean()
    return centred / (advantage.std() + 1e-8) if advantage.numel() > 1 else centred


def warm_start_only(cfg: Config) -> str:
    """The warning of a run that ends in its warm start (allowed: imitation alone is an experiment)."""
    return (
        f"warning: this run is imitation only: its warm start (imitation_decisions "
        f"{cfg.imitation_decisions:,}) counts in total_decisions ({cfg.total_decisions:,}), so PPO never "
        f"starts; for PPO set total_decisions above {cfg.imitation_decisions:,}"
    )


def curve_columns(cfg: Config) -> list[str]:
    """``curve.csv``'s win-rate columns: the eval bots, the held-out mean, the newest exploiters."""
    return [*cfg.eval_bots, *(["heldout"] if cfg.eval_heldout else []),
            *(["exploiters"] if cfg.exploiter_every else [])]  # fmt: skip


class StopRequest:
    """Ctrl-C (SIGINT) or a scheduler's SIGTERM while training: the first asks the loop to save at
    the end of the update in progress and stop (``KeyboardInterrupt`` then, with the checkpoint on
    disk); a second one stops at once.  Only in the main thread, and only for a signal still at its
    default (a SIGINT that ``nohup`` or ``&`` made ignored stays ignored)."""

    SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                current = signal.getsignal(signum)
                if callable(current) or current == signal.SIG_DFL:
                    self._previous[signum] = signal.signal(signum, self._interrupt)
        return self

    def _interrupt(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        name = self.SIGNALS.get(signal.Signals(signum), "signal")
        print(f"\n{name}: saving at the end of this update ({name} again to stop at once)", file=sys.stderr)

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)


def _loop(
    trainer: Trainer, cfg: Config, run_dir: Path, curve: Curve, progress: bool, stop_after: int | None,
    stop: StopRequest,
) -> None:  # fmt: skip
    """:func:`train`'s updates, each followed by the run's periodic jobs: a snapshot joins the
    opponents, an evaluation, a save, a league's exploiter; :class:`Report` shows the numbers."""
    report = Report(run_dir, cfg, trainer, curve, progress)
    trainer.tick(counted=False)  # the time before the first update is setup, not training
    updates_done = 0
    try:
        while trainer.decisions < cfg.total_decisions and (stop_after is None or updates_done < stop_after):
            before = trainer.decisions
            stats = _update(trainer, run_dir)
            updates_done += 1
            report.update(stats)
            finished = trainer.decisions >= cfg.total_decisions or updates_done == stop_after
            if trainer.update % cfg.snapshot_every == 0:
                trainer.add_snapshot()
            if ((cfg.eval_every and trainer.update % cfg.eval_every == 0) or finished) and not stop.requested:
                trainer.last_eval.update(trainer.evaluations())
                report.evaluation(stats)
            if trainer.update % cfg.checkpoint_every == 0 or finished or stop.requested:
                trainer.tick()
                trainer.save()
                if stop.requested:
                    raise KeyboardInterrupt
            if trainer.league is not None and trainer.league.due(trainer.decisions) and not finished:
                trainer.tick()
                trainer.train_exploiter(progress)  # counts its own time into trainer.seconds
            report.progress(stats, trainer.decisions - before)
    finally:
        trainer.tick()
        report.close()


def _update(trainer: Trainer, run_dir: Path) -> dict[str, float]:
    """One update (:meth:`Trainer.step`); a divergence says which checkpoint is the last good one."""
    try:
        return trainer.step()
    except TrainingDivergedError as e:
        kept = run_dir / CHECKPOINT
        raise TrainingDivergedError(
            f"{e}; stopped without saving it. The last good checkpoint is {kept}"
            + (f" (update {trainer.saved_update})" if kept.is_file() else " (none was saved yet)")
            + ": lower learning_rate / ent_coef, or check the config"
        ) from None


class Report:
    """Where a run's numbers go: TensorBoard (``tb/``), the progress bar, ``curve.csv`` and its
    picture ``curve.png``."""

    def __init__(self, run_dir: Path, cfg: Config, trainer: Trainer, curve: Curve, progress: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self.trainer, self.curve = trainer, curve
        self.writer = SummaryWriter(str(run_dir / "tb"))
        self.bar = tqdm(total=cfg.total_decisions, initial=min(trainer.decisions, cfg.total_decisions),
                        unit="dec", disable=not progress, smoothing=0.1)  # fmt: skip

    @staticmethod
    def phase(stats: dict[str, float]) -> str:
        """``imitation`` (the warm start) or ``ppo``: which kind of update made ``stats``."""
        return "imitation" if "imitation_loss" in stats else "ppo"

    def update(self, stats: dict[str, float]) -> None:
        """An update's statistics, and the league's per-opponent scores, to TensorBoard."""
        t = self.trainer
        group = "imitation" if self.phase(stats) == "imitation" else "train"
        for key, value in stats.items():
            self.writer.add_scalar(f"{group}/{key}", value, t.decisions)
        for key, value in t.fold_league().items():
            self.writer.add_scalar(f"league/{key}", value, t.decisions)

    def evaluation(self, stats: dict[str, float]) -> None:
        """The latest evaluation to TensorBoard and a row of ``curve.csv``."""
        t = self.trainer
        for name, rate in t.last_eval.items():
            self.writer.add_scalar(f"eval/win_rate_vs_{name}", rate, t.decisions)
        self.curve.add(t.tick(), t.update, t.decisions, self.phase(stats), t.last_eval)
        from hanamikoji_env.training.plot import PICTURE, draw, read_curves

        draw(read_curves([self.curve.path]), self.curve.path.with_name(PICTURE))  # curve.png beside it

    def progress(self, stats: dict[str, float], decisions: int) -> None:
        """The bar moved by an update's ``decisions``, with its speed and the latest win rates."""
        imitating = self.phase(stats) == "imitation"
        self.bar.update(decisions)
        self.bar.set_postfix(
            dps=f"{stats['decisions_per_second']:.0f}",
            ent=f"{stats['entropy']:.2f}",
            **({"agree": f"{stats['agreement']:.2f}"} if imitating else {"kl": f"{stats['approx_kl']:.3f}"}),
            **{f"vs_{k[:4]}": f"{v:.2f}" for k, v in self.trainer.last_eval.items() if k in self.curve.bots},
        )

    def close(self) -> None:
        self.bar.close()
        self.writer.close()
