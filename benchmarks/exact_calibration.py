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
[--openspiel-cfr 10] [--out FILE.json]`` (``openspiel`` extra).
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
        mask = np.zeros((1, 23), dtype=np.int8)
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
