"""RandomBot: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.vector import random_actions


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"
    batched = True
    """A batch costs one draw per row: trainers and tournaments play it batched."""
    light = True

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Every legal move equally likely."""
        m = np.asarray(mask, dtype=np.float64)
        return m / m.sum(axis=1, keepdims=True)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        """Without ``rngs``: one vectorized draw from the bot's generator for the whole batch;
        with them, each row as a bot of its own would play it."""
        if rngs is not None:
            return super().act_batch(obs, mask, rngs, states)
        return random_actions(mask, self.rng)
