"""OpenSpielBot: OpenSpiel's ISMCTS or MCTS playing through our bot interface (``openspiel`` extra).

From the player's observation alone (like every bot here) it builds a
``python_hanamikoji`` state (:mod:`hanamikoji_env.openspiel`): the unseen cards
dealt at random (:func:`~hanamikoji_env.bots.search.determinize`), and searches it:

- ``ismcts``: ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, information-set
  MCTS; every simulation deals the unseen cards again (``HanamikojiState.resample``);
- ``mcts``: ``open_spiel.python.algorithms.mcts.MCTSBot`` on that one
  determinization (perfect-information MCTS: it treats the sampled cards as known).

Both use random rollouts to the end of the game (``RandomRolloutEvaluator``),
``uct_c=2`` and ``sims`` simulations per decision; every random draw comes from
the bot's generator.  Tournament specs: ``os-ismcts[:sims=N]``, ``os-mcts[:sims=N]``.
"""

from __future__ import annotations

import numpy as np

from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import check_option


class OpenSpielBot(Bot):
    """``OpenSpielBot(kind="ismcts" | "mcts", seed=0, sims=100, round_limit=None)``."""

    def __init__(
        self, kind: str = "ismcts", seed: int | None = 0, sims: int = 100, round_limit: int | None = None
    ):
        super().__init__(seed)
        if kind not in ("ismcts", "mcts"):
            raise ValueError(f"kind must be 'ismcts' or 'mcts', got {kind!r}")
        check_option(f"os-{kind}", "sims", sims)
        import pyspiel

        from hanamikoji_env import openspiel

        self.kind, self.sims = kind, sims
        self.name = f"os-{kind}"
        limit = round_limit or openspiel.DEFAULT_ROUND_LIMIT
        self.game = pyspiel.load_game("python_hanamikoji", {"round_limit": limit})
        self.round_limit = limit

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        from open_spiel.python.algorithms import ismcts, mcts

        from hanamikoji_env.bots.search import determinize
        from hanamikoji_env.openspiel import HanamikojiState

        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        world = determinize(vector, self.rng, self.round_limit)  # this player as seat 0
        state = HanamikojiState.from_position(self.game, world)
        random_state = np.random.RandomState(int(self.rng.integers(2**31)))
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        if self.kind == "mcts":
            bot = mcts.MCTSBot(self.game, 2.0, self.sims, evaluator, solve=False, random_state=random_state)
        else:
            bot = ismcts.ISMCTSBot(self.game, evaluator, 2.0, self.sims, random_state=random_state)
            bot._resampler_cb = lambda s, player: s.resample(player, self.rng)
        return int(bot.step(state))

    def __repr__(self) -> str:
        return f"OpenSpielBot({self.kind!r}, sims={self.sims}, seed={self._seed})"
