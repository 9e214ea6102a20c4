"""The algorithm table: each algorithm trained from nothing for the same number of its own
environment decisions on one core, its snapshots scored along the way, the last one against four
opponents.

    python benchmarks/algorithms.py --algo ppo-v2 --decisions 2000000 --seed 0   # one row
    python benchmarks/algorithms.py --table runs/algorithms [MORE ...]           # the table of every row run
    python benchmarks/algorithms.py --table OUT [MORE ...] --plot curves.png     # and their curves, seeds as bands
    python benchmarks/algorithms.py --algo os-nfsp --decisions 2000000 --variant mini   # measured exactly
    python benchmarks/algorithms.py --table OUT --plot nc.png --metric nash_conv --variant mini
    python benchmarks/algorithms.py --keep runs/algorithms_2m/seed0   # into the table's record

A row trains in this process with one torch thread, in chunks, until ``--decisions`` of the
learner's environment decisions are done (the last chunk may go past by less than one chunk's
work; the count done is recorded), or, as a convenience no table row uses, until ``--minutes``
of wall time are spent.  After each chunk it keeps a snapshot player; about ``--points`` of them.
A stopped run of one of our PPO rows goes on from its last snapshot with ``--resume`` (the same
command otherwise); a finished row (its ``result.json``) is never overwritten.
Then every snapshot plays ``random`` and ``heuristic`` (``--curve-games`` mirrored games each)
for ``curve.csv`` (the training curves' format: hanamikoji-plot draws it), and the last one plays
``random``, ``heuristic``, ``search`` and the shipped agent (``pretrained``), ``--games``
mirrored games each, for ``result.json`` (win rates with 95% Wilson intervals, budget, decisions,
wall and CPU seconds, settings, command, ``core_speed``); a snapshot plays greedy, as an agent is
shipped, but an average policy (:attr:`Algo.average`), which plays sampled.  ``exploit_rows.py``
then measures each row's exploitability on the full game (lbr and rl), which ``--table`` shows.
The rows and their settings are :data:`ALGOS`; every learner starts from a random network and
plays itself (its snapshots), so the table compares algorithms, not teachers, except where a row
says ``warm`` (the imitation warm start from the heuristic, counted in its budget).

``--variant mini`` trains on the mini variant (``hanamikoji_env.rules.MINI``), small enough to
solve exactly: each snapshot, its policy as its learner defines it (sampled: a policy gradient's
policy, NFSP's, Deep CFR's and ESCHER's average policies; greedy: a Q-learner's), is measured with
no games at all: its NashConv (:func:`hanamikoji_env.exact.exploitability`, 0 at a Nash
equilibrium) and its expected score against ``random`` and ``heuristic``
(:func:`hanamikoji_env.exact.head_to_head`), in ``curve.csv`` (column ``nash_conv``) and
``result.json`` (``exact``); ``--table`` writes those rows as a table of their own.  Every row
learns both games.

``--keep OUT`` copies each finished row's ``result.json``, ``curve.csv`` and exploitability
estimates (a few KB; no snapshot) from ``runs/...`` into the same path under :data:`RESULTS`, the
table's committed record: rows run in separate sessions or on other machines make one table
there, and ``--table`` over it prints each row's command as it was run (``--out runs/...``).

Decisions are the same compute on any machine; minutes are not, so a ``--minutes`` row also
times this core on a fixed workload (the batch engine's random play at N = 1024, best of three
half-seconds: ``vector_speed.py``'s measure) and ``--table`` marks one whose core ran at other
than about :data:`REFERENCE_CORE` (the core of the older rows in docs/benchmark.md).

Each learner's decisions are the decisions it learns from: our PPO's and RLlib's, both seats'
(self-play); SB3's and CleanRL's, their agent's (the opponent's moves inside ``SingleAgentEnv``
not counted); Tianshou's, its collector's environment steps.  The ``os-`` rows are OpenSpiel's
learners on ``python_hanamikoji``'s information-state tensor
(``hanamikoji_env/training/openspiel_learners.py``) and count in their own unit: NFSP, decisions
of the game; ESCHER, states touched; Deep CFR, tree nodes walked (each a state of the game
stepped to).  NeuRD has no row: it cannot run on this game (that module's ``UNRUNNABLE``).

Usage: ``python benchmarks/algorithms.py --algo NAME --decisions N [--out runs/algorithms]
[--games 1000] [--seed 0]`` (``train`` extra; ``sb3`` for ``sb3-maskable-ppo``, ``ray`` for
``rllib-ppo``, ``openspiel`` for the ``os-`` rows).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from exploit_rows import DECISIONS as EXPLOIT_DECISIONS
from exploit_rows import GAMES as EXPLOIT_GAMES
from vector_speed import vector_rate

OPPONENTS = ("random", "heuristic", "search", "pretrained")
"""What the last snapshot of every row plays."""
CURVE_OPPONENTS = ("random", "heuristic")
DEFAULT_OUT = Path("runs/algorithms")
"""Where rows go unless ``--out`` says otherwise."""
RUNS = Path("runs")
"""Where rows run (ignored by git); :data:`RESULTS` mirrors its paths."""
RESULTS = Path(__file__).resolve().parent / "results"
"""The table's committed record (``--keep``): ``RESULTS/<path under runs>/<row>/`` holds a row's
:data:`KEPT` files; docs/benchmark.md's lines from 2026-12-07 on are ``--table`` over it."""
KEPT = ("result.json", "curve.csv", "exploit-lbr.json", "exploit-rl.json")
"""A row's files ``--keep`` copies (where present): its numbers, not its snapshots."""
DEFAULT_GAMES = 1000
"""Mirrored games a row's last snapshot plays each opponent unless ``--games`` says otherwise."""
DEFAULT_SEED = 0
CURVE_GAMES = 200
"""Mirrored games each snapshot plays each curve opponent unless ``--curve-games`` says otherwise."""
RISING_Z = 3.0
"""A row is *still rising* at its budget (``--table`` marks it ``(rising)``) where its curve against
the heuristic rose from half budget to the end, the seeds' mean, by at least this many standard
errors of the curve games' noise: the rows the table runs again at ten times the budget."""
REFERENCE_CORE = 4.37e6
""":func:`core_speed` (decisions/s) on the core the table's rows ran on: ``vector_speed.py``'s
``BatchEngine`` N=1024 on one core, the other core busy (docs/speed.md, 2026-12-04)."""
FULL, MINI = "full", "mini"
"""The games a row learns (``--variant``): the full game, or the mini variant solved exactly."""
BOTH = (FULL, MINI)
MAX_DECISIONS = 10**10
"""The largest ``--decisions`` taken (a year of the fastest row on one core)."""
SAME_CORE = 0.15
"""A row's core within this fraction of :data:`REFERENCE_CORE` counts as the table's core."""


def core_speed(seconds: float = 0.5, repeats: int = 3) -> float:
    """Decisions/s of the batch engine's random play at N = 1024 on this core, best of ``repeats``
    runs of ``seconds`` (after one step that compiles): how much a minute of a row buys here."""
    return max(vector_rate(1024, seconds) for _ in range(repeats))


def core_note(speed: float | None) -> str:
    """``" (core 0.40x)"`` where a row's core ran at other than the table's core, else ``""``
    (also for rows run before cores were timed)."""
    if speed is None or abs(speed / REFERENCE_CORE - 1) <= SAME_CORE:
        return ""
    return f" (core {speed / REFERENCE_CORE:.2f}x)"


