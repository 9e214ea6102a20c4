"""What a training run measures of itself: the greedy policy's win rate against bots (TensorBoard's
eval/), on the batch engine, and the run's curve of win rates against wall time (``curve.csv``)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import torch

from hanamikoji_env.games import play_batch
from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.training.selfplay import bot_moves, make_bot, views_for
from hanamikoji_env.vector import BatchEngine


class Curve:
    """``curve.csv`` of a run folder: after every evaluation the wall time trained (evaluations
    and saves included, over every resume), the update, learner decisions, the phase
    (``imitation`` or ``ppo``) and the greedy win rate against each evaluation bot."""

    def __init__(self, path: Path, bots: list[str]) -> None:
        self.path, self.bots = path, bots
        self.header = ["seconds", "update", "decisions", "phase", *(f"vs_{b}" for b in bots)]

    def keep_until(self, update: int) -> None:
        """Start the file, or keep only its rows up to ``update`` (the checkpoint a run resumes
        from: later rows were measured by the part of the run that is played again)."""
        rows = []
        if self.path.is_file():
            with open(self.path, newline="") as f:
                rows = [
                    r
                    for r in csv.DictReader(f)
                    if r.get("update", "").isdigit() and int(r["update"]) <= update
                ]
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, self.header, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)

    def add(self, seconds: float, update: int, decisions: int, phase: str, rates: dict[str, float]) -> None:
        row = [f"{seconds:.1f}", update, decisions, phase]
        row += [f"{rates.get(b, float('nan')):.3f}" for b in self.bots]
        with open(self.path, "a", newline="") as f:
            csv.writer(f).writerow(row)


@torch.no_grad()
def win_rate(
    model: PolicyNet, bot_spec: str, games: int, seed: int, bot_seed: int, round_limit: int | None
) -> float:
    """Win rate (draws half) of ``model``'s greedy policy against the bot ``bot_spec`` over
    ``games`` games, half in each seat (deals from ``seed``)."""
    engine = BatchEngine(games, seed, round_limit, model.observation_version, variant=model.variant)
    bot = make_bot(bot_spec, bot_seed, round_limit)
    states: dict[int, tuple[int, ...]] = {}

    def greedy(obs: np.ndarray, mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        logits, _ = model(torch.as_tensor(obs), torch.as_tensor(mask))
        return logits.argmax(1).numpy()

    def opponent(obs: np.ndarray, mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
        seen, legal = views_for(bot, engine, obs, mask, rows)
        return bot_moves(bot, seen, legal, rows, states)

    result = play_batch(engine, (greedy, opponent), np.arange(games) % 2)
    return float(((result > 0) + 0.5 * (result == 0)).mean())
