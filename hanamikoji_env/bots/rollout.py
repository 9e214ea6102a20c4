"""RolloutBot: one step of lookahead over a trained policy, by determinized rollouts to the game's end.

At each decision that has a choice, for every legal action the bot

1. samples ``samples`` determinizations of what it cannot see
   (:func:`~hanamikoji_env.infoset.determinize`: its observation and nothing else);
2. applies the action in each, then plays the game to its end in the batch
   engine (proven identical to the rules): the policy plays the bot's own later
   decisions (greedy, from the bot's observation) and the opponent is modelled
   as :class:`~hanamikoji_env.bots.random.RandomBot` (uniform legal moves);
3. uses common random numbers: every action sees the same determinizations,
   the same decks for the later rounds and the same opponent random numbers
   (the opponent's k-th decision of a game uses the k-th uniform);
4. scores the action by its mean final reward (+1 won, -1 lost, 0 drawn).

It plays the best action where it beats the policy's own choice by more than
``margin``, else the policy's choice.  Against ``RandomBot`` this is one
policy-improvement step with an exact opponent model: it shows how much a
policy has left on the table (``benchmarks/rollout_headroom.py``).  Against
other opponents the model is wrong.  It needs torch, and is slow: about
0.2 s per decision with a choice at 128 samples on one core.  Tournament spec:
``rollout:ckpt=PATH,samples=N``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from hanamikoji_env.bots.base import Option
from hanamikoji_env.bots.policy import PolicyGuidedBot
from hanamikoji_env.engine import Dealer
from hanamikoji_env.infoset import determinized_rows
from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.rules import FULL_DECK
from hanamikoji_env.simulate import apply_sequences, play_out
from hanamikoji_env.vector import uniform_actions

FUTURE_DECKS = 8
"""Rounds whose decks are drawn in advance (shared by all actions); later ones come from the engine."""
OPPONENT_UNIFORMS = 256
"""Uniforms per determinization for the opponent's decisions (a game has far fewer)."""
MAX_STEPS = 100_000
"""Moves after which a rollout is a bug, not a long game (a round has at most 56)."""


class RolloutBot(PolicyGuidedBot):
    """``RolloutBot(policy, seed=0, samples=128, margin=0.0, round_limit=None)``; see the module
    docstring.  ``policy`` is a checkpoint path or a :class:`~hanamikoji_env.nn.PolicyNet`;
    ``round_limit`` is the game's (its rollouts end where the game would)."""

    name = "rollout"
    options = {"ckpt": Option(str), "samples": Option(int, 1, 4096)}

    def __init__(
        self,
        policy: str | Path | PolicyNet,
        seed: int | None = 0,
        samples: int = 128,
        margin: float = 0.0,
        round_limit: int | None = None,
    ) -> None:
        if margin < 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        super().__init__(policy, seed, samples, round_limit)
        self.margin = margin

    @torch.no_grad()
    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's most likely legal action per row."""
        logits, _ = self.model(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(mask))
        return logits.argmax(dim=1).numpy()

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        own = int(self.greedy(vector[None], mask[None])[0])
        q = self.q_values(vector, mask)
        best = int(np.nanargmax(q))
        return best if q[best] > q[own] + self.margin else own

    def q_values(self, vector: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean final reward of each action id (NaN where illegal) for the player to move."""
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("no legal action: not this player's decision")
        n, k = self.samples, len(legal)
        base = determinized_rows(vector, self.rng, n)
        decks = np.asarray(FULL_DECK, dtype=np.int8)[
            np.argsort(self.rng.random((n, FUTURE_DECKS, len(FULL_DECK))), axis=2)
        ]
        uniforms = self.rng.random((n, OPPONENT_UNIFORMS))
        dealer = Dealer(k * n, np.random.default_rng(self.rng.integers(2**63)), shuffle="sort")
        dealer.decks = np.tile(decks, (k, 1, 1))  # scripted by round number; past rounds unused
        dealer.n_decks = np.full(k * n, FUTURE_DECKS, dtype=np.int64)
        rows = np.tile(base, (k, 1))  # row a * n + j: action a in determinization j
        apply_sequences(rows, np.repeat(legal, n)[:, None], np.ones(k * n, dtype=np.int64), self.round_limit)
        opp_moves = np.zeros(k * n, dtype=np.int64)

        def choose(
            ids: np.ndarray, seats: np.ndarray, obs: np.ndarray, m: np.ndarray, step: int
        ) -> np.ndarray:
            mine = seats == 0
            actions = uniform_actions(m, uniforms[ids % n, np.minimum(opp_moves[ids], OPPONENT_UNIFORMS - 1)])
            if mine.any():
                actions[mine] = self.greedy(obs[mine], m[mine])
            opp_moves[ids[~mine]] += 1
            return actions

        value = play_out(rows, choose, self.round_limit, to_game_end=True, dealer=dealer, max_steps=MAX_STEPS)
        q = np.full(mask.shape[0], np.nan)
        q[legal] = value.reshape(k, n).mean(axis=1)
        return q

    def __repr__(self) -> str:
        return f"RolloutBot(samples={self.samples}, margin={self.margin}, seed={self._seed})"
