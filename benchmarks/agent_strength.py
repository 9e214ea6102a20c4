"""Strength of a trained agent and of PolicySearchBot over it, against the targets of the agent issue.

Prints, each with its Wilson 95% interval and the target it is held to:

1. the agent (``ckpt:PATH``, greedy) against ``random``, ``heuristic`` and
   ``search`` (default budget), ``--games`` mirrored games per pair on every
   ``--seeds`` seed (targets 0.965, 0.85, 0.62 on every seed);
2. with ``--baseline PATH``: the agent against that checkpoint head to head
   (target: lower bound above 0.5);
3. ``psearch:ckpt=PATH,samples=N`` (plus ``--psearch-options``, e.g. ``value=1``) against
   the ``--psearch-opponents``: the agent alone, ``search`` and the held-out ``enum``,
   ``--psearch-games`` mirrored games each (targets 0.66, 0.72 and 0.92), and its
   milliseconds per searched decision (a decision with a choice) over ``--timing-games``
   games in this process (target: median at most 100 ms; ``--timing-games 0`` skips it);
4. with ``--exploit-decisions N``: ``python -m training.exploit`` on the agent
   with that budget (target: the exploiter wins at most 0.55).

Usage: ``python benchmarks/agent_strength.py [--ckpt checkpoints/ppo_selfplay.pt] [--games 2000]
[--seeds 0 1] [--baseline PATH] [--psearch-games 1000] [--samples 32] [--psearch-options K=V,...]
[--psearch-opponents agent search enum] [--timing-games 20]
[--exploit-decisions 0] [--workers N] [--skip-agent] [--skip-psearch]``.  On 2 cores the agent's
part takes about 50 s per seed (the compiled bots, batched; it took 11 minutes before), the
psearch part 36 minutes at the defaults, the exploiter about 35 minutes of training per 10M
decisions.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from timing import timed_decisions

from hanamikoji_env.bots import PolicyBot, PolicySearchBot
from hanamikoji_env.bots.spec import PlayerSpec, parse_player
from hanamikoji_env.tournament import run_tournament

AGENT_TARGETS = {"random": 0.965, "heuristic": 0.85, "search": 0.62}
PSEARCH_TARGETS = {"agent": 0.66, "search": 0.72, "enum": 0.92}
"""PolicySearchBot's bars: over the agent, against it alone and against the held-out enumeration
bot (the league issue's), and against SearchBot (the issue before it)."""
MAX_MEDIAN_MS = 100.0
MAX_EXPLOITER = 0.55


def report(name: str, pair: dict, rule: str, ok: bool) -> bool:
    """One line: the first player's win rate, its interval and whether the target is met."""
    low, high = pair["ci95"]
    print(
        f"  {name:<44} {pair['win_rate']:.3f} [{low:.3f}, {high:.3f}] over {pair['games']} games"
        f"  (target {rule}: {'met' if ok else 'MISSED'})"
    )
    return ok


def duel(a: PlayerSpec, b: PlayerSpec, games: int, seed: int, workers: int | None) -> dict:
    """``a`` against ``b``: ``games`` mirrored games, the pair seen from ``a``."""
    return run_tournament([a, b], games, seed, workers, first_only=True)["pairs"][0]


def psearch_timing(spec: PlayerSpec, ckpt: str, games: int, seed: int = 0) -> np.ndarray:
    """Milliseconds per decision with a choice of PolicySearchBot (``spec``), in games against
    the agent (``ckpt``), one thread (as in a tournament worker)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        bot, agent = spec.make(seed), PolicyBot(ckpt)
        assert isinstance(bot, PolicySearchBot)
        timed = timed_decisions(bot, agent, games, first_deal=20_000)
        return np.array([ms for obs, ms in timed if obs["action_mask"].sum() > 1])
    finally:
        torch.set_num_threads(threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", default="checkpoints/ppo_selfplay.pt")
    parser.add_argument("--games", type=int, default=2000, help="mirrored games per pair and seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--baseline", help="a checkpoint the agent must beat head to head")
    parser.add_argument("--psearch-games", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=32, help="PolicySearchBot's samples")
    parser.add_argument(
        "--psearch-options", default="", help="more PolicySearchBot options, e.g. value=1,exact=1"
    )
    parser.add_argument(
        "--psearch-opponents", nargs="+", choices=sorted(PSEARCH_TARGETS), default=list(PSEARCH_TARGETS)
    )
    parser.add_argument("--timing-games", type=int, default=20)
    parser.add_argument("--exploit-decisions", type=int, default=0, help="0: no exploiter")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    parser.add_argument("--skip-agent", action="store_true", help="only the psearch part")
    parser.add_argument("--skip-psearch", action="store_true", help="only the agent part")
    args = parser.parse_args()
    try:
        agent = parse_player(f"ckpt:{args.ckpt}")
        extra = f",{args.psearch_options}" if args.psearch_options else ""
        psearch = parse_player(f"psearch:ckpt={args.ckpt},samples={args.samples}{extra}")
        baseline = parse_player(f"ckpt:{args.baseline}") if args.baseline else None
    except ValueError as e:
        parser.error(str(e))
    if baseline is not None and baseline.text == agent.text:
        parser.error("--baseline must name another checkpoint than --ckpt")
    start, met = time.perf_counter(), []
    if not args.skip_agent:
        for seed in args.seeds:
            print(f"{args.ckpt} (greedy), seed {seed}:")
            for bot, target in AGENT_TARGETS.items():
                pair = duel(agent, parse_player(bot), args.games, seed, args.workers)
                met.append(report(f"agent vs {bot}", pair, f">= {target}", pair["win_rate"] >= target))
        if baseline is not None:
            pair = duel(agent, baseline, args.games, args.seeds[0], args.workers)
            ok = pair["ci95"][0] > 0.5
            met.append(report(f"agent vs {args.baseline}", pair, "lower bound > 0.5", ok))
    if not args.skip_psearch:
        print(f"{psearch.text}, seed {args.seeds[0]}:")
        for name in args.psearch_opponents:
            opponent = agent if name == "agent" else parse_player(name)
            pair = duel(psearch, opponent, args.psearch_games, args.seeds[0], args.workers)
            target = PSEARCH_TARGETS[name]
            met.append(report(f"psearch vs {name}", pair, f">= {target}", pair["win_rate"] >= target))
        if args.timing_games:  # 0: timed elsewhere (time on a shared core says little)
            ms = psearch_timing(psearch, args.ckpt, args.timing_games)
            ok = float(np.median(ms)) <= MAX_MEDIAN_MS
            print(
                f"  psearch time per decision with a choice over {len(ms)} decisions: median "
                f"{np.median(ms):.0f} ms, p90 {np.percentile(ms, 90):.0f} ms, max {ms.max():.0f} ms"
                f"  (target median <= {MAX_MEDIAN_MS:.0f} ms: {'met' if ok else 'MISSED'})"
            )
            met.append(ok)
    if args.exploit_decisions:
        from hanamikoji_env.training.exploit import main as exploit

        exploit(["--target", f"ckpt:{args.ckpt}", "--decisions", str(args.exploit_decisions)])
        print(f"(target for the exploiter: at most {MAX_EXPLOITER})")
    print(f"{sum(met)} of {len(met)} targets met; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
