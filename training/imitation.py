"""Imitation warm start: a teacher labels the positions the student reaches (DAgger), then PPO.

With ``teacher`` set in the config (a player spec that plays batches: ``heuristic``,
``search:...``, ``ckpt:PATH``, ``pretrained``), the first ``imitation_decisions``
learner decisions of a run are imitation instead of PPO:

1. **collect**: the student (the run's policy, sampling) plays its own games
   against the run's opponents, exactly as in PPO; at every learner decision the
   teacher, reading its own observation of that position, says what it would play
   (:class:`Teacher`, one batched call a step).  With ``teacher_play`` > 0 the
   teacher's move is played instead of the student's in that share of the
   decisions, falling linearly to 0 over the budget (DAgger's beta: the student
   first sees the teacher's games, then its own);
2. **learn** (:func:`imitation_loss`): the masked cross-entropy of the student's
   policy to the teacher's move (a checkpoint teacher gives its whole
   distribution: soft targets), plus ``vf_coef`` times the value regression to
   the game's outcome (returns with ``gae_lambda`` 1).

Then the same run goes on with PPO: same folder, checkpoints, TensorBoard
scalars (``imitation/...`` for this phase), ``--resume`` (mid-imitation too) and
``curve.csv``.
"""

from __future__ import annotations

import numpy as np
import torch

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.training.selfplay import (
    GameStates,
    bot_moves,
    states_from_lists,
    states_to_lists,
    views_for,
)
from hanamikoji_env.vector import BatchEngine


def check_teacher(spec: str, load: bool = True) -> None:
    """``ValueError`` unless ``spec`` names a player that plays batches (checked, and with ``load``
    a checkpoint loaded, before anything trains)."""
    try:
        player = parse_player(spec, load=load)
    except ValueError as e:
        raise ValueError(f"teacher: bad player {spec[:80]!r}: {e}") from None
    if not player.bot_class().batched:
        raise ValueError(
            f"teacher: {spec[:80]!r} does not play batches; use heuristic, search[:options], ckpt:PATH "
            "or pretrained"
        )


class Teacher:
    """A batched bot that labels the learner's decisions, with a game state per env."""

    def __init__(self, spec: str, seed: int, round_limit: int | None) -> None:
        self.bot: Bot = parse_player(spec).make(seed, round_limit)
        self.states: GameStates = {}
        """Env -> the teacher's game state there (SearchBot's plan for the turn)."""

    def targets(
        self, engine: BatchEngine, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """For the decisions ``rows`` of the batch (``obs``, ``mask``: the engine's version): the
        teacher's moves ``[R]`` and target distributions ``[R, 23]`` (one-hot, or a checkpoint's
        policy)."""
        seen, legal = views_for(self.bot, engine, obs[rows], mask[rows], rows)
        probs = self.bot.move_probabilities(seen, legal)
        if probs is not None:  # soft targets: a checkpoint's whole distribution
            target = probs.astype(np.float32)
            return target.argmax(1), target
        target = np.zeros((rows.size, NUM_ACTIONS), np.float32)
        self.bot.seed(int(rng.integers(2**31)))  # its draws from the run's generator
        moves = bot_moves(self.bot, seen, legal, rows, self.states)
        target[np.arange(rows.size), moves] = 1.0
        return moves, target

    def new_games(self, envs: np.ndarray) -> None:
        for i in envs:
            self.states.pop(int(i), None)

    def state(self) -> list[list[int]]:
        """For checkpoints (:func:`~training.selfplay.states_to_lists`)."""
        return states_to_lists(self.states)

    def load(self, saved: list[list[int]]) -> None:
        self.states = states_from_lists(saved)


def teacher_share(start: float, decisions: int, budget: int) -> float:
    """The share of learner decisions the teacher plays: ``start`` falling linearly to 0 at ``budget``."""
    return start * max(0.0, 1.0 - decisions / budget) if budget else 0.0


def imitation_loss(logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The cross-entropy of the masked ``logits`` to the ``target`` distributions, and the share of
    rows whose most likely action is the target's."""
    logp = torch.log_softmax(logits, -1)  # illegal actions: about -1e9, and a target of 0 there
    loss = -(target * logp).sum(-1).mean()
    agree = (logits.argmax(-1) == target.argmax(-1)).float().mean()
    return loss, agree