@dataclass(frozen=True)
class Snapshot:
    """A player a row kept: its spec for the tournament, when and after how many decisions."""

    spec: str
    seconds: float
    decisions: int


@dataclass(frozen=True)
class Budget:
    """A row's budget: ``decisions`` of the learner's (``--decisions``), or, with ``--minutes``,
    wall time until ``time.perf_counter() >= deadline``; a snapshot about every ``every`` of its
    unit (decisions, or seconds)."""

    every: float
    decisions: int | None = None
    deadline: float | None = None

    def left(self, now: float, done: int) -> float:
        """What is left at ``now``, ``done`` decisions trained, in the budget's unit."""
        if self.decisions is not None:
            return self.decisions - done
        assert self.deadline is not None
        return self.deadline - now

    def spent(self, now: float, done: int) -> bool:
        return self.left(now, done) <= 0

    def due(self, now: float, last: float, done: int, last_done: int) -> bool:
        """A snapshot is due: ``every`` since the last one (at ``last``, ``last_done``), or the
        budget is spent."""
        gone = done - last_done if self.decisions is not None else now - last
        return gone >= self.every or self.spent(now, done)

    def share(self, now: float, done: int) -> float:
        """The next chunk, in the budget's unit: up to the next snapshot, or to the end."""
        return max(0.0, min(self.left(now, done), self.every))

    def chunks(self, now: float, done: int, per_decisions: float, per_seconds: float) -> int:
        """How many units of a learner's work (updates, rollouts) make the next chunk, one taking
        ``per_decisions`` decisions and ``per_seconds`` seconds: enough to reach the next snapshot
        (one short would leave a chunk of one unit, a snapshot all but repeating the last), at least one."""
        per = per_decisions if self.decisions is not None else per_seconds
        return max(1, math.ceil(self.share(now, done) / max(per, 1e-9) - 1e-9))


Save = Callable[[float, int], Path]
"""``save(seconds, decisions)``: the path (without suffix) a row writes its next snapshot to."""
Settings = dict[str, Any]
Train = Callable[[Path, Budget, int, Save, str, Settings], list[Snapshot]]
"""``train(folder, budget, seed, save, variant, changes)``: train on the game ``variant`` within
``budget``, the row's settings changed by ``changes`` (``--set``; only a :attr:`Algo.tunable` row
gets any); the snapshots kept."""


@dataclass(frozen=True)
class Algo:
    train: Train
    settings: dict[str, Any] | Callable[[], dict[str, Any]]
    """Everything the row sets, written into its result (a function where reading it needs the
    row's extra)."""
    extra: str = "train"
    """The package extra the row needs."""
    resumable: bool = False
    """``train`` goes on from the snapshots a stopped run of the row left (``--resume``)."""
    variants: tuple[str, ...] = (FULL,)
    """The games it learns (``--variant``): ``mini`` where its players can be measured exactly
    there (they say their move probabilities)."""
    tunable: bool = False
    """``--set KEY=VALUE`` changes its settings (a sweep): our PPO rows' (any of the training
    config's keys) and OpenSpiel's learners'."""
    sampled: bool = True
    """Its policy is a distribution (a policy gradient's, an average policy), measured on the mini
    variant sampled; a Q-learner's is its greedy choice."""
    average: bool = False
    """Its policy is an average policy (NFSP's, Deep CFR's, ESCHER's), defined only as a
    distribution: it plays sampled on the full game too, where the others play greedy, as an agent
    is shipped."""


def kept(folder: Path) -> list[Snapshot]:
    """The snapshots a row's earlier run left in ``folder/snapshots`` (``{seconds}s_{decisions}.pt``,
    as ``run_row``'s ``save`` names them), oldest first."""
    found = []
    for path in (folder / "snapshots").glob("*s_*.pt"):
        seconds, decisions = path.stem.split("s_")
        found.append(Snapshot(f"ckpt:{path}", float(seconds), int(decisions)))
    return sorted(found, key=lambda s: s.decisions)


# ---------------------------------------------------------------- our PPO ---

PPO_SETTINGS: dict[str, Any] = {
    "torch_threads": 1,
    "num_envs": 256,
    "rollout_steps": 64,
    "hidden": 256,
    "layers": 2,
    "learning_rate": 0.001,
    "anneal_lr": False,
    "update_epochs": 4,
    "num_minibatches": 16,
    "ent_coef": 0.01,
    "shaping": 1.0,
    "pool_share": 0.2,
    "bot_shares": {},
    "snapshot_every": 10,
    "pool_size": 20,
    "eval_every": 0,
    "checkpoint_every": 10**6,
}
"""Our PPO from nothing: self-play against itself and a pool of its snapshots, no bots."""
WARM = {"teacher": "heuristic", "imitation_decisions": 1_500_000}
"""The warm start of the ``-warm`` rows: the quick config's imitation of the heuristic."""


STUDY_PPO: dict[str, Any] = {
    "learning_rate": 2.5e-4,
    "anneal_lr": True,
    "clip_coef": 0.1,
    "ent_coef": 0.05,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "update_epochs": 4,
    "num_minibatches": 4,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "num_envs": 8,
    "rollout_steps": 128,
    "shaping": 0.0,
    "pool_share": 0.0,
}
"""PPO as "Reevaluating Policy Gradient Methods for Imperfect-Information Games" (Rudolph et al.,
ICLR 2026) found best on classical Phantom Tic-Tac-Toe, the longest of its games (their
``best_hyperparameters/min_final_expl_hparams/ppo/classical_phantom_ttt``: lowest exploitability
after 10M steps), in our trainer: pure self-play, the game's result as the only reward, the
learning rate annealed over the row's budget."""
STUDY_MMD: dict[str, Any] = {**STUDY_PPO, "magnet_coef": 0.05, "magnet_rate": 1.0}
"""Magnetic mirror descent as the same study found best on the same game (their ``mmd`` file: its
PPO settings plus ``kl_coef`` 0.05): the entropy bonus is the reverse KL to the uniform policy,
and the magnet, moved all the way to the policy after each update, is the last iterate that
collected the rollout (the mirror descent step's proximity)."""


def ppo(version: int, warm: bool, overrides: dict[str, Any] | None = None) -> Algo:
    settings = {**PPO_SETTINGS, "observation_version": version, **(WARM if warm else {}), **(overrides or {})}

    def train(
        folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
    ) -> list[Snapshot]:
        from hanamikoji_env.nn import load_checkpoint
        from hanamikoji_env.training.config import Config
        from hanamikoji_env.training.ppo import CHECKPOINT, POLICY
        from hanamikoji_env.training.ppo import train as train_ppo

        fixed = sorted({"seed", "run_name", "runs_dir", "variant", "total_decisions"} & changes.keys())
        if fixed:
            raise ValueError(
                f"--set cannot change {', '.join(fixed)}: the row sets it (--seed, --variant, the budget)"
            )
        run = {
            **settings,
            **changes,
            "seed": seed,
            "run_name": "run",
            "runs_dir": str(folder),
            "variant": variant,
            "total_decisions": 10**12,  # the row stops itself at its budget
        }
        if budget.decisions is not None and run.get("anneal_lr"):
            run["total_decisions"] = budget.decisions  # the learning rate reaches 0 at the budget
        cfg = Config.from_dict(run)
        snapshots = kept(folder)  # a stopped run's, where it goes on (--resume)
        done = snapshots[-1].decisions if snapshots else 0
        start, updates = time.perf_counter() - (snapshots[-1].seconds if snapshots else 0.0), 2
        policy = folder / "run" / POLICY

        def snapshot(decisions: int) -> Snapshot:
            """The run's saved policy, kept as the row's snapshot at ``decisions`` with its time."""
            seconds = time.perf_counter() - start
            path = save(seconds, decisions).with_suffix(".pt")
            shutil.copyfile(policy, path)
            return Snapshot(f"ckpt:{path}", seconds, decisions)

        while not snapshots or not budget.spent(time.perf_counter(), done):  # at least one chunk
            began, before = time.perf_counter(), done
            resume = (folder / "run" / CHECKPOINT).is_file()
            try:
                trainer = train_ppo(cfg, folder / "run", resume=resume, progress=False, stop_after=updates)
            except KeyboardInterrupt:  # saved where it stopped: a last snapshot there keeps its time
                stopped = int(load_checkpoint(policy)["decisions"]) if policy.is_file() else 0
                if stopped > done:
                    snapshot(stopped)
                raise
            done = trainer.decisions
            snapshots.append(snapshot(done))
            per_seconds = (time.perf_counter() - began) / updates  # an update, resume included
            updates = budget.chunks(time.perf_counter(), done, (done - before) / updates, per_seconds)
        return snapshots

    return Algo(train, settings, resumable=True, variants=BOTH, tunable=True)


