"""Rollouts on Ray (``backend: ray``): K actors, each a :class:`Collector` over a slice of the games.

The learner (:class:`training.ppo.Trainer`) runs the same PPO update as with
``backend: local``; only the collection moves.  Before every rollout the
learner puts the current weights (policy, and the oracle critic) in Ray's
object store once; each :class:`CollectorWorker` loads them, plays its
``num_envs / K`` games for ``rollout_steps`` steps on the CPU and returns its
rollout (with GAE) and its state.  The rollouts are joined along the env axis
in worker order, so a run is deterministic for a config and seed: worker ``k``
draws from generators seeded by ``(seed, k)``.

A worker that dies (killed, out of memory, a lost node) is replaced by a new
actor restored from the state its predecessor returned with its last rollout
(the learner keeps it), and the rollout is redone: the run goes on with the
same numbers as if nothing had happened, and no rollout is counted twice,
because the learner counts decisions and games from the rollouts it keeps.
After :data:`MAX_RESTARTS` restarts in one run the run stops with an error.

Ray is imported only here, only for ``backend: ray``.  ``ray_address: None``
starts a local Ray with ``num_workers`` CPUs; an address (``auto``,
``host:6379``) joins a running cluster (``ray start --head`` on one machine,
``ray start --address=HOST:6379`` on the others), whose machines need this
project installed (``pip install -e .``) in the same path; the ``training``
folder travels with the job as its working directory.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch

from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.training.collector import Collector
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.critic import OracleCritic, Values

START_TIMEOUT = 180
"""Seconds to wait for the workers to start (importing torch and the engine) before giving up."""
MAX_RESTARTS = 100
"""Worker restarts allowed in one run before it stops with an error."""
ROOT = Path(__file__).resolve().parents[1]
WORKING_DIR_EXCLUDES = [
    ".venv/", ".git/", "runs/", "hanamikoji_env/", "tests/", "docs/", "benchmarks/", "**/__pycache__/",
]  # fmt: skip
"""What a cluster job does not upload: the workers import the installed package, and need only
``training/`` (and ``configs/``, ``checkpoints/``) of this checkout."""
log = logging.getLogger(__name__)


def split(num_envs: int, workers: int) -> list[int]:
    """``num_envs`` games over ``workers`` as evenly as possible (the first ones get the extra)."""
    base, extra = divmod(num_envs, workers)
    return [base + (k < extra) for k in range(workers)]


def worker_seed(seed: int, index: int, stream: int) -> int:
    """Worker ``index``'s seed for generator ``stream``: independent of the other workers'."""
    return int(np.random.SeedSequence([seed, index, stream]).generate_state(1)[0])


def cpu_state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}


class CollectorWorker:
    """One Ray actor: a :class:`Collector` with CPU copies of the policy and the oracle critic."""

    def __init__(self, config: dict[str, Any], index: int, num_envs: int) -> None:
        torch.set_num_threads(1)  # one core per worker
        numba.set_num_threads(1)  # the bots' row threads too
        cfg = Config.from_dict(config, check_files=False)
        model = PolicyNet(cfg.hidden, cfg.layers, cfg.observation_version)
        critic = OracleCritic(cfg.hidden, cfg.layers) if cfg.critic == "oracle" else None
        self.critic = critic
        self.collector = Collector(
            cfg,
            num_envs,
            Values(model, critic, cfg.learning_rate),
            np.random.default_rng(worker_seed(cfg.seed, index, 2)),
            torch.Generator().manual_seed(worker_seed(cfg.seed, index, 1)),
            engine_seed=worker_seed(cfg.seed, index, 3),
            bot_seed=worker_seed(cfg.seed, index, 4),
        )

    def collect(
        self, weights: dict[str, Any], teacher_share: float | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """A rollout with ``weights`` (labelled by the teacher during the warm start:
        :meth:`Collector.collect`), and the worker's state after it (without the pool)."""
        self.collector.model.load_state_dict(weights["model"])
        if self.critic is not None:
            self.critic.load_state_dict(weights["critic"])
        buf = self.collector.collect(teacher_share)
        return buf, self.state()

    def add_snapshot(self, state_dict: dict[str, torch.Tensor]) -> None:
        net = PolicyNet(
            **self.collector.model.config, observation_version=self.collector.model.observation_version
        )
        net.load_state_dict(state_dict)
        self.collector.add_snapshot(net)

    def state(self) -> dict[str, Any]:
        state = self.collector.state()
        del state["pool"]  # the learner keeps the pool: it is the same in every worker
        return state

    def load(self, state: dict[str, Any]) -> None:
        self.collector.load(state)


