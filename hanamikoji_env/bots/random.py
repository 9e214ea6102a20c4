"""RandomBot: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.vector import random_actions


class RandomBot(Bot):
    """Plays a uniformly random legal action."""

    name = "random"

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return random_actions(mask, self.rng)
