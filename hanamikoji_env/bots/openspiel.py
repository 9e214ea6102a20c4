"""OpenSpielBot: OpenSpiel's ISMCTS or MCTS playing through our bot interface (``openspiel`` extra).

From the player's observation alone (like every bot here) it builds a
``python_hanamikoji`` state (:mod:`hanamikoji_env.openspiel`): the unseen cards
dealt at random (:func:`~hanamikoji_env.infoset.determinize`), and searches it:

- ``ismcts``: ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, information-set
  MCTS; every simulation deals the unseen cards again (``HanamikojiState.resample``);
- ``mcts``: ``open_spiel.python.algorithms.mcts.MCTSBot`` on that one
  determinization (perfect-information MCTS: it treats the sampled cards as known).

Both use random rollouts to the end of the game (``RandomRolloutEvaluator``),
``uct_c=2`` and ``sims`` simulations per decision; every random draw comes from
the bot's generator.  Tournament specs: ``os-ismcts[:sims=N]``, ``os-mcts[:sims=N]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hanamikoji_env.bots.base import Bot, Option
from hanamikoji_env.excerpt import short


class OpenSpielBot(Bot):
    """``OpenSpielBot(kind="ismcts" | "mcts", seed=0, sims=100, round_limit=None)``; the spec
    names are its subclasses :class:`ISMCTSBot` and :class:`MCTSBot`."""

    name = "os-ismcts"
    options = {"sims": Option(int, 1, 100_000)}
    fast = False

    @classmethod
    def check_available(cls) -> None:
        try:
            import hanamikoji_env.openspiel  # noqa: F401 - registers the game
        except ImportError as e:
            raise ValueError(
                f"{cls.name} needs OpenSpiel: pip install 'hanamikoji-env[openspiel]' ({e})"
            ) from None

    @classmethod
    def from_spec(cls, options: dict[str, Any], seed: int, round_limit: int | None, device: str) -> Bot:
        return cls(cls.name[3:], seed=seed, round_limit=round_limit, **options)

    def __init__(
        self, kind: str = "ismcts", seed: int | None = 0, sims: int = 100, round_limit: int | None = None
    ):
        super().__init__(seed)
        if kind not in ("ismcts", "mcts"):
            raise ValueError(f"kind must be 'ismcts' or 'mcts', got {short(kind)}")
        (MCTSBot if kind == "mcts" else ISMCTSBot).check_option("sims", sims)
        import pyspiel

        from hanamikoji_env import openspiel

        self.kind, self.sims = kind, sims
        self.name = f"os-{kind}"
        limit = round_limit or openspiel.DEFAULT_ROUND_LIMIT
        self.game = pyspiel.load_game("python_hanamikoji", {"round_limit": limit})
        self.round_limit = limit

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        from open_spiel.python.algorithms import ismcts, mcts

        from hanamikoji_env.infoset import determinize
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


class ISMCTSBot(OpenSpielBot):
    """``os-ismcts``: OpenSpiel's information-set MCTS."""

    name = "os-ismcts"


class MCTSBot(OpenSpielBot):
    """``os-mcts``: OpenSpiel's MCTS on one determinization."""

    name = "os-mcts"