# ------------------------------------------------------- sb3-contrib MaskablePPO ---

SB3_SETTINGS: dict[str, Any] = {
    "n_envs": 4,
    "n_steps": 512,
    "batch_size": 256,
    "n_epochs": 4,
    "learning_rate": 3e-4,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
    "net_arch": [128, 128],
    "opponents": {"self": 0.8, "random": 0.2},
}
"""training/train_sb3.py's model on SingleAgentEnv; ``self`` is the newest snapshot (random before
the first)."""


def sb3_train(
    folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
) -> list[Snapshot]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    from hanamikoji_env.bots.sb3 import SB3Bot
    from hanamikoji_env.training.train_sb3 import OpponentMix
    from hanamikoji_env.wrappers import SingleAgentEnv

    torch.set_num_threads(1)
    s = SB3_SETTINGS
    mixes = [OpponentMix(s["opponents"], seed=seed + i) for i in range(s["n_envs"])]
    venv = DummyVecEnv([lambda m=m: SingleAgentEnv(opponent=m, variant=variant) for m in mixes])
    venv.seed(seed)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=s["n_steps"], batch_size=s["batch_size"], n_epochs=s["n_epochs"],
        learning_rate=s["learning_rate"], gamma=s["gamma"], gae_lambda=s["gae_lambda"], ent_coef=s["ent_coef"],
        policy_kwargs={"net_arch": list(s["net_arch"])}, seed=seed, verbose=0,
    )  # fmt: skip
    model.set_logger(Logger(folder=None, output_formats=[]))  # SB3's default makes a /tmp folder a learn()
    model.hanamikoji_variant = variant  # saved in the zip's data: SB3Bot reads the game it learned
    rollout = s["n_envs"] * s["n_steps"]
    start, snapshots, rollouts = time.perf_counter(), [], 1
    while not snapshots or not budget.spent(time.perf_counter(), model.num_timesteps):  # at least one
        began = time.perf_counter()
        model.learn(rollouts * rollout, reset_num_timesteps=not snapshots)
        path = save(time.perf_counter() - start, model.num_timesteps).with_suffix(".zip")
        model.save(path)
        bot = SB3Bot(path)
        for mix in mixes:
            mix.snapshot = bot
        snapshots.append(Snapshot(f"ckpt:{path}", time.perf_counter() - start, model.num_timesteps))
        per_seconds = (time.perf_counter() - began) / rollouts
        rollouts = budget.chunks(time.perf_counter(), model.num_timesteps, rollout, per_seconds)
    return snapshots


# ------------------------------------------------------------- RLlib's PPO ---

RLLIB_SETTINGS: dict[str, Any] = {"hidden": 128, "layers": 2, "batch": 2000}
"""training/train_rllib.py's PPO (new API stack, action masking, both seats one policy, lr 3e-4,
4 epochs, minibatches of 256), one local CPU; each snapshot exported exactly to our format."""


def rllib_train(
    folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
) -> list[Snapshot]:
    import ray
    import torch

    from hanamikoji_env.nn import save_checkpoint
    from hanamikoji_env.rllib import POLICY_ID
    from hanamikoji_env.training.train_rllib import build_config, built, export_policy

    torch.set_num_threads(1)
    s = RLLIB_SETTINGS
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        with built(build_config(s["hidden"], s["layers"], None, seed, s["batch"], variant)) as algo:
            start, snapshots, steps = time.perf_counter(), [], 0
            # at least one snapshot: Ray's start may eat a whole budget of minutes
            while not snapshots or not budget.spent(time.perf_counter(), steps):
                last, last_steps = time.perf_counter(), steps
                steps = int(algo.train().get("num_env_steps_sampled_lifetime", steps))
                while not budget.due(time.perf_counter(), last, steps, last_steps):
                    steps = int(algo.train().get("num_env_steps_sampled_lifetime", steps))
                path = save(time.perf_counter() - start, steps).with_suffix(".pt")
                net = export_policy(algo.get_module(POLICY_ID), s["hidden"], s["layers"], variant)
                save_checkpoint(path, net, source="rllib")
                snapshots.append(Snapshot(f"ckpt:{path}", time.perf_counter() - start, steps))
    finally:
        ray.shutdown()
    return snapshots


# ------------------------------------------------------------ Tianshou DQN ---

TIANSHOU_DQN_SETTINGS: dict[str, Any] = {
    "hidden_sizes": [64],
    "lr": 1e-3,
    "gamma": 1.0,
    "target_update_freq": 100,
    "eps_training": 0.2,
    "envs": 4,
    "buffer": 50_000,
    "batch_size": 64,
    "env_steps_per_collect": 40,
    "gradient_steps_per_env_step": 0.1,
}
"""examples/tianshou_dqn.py: two masked DQN agents, one a seat, on the AEC env through Tianshou's
``PettingZooEnv``; each snapshot is both Q-networks as a ``.mlp`` (greedy on the legal actions,
as Tianshou's own policy plays at evaluation)."""


def tianshou_dqn_train(
    folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
) -> list[Snapshot]:
    import torch
    from tianshou.algorithm import MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, CollectStats
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    from hanamikoji_env.bots.mlp import save_mlp
    from hanamikoji_env.examples.tianshou_dqn import NewEntriesCheckedBuffer, dqn
    from hanamikoji_env.examples.tianshou_env import make, quiet_two_seat_stats, seed_all

    seed_all(seed)
    quiet_two_seat_stats()
    torch.set_num_threads(1)
    s = TIANSHOU_DQN_SETTINGS
    env = make()
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn(env), dqn(env)], env=env)
    envs = DummyVectorEnv([partial(make, variant)] * s["envs"])
    envs.seed(seed)
    collector = Collector[CollectStats](
        algorithm, envs, NewEntriesCheckedBuffer(s["buffer"], s["envs"]), exploration_noise=True
    )
    collector.reset()
    collector.collect(n_step=256)
    params = OffPolicyTrainerParams(
        training_collector=collector, test_collector=None, max_epochs=1, epoch_num_steps=2000,
        collection_step_num_env_steps=s["env_steps_per_collect"], test_step_num_episodes=0,
        batch_size=s["batch_size"], update_step_num_gradient_steps_per_sample=s["gradient_steps_per_env_step"],
        multi_agent_return_reduction=lambda rewards: rewards[:, 0], show_progress=False, verbose=False,
    )  # fmt: skip
    policies = algorithm.policy.policies
    nets = [policies[agent].model for agent in ("player_0", "player_1")]
    return tianshou_chunks(
        algorithm,
        params,
        256,
        budget,
        save,
        lambda path: save_mlp(path, nets, "tianshou-dqn", 1, variant=variant),
    )


