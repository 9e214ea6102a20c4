"""The agent against the held-out pool, beside the search bot against the same opponents.

Every player of :data:`hanamikoji_env.heldout.HELD_OUT` (players no training config may
name: the enumeration bot, heuristic variants with other weights, earlier agents,
PolicySearchBot over one of them, OpenSpiel's ISMCTS, a best response to the shipped
agent) plays ``--games`` mirrored games against the agent (``--ckpt``, greedy) and against
the search bot (default budget), on the same deals.  Prints a row per opponent: both win
rates with Wilson intervals and whether the agent scores at least what the search bot does
(the target of the league issue: every row).  A slow member plays at most the games its
``HeldOut.games`` says (PolicySearchBot 500, ISMCTS 100).

Usage: ``python benchmarks/heldout.py [--ckpt pretrained] [--games 2000] [--only SPEC ...]
[--workers N] [--out runs/heldout] [--skip-search]``.  ``--skip-search`` plays the agent only:
the search bot's games depend on nothing but the opponent, ``--games`` and the seed (7), so an
earlier run's search column holds for the same games.  The slow members (PolicySearchBot, ISMCTS) dominate:
on 2 cores about an hour at 2000 games; ``--only`` picks members.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.heldout import HELD_OUT, heldout_specs
from hanamikoji_env.tournament import run_tournament


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ckpt", default="pretrained", help="the agent: a .pt checkpoint, or pretrained")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--only", nargs="*", default=None, help="held-out specs (as in HELD_OUT) to play")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--out", type=Path, default=Path("runs/heldout"))
    p.add_argument("--skip-search", action="store_true", help="play the agent only (see above)")
    args = p.parse_args()
    pool = dict(zip((h.spec for h in HELD_OUT), heldout_specs(), strict=True))
    most = {h.spec: h.games or args.games for h in HELD_OUT}
    chosen = args.only or list(pool)
    unknown = sorted(set(chosen) - set(pool))
    if unknown:
        p.error(f"not held-out players: {unknown}; held out: {list(pool)}")
    agent, search = f"ckpt:{args.ckpt}" if args.ckpt != "pretrained" else "pretrained", "search"
    rows = []
    print(f"| held-out opponent | {args.ckpt} | search | agent >= search |\n|---|---|---|---|", flush=True)
    for name in chosen:
        start = time.perf_counter()
        scores = {}
        for player in (agent,) if args.skip_search else (agent, search):
            result = run_tournament(
                [parse_player(player), parse_player(pool[name])], min(args.games, most[name]), seed=7,
                workers=args.workers, progress=False,
            )  # fmt: skip
            scores[player] = result["pairs"][0]
        a, s = scores[agent], scores.get(search)
        rows.append({"opponent": name, "agent": a, "search": s})
        met = "-" if s is None else ("yes" if a["win_rate"] >= s["win_rate"] else "**no**")
        shown = "not played" if s is None else f"{s['win_rate']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"
        print(
            f"| {name} | {a['win_rate']:.3f} [{a['ci95'][0]:.3f}, {a['ci95'][1]:.3f}] | {shown} | {met} |"
            f" <!-- {time.perf_counter() - start:.0f} s -->",
            flush=True,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "heldout.json").write_text(
        json.dumps({"agent": args.ckpt, "games": args.games, "rows": rows}, indent=2)
    )


if __name__ == "__main__":
    main()
