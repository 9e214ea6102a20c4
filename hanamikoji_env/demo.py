"""Play and render one seeded game between two random agents, then time the env.

Usage: ``python -m hanamikoji_env.demo [--seed 0] [--seconds 2] [--quiet]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hanamikoji_env.actions import action_name
from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.random import RandomBot
from hanamikoji_env.games import play_env


def show_game(seed: int, verbose: bool = True) -> dict[str, float]:
    """One game of uniform random masked play (deal and bots seeded from ``seed``), each move and
    each round's scoring printed unless not ``verbose``; returns each agent's final reward."""
    scored = [0]

    def show(e: raw_env, agent: str, obs: dict[str, np.ndarray], action: int, seconds: float) -> None:
        print(f"{agent}: {action_name(action)}")
        summary = e.infos.get(agent, {}).get("round_summary")
        if summary and summary["round"] > scored[0]:
            scored[0] = summary["round"]
            print(f"\n== scoring of round {scored[0]}: {summary}\n")
            print(e.render() + "\n")

    bots = (RandomBot(seed), RandomBot(seed + 1))
    e = play_env(bots, seed, None, watch=show if verbose else None, render_mode="ansi")
    return {agent: float(r) for agent, r in zip(e.possible_agents, e.history().rewards, strict=True)}


def decisions_per_second(seconds: float) -> tuple[float, float]:
    """Decisions/s and games/s of random masked play through the AEC env."""
    bots = (RandomBot(0), RandomBot(1))
    decisions = [0]

    def count(*_: object) -> None:
        decisions[0] += 1

    games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_env(bots, games, None, watch=count)
        games += 1
    elapsed = time.perf_counter() - start
    return decisions[0] / elapsed, games / elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the game shown")
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent measuring speed")
    parser.add_argument("--quiet", action="store_true", help="do not print every move")
    args = parser.parse_args(argv)
    if args.seed < 0 or args.seconds <= 0:
        parser.error("--seed must be >= 0 and --seconds > 0")
    rewards = show_game(args.seed, verbose=not args.quiet)
    print(f"final rewards: {rewards}")
    dps, gps = decisions_per_second(args.seconds)
    print(f"AEC env speed, random play: {dps:,.0f} decisions/s, {gps:,.0f} games/s (one core)")


if __name__ == "__main__":
    main()
