"""Steps/s and games/s of random masked play through the normal AEC user loop.

Measures ``env()`` and ``raw_env()`` of hanamikoji-env and, in the same run,
PettingZoo's ``leduc_holdem_v4`` (wrapped ``env()`` and its unwrapped raw env)
and ``connect_four_v3``, then prints the ratios.  Every env runs the same loop:

    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else <uniform over obs["action_mask"]>
        env.step(action)

Usage: ``python benchmarks/env_speed.py [--seconds 3] [--repeats 3]``
(needs the ``bench`` extra: ``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def play(make: Callable[[], object], seconds: float, seed: int = 0) -> tuple[float, float]:
    """Random masked play for about ``seconds``; returns (steps/s, games/s)."""
    env = make()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
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
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per env and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per env")
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3, leduc_holdem_v4

    import hanamikoji_env

    contenders: dict[str, Callable[[], object]] = {
        "hanamikoji env()": hanamikoji_env.env,
        "hanamikoji raw_env()": hanamikoji_env.raw_env,
        "leduc_holdem_v4 env()": leduc_holdem_v4.env,
        "leduc_holdem_v4 raw": lambda: leduc_holdem_v4.env().unwrapped,
        "connect_four_v3 env()": connect_four_v3.env,
        "connect_four_v3 raw": lambda: connect_four_v3.env().unwrapped,
    }
    results = {}
    for name, make in contenders.items():
        # interleave nothing, but take the best of several runs to damp noise
        runs = [play(make, args.seconds, seed=r * 1000) for r in range(args.repeats)]
        results[name] = max(runs)
    print(f"{'env':<24}{'steps/s':>12}{'games/s':>12}")
    for name, (sps, gps) in results.items():
        print(f"{name:<24}{sps:>12,.0f}{gps:>12,.0f}")
    print()
    for ours, peer, target in [
        ("hanamikoji env()", "leduc_holdem_v4 env()", 2.0),
        ("hanamikoji raw_env()", "leduc_holdem_v4 raw", 2.0),
        ("hanamikoji env()", "connect_four_v3 env()", None),
        ("hanamikoji raw_env()", "connect_four_v3 raw", None),
    ]:
        ratio = results[ours][0] / results[peer][0]
        goal = f"  (target >= {target:.1f}x: {'met' if ratio >= target else 'MISSED'})" if target else ""
        print(f"steps/s {ours} / {peer}: {ratio:.2f}x{goal}")


if __name__ == "__main__":
    main()
