"""Steps/s of random masked play through the AEC user loop: ours against PettingZoo's classic games.

Measures ``env()`` and ``raw_env()`` of hanamikoji-env and, in the same run,
PettingZoo's ``leduc_holdem_v4`` (``env()`` and its raw env) and
``connect_four_v3`` (likewise), in two loops:

- **seed once** (how training loops run; the targets are judged here)::

      env.reset(seed=s)                      # once
      while time is left:
          for agent in env.agent_iter():
              obs, reward, term, trunc, info = env.last()
              action = None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]))
              env.step(action)
          env.reset()

- **reseed every game**: ``env.reset(seed=s + game)`` before every game and
  ``legal[rng.integers(len(legal))]``, the loop of earlier versions of this
  benchmark.  Reseeding is expensive for some envs (leduc builds a new game),
  which flatters the ratio: reported for comparison only.

Targets, seed-once loop, same run: ``env()`` and ``raw_env`` each at least 2x
leduc's ``env()`` and raw env, and at least 1.5x connect_four's raw env; with
observation version 2 (perfect recall, 669 floats), ``env()`` and ``raw_env``
at least 0.67x themselves with version 1.

Usage: ``python benchmarks/env_speed.py [--seconds 3] [--repeats 3]`` (``bench`` extra).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def seed_once(make: Callable[[], object], seconds: float, seed: int = 0, decisions: bool = False) -> float:
    """Steps/s of the seed-once loop for about ``seconds`` (``decisions``: count only the steps
    of live agents, not the final ``step(None)`` of each agent)."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() < start + seconds:
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
            steps += action is not None or not decisions
        env.reset()
    return steps / (time.perf_counter() - start)


def reseed_every_game(make: Callable[[], object], seconds: float, seed: int = 0) -> float:
    """Steps/s of the reseed-every-game loop for about ``seconds``."""
    env = make()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() < start + seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
        games += 1
    return steps / (time.perf_counter() - start)


LOOPS = {"seed once": seed_once, "reseed every game": reseed_every_game}
TARGETS = [  # (ours, peer, at least this ratio in the seed-once loop)
    ("hanamikoji env()", "leduc_holdem_v4 env()", 2.0),
    ("hanamikoji raw_env()", "leduc_holdem_v4 raw", 2.0),
    ("hanamikoji env()", "connect_four_v3 raw", 1.5),
    ("hanamikoji raw_env()", "connect_four_v3 raw", 1.5),
    ("hanamikoji env() v2", "hanamikoji env()", 0.67),
    ("hanamikoji raw_env() v2", "hanamikoji raw_env()", 0.67),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per env, loop and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per env and loop")
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3, leduc_holdem_v4

    import hanamikoji_env

    contenders: dict[str, Callable[[], object]] = {
        "hanamikoji env()": hanamikoji_env.env,
        "hanamikoji raw_env()": hanamikoji_env.raw_env,
        "hanamikoji env() v2": lambda: hanamikoji_env.env(observation_version=2),
        "hanamikoji raw_env() v2": lambda: hanamikoji_env.raw_env(observation_version=2),
        "leduc_holdem_v4 env()": leduc_holdem_v4.env,
        "leduc_holdem_v4 raw": lambda: leduc_holdem_v4.env().unwrapped,
        "connect_four_v3 env()": connect_four_v3.env,
        "connect_four_v3 raw": lambda: connect_four_v3.env().unwrapped,
    }
    for version in (1, 2):  # compile and warm the caches outside the timing
        seed_once(lambda v=version: hanamikoji_env.raw_env(observation_version=v), 0.5)
    rates: dict[str, dict[str, float]] = {loop: {} for loop in LOOPS}
    for repeat in range(args.repeats):  # interleaved, so a slow moment of the machine hits everyone
        for loop, play in LOOPS.items():
            for name, make in contenders.items():
                rate = play(make, args.seconds, seed=repeat * 1000)
                rates[loop][name] = max(rate, rates[loop].get(name, 0.0))
    print(f"{'env':<24}" + "".join(f"{loop + ' steps/s':>28}" for loop in LOOPS))
    for name in contenders:
        print(f"{name:<24}" + "".join(f"{rates[loop][name]:>28,.0f}" for loop in LOOPS))
    print()
    for ours, peer, target in TARGETS:
        once = rates["seed once"][ours] / rates["seed once"][peer]
        every = rates["reseed every game"][ours] / rates["reseed every game"][peer]
        verdict = "met" if once >= target else "MISSED"
        print(f"{ours} / {peer}: seed once {once:.2f}x (target >= {target:g}x: {verdict}); "
              f"reseed every game {every:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
