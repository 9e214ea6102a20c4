"""The acting half of PPO self-play: rollouts of the batch engine against the run's opponents.

A :class:`Collector` owns a slice of the run's games (a :class:`BatchEngine`
of ``num_envs`` rows on the CPU), who plays the other seat of each
(:class:`training.selfplay.Opponents`), the shaping potentials and the
generators of collection.  :meth:`Collector.collect` plays ``rollout_steps``
engine steps with the current policy and returns the rollout with per-seat
GAE (:func:`gae`).  With ``backend: local`` the trainer has one collector that
shares its model and generators; with ``backend: ray`` each Ray worker has one
(``training/distributed.py``) with a copy of the weights.

:meth:`Collector.state` / :meth:`Collector.load` capture everything a
collector remembers between rollouts, so a run resumes exactly and a worker
that dies can be restarted where it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hanamikoji_env import rules
from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.rules import VALUES
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.critic import Values
from hanamikoji_env.training.imitation import Teacher
from hanamikoji_env.training.selfplay import Opponents
from hanamikoji_env.vector import BatchEngine


class Collector:
    """Rollouts of ``num_envs`` games: engine, opponents, shaping and generators."""

    def __init__(
        self,
        cfg: Config,
        num_envs: int,
        values: Values,
        rng: np.random.Generator,
        gen: torch.Generator,
        engine_seed: int,
        bot_seed: int,
    ) -> None:
        self.cfg, self.num_envs, self.values = cfg, num_envs, values
        self.rng = rng
        """Opponents, seats and bot seeds (the local trainer shares it for its minibatches)."""
        self.gen = gen
        """Action sampling (on the CPU, whatever the model's device)."""
        self.engine = BatchEngine(
            num_envs, engine_seed, cfg.round_limit, cfg.observation_version, variant=cfg.variant
        )
        self.opponents = Opponents(
            num_envs, cfg.pool_size, cfg.pool_share, cfg.bot_shares, bot_seed, cfg.round_limit
        )
        self.teacher = Teacher(cfg.teacher, bot_seed + 1, cfg.round_limit) if cfg.teacher else None
        """The warm start's teacher (``training/imitation.py``), or None."""
        self.obs, self.mask, self.to_play = self.engine.reset()
        self.rounds = np.ones(num_envs, dtype=np.int32)  # for shaping: the round each env is in
        self.potential = np.zeros((num_envs, 2), np.float32)  # each seat's shaping potential
        self.opponents.new_games(np.arange(num_envs), self.rng)

    @property
    def model(self) -> PolicyNet:
        return self.values.model

    def add_snapshot(self, model: PolicyNet) -> None:
        """``model`` (copied) joins the pool of past policies."""
        self.opponents.pool.add(model)

    def collect(self, teacher_share: float | None = None) -> dict[str, np.ndarray]:
        """One rollout of ``rollout_steps`` engine steps, with per-seat GAE.  ``teacher_share``
        (a float during the warm start): the teacher labels every learner decision (``target``)
        and its move is played in that share of them; the returns are the games' outcomes
        (``gae_lambda`` 1), the value targets of imitation."""
        cfg, values = self.cfg, self.values
        teach = teacher_share is not None and self.teacher is not None
        t_steps, n = cfg.rollout_steps, self.num_envs
        buf = {
            "obs": np.zeros((t_steps, n, self.obs.shape[1]), np.float32),
            "mask": np.zeros((t_steps, n, self.mask.shape[1]), np.int8),
            "action": np.zeros((t_steps, n), np.int64),
            "logp": np.zeros((t_steps, n), np.float32),
            "value": np.zeros((t_steps, n), np.float32),
            "learner": np.zeros((t_steps, n), bool),
            "seat": np.zeros((t_steps, n), np.int64),
            "reward": np.zeros((t_steps, n, 2), np.float32),
            "done": np.zeros((t_steps, n), bool),
        }
        if values.needs_other:
            buf["other"] = np.zeros_like(buf["obs"])  # the opponent's own observation
        if teach:
            buf["target"] = np.zeros((t_steps, n, self.mask.shape[1]), np.float32)
        for t in range(t_steps):
            seats = self.to_play.astype(np.int64)
            learner = self.opponents.is_learner(seats)
            actions = np.zeros(n, np.int64)
            rows = np.flatnonzero(learner)
            if values.needs_other:
                buf["other"][t] = self.engine.observe(1 - seats)[0]
            if rows.size:
                actions[rows], buf["logp"][t, rows], own = self._sample(
                    self.model, self.obs[rows], self.mask[rows]
                )
                other = buf["other"][t, rows] if values.needs_other else None
                buf["value"][t, rows] = values.of(self.obs[rows], self.mask[rows], other, own)
                if teach:
                    moves, buf["target"][t, rows] = self.teacher.targets(  # type: ignore[union-attr]
                        self.engine, self.obs, self.mask, rows, self.rng
                    )
                    if teacher_share:
                        played = self.rng.random(rows.size) < teacher_share
                        actions[rows[played]] = moves[played]
            others = np.flatnonzero(~learner)
            actions[others] = self.opponents.moves(
                others,
                self.obs,
                self.mask,
                rng=self.rng,
                sample=self._sample_snapshot_moves,
                engine=self.engine,
            )
            buf["obs"][t], buf["mask"][t] = self.obs, self.mask
            buf["action"][t], buf["learner"][t], buf["seat"][t] = actions, learner, seats
            self.obs, self.mask, self.to_play, rewards, done, _ = self.engine.step(actions)
            buf["reward"][t], buf["done"][t] = rewards + self._shaping(done), done
            if done.any():
                self.opponents.finished(np.flatnonzero(done), rewards)
                self.opponents.new_games(np.flatnonzero(done), self.rng)
                if self.teacher is not None:
                    self.teacher.new_games(np.flatnonzero(done))
        lam = 1.0 if teach else cfg.gae_lambda
        buf["advantage"], buf["return"] = gae(buf, self._bootstrap(), cfg.gamma, lam)
        return buf

    @torch.no_grad()
    def _sample(self, model: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, ...]:
        """Actions sampled from ``model``'s masked policy, their log-probabilities and the values."""
        device = next(model.parameters()).device
        logits, value = model(torch.as_tensor(obs, device=device), torch.as_tensor(mask, device=device))
        logp_all = torch.log_softmax(logits, -1).cpu()
        action = self._pick(logp_all)
        return action.numpy(), logp_all.gather(1, action[:, None]).squeeze(1).numpy(), value.cpu().numpy()

    def _sample_snapshot_moves(self, logits: torch.Tensor) -> np.ndarray:
        """How snapshot opponents play: actions sampled from their masked ``logits``."""
        return self._pick(torch.log_softmax(logits, -1).cpu()).numpy()

    def _pick(self, logp_all: torch.Tensor) -> torch.Tensor:
        """One action a row from log-probabilities, sampled on the CPU: one generator, any device."""
        return torch.multinomial(logp_all.exp(), 1, generator=self.gen).squeeze(1)

    def _bootstrap(self) -> np.ndarray:
        """``[N, 2]``: each seat's value of its own view of the position the rollout stopped in."""
        views = [self.engine.observe(np.full(self.num_envs, seat)) for seat in (0, 1)]
        return np.stack([self.values.of(*views[seat], views[1 - seat][0]) for seat in (0, 1)], axis=1)

    def _shaping(self, done: np.ndarray) -> np.ndarray:
        """Shaping rewards ``[N, 2]`` for this step: the change of each seat's potential."""
        if not self.cfg.shaping:
            return np.zeros((self.num_envs, 2), np.float32)
        rounds, markers = self.engine.markers()
        lead = np.zeros((self.num_envs, 2), np.float32)
        for seat in (0, 1):
            mine, theirs = markers == seat, markers == 1 - seat
            points = ((mine.astype(np.float32) - theirs) * np.array(VALUES, np.float32)).sum(1)
            lead[:, seat] = rules.lead(points, mine.sum(1) - theirs.sum(1))
        potential = np.where(done[:, None], 0.0, 0.5 * self.cfg.shaping * lead)  # 0 once the game is over
        scored = done | (rounds != self.rounds)
        shaped = np.where(scored[:, None], potential - self.potential, 0.0).astype(np.float32)
        self.potential = np.where(scored[:, None], np.where(done[:, None], 0.0, potential), self.potential)
        self.rounds = rounds
        return shaped

    # ------------------------------------------------------------- state ---

    def state(self, generators: bool = True) -> dict[str, Any]:
        """Everything this collector remembers between rollouts, as tensors and plain data
        (``generators``: its own generators too; the local one shares the trainer's)."""
        out: dict[str, Any] = {
            "engine": {
                k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v
                for k, v in self.engine.get_state().items()
            },
            **self.opponents.state(),
            "rounds": torch.as_tensor(self.rounds),
            "potential": torch.as_tensor(self.potential),
        }
        if self.teacher is not None:
            out["teacher_states"] = self.teacher.state()
        if generators:
            out["rng"] = self.rng.bit_generator.state
            out["torch_generator"] = self.gen.get_state()
        return out

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`state` (the generators too when it holds them)."""
        engine = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in data["engine"].items()}
        self.obs, self.mask, self.to_play = self.engine.set_state(engine)
        self.opponents.load(data, self.model.config, self.model.observation_version)
        self.rounds = data["rounds"].numpy().copy()
        self.potential = data["potential"].numpy().copy()
        if self.teacher is not None:
            self.teacher.load(data.get("teacher_states", []))
        if "rng" in data and "torch_generator" in data:
            self.rng.bit_generator.state = data["rng"]
            self.gen.set_state(data["torch_generator"])


def gae(
    buf: dict[str, np.ndarray], bootstrap: np.ndarray, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns ``[T, N]`` over each (env, seat) trajectory (module docstring).

    ``buf`` holds per engine step ``seat``, ``learner``, ``value``, ``reward`` (``[T, N, 2]``
    by seat) and ``done``; ``bootstrap[i, s]`` values seat ``s`` of env ``i`` after the last step.
    """
    t_steps, n = buf["seat"].shape
    idx = np.arange(n)
    next_value = bootstrap.astype(np.float32).copy()
    next_adv = np.zeros((n, 2), np.float32)
    pending = np.zeros((n, 2), np.float32)  # rewards waiting for the seat's previous decision
    alive = np.ones((n, 2), np.float32)  # 0 once the game ended after the seat's last decision
    adv = np.zeros((t_steps, n), np.float32)
    for t in reversed(range(t_steps)):
        done = buf["done"][t]
        # a game ended at this step: its final rewards reach the last decision of both seats
        next_value[done], next_adv[done], alive[done], pending[done] = 0.0, 0.0, 0.0, 0.0
        pending += buf["reward"][t]
        s, learner, value = buf["seat"][t], buf["learner"][t], buf["value"][t]
        c = alive[idx, s]
        delta = pending[idx, s] + gamma * next_value[idx, s] * c - value
        a = delta + gamma * lam * c * next_adv[idx, s]
        adv[t] = np.where(learner, a, 0.0)
        rows, seats = idx[learner], s[learner]
        next_value[rows, seats] = value[learner]
        next_adv[rows, seats] = a[learner]
        pending[rows, seats] = 0.0
        alive[rows, seats] = 1.0
    return adv, adv + buf["value"]