def tianshou_chunks(
    algorithm: Any, params: Any, steps: int, budget: Budget, save: Save, export: Callable[[Path], None]
) -> list[Snapshot]:
    """Tianshou's ``run_training`` over ``params`` (one epoch of ``epoch_num_steps``) again and again
    within ``budget``; ``export(path)`` writes a snapshot about every ``budget.every`` (seconds, or
    decisions)."""
    start = last = time.perf_counter()
    snapshots: list[Snapshot] = []
    last_steps = steps
    while not snapshots or not budget.spent(time.perf_counter(), steps):  # at least one
        algorithm.run_training(params)
        steps += params.epoch_num_steps
        if budget.due(time.perf_counter(), last, steps, last_steps):
            last, last_steps = time.perf_counter(), steps
            path = save(last - start, steps).with_suffix(".mlp")
            export(path)
            snapshots.append(Snapshot(f"ckpt:{path}", last - start, steps))
    return snapshots


TIANSHOU_PPO_SETTINGS: dict[str, Any] = {
    "actor": "64-unit tanh MLP, masked logits",
    "critic": "64-unit tanh MLP",
    "lr": 1e-3,
    "gamma": 1.0,
    "envs": 4,
    "env_steps_per_collect": 500,
    "batch_size": 128,
    "repetitions": 2,
}
"""examples/tianshou_ppo.py: masked PPO, one network for both seats, on the AEC env through
Tianshou's ``PettingZooEnv``; each snapshot is the actor as a ``.mlp`` (tanh)."""


def tianshou_ppo_train(
    folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
) -> list[Snapshot]:
    import torch
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OnPolicyTrainerParams

    from hanamikoji_env.bots.mlp import save_mlp
    from hanamikoji_env.examples.tianshou_env import make, quiet_two_seat_stats
    from hanamikoji_env.examples.tianshou_ppo import build

    quiet_two_seat_stats()
    torch.set_num_threads(1)
    s = TIANSHOU_PPO_SETTINGS
    algorithm, actor = build(seed)
    envs = DummyVectorEnv([partial(make, variant)] * s["envs"])
    envs.seed(seed)
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(4000, s["envs"]))
    params = OnPolicyTrainerParams(
        training_collector=collector, test_collector=None, max_epochs=1, epoch_num_steps=4000,
        collection_step_num_env_steps=s["env_steps_per_collect"], test_step_num_episodes=0,
        batch_size=s["batch_size"], update_step_num_repetitions=s["repetitions"],
        multi_agent_return_reduction=lambda rewards: rewards[:, 0], show_progress=False, verbose=False,
    )  # fmt: skip

    def export(path: Path) -> None:
        save_mlp(path, [actor.net, actor.net], "tianshou-ppo", 1, activation="tanh", variant=variant)

    return tianshou_chunks(algorithm, params, 0, budget, save, export)


# ------------------------------------------------------ the CleanRL-style file ---


def cleanrl_settings() -> dict[str, Any]:
    """examples/cleanrl_ppo.py's ``Args`` as the file has them (``opponent: self``), but those the
    row sets itself (the seed, the game, the length)."""
    from dataclasses import asdict

    from hanamikoji_env.examples.cleanrl_ppo import Args

    return {k: v for k, v in asdict(Args()).items() if k not in ("seed", "variant", "updates")}


def cleanrl_train(
    folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
) -> list[Snapshot]:
    from hanamikoji_env.examples.cleanrl_ppo import Args, export, learn

    start = last = time.perf_counter()
    snapshots: list[Snapshot] = []
    last_done = 0
    for progress in learn(Args(seed=seed, updates=10**9, variant=variant).check()):
        now = time.perf_counter()
        if budget.due(now, last, progress.decisions, last_done):
            last, last_done = now, progress.decisions
            path = save(now - start, progress.decisions).with_suffix(".mlp")
            export(progress.agent, path, variant)
            snapshots.append(Snapshot(f"ckpt:{path}", now - start, progress.decisions))
            if budget.spent(now, progress.decisions):
                break
    return snapshots


# ---------------------------------------------------- OpenSpiel's learners ---


def openspiel(name: str) -> Algo:
    """OpenSpiel's ``name`` (``hanamikoji_env.training.openspiel_learners``) on the information-state
    tensor; its "decisions" are the learner's own unit (see that module's ``progress``)."""
    from hanamikoji_env.training import openspiel_learners as learners

    def train(
        folder: Path, budget: Budget, seed: int, save: Save, variant: str, changes: Settings
    ) -> list[Snapshot]:
        run = learners.learner(name, seed, variant=variant, settings=changes)
        start, snapshots, done = time.perf_counter(), [], 0
        while not snapshots or not budget.spent(time.perf_counter(), done):  # at least one chunk
            share = budget.share(time.perf_counter(), done)
            if budget.decisions is not None:
                run.train_until(decisions=done + max(1, int(share)))
            else:
                run.train_until(deadline=time.perf_counter() + share)
            done = run.progress()[run.unit]
            path = save(time.perf_counter() - start, done).with_suffix(".mlp")
            run.save(path)
            snapshots.append(Snapshot(f"ckpt:{path}", time.perf_counter() - start, done))
        (folder / "progress.json").write_text(json.dumps(run.progress()))
        return snapshots

    return Algo(
        train, lambda: learners.learner_settings(name), "openspiel", variants=BOTH, tunable=True, average=True
    )


ALGOS: dict[str, Algo] = {
    "ppo-v1": ppo(1, warm=False),
    "ppo-v2": ppo(2, warm=False),
    "ppo-v3": ppo(3, warm=False),
    "ppo-v1-warm": ppo(1, warm=True),
    "ppo-v2-warm": ppo(2, warm=True),
    "ppo-study-v1": ppo(1, warm=False, overrides=STUDY_PPO),
    "mmd-study-v1": ppo(1, warm=False, overrides=STUDY_MMD),
    "sb3-maskable-ppo": Algo(sb3_train, SB3_SETTINGS, "sb3", variants=BOTH),
    "rllib-ppo": Algo(rllib_train, RLLIB_SETTINGS, "ray", variants=BOTH),
    "tianshou-dqn": Algo(tianshou_dqn_train, TIANSHOU_DQN_SETTINGS, "tianshou", variants=BOTH, sampled=False),
    "tianshou-ppo": Algo(tianshou_ppo_train, TIANSHOU_PPO_SETTINGS, "tianshou", variants=BOTH),
    "cleanrl-ppo": Algo(cleanrl_train, cleanrl_settings, variants=BOTH),
    "os-nfsp": openspiel("nfsp"),
    "os-escher": openspiel("escher"),
    "os-deep-cfr": openspiel("deep-cfr"),
}
"""Every row: its trainer and settings (one line each here)."""

# ------------------------------------------------------------------ a row ---


