"""OpenSpiel's neural learners on ``python_hanamikoji``'s information-state tensor (``openspiel`` extra).

    python -m hanamikoji_env.training.openspiel_learners --algo nfsp --decisions 2000000 --out runs/os-nfsp
    hanamikoji-eval --players ckpt:runs/os-nfsp/policy.mlp heuristic search

The tensor is observation version 2 (perfect recall, :mod:`hanamikoji_env.observation`), so a
policy learned on it plays in our envs and tournament as it is: each learner saves its policy
network as ``policy.mlp``, a ``ckpt:`` player (:mod:`hanamikoji_env.bots.mlp`, greedy).

- ``nfsp``: OpenSpiel's PyTorch NFSP, one agent a seat on ``rl_environment`` (both learn in
  self-play); the policy is each agent's average-policy network.
- ``deep-cfr``: OpenSpiel's PyTorch Deep CFR.  Its traversals are external sampling: every action
  of the traverser is walked, so one traversal of a whole game is exponential in its length; the
  learner stops at the deadline and reports how far its first traversal got.
- ``escher``: OpenSpiel's PyTorch ESCHER (sampled trajectories, no importance weights on the
  traverser's regrets thanks to a history value network over both players' tensors).
- ``neurd``: not runnable here, with the reason (:data:`UNRUNNABLE`).

Each runs the settings of a named source, every value (:data:`NFSP_SETTINGS`,
:data:`DEEP_CFR_SETTINGS`, :data:`ESCHER_SETTINGS`; :func:`learner_settings` gives them with the
source), changed only where ``learner(..., settings=)`` says (a sweep: the algorithm table's
``--set``); ``--variant mini`` learns the mini variant, and the ``.mlp`` it writes names it.

Every learner stops after ``--decisions`` of its own unit of work (NFSP: decisions of the game;
Deep CFR: tree nodes walked, each a state of the game stepped to; ESCHER: states touched), or at
``--minutes`` of wall time (ESCHER, whose iterations cannot be cut short, after the last one that
fits or the one that reaches the count), having done at least one unit of work whatever its set-up
took (an NFSP game, 256 Deep CFR nodes, an ESCHER iteration), and writes ``progress.json`` (its
units done).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hanamikoji_env.bots.mlp import save_mlp
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import FULL, VARIANTS, check_variant

UNRUNNABLE = {
    "neurd": "OpenSpiel's NeuRD (CounterfactualNeurdSolver) first builds a table of every sequence "
    "of the game (rcfr.RootStateWrapper walks the whole game tree), which does not end here",
}
"""The learners asked for that cannot run on this game, and why (measured: docs/benchmark.md)."""


# --------------------------------------------------------------- training ---


def load_game(round_limit: int | None = None, variant: str = FULL.name) -> Any:
    import pyspiel

    from hanamikoji_env.openspiel import DEFAULT_ROUND_LIMIT

    params = {"round_limit": round_limit or DEFAULT_ROUND_LIMIT, "variant": check_variant(variant).name}
    return pyspiel.load_game("python_hanamikoji", params)


NFSP_SETTINGS: dict[str, Any] = {
    "hidden_layers_sizes": [128],
    "replay_buffer_capacity": 200_000,
    "reservoir_buffer_capacity": 2_000_000,
    "min_buffer_size_to_learn": 1000,
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "learn_every": 64,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "optimizer_str": "sgd",
    "loss_str": "mse",
    "update_target_network_every": 19_200,
    "discount_factor": 1.0,
    "epsilon_decay_duration": 20_000_000,
    "epsilon_start": 0.06,
    "epsilon_end": 0.001,
    "epsilon_decay_schedule_str": "linear",
}
"""OpenSpiel's NFSP example for Leduc poker (``open_spiel/python/examples/leduc_nfsp.py``), every
flag as it sets it; its epsilon decays linearly (the example's TensorFlow DQN does; the PyTorch
one used here decays exponentially unless told).  The reservoir takes an entry on about a tenth
of the decisions (``anticipatory_param``): 2M entries, each a 669-float tensor, would be about
12 GB, reached only past 20M decisions."""
NFSP_SOURCE = "OpenSpiel's examples/leduc_nfsp.py (Leduc poker), every flag"


class Learner:
    """What every learner shares: its default settings and their source, the unit it counts its
    work in, the game variant and the settings it runs with (the defaults, changed)."""

    defaults: dict[str, Any]
    source: str
    unit: str
    """The :meth:`progress` key that counts its work (the algorithm table's "decisions")."""

    def __init__(
        self,
        seed: int = 0,
        round_limit: int | None = None,
        variant: str = FULL.name,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.variant = variant
        self.settings = {**self.defaults, **(settings or {})}
        self.game = load_game(round_limit, variant)
        self.start(seed)

    def start(self, seed: int) -> None:
        """The learner's own set-up on :attr:`game` with :attr:`settings`, seeded."""
        raise NotImplementedError


class NFSPLearner(Learner):
    """Both seats' NFSP agents on ``rl_environment``, trained in chunks (:meth:`train_until`)."""

    defaults, source, unit = NFSP_SETTINGS, NFSP_SOURCE, "decisions"

    def start(self, seed: int) -> None:
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import nfsp

        self.env = rl_environment.Environment(self.game, seed=seed)
        size = self.env.observation_spec()["info_state"][0]
        actions = self.env.action_spec()["num_actions"]
        self.agents = [nfsp.NFSP(p, size, actions, seed=seed + p, **self.settings) for p in (0, 1)]
        self.decisions = self.episodes = 0

    def train_until(self, deadline: float | None = None, decisions: int | None = None) -> None:
        """Whole self-play games until :func:`reached` (the time, or its decisions), at least one
        (a row whose set-up outlasted its budget still trains)."""
        while self.episodes == 0 or not reached(deadline, decisions, self.decisions):
            step = self.env.reset()
            while not step.last():
                player = step.observations["current_player"]
                out = self.agents[player].step(step)
                step = self.env.step([out.action])
                self.decisions += 1
            for agent in self.agents:
                agent.step(step)
            self.episodes += 1

    def save(self, path: Path) -> None:
        save_mlp(path, [agent._avg_network for agent in self.agents], "nfsp", variant=self.variant)

    def progress(self) -> dict[str, int]:
        return {"decisions": self.decisions, "games": self.episodes}


DEEP_CFR_SETTINGS: dict[str, Any] = {
    "policy_network_layers": [64, 64, 64],
    "advantage_network_layers": [64, 64, 64],
    "num_iterations": 100,
    "num_traversals": 1500,
    "learning_rate": 1e-3,
    "batch_size_advantage": 2048,
    "batch_size_strategy": 2048,
    "memory_capacity": 1_000_000,
    "policy_network_train_steps": 5000,
    "advantage_network_train_steps": 750,
    "reinitialize_advantage_networks": True,
}
"""The "recommended parameters" that OpenSpiel's Deep CFR example
(``open_spiel/python/examples/deep_cfr_pytorch.py``) gives, from aicenter/openspiel_reproductions:
three hidden layers of 64, 1,500 traversals an iteration, batches of 2,048, 750 advantage and
5,000 policy training steps (``num_iterations`` is not used: the budget ends the run)."""
DEEP_CFR_SOURCE = "the recommended parameters of OpenSpiel's examples/deep_cfr_pytorch.py"


DEEP_STACK = 1 << 30
"""The stack of the thread Deep CFR traverses in, and :data:`DEEP_RECURSION` its Python
recursion limit: a traversal is one recursive call per node down a whole game (several frames
each, and a state's clone pickles recursively on top), far past Python's default 1,000."""
DEEP_RECURSION = 200_000


MAX_DECISIONS = 10**10
"""The largest decision budget taken: about a year of the fastest learner on one core."""


def reached(deadline: float | None, decisions: int | None, done: int) -> bool:
    """A learner's chunk is over: ``time.perf_counter() >= deadline`` (given), or its own count
    ``done`` at least ``decisions`` (given)."""
    if decisions is not None:
        return done >= decisions
    if deadline is None:
        raise ValueError("a learner trains until a deadline or a count of decisions: give one")
    return time.perf_counter() >= deadline


def in_deep_thread(fn: Callable[[], None]) -> None:
    """Run ``fn`` in a thread with a :data:`DEEP_STACK` stack and the recursion limit raised,
    re-raising what it raises; the limit is restored after."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as e:  # handed to the caller
            failure.append(e)

    limit, size = sys.getrecursionlimit(), threading.stack_size(DEEP_STACK)
    sys.setrecursionlimit(DEEP_RECURSION)
    try:
        worker = threading.Thread(target=run, name="deep-cfr")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(size)
        sys.setrecursionlimit(limit)
    if failure:
        raise failure[0]


class DeadlineError(Exception):
    """Raised inside a traversal when the time is up."""


class DeepCFRLearner(Learner):
    """OpenSpiel's Deep CFR in chunks: iterations of traversals, each traversal cut off (and
    counted unfinished) when the chunk is over (its time, or its nodes)."""

    defaults, source, unit = DEEP_CFR_SETTINGS, DEEP_CFR_SOURCE, "nodes"

    def start(self, seed: int) -> None:
        from open_spiel.python.pytorch import deep_cfr

        learner = self

        class Solver(deep_cfr.DeepCFRSolver):
            def _traverse_game_tree(self, state, player):  # type: ignore[no-untyped-def]
                learner.nodes += 1
                if learner.nodes % 256 == 0 and reached(learner.deadline, learner.limit, learner.nodes):
                    raise DeadlineError
                return super()._traverse_game_tree(state, player)

        self.solver = Solver(self.game, seed=seed, **self.settings)
        self.nodes = self.traversals = self.iterations = 0
        self.deadline: float | None = 0.0
        self.limit: int | None = None

    def train_until(self, deadline: float | None = None, decisions: int | None = None) -> None:
        self.deadline, self.limit = deadline, decisions
        in_deep_thread(self._train)

    def _train(self) -> None:
        """Iterations until :func:`reached` (the time, or its nodes), checked every 256 nodes; the
        first call walks at least 256 nodes (a row whose set-up outlasted its budget still trains)."""
        s = self.solver
        try:
            while self.nodes == 0 or not reached(self.deadline, self.limit, self.nodes):  # node 256 raises
                for p in (0, 1):
                    for _ in range(self.settings["num_traversals"]):
                        s._traverse_game_tree(s._root_node, p)
                        self.traversals += 1
                    s._reinitialize_advantage_network(p)
                    s._learn_advantage_network(p)
                self.iterations += 1
                s._iteration += 1
        except DeadlineError:
            pass

    def save(self, path: Path) -> None:
        if self.solver._strategy_memories is not None and len(self.solver._strategy_memories):
            self.solver._learn_strategy_network()
        save_mlp(path, [self.solver._policy_network] * 2, "deep-cfr", variant=self.variant)

    def progress(self) -> dict[str, int]:
        return {"nodes": self.nodes, "traversals": self.traversals, "iterations": self.iterations}


ESCHER_SETTINGS: dict[str, Any] = {}
"""OpenSpiel's ESCHER as its example runs it (``open_spiel/python/examples/escher.py``:
``escher.Config()`` untouched, 512 value and 1,024 regret traversals an iteration, networks of 64):
nothing overridden.  The example's 100 iterations are not used: the budget ends the run."""
ESCHER_SOURCE = "OpenSpiel's examples/escher.py: escher.Config() as it is"


