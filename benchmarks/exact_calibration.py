"""Calibration on the mini variant: exact exploitability beside what the local best response finds,
and OpenSpiel's own tools on the same game, in the same run.

For each target: the exact best response's score and NashConv (``hanamikoji_env.exact``, on our
engine), and the local best response's score and its share of the exact exploitability
(``lbr_share``: (lbr - 0.5) / (exact - 0.5); target at least 0.7).  Targets: the uniform policy
(= ``random``), the heuristic, a PPO checkpoint trained on the variant (``--ckpt``, e.g.
``runs/mini/policy.pt`` from ``hanamikoji-train --config mini``, greedy and sampled) and CFR+'s
average after ``--cfr`` iterations each (``exact.cfr_plus``, on our tree).

OpenSpiel, same run: ``nash_conv`` (its Python best response) of the uniform policy, the
heuristic and the first CFR+ average, each asked through OpenSpiel's own API (targets: within 2
minutes on one core for the uniform policy, and equal to ours to 1e-6 on all three), and ``pyspiel.CFRPlusSolver`` (its C++ CFR+
over the Python game) for ``--openspiel-cfr`` iterations: its CPU time an iteration, and its
average's NashConv (read through ``exact.openspiel_table``) beside our CFR+'s at the same count
(targets: at most half the uniform policy's NashConv after 10 iterations, a tenth after 100).

Usage: ``python benchmarks/exact_calibration.py [--ckpt PATH] [--cfr 10 100]
[--openspiel-cfr 10] [--out FILE.json] [--plot FILE.png [--rl TARGET=RESULT.json ...]]``
(``openspiel`` extra); ``--rows FILE.json --plot FILE.png`` redraws an earlier run's rows.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability as os_exploitability

import hanamikoji_env.openspiel  # noqa: F401  (registers python_hanamikoji)
from hanamikoji_env import exact
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.spec import parse_player


class TargetPolicy(os_policy.Policy):
    """A target of ours as an OpenSpiel policy of the same game, for OpenSpiel's ``nash_conv``: it
    answers from the state's information-state tensor (our perfect-recall observation)."""

    def __init__(self, game: Any, target: Any) -> None:
        super().__init__(game, [0, 1])
        self.target = target

    def action_probabilities(self, state: Any, player_id: Any = None) -> dict[int, float]:
        player = state.current_player()
        view = np.asarray(state.information_state_tensor(player), dtype=np.float32)[None]
        mask = np.zeros((1, NUM_ACTIONS), dtype=np.int8)
        mask[0, state.legal_actions()] = 1
        probs = self.target(view, mask)[0]
        return {int(a): float(probs[a]) for a in state.legal_actions()}


def openspiel_nash_conv(game: Any, target: Any) -> dict[str, Any]:
    """OpenSpiel's ``nash_conv`` of ``target`` and its CPU time."""
    start = time.process_time()
    theirs = os_exploitability.nash_conv(game, TargetPolicy(game, target))
    return {"openspiel_nash_conv": theirs, "openspiel_cpu_s": round(time.process_time() - start, 1)}