def score(spec: str, opponents: tuple[str, ...], games: int, seed: int) -> dict[str, dict[str, Any]]:
    """``spec``'s win rate (draws half) and its 95% interval against each opponent, mirrored deals."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.tournament import run_tournament

    players = [parse_player(spec), *(parse_player(o) for o in opponents)]
    results = run_tournament(players, games, seed=seed, workers=1, progress=False, first_only=True)
    return {
        row["b"]: {"win_rate": row["win_rate"], "ci95": row["ci95"], "games": row["games"]}
        for row in results["pairs"]
        if row["a"] == results["players"][0]
    }


def row_folder(name: str, changes: Settings) -> str:
    """The folder a row's run goes in under ``--out``: its name, and its changed settings where
    it has any (``os-nfsp--anticipatory_param=0.2``), so a sweep's settings keep apart; nothing
    but letters, digits and ``._=-`` (a player spec names a snapshot in it: no commas)."""
    words = [f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in sorted(changes.items())]
    return "--".join([name, *("".join(c if c.isalnum() or c in "._=-" else "_" for c in w) for w in words)])


def parse_changes(words: list[str]) -> Settings:
    """``--set KEY=VALUE`` words as settings: each value read as JSON (``0.2``, ``[256,256]``,
    ``true``), else as a string; ``ValueError`` in one line for a word without ``=``."""
    changes: Settings = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ValueError(f"--set takes KEY=VALUE, got {word[:60]!r}")
        try:
            changes[key] = json.loads(value)
        except json.JSONDecodeError:
            changes[key] = value
    return changes


def exact_scores(spec: str, variant: str) -> dict[str, float]:
    """The player ``spec`` on ``variant`` (mini) measured exactly: its NashConv
    (:func:`hanamikoji_env.exact.exploitability`) and its expected score against each of
    :data:`CURVE_OPPONENTS` (:func:`hanamikoji_env.exact.head_to_head`, both seatings)."""
    from hanamikoji_env import exact
    from hanamikoji_env.bots.spec import parse_player

    player = parse_player(spec).make(0, None)
    found = {"nash_conv": exact.exploitability(player, variant).nash_conv}
    for o in CURVE_OPPONENTS:
        found[f"vs_{o}"] = exact.head_to_head(player, parse_player(o).make(0, None), variant)
    return found


def sampled(spec: str) -> str:
    """The snapshot ``ckpt:PATH`` as the player that samples its policy (``sampled:ckpt=PATH``)."""
    if not spec.startswith("ckpt:"):
        raise ValueError(f"cannot sample the player {spec}")
    return f"sampled:ckpt={spec[5:]}"


def run_row(
    name: str,
    out: Path,
    games: int,
    curve_games: int,
    points: int,
    seed: int,
    decisions: int | None = None,
    minutes: float | None = None,
    resume: bool = False,
    variant: str = FULL,
    changes: Settings | None = None,
) -> dict:
    """Train row ``name`` for ``decisions`` of its own (or ``minutes`` of wall time), score its
    snapshots and its last player; returns the result (also written to ``out/name/result.json``).
    ``resume``: a stopped run of the row in ``out`` goes on from its last snapshot (rows that can:
    :attr:`Algo.resumable`); its time so far counts as the snapshots' seconds say.  ``variant``
    ``mini``: the row learns the mini variant and every snapshot is measured exactly there (its
    NashConv and expected scores, :func:`exact_scores`), ``games`` and ``curve_games`` unused.
    ``changes``: settings of a :attr:`Algo.tunable` row changed (``--set``), the row then in a
    folder of its own (:func:`row_folder`)."""
    algo = ALGOS[name]
    changes = dict(changes or {})
    if changes and not algo.tunable:
        raise ValueError(f"{name} takes no --set: only our PPO rows and OpenSpiel's learners change settings")
    if variant not in algo.variants:
        raise ValueError(
            f"{name} learns the {' and '.join(algo.variants)} game only, not --variant {variant}"
        )
    folder = out / row_folder(name, changes)
    if (folder / "result.json").is_file():
        raise ValueError(f"{folder} holds a finished row: remove it or give another --out")
    if resume and not algo.resumable:
        raise ValueError(f"{name} cannot go on from a stopped run: remove {folder} and run it again")
    if folder.exists() and not resume:
        raise ValueError(
            f"{folder} holds a stopped row: --resume goes on with it"
            if algo.resumable
            else f"{folder} holds a stopped row: remove it or give another --out"
        )
    left = kept(folder) if resume else []
    if resume and not left:
        raise ValueError(f"--resume: {folder} holds no snapshot of a stopped run to go on from")
    (folder / "snapshots").mkdir(parents=True, exist_ok=resume)
    speed = core_speed()
    print(
        f"this core: {speed / 1e6:.2f}M decisions/s of the batch engine, {speed / REFERENCE_CORE:.2f}x the "
        f"table's core ({REFERENCE_CORE / 1e6:.2f}M)"
        + ("" if minutes is None or not core_note(speed) else ": its wall time is not the table's compute"),
        file=sys.stderr,
        flush=True,
    )

    cpu_file = folder / "cpu_seconds.json"  # snapshot's decisions -> CPU seconds up to it, kept for --resume
    spent: dict[str, float] = json.loads(cpu_file.read_text()) if left and cpu_file.is_file() else {}
    cpu_before = spent.get(str(left[-1].decisions)) if left else 0.0  # None: the stopped run kept none

    def save(seconds: float, decisions: int) -> Path:
        if cpu_before is not None:
            spent[str(decisions)] = round(cpu_before + time.process_time() - cpu, 1)
            cpu_file.write_text(json.dumps(spent, indent=1) + "\n")
        return folder / "snapshots" / f"{int(seconds):06d}s_{decisions}"

    began, cpu = time.perf_counter(), time.process_time()
    if decisions is not None:
        budget = Budget(every=decisions / points, decisions=decisions)
    else:
        assert minutes is not None
        budget = Budget(
            every=minutes * 60 / points, deadline=began + minutes * 60 - (left[-1].seconds if left else 0.0)
        )
    try:
        snapshots = algo.train(folder, budget, seed, save, variant, changes)
    except ImportError as e:
        if not resume:
            shutil.rmtree(folder)
        raise ValueError(
            f"{name} needs the {algo.extra!r} extra: pip install 'hanamikoji-env[{algo.extra}]' ({e})"
        ) from None
    except ValueError:  # refused before training (a learner that cannot run here): no row left
        if not resume:  # a stopped run's snapshots are kept
            shutil.rmtree(folder)
        raise
    trained = time.perf_counter() - began + (left[-1].seconds if left else 0.0)
    trained_cpu = None if cpu_before is None else cpu_before + time.process_time() - cpu
    if not snapshots:
        raise RuntimeError(f"{name} kept no snapshot")
    exact = variant != FULL
    # the policy as its learner defines it: on the full game greedy as shipped, but an average policy
    measured = sampled if (algo.sampled if exact else algo.average) else (lambda spec: spec)
    with (folder / "curve.csv").open("w", newline="") as f:  # hanamikoji-plot's columns
        writer = csv.writer(f)
        columns = [*(f"vs_{o}" for o in CURVE_OPPONENTS), *(["nash_conv"] if exact else [])]
        writer.writerow(["seconds", "update", "decisions", "phase", *columns])
        for k, snap in enumerate(snapshots):
            if exact:
                found = last_exact = exact_scores(measured(snap.spec), variant)
            else:
                rates = score(measured(snap.spec), CURVE_OPPONENTS, curve_games, seed)
                found = {f"vs_{o}": rates[o]["win_rate"] for o in CURVE_OPPONENTS}
            digits = 5 if exact else 3
            writer.writerow([f"{snap.seconds:.1f}", k + 1, snap.decisions, name,
                             *(f"{found[c]:.{digits}f}" for c in columns)])  # fmt: skip
            f.flush()
    last = snapshots[-1]
    progress = folder / "progress.json"
    result = {
        "algo": name,
        "variant": variant,
        "progress": json.loads(progress.read_text()) if progress.is_file() else None,
        "budget_decisions": decisions,
        "minutes": minutes,
        "trained_seconds": round(trained, 1),
        "trained_cpu_seconds": None if trained_cpu is None else round(trained_cpu, 1),
        "resumed_at": left[-1].decisions if left else None,
        "core_speed": round(speed),
        "decisions": last.decisions,
        "snapshots": len(snapshots),
        "player": measured(last.spec),
        "games": games,
        "curve_games": None if exact else curve_games,
        "seed": seed,
        "changes": changes,
        "settings": {**(algo.settings() if callable(algo.settings) else algo.settings), **changes},
        "command": " ".join(["python benchmarks/algorithms.py", *sys.argv[1:]]),
    }
    if exact:  # measured exactly: no games, no intervals
        result.update(games=None, exact=last_exact)
    else:
        result["scores"] = score(result["player"], OPPONENTS, games, seed)
    (folder / "result.json").write_text(json.dumps(result, indent=2))
    return result


def climb(
    curve: Path, total: float, column: str = "seconds", metric: str = "vs_heuristic"
) -> tuple[float, float]:
    """The curve's ``metric`` (the win rate against the heuristic, the same 200-game measure; or
    a mini row's ``nash_conv``) at the snapshot nearest half of ``total`` (of its ``column``:
    seconds, or decisions) and at its last, to show a row still climbing."""
    with curve.open() as f:
        points = [(float(r[column]), float(r[metric])) for r in csv.DictReader(f)]
    half = min(points, key=lambda p: abs(p[0] - total / 2))
    return half[1], points[-1][1]


def rising(trends: list[tuple[float, float]], games: list[int]) -> bool:
    """Whether the seeds' curves (each a win rate at half budget and at the end, :func:`climb`,
    over ``games`` a point) rose by at least :data:`RISING_Z` standard errors of their games'
    noise, on average over the seeds."""
    rise = sum(end - half for half, end in trends) / len(trends)
    noise = sum(h * (1 - h) / n + e * (1 - e) / n for (h, e), n in zip(trends, games, strict=True))
    return rise > 0 and rise >= RISING_Z * math.sqrt(noise) / len(trends)


def row_command(result: dict, out: Path) -> str:
    """The command that runs the row ``result`` again into the folder ``out`` it was found in:
    ``--out`` only where ``out`` is not the default, ``--games``/``--curve-games``/``--seed`` only
    where the row's are not (so the default rows read short and every other row can be rerun as
    printed)."""
    budget = (
        f"--decisions {result['budget_decisions']}"
        if result.get("budget_decisions")
        else f"--minutes {result['minutes']:g}"
    )
    words = ["python benchmarks/algorithms.py", f"--algo {result['algo']}", budget]
    if result.get("variant", FULL) != FULL:
        words.append(f"--variant {result['variant']}")
    for key, value in sorted((result.get("changes") or {}).items()):
        words.append("--set " + shlex.quote(f"{key}={json.dumps(value, separators=(',', ':'))}"))
    if out != DEFAULT_OUT:
        words.append(f"--out {out.as_posix()}")
    defaults = (("--games", "games", DEFAULT_GAMES), ("--curve-games", "curve_games", CURVE_GAMES),
                ("--seed", "seed", DEFAULT_SEED))  # fmt: skip
    for option, key, default in defaults:
        if result.get(key, default) not in (None, default):  # a mini row plays no games
            words.append(f"{option} {result[key]}")
    return " ".join(words)


def keep(*outs: Path) -> list[Path]:
    """Copy each finished row under the folders ``outs`` (each under :data:`RUNS`) into the same
    path under :data:`RESULTS`: its :data:`KEPT` files.  Every row is checked before any file is
    copied; a file kept before with other contents (another run of that row and seed) is refused,
    never overwritten.  Returns the files newly copied (a file kept before as it is: none)."""
    plan = []
    for out in outs:
        try:
            under = out.resolve().relative_to(RUNS.resolve())
        except ValueError:
            raise ValueError(f"--keep takes folders of rows under {RUNS}/, not {out}") from None
        rows = sorted(p.parent for p in out.glob("*/result.json"))
        if not rows:
            raise ValueError(f"{out} holds no finished row (its result.json)")
        for row in rows:
            for name in KEPT:
                source, target = row / name, RESULTS / under / row.name / name
                if not source.is_file():
                    continue
                if target.is_file() and target.read_bytes() != source.read_bytes():
                    raise ValueError(f"{target} holds another run's {name}: remove it to keep {source}")
                plan.append((source, target))
    copied = []
    for source, target in plan:
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied.append(target)
    return copied


def origin(out: Path) -> Path:
    """The folder a row found in ``out`` ran in: for the record (:data:`RESULTS`), the same path
    under :data:`RUNS`; any other folder, itself."""
    try:
        return RUNS / out.resolve().relative_to(RESULTS)
    except ValueError:
        return out


def table(*outs: Path) -> str:
    """The markdown tables of every ``result.json`` under the folders ``outs``: the full game's
    rows (win rates), then, where there are any, the mini variant's (measured exactly); each by
    row, then budget (a row run again for longer, e.g. still climbing, is a line of its own).  The
    seeds of one row at one decision budget (in folders of their own) make one line: each number
    is their mean with the seeds' range, the command names every seed.  A budget in minutes
    spent on a core of another speed than the older rows' says how fast (:func:`core_note`)."""
    groups: dict[tuple, list[tuple[Path, dict]]] = {}
    for out in outs:
        for path in out.glob("*/result.json"):
            r = json.loads(path.read_text())
            r["exploit"] = {  # benchmarks/exploit_rows.py's estimates, where measured
                m: json.loads(e.read_text())
                for m in ("lbr", "rl")
                if (e := path.parent / f"exploit-{m}.json").is_file()
            }
            changes = json.dumps(r.get("changes") or {}, sort_keys=True)
            key = (
                r.get("variant", FULL),
                r["algo"],
                changes,
                r.get("budget_decisions") or 0,
                r.get("minutes") or 0,
            )
            if not r.get("budget_decisions"):
                key += (str(path),)  # minutes are no common budget: each row alone
            groups.setdefault(key, []).append((path, r))
    full = [(k[1:], v) for k, v in sorted(groups.items()) if k[0] == FULL]
    mini = [(k[1:], v) for k, v in sorted(groups.items()) if k[0] != FULL]
    parts = []
    if full or not mini:
        head = "| algorithm | budget | seeds | decisions | " + " | ".join(f"vs {o}" for o in OPPONENTS)
        head += f" | lbr, {EXPLOIT_GAMES} games | rl, {EXPLOIT_DECISIONS / 1e6:g}M decisions"
        head += " | heuristic, half budget → end (curve) | command |"
        lines = [head, "|---" * (8 + len(OPPONENTS)) + "|"]
        lines += [
            _line(runs, [(o, lambda x, o=o: x["scores"][o]) for o in OPPONENTS], "vs_heuristic", exploit=True)
            for _, runs in full
        ]
        parts.append("\n".join(lines))
    if mini:
        head = "| algorithm (mini variant) | budget | seeds | decisions | NashConv | " + " | ".join(
            f"vs {o}" for o in CURVE_OPPONENTS
        )
        head += " | NashConv, half budget → end | command |"
        lines = [head, "|---" * (7 + len(CURVE_OPPONENTS)) + "|"]
        metrics = [("nash_conv", lambda x: x["exact"]["nash_conv"])]
        metrics += [(o, lambda x, o=o: x["exact"][f"vs_{o}"]) for o in CURVE_OPPONENTS]
        lines += [_line(runs, metrics, "nash_conv") for _, runs in mini]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _line(
    runs: list[tuple[Path, dict]],
    metrics: list[tuple[str, Callable[[dict], Any]]],
    trend: str,
    exploit: bool = False,
) -> str:
    """One line of :func:`table`: the seeds ``runs`` of one row and budget; each metric a win rate
    with its interval (one seed, games played), an exact number (one seed, measured exactly), or
    the seeds' mean and range; ``exploit``: then lbr's and rl's estimates (:func:`exploit_cell`);
    ``trend``, the curve's column shown at half budget and the end."""
    runs = sorted(runs, key=lambda pr: pr[1].get("seed", DEFAULT_SEED))
    r = runs[0][1]
    digits = 4 if trend == "nash_conv" else 3
    cells = []
    for _, get in metrics:
        values = [get(x) for _, x in runs]
        if len(runs) > 1:
            rates = [v["win_rate"] if isinstance(v, dict) else v for v in values]
            cells.append(
                f"{sum(rates) / len(rates):.{digits}f} ({min(rates):.{digits}f}-{max(rates):.{digits}f})"
            )
        elif isinstance(values[0], dict):
            v = values[0]
            cells.append(f"{v['win_rate']:.3f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]")
        else:
            cells.append(f"{values[0]:.{digits}f}")
    if exploit:
        cells += [exploit_cell([x["exploit"].get(m) for _, x in runs], m) for m in ("lbr", "rl")]
    decisions = round(sum(x["decisions"] for _, x in runs) / len(runs))
    if r.get("budget_decisions"):
        budget = f"{r['budget_decisions']:,} decisions"
        trends = [climb(p.parent / "curve.csv", x["budget_decisions"], "decisions", trend) for p, x in runs]
    else:
        budget = f"{r['minutes']:g} min{core_note(r.get('core_speed'))}"
        trends = [climb(p.parent / "curve.csv", x["trained_seconds"], metric=trend) for p, x in runs]
    half, end = (sum(t[i] for t in trends) / len(trends) for i in (0, 1))
    commands = "; ".join(f"`{row_command(x, origin(p.parent.parent))}`" for p, x in runs)
    seeds = ", ".join(str(x.get("seed", DEFAULT_SEED)) for _, x in runs)
    trend_cell = f"{half:.{digits - 1}f} → {end:.{digits - 1}f}"
    if trend == "vs_heuristic" and rising(trends, [x.get("curve_games") or CURVE_GAMES for _, x in runs]):
        trend_cell += " (rising)"
    changed = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted((r.get("changes") or {}).items()))
    name = f"{r['algo']} ({changed})" if changed else r["algo"]
    return "| " + " | ".join([name, budget, seeds, f"{decisions:,}", *cells, trend_cell, commands]) + " |"