class ESCHERLearner(Learner):
    """OpenSpiel's ESCHER (sampled trajectories, a history value network): iterations until the
    deadline, then the average policy trained on what they gathered."""

    defaults, source, unit = ESCHER_SETTINGS, ESCHER_SOURCE, "states"

    def start(self, seed: int) -> None:
        from open_spiel.python.pytorch import escher

        self.escher = escher
        cfg = escher.Config()
        for key, value in self.settings.items():
            setattr(cfg, key, value)
        self.agent = escher.Agent(self.game, cfg)
        # each network it makes (deep_cfr.MLP, whose seed defaults to 42) seeds numpy and torch with
        # 42, so every seed began alike: seed them again, then draw the networks' first weights
        np.random.seed(seed)  # ESCHER samples from numpy's global generator
        torch.manual_seed(seed)
        values = [
            v for value in vars(self.agent).values() for v in (value if isinstance(value, list) else [value])
        ]
        nets = [v for v in values if isinstance(v, torch.nn.Module)]
        for layer in (m for net in nets for m in net.modules() if isinstance(m, torch.nn.Linear)):
            layer.reset_parameters()
        self.train_cfg = escher.TrainConfig(self.game)
        self.iterations = 0

    def train_until(self, deadline: float | None = None, decisions: int | None = None) -> None:
        """Iterations while the last one's duration still fits before ``deadline``, or until its
        states touched reach ``decisions`` (an iteration cannot be cut short: the last one may go
        past), at least one in all (a row whose set-up outlasted its budget still trains)."""
        took = 0.0
        while self.iterations == 0 or not reached(
            None if deadline is None else deadline - took, decisions, int(self.agent.num_touched)
        ):
            began = time.perf_counter()
            try:
                self.escher._train_regret(self.train_cfg, self.agent)
            except ValueError as e:  # numpy's sample of a batch from a smaller buffer
                if "larger sample than population" not in str(e):
                    raise
                cfg = self.agent.cfg
                raise ValueError(
                    f"escher: an iteration gathered fewer samples than a batch (value_batch_size "
                    f"{cfg.value_batch_size}, regret_batch_size {cfg.regret_batch_size}): raise "
                    f"value_traversals ({cfg.value_traversals}) and regret_traversals "
                    f"({cfg.regret_traversals}) or lower the batch sizes with --set"
                ) from None
            self.agent.t += 1
            self.iterations += 1
            took = time.perf_counter() - began

    def save(self, path: Path) -> None:
        if len(self.agent.avg_policy_buffer) >= self.agent.cfg.avg_policy_batch_size:
            self.escher._train_avg_policy(self.agent)
        save_mlp(path, [self.agent.avg_policy_net] * 2, "escher", variant=self.variant)

    def progress(self) -> dict[str, int]:
        return {"iterations": self.iterations, "states": int(self.agent.num_touched)}