class RayCollectors:
    """The learner's side: starts the workers, gathers their rollouts, restarts dead ones."""

    def __init__(self, cfg: Config, model: PolicyNet, critic: OracleCritic | None) -> None:
        import ray

        self.ray = ray
        if not ray.is_initialized():
            ray.init(
                address=cfg.ray_address,
                num_cpus=None if cfg.ray_address else cfg.num_workers,
                include_dashboard=False,
                runtime_env={"working_dir": str(ROOT), "excludes": WORKING_DIR_EXCLUDES}
                if cfg.ray_address
                else {"env_vars": {"PYTHONPATH": str(ROOT)}},
                logging_level=logging.WARNING,
            )
        self.cfg, self.model, self.critic = cfg, model, critic
        self.sizes = split(cfg.num_envs, cfg.num_workers)
        self.remote = ray.remote(num_cpus=1, max_restarts=0)(CollectorWorker)
        self.pool: list[dict[str, torch.Tensor]] = []
        """The snapshots every worker holds, for restarting one."""
        self.actors = [self._start(k, None) for k in range(cfg.num_workers)]
        try:
            self.states: list[dict[str, Any]] = ray.get(
                [a.state.remote() for a in self.actors], timeout=START_TIMEOUT
            )
            """Each worker's state at the start of the next rollout."""
        except ray.exceptions.GetTimeoutError:
            free = ray.available_resources().get("CPU", 0)
            raise RuntimeError(
                f"Ray did not start {cfg.num_workers} rollout workers (one CPU each) within "
                f"{START_TIMEOUT} s; the cluster has {free:g} CPUs free: lower num_workers or add nodes"
            ) from None
        self.restarts = 0

    def _start(self, index: int, state: dict[str, Any] | None) -> Any:
        actor = self.remote.remote(self.cfg.to_dict(), index, self.sizes[index])
        if state is not None:
            actor.load.remote({**state, "pool": self.pool})
        return actor

    def collect(self, teacher_share: float | None = None) -> dict[str, np.ndarray]:
        """Every worker's rollout, joined along the env axis in worker order."""
        weights = {"model": cpu_state(self.model)}
        if self.critic is not None:
            weights["critic"] = cpu_state(self.critic)
        ref = self.ray.put(weights)
        pending = [a.collect.remote(ref, teacher_share) for a in self.actors]
        parts = []
        for k in range(len(self.actors)):
            while True:
                try:
                    buf, state = self.ray.get(pending[k])
                    break
                except self.ray.exceptions.RayActorError as e:
                    self.restarts += 1
                    if self.restarts > MAX_RESTARTS:
                        raise RuntimeError(f"rollout workers died {self.restarts} times; last: {e}") from None
                    log.warning(
                        "rollout worker %d died; restarting it where it was and redoing its rollout", k
                    )
                    self.actors[k] = self._start(k, self.states[k])
                    pending[k] = self.actors[k].collect.remote(ref, teacher_share)
            self.states[k] = state
            parts.append(buf)
        return {key: np.concatenate([p[key] for p in parts], axis=1) for key in parts[0]}

    def add_snapshot(self, model: PolicyNet) -> None:
        snapshot = cpu_state(model)
        self.pool.append(snapshot)
        del self.pool[: -self.cfg.pool_size]
        self.ray.get([a.add_snapshot.remote(snapshot) for a in self.actors])

    def state(self, generators: bool = True) -> dict[str, Any]:
        """For checkpoints: every worker's state and the pool."""
        del generators  # workers always have their own
        return {"workers": list(self.states), "pool": list(self.pool)}

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`state`: the workers start again where the checkpoint left them."""
        if len(data.get("workers", [])) != len(self.actors):
            raise ValueError("the checkpoint was written by another backend or number of workers")
        self.pool = list(data["pool"])
        for actor in self.actors:
            self.ray.kill(actor)
        self.states = list(data["workers"])
        self.actors = [self._start(k, s) for k, s in enumerate(self.states)]