def exploit_cell(found: list[dict | None], method: str) -> str:
    """A row's ``method`` estimates over its seeds (None: a seed not measured): one seed's score
    with its interval, or the seeds' mean and range, "(k of n seeds)" where some are missing, the
    budget where it is not the column's; "cannot apply" where the method refused the player."""
    done = [f for f in found if f is not None]
    if not done:
        return "not measured"
    if any("refused" in f for f in done):
        return "cannot apply"
    scores = [f["br_score"] for f in done]
    if len(done) == 1:
        low, high = done[0]["ci95"]
        cell = f"{scores[0]:.3f} [{low:.3f}, {high:.3f}]"
    else:
        cell = f"{sum(scores) / len(scores):.3f} ({min(scores):.3f}-{max(scores):.3f})"
    if len(done) < len(found):
        cell += f" ({len(done)} of {len(found)} seeds)"
    budgets = {f["games"] if method == "lbr" else f["decisions"] for f in done}
    if budgets != {EXPLOIT_GAMES if method == "lbr" else EXPLOIT_DECISIONS}:
        unit = "games" if method == "lbr" else "decisions"
        cell += " at " + "/".join(f"{b:,}" for b in sorted(budgets)) + f" {unit}"
    return cell


MAX_CURVES = 8
"""Curves a panel of :func:`plot` holds at most: more are not told apart by colour."""


