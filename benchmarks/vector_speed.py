"""Decisions/s of random masked play: the batch engine against the AEC env and leduc.

For ``BatchEngine`` at N = 1, 64, 1024, 4096 (actions sampled from the
mask with ``random_actions``, vectorized) and, in the same run, for our AEC
``raw_env()`` and PettingZoo's ``leduc_holdem_v4`` through the normal
``agent_iter`` loop (the seed-once loop of ``env_speed.py``).  A decision is a
step of a live agent (the AEC loop's final ``step(None)`` calls are not counted).
Then the batch engine at N = 64, 256, 1024 and 4096 with observation version 2 (perfect
recall, 669 floats a row) against version 1 in the same run: target at least 0.67x.

Usage: ``python benchmarks/vector_speed.py [--seconds 3]`` (``bench`` extra for leduc).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from env_speed import seed_once

from hanamikoji_env import raw_env
from hanamikoji_env.vector import BatchEngine, random_actions


def vector_rate(num_envs: int, seconds: float, observation_version: int = 1) -> float:
    v = BatchEngine(num_envs, seed=0, observation_version=observation_version)
    rng = np.random.default_rng(0)
    _, mask, _ = v.reset()
    _, mask, *_ = v.step(random_actions(mask, rng))  # compile outside the timing
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, mask, _, _, _, _ = v.step(random_actions(mask, rng))
        decisions += num_envs
    return decisions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    from pettingzoo.classic import leduc_holdem_v4

    seed_once(raw_env, 0.5)  # compile outside the timing
    aec = seed_once(raw_env, args.seconds, decisions=True)
    leduc = seed_once(leduc_holdem_v4.env, args.seconds, decisions=True)
    print(f"{'engine':<28}{'decisions/s':>14}{'x AEC env':>11}{'x leduc env()':>15}")
    print(f"{'hanamikoji raw_env()':<28}{aec:>14,.0f}{1:>11.1f}{aec / leduc:>15.1f}")
    print(f"{'leduc_holdem_v4 env()':<28}{leduc:>14,.0f}{leduc / aec:>11.2f}{1:>15.1f}")
    for n in (1, 64, 1024, 4096):
        rate = vector_rate(n, args.seconds)
        print(f"{f'BatchEngine N={n}':<28}{rate:>14,.0f}{rate / aec:>11.1f}{rate / leduc:>15.1f}")
        if n == 4096:
            print(
                f"\ntargets at N=4096: >= 1,000,000 decisions/s ({'met' if rate >= 1e6 else 'MISSED'}),"
                f" >= 50x the AEC env ({'met' if rate >= 50 * aec else 'MISSED'})"
            )
    print(f"\n{'observation versions':<28}{'v1 decisions/s':>16}{'v2 decisions/s':>16}{'v2 / v1':>9}")
    for n in (64, 256, 1024, 4096):
        v1, v2 = vector_rate(n, args.seconds, 1), vector_rate(n, args.seconds, 2)
        verdict = "met" if v2 >= 0.67 * v1 else "MISSED"
        print(
            f"{f'BatchEngine N={n}':<28}{v1:>16,.0f}{v2:>16,.0f}{v2 / v1:>9.2f}  (target >= 0.67x: {verdict})"
        )


if __name__ == "__main__":
    main()
