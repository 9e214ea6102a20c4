"""The one interface every bot implements.

``bot = SomeBot(seed=0, **options)``; ``bot.reset(seed=None)`` at the start of
each game; ``bot.act(obs) -> int`` where ``obs`` is the acting agent's
observation dict from the AEC env (``{"observation", "action_mask"}``).  That
is all a bot is given: what it needs beyond the mask it decodes from the
observation vector (:func:`hanamikoji_env.observation.decode`), which holds
only what its player may know.

Per-game memory is explicit: ``bot.game_state()`` returns what a bot remembers
of the game in progress as a tuple of ints (``()`` for most bots; SearchBot's
plan for its turn), and ``bot.set_game_state(state)`` restores it.  So one bot
can play many games at once (a trainer's opponent over thousands of envs): set
a game's state before the bot acts there, read it back after, and save it with
a checkpoint.  ``bot.seed(seed)`` re-seeds the bot's generators and keeps the
game in progress.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from hanamikoji_env.actions import NUM_ACTIONS


class Bot(ABC):
    """Base class: seeding, input checks and a default ``act_batch``."""

    name = "bot"

    def __init__(self, seed: int | None = 0) -> None:
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; a given ``seed`` re-seeds the bot's generators."""
        if seed is not None:
            self.seed(seed)
        self.set_game_state(())

    def seed(self, seed: int) -> None:
        """Re-seed the bot's generators; the game in progress is kept."""
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def game_state(self) -> tuple[int, ...]:
        """What the bot remembers of the game in progress, as ints (``()``: nothing)."""
        return ()

    def set_game_state(self, state: tuple[int, ...]) -> None:
        """Restore :meth:`game_state`; ``()`` is a game the bot has not acted in yet."""
        if state:
            raise ValueError(f"{type(self).__name__} keeps no game state, got {state!r}")

    def act(self, obs: dict[str, np.ndarray]) -> int:
        """The action for the acting agent's observation dict."""
        vector, mask = _unpack(obs)
        action = self._act(vector, mask)
        if not mask[action]:  # a bot bug must never become an illegal move silently
            raise RuntimeError(
                f"{type(self).__name__} chose illegal action {action}; legal {np.flatnonzero(mask)}"
            )
        return int(action)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Actions for a batch (``[N, 109]``, ``[N, 23]``), e.g. from the batch engine."""
        return np.array(
            [self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)]
        )

    @abstractmethod
    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int: ...

    def _argmax(self, scores: np.ndarray, tol: float = 1e-9) -> int:
        """Index of the maximum; scores within ``tol`` of it tie, broken by the bot's generator."""
        top = np.flatnonzero(scores >= scores.max() - tol)
        return int(top[0]) if len(top) == 1 else int(top[self.rng.integers(len(top))])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self._seed})"


def _unpack(obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(obs, dict) or "observation" not in obs or "action_mask" not in obs:
        raise ValueError("a bot acts on the observation dict {'observation': ..., 'action_mask': ...}")
    mask = np.asarray(obs["action_mask"])
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action_mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    if not mask.any():
        raise ValueError("the action mask is empty: this agent is not on move")
    return np.asarray(obs["observation"]), mask