LEARNERS: dict[str, type[Learner]] = {
    "nfsp": NFSPLearner,
    "deep-cfr": DeepCFRLearner,
    "escher": ESCHERLearner,
}
"""The learners that run: name -> class (``train_until``, ``save``, ``progress``, ``unit``)."""
ALGOS = (*LEARNERS, *UNRUNNABLE)


def learner_settings(name: str) -> dict[str, Any]:
    """What the learner ``name`` runs with, every value (ESCHER's from ``escher.Config()``, so
    the ``openspiel`` extra is needed), and the source it is taken from."""
    cls = LEARNERS[name]
    settings = dict(cls.defaults)
    if cls is ESCHERLearner:
        from open_spiel.python.pytorch import escher

        config = escher.Config()
        settings = {k: getattr(config, k) for k in dir(config) if not k.startswith("_")} | settings
    return {"source": cls.source, **settings}


def learner(
    name: str,
    seed: int = 0,
    round_limit: int | None = None,
    variant: str = FULL.name,
    settings: dict[str, Any] | None = None,
) -> Any:
    """The learner ``name`` on ``variant``, ``settings`` changing some of its own (a sweep);
    ``ValueError`` naming the reason for one that cannot run here, what to install, or a setting
    it does not have or of another type."""
    if name in UNRUNNABLE:
        raise ValueError(f"{name} cannot learn python_hanamikoji: {UNRUNNABLE[name]}")
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {short(name)}; known: {', '.join(ALGOS)}")
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        raise ValueError(
            "the OpenSpiel learners need OpenSpiel: pip install 'hanamikoji-env[openspiel]'"
        ) from None
    check_settings(settings or {}, learner_settings(name), name)
    torch.set_num_threads(1)
    return LEARNERS[name](
        seed=seed, round_limit=round_limit, variant=check_variant(variant).name, settings=settings
    )


