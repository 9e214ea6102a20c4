"""Play and render one seeded game between two random agents, then time the env.

Usage: ``python -m hanamikoji_env.demo [--seed 0] [--seconds 2] [--quiet]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hanamikoji_env import env
from hanamikoji_env.actions import action_name


def play_game(seed: int, verbose: bool = True) -> dict[str, float]:
    """One game of uniform random masked play; returns each agent's final reward."""
    e = env(render_mode="ansi")
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards: dict[str, float] = {}
    scored = 0
    for agent in e.agent_iter():
        obs, reward, term, trunc, _info = e.last()
        if term or trunc:
            rewards[agent] = float(reward)
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        if verbose:
            print(f"{agent}: {action_name(action)}")
        e.step(action)
        summary = e.infos.get(agent, {}).get("round_summary")
        if verbose and summary and summary["round"] > scored:
            scored = summary["round"]
            print(f"\n== scoring of round {scored}: {summary}\n")
            print(e.render() + "\n")
    return rewards


def steps_per_second(seconds: float) -> tuple[float, float]:
    """Steps/s and games/s of random masked play through the AEC loop."""
    e = env()
    rng = np.random.default_rng(0)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        e.reset(seed=games)
        for _agent in e.agent_iter():
            obs, _r, term, trunc, _i = e.last()
            legal = np.flatnonzero(obs["action_mask"])
            e.step(None if term or trunc else int(legal[rng.integers(len(legal))]))
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the game shown")
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent measuring speed")
    parser.add_argument("--quiet", action="store_true", help="do not print every move")
    args = parser.parse_args(argv)
    if args.seed < 0 or args.seconds <= 0:
        parser.error("--seed must be >= 0 and --seconds > 0")
    rewards = play_game(args.seed, verbose=not args.quiet)
    print(f"final rewards: {rewards}")
    sps, gps = steps_per_second(args.seconds)
    print(f"env() speed, random play: {sps:,.0f} steps/s, {gps:,.0f} games/s (one core)")


if __name__ == "__main__":
    main()