METRICS = {
    "vs_heuristic": "Win rate against heuristic",
    "vs_random": "Win rate against random",
    "nash_conv": "NashConv",
    "exploit": "Exploitability on the full game",
}
"""What ``--plot`` draws (``--metric``): a curve column (NashConv is the mini rows' alone), or
``exploit``: each full-game row's lbr and rl estimates (``exploit_rows.py``), no curve."""


def plot(path: Path, metric: str, variant: str, *outs: Path) -> int:
    """One figure of ``metric`` (:data:`METRICS`) over the decisions trained, for the rows of
    ``variant``: a curve a row at a decision budget, the seeds' mean, their range as a band; at most
    :data:`MAX_CURVES` rows a panel, panels side by side.  Returns the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if metric == "nash_conv" and variant == FULL:
        raise ValueError("NashConv is measured on the mini variant's rows: give --variant mini")
    if metric == "exploit":
        if variant != FULL:
            raise ValueError("--metric exploit is the full game's (the mini rows' is nash_conv)")
        return plot_exploit(path, *outs)
    rows: dict[str, list[list[tuple[float, float]]]] = {}
    for out in outs:
        for result in sorted(out.glob("*/result.json")):
            r = json.loads(result.read_text())
            if not r.get("budget_decisions") or r.get("variant", FULL) != variant:
                continue  # a wall-time row has no common axis with the others
            with (result.parent / "curve.csv").open() as f:
                curve = [(float(c["decisions"]), float(c[metric])) for c in csv.DictReader(f)]
            rows.setdefault(result.parent.name, []).append(curve)
    if not rows:
        raise ValueError(f"no {variant} row budgeted in decisions under " + ", ".join(map(str, outs)))
    measure = (
        "exact, each policy as its learner defines it" if variant != FULL else "200 mirrored games a point"
    )
    names = sorted(rows)
    panels = [names[k : k + MAX_CURVES] for k in range(0, len(names), MAX_CURVES)]
    # one y axis for all panels: a curve is read against those in the other panel too
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.5), squeeze=False, sharey=True)
    for ax, panel in zip(axes[0], panels, strict=True):
        for name in panel:
            seeds = rows[name]
            grid = np.linspace(max(c[0][0] for c in seeds), min(c[-1][0] for c in seeds), 50)
            ys = np.array([np.interp(grid, *zip(*c, strict=True)) for c in seeds])
            label = f"{name} ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})"
            (line,) = ax.plot(grid, ys.mean(axis=0), label=label)
            ax.fill_between(grid, ys.min(axis=0), ys.max(axis=0), color=line.get_color(), alpha=0.2)
        ax.set_xlabel("environment decisions trained (the learner's own)")
        ax.set_ylabel(METRICS[metric] + (" (0 at a Nash equilibrium)" if metric == "nash_conv" else ""))
        if metric == "nash_conv":
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    game = "the mini variant" if variant != FULL else "the full game"
    fig.suptitle(
        f"{METRICS[metric]} on {game}\n{measure}; the seeds' mean, their range as a band", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return len(panels)


def plot_exploit(path: Path, *outs: Path) -> int:
    """One panel a method (lbr, rl): each full-game row's estimate at a decision budget, a line of
    its own, every seed a point with its 95% interval, their mean a bar; a refused or unmeasured
    row named with why.  Returns the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found: dict[str, dict[str, list[dict]]] = {}
    for out in outs:
        for result in sorted(out.glob("*/result.json")):
            r = json.loads(result.read_text())
            if not r.get("budget_decisions") or r.get("variant", FULL) != FULL:
                continue
            row = found.setdefault(f"{result.parent.name} ({r['budget_decisions'] / 1e6:g}M)", {})
            for method in ("lbr", "rl"):
                e = result.parent / f"exploit-{method}.json"
                if e.is_file():
                    row.setdefault(method, []).append(json.loads(e.read_text()))
    if not any(found.values()):
        raise ValueError("no row measured by benchmarks/exploit_rows.py under " + ", ".join(map(str, outs)))
    names = sorted(found, reverse=True)  # the first name at the top
    budgets = {
        "lbr": f"{EXPLOIT_GAMES} games",
        "rl": f"a fresh PPO exploiter, {EXPLOIT_DECISIONS / 1e6:g}M decisions",
    }
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.45 * len(names) + 1.8), sharey=True, squeeze=False)
    for ax, method in zip(axes[0], ("lbr", "rl"), strict=True):
        for y, name in enumerate(names):
            got = found[name].get(method, [])
            why = next((g["refused"] for g in got if "refused" in g), None)
            if why is not None:
                version = re.search(r"version-(\d+) target", why)
                label = f"cannot apply: observation version {version.group(1)}" if version else "cannot apply"
                ax.text(0.5, y, label, va="center", ha="center", fontsize=7)
                continue
            for g in got:
                low, high = g["ci95"]
                ax.errorbar(g["br_score"], y, xerr=[[g["br_score"] - low], [high - g["br_score"]]], fmt="o",
                            color="tab:blue", alpha=0.6, markersize=4, capsize=2)  # fmt: skip
            if got:
                ax.plot([sum(g["br_score"] for g in got) / len(got)] * 2, [y - 0.3, y + 0.3], color="black")
        ax.axvline(0.5, color="grey", linestyle=":", linewidth=1)
        ax.set_xlim(0.0, 1.0)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_xlabel("the best response's score against the row's player (0.5: no hole found)")
        ax.set_title(f"{method}: {budgets[method]}", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(
        "Exploitability on the full game: lower bounds, every seed a point with its 95% interval, "
        "their mean a bar",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return 2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algo", choices=sorted(ALGOS), help="the row to run")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--decisions", type=int,
        help="the training budget: the learner's own environment decisions (the table's: 2,000,000 and "
        "20,000,000)",
    )  # fmt: skip
    budget.add_argument(
        "--minutes", type=float, help="a wall-clock budget instead (a convenience: no table row uses it)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where rows go")
    parser.add_argument(
        "--games", type=int, default=DEFAULT_GAMES, help="mirrored games against each opponent"
    )
    parser.add_argument(
        "--curve-games", type=int, default=CURVE_GAMES, help="games per curve point and opponent"
    )
    parser.add_argument("--points", type=int, default=8, help="snapshots over the budget (about)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--resume", action="store_true",
        help="go on with the row's stopped run in --out from its last snapshot (our PPO rows)",
    )  # fmt: skip
    parser.add_argument(
        "--table", type=Path, nargs="+", metavar="OUT", help="print the table of the rows in these folders"
    )
    parser.add_argument(
        "--keep", type=Path, nargs="+", metavar="OUT",
        help=f"copy the finished rows in these folders under {RUNS}/ into the table's record "
        "(benchmarks/results/): their numbers, not their snapshots",
    )  # fmt: skip
    parser.add_argument(
        "--plot", type=Path, metavar="PNG",
        help="with --table: also draw the decision rows' --metric over decisions (the --variant's rows), "
        "seeds as bands",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="change one of the row's settings (our PPO rows, OpenSpiel's learners; a JSON value), again for more",
    )  # fmt: skip
    parser.add_argument("--metric", choices=sorted(METRICS), default="vs_heuristic", help="what --plot draws")
    parser.add_argument(
        "--variant", choices=(FULL, MINI), default=FULL,
        help="the game the row learns (mini: measured exactly, NashConv and exact scores); with --plot, "
        "the rows drawn",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.plot is not None and args.table is None:
        parser.error("--plot draws the rows --table reads: give --table OUT ... too")
    if args.keep is not None:
        try:
            copied = keep(*args.keep)
        except ValueError as e:
            parser.error(str(e))
        print(f"kept {len(copied)} new file{'' if len(copied) == 1 else 's'} in {RESULTS}")
        return
    if args.table is not None:
        print(table(*args.table))
        if args.plot is not None:
            try:
                panels = plot(args.plot, args.metric, args.variant, *args.table)
            except ValueError as e:
                parser.error(str(e))
            print(f"drawn: {args.plot} ({panels} panel{'s' if panels > 1 else ''})")
        return
    if args.algo is None:
        parser.error("give --algo NAME (one of " + ", ".join(sorted(ALGOS)) + ") or --table OUT")
    if args.decisions is None and args.minutes is None:
        parser.error("give the budget: --decisions N (the table's: 2000000 or 20000000) or --minutes M")
    if args.decisions is not None and not 1 <= args.decisions <= MAX_DECISIONS:
        parser.error(f"--decisions must be in [1, {MAX_DECISIONS:,}], got {args.decisions}")
    if args.minutes is not None and not args.minutes > 0:
        parser.error(f"--minutes must be positive, got {args.minutes}")
    if not args.points >= 1:
        parser.error(f"--points must be at least 1, got {args.points}")
    for option, value in (("--games", args.games), ("--curve-games", args.curve_games)):
        if value < 2 or value % 2:
            parser.error(f"{option} must be an even number of at least 2 (mirrored deals), got {value}")
    try:
        changes = parse_changes(args.set)
    except ValueError as e:
        parser.error(str(e))
    try:
        result = run_row(
            args.algo, args.out, args.games, args.curve_games, args.points, args.seed,
            decisions=args.decisions, minutes=args.minutes, resume=args.resume, variant=args.variant,
            changes=changes,
        )  # fmt: skip
    except (ValueError, ImportError) as e:
        parser.error(str(e))
    except KeyboardInterrupt:  # Ctrl-C, or a SIGTERM our PPO rows turn into one after a save
        folder = args.out / row_folder(args.algo, changes)
        then = (
            "the same command with --resume goes on from its last snapshot"
            if ALGOS[args.algo].resumable
            else f"{args.algo} cannot go on: remove it and run the command again"
        )
        print(f"stopped: {folder} holds the stopped row; {then}", file=sys.stderr)
        raise SystemExit(130) from None
    if "exact" in result:
        found = ", ".join(f"{k} {v:.4f}" for k, v in result["exact"].items())
    else:
        found = ", ".join(f"vs {o} {result['scores'][o]['win_rate']:.3f}" for o in OPPONENTS)
    cpu = result["trained_cpu_seconds"]
    cpu_text = "CPU s unknown: the run before its --resume kept none" if cpu is None else f"{cpu:g} CPU s"
    print(
        f"{args.algo}: {result['decisions']:,} decisions in {result['trained_seconds']:g} s ({cpu_text}); {found}"
    )


if __name__ == "__main__":
    main()