def row(name: str, target: Any, **extra: Any) -> dict[str, Any]:
    start = time.process_time()
    ours = exact.exploitability(target)
    local = exact.exploitability(target, local=True)
    out = {
        "target": name,
        "br_score": ours.br_score,
        "nash_conv": ours.nash_conv,
        "lbr_score": local.br_score,
        "lbr_share": (local.br_score - 0.5) / (ours.br_score - 0.5),
        "cpu_s": round(time.process_time() - start, 1),
        **extra,
    }
    print(json.dumps(out), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ckpt", help="a PPO checkpoint trained on the mini variant")
    parser.add_argument("--cfr", type=int, nargs="*", default=[10, 100], help="our CFR+'s iteration counts")
    parser.add_argument("--openspiel-cfr", type=int, default=10, help="OpenSpiel CFR+ iterations (0: none)")
    parser.add_argument("--out", help="write the rows as JSON")
    parser.add_argument(
        "--rl", nargs="*", default=[], metavar="TARGET=RESULT.json",
        help="rl results to draw beside them (hanamikoji-exploit --variant mini's eval/result.json)",
    )  # fmt: skip
    parser.add_argument("--plot", help="draw the targets' three estimates and CFR+'s curve into this PNG")
    parser.add_argument("--rows", help="draw the rows an earlier run wrote with --out, computing nothing")
    args = parser.parse_args()
    if args.rows:
        with open(args.rows) as f:
            rows = json.load(f)
        plot(rows, read_rl(args.rl), args.plot or "calibration.png")
        return
    game = pyspiel.load_game("python_hanamikoji(variant=mini)")
    start = time.process_time()
    theirs = os_exploitability.nash_conv(game, os_policy.UniformRandomPolicy(game))
    seconds = round(time.process_time() - start, 1)
    rows = [
        row("uniform (random)", exact.uniform_target, openspiel_nash_conv=theirs, openspiel_cpu_s=seconds)
    ]
    uniform = rows[0]["nash_conv"]
    heuristic = exact.player_target(parse_player("heuristic").make(0, None))
    rows.append(row("heuristic", heuristic, **openspiel_nash_conv(game, heuristic)))
    if args.ckpt:
        for spec in (f"ckpt:{args.ckpt}", f"sampled:ckpt={args.ckpt}"):
            rows.append(row(spec, parse_player(spec).make(0, None)))
    for k, iterations in enumerate(sorted(args.cfr)):
        start = time.process_time()
        target = exact.table_target(exact.cfr_plus(iterations))
        seconds = round(time.process_time() - start, 1)
        theirs = openspiel_nash_conv(game, target) if k == 0 else {}  # the third target OpenSpiel checks
        rows.append(row(f"CFR+ {iterations} iterations", target, cfr_cpu_s=seconds, **theirs))
        print(f"  its NashConv / the uniform policy's: {rows[-1]['nash_conv'] / uniform:.4f}", flush=True)
    checked = [r for r in rows if "openspiel_nash_conv" in r]
    agree = all(abs(r["openspiel_nash_conv"] - r["nash_conv"]) <= 1e-6 for r in checked)
    print(f"OpenSpiel's nash_conv agrees with ours to 1e-6 on {len(checked)} targets: {agree}", flush=True)
    if args.openspiel_cfr:
        start = time.process_time()
        solver = pyspiel.CFRPlusSolver(game)
        for _ in range(args.openspiel_cfr):
            solver.evaluate_and_update_policy()
        seconds = time.process_time() - start
        table = exact.openspiel_table(game, solver.average_policy())
        theirs = exact.exploitability(exact.tabular_target(table)).nash_conv
        ours = exact.exploitability(exact.table_target(exact.cfr_plus(args.openspiel_cfr))).nash_conv
        print(
            f"OpenSpiel CFR+ ({args.openspiel_cfr} iterations): {seconds / args.openspiel_cfr:.1f} CPU s an "
            f"iteration (set-up included); NashConv {theirs:.6f} (ours at the same count: {ours:.6f}; "
            f"/ the uniform policy's: {theirs / uniform:.4f})",
            flush=True,
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)
    if args.plot:
        plot(rows, read_rl(args.rl), args.plot)


def read_rl(items: list[str]) -> dict[str, dict[str, Any]]:
    """``TARGET=RESULT.json`` items as rl results by the target's row name."""
    rl = {}
    for item in items:
        name, _, path = item.partition("=")
        with open(path) as f:
            rl[name] = json.load(f)
    return rl


def plot(rows: list[dict[str, Any]], rl: dict[str, dict[str, Any]], path: str) -> None:
    """Left: each player target's exact, lbr and rl scores (rl with its interval).  Right: the
    exact NashConv of CFR+'s average against its iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players = [r for r in rows if not r["target"].startswith("CFR+")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(players))
    left.bar(x - 0.27, [r["br_score"] - 0.5 for r in players], 0.27, label="exact", color="#1b5e20")
    left.bar(x, [r["lbr_score"] - 0.5 for r in players], 0.27, label="lbr (exact belief)", color="#66bb6a")
    heights = [rl[r["target"]]["br_score"] - 0.5 if r["target"] in rl else 0.0 for r in players]
    errors = [
        [
            h - (rl[r["target"]]["ci95"][0] - 0.5)
            for h, r in zip(heights, players, strict=True)
            if r["target"] in rl
        ],
        [
            (rl[r["target"]]["ci95"][1] - 0.5) - h
            for h, r in zip(heights, players, strict=True)
            if r["target"] in rl
        ],
    ]
    shown = [i for i, r in enumerate(players) if r["target"] in rl]
    left.bar(x[shown] + 0.27, [heights[i] for i in shown], 0.27, yerr=errors, capsize=3,
             label="rl, 10M decisions (95% interval)", color="#fbc02d")  # fmt: skip
    left.set_xticks(
        x, [r["target"].replace("runs/mini/policy.pt", "PPO on mini") for r in players], fontsize=8
    )
    left.axhline(0, color="black", linewidth=0.8)
    left.set_ylabel("best response's score - 0.5")
    left.set_title("How much of the exploitability each method finds (mini)")
    left.legend(fontsize=8)
    cfr = [(int(r["target"].split()[1]), r["nash_conv"]) for r in rows if r["target"].startswith("CFR+")]
    right.loglog(
        [1] + [i for i, _ in cfr], [rows[0]["nash_conv"]] + [v for _, v in cfr], "o-", color="#1b5e20"
    )
    right.set_xlabel("CFR+ iterations")
    right.set_ylabel("exact NashConv of its average")
    right.set_title("CFR+ on the mini tree")
    right.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