def check_settings(changes: dict[str, Any], defaults: dict[str, Any], name: str) -> None:
    """``ValueError`` in one line for a change to a setting ``name`` does not have (``source``
    included), or of another type than its default (an int where a float is, allowed)."""
    for key, value in changes.items():
        if key not in defaults or key == "source":
            known = ", ".join(k for k in defaults if k != "source")
            raise ValueError(f"{name} has no setting {short(key)}; its settings: {known}")
        default = defaults[key]
        same = type(value) is type(default) or (type(default) is float and type(value) is int)
        if not same:
            raise ValueError(
                f"{name}'s {key} is a {type(default).__name__} (default {short(default)}), got {short(value)}"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.openspiel_learners", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--algo", required=True, choices=ALGOS)
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument(
        "--decisions", type=int, help="the budget in the learner's own unit (progress.json's)"
    )
    budget.add_argument("--minutes", type=float, help="a wall-clock budget")
    parser.add_argument(
        "--out", type=Path, required=True, help="a new folder for policy.mlp and progress.json"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--round-limit", type=int, default=None, help="the game's (default 12)")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default=FULL.name, help="the game learned")
    args = parser.parse_args(argv)
    if args.minutes is not None and not args.minutes > 0:
        parser.error(f"--minutes must be positive, got {args.minutes}")
    if args.decisions is not None and not 1 <= args.decisions <= MAX_DECISIONS:
        parser.error(f"--decisions must be in [1, {MAX_DECISIONS:,}], got {args.decisions}")
    if (args.out / "policy.mlp").exists():
        parser.error(f"{args.out} already holds a policy.mlp: give a new --out")
    try:
        run = learner(args.algo, args.seed, args.round_limit, args.variant)
    except ValueError as e:
        parser.error(str(e))
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    if args.decisions is not None:
        run.train_until(decisions=args.decisions)
    else:
        run.train_until(deadline=began + args.minutes * 60)
    run.save(args.out / "policy.mlp")
    progress = {"algo": args.algo, "seconds": round(time.perf_counter() - began, 1), **run.progress()}
    (args.out / "progress.json").write_text(json.dumps(progress, indent=2))
    print(json.dumps(progress))


if __name__ == "__main__":
    main()
