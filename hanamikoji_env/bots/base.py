"""The one interface every bot implements.

``bot = SomeBot(seed=0, **options)`` (a bot that plays a trained policy takes it first:
``PolicyBot(path, seed=0)``, ``PolicySearchBot(policy, seed=0, ...)``); ``bot.reset(seed=None)``
at the start of each game; ``bot.act(obs) -> int`` where ``obs`` is the acting agent's
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

Batches: ``bot.act_batch(obs, mask, rngs=None, states=None)`` plays one
decision in each of many games (``[N, 109]`` observations, ``[N, 23]``
masks).  ``rngs[i]`` is game ``i``'s generator (the one a bot of its own
would hold; ``None``: the bot's own for all rows) and ``states[i]`` its game
state, updated in place, so a batch plays every game exactly as one bot per
game would.  Bots whose ``batched`` is true do it in one compiled or network
call; the others play the rows one by one.

What a bot is, declared once on its class: ``name`` (its player spec,
:mod:`hanamikoji_env.bots.spec`), ``options`` (each option's type and bounds,
checked by the spec parser and the constructor alike), ``observation_version``
(the observation it reads: an env or batch feeding it encodes that version),
``batched``, ``fast`` (quick enough to train against) and ``light`` (cheaper than a trip
to a worker process), and :meth:`Bot.from_spec`
(how a spec's options become the bot).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, NamedTuple

import numba
import numpy as np
from numba import njit

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.excerpt import short
from hanamikoji_env.observation import OBS_HIGH, OBS_SIZE, VERSIONS


class Option(NamedTuple):
    """A bot option: its type and, for an int, the inclusive bounds (an int option without them
    is a declaration error, caught by the test of every bot's options)."""

    type: type
    low: int | None = None
    high: int | None = None


class Bot(ABC):
    """Base class: seeding, input checks and a default ``act_batch``."""

    name = "bot"
    options: ClassVar[dict[str, Option]] = {}
    """The bot's spec options (``key=value``) with their types and bounds."""
    observation_version = 1
    """The observation version the bot reads."""
    batched = False
    """True where :meth:`act_batch` is one compiled or network call for the whole batch."""
    fast = True
    """False for bots too slow to train against (a training config refuses them)."""
    light = False
    """True where one move costs well under a millisecond (random, heuristic): the browser server
    plays it in its own process, where a worker process's round trip would cost more than the
    move.  Every other bot moves in the server's worker processes (:mod:`hanamikoji_env.play.workers`)."""

    @classmethod
    def from_spec(cls, options: dict[str, Any], seed: int, round_limit: int | None, device: str) -> Bot:
        """The bot of a parsed spec: its ``options``, seeded; ``round_limit`` is the game's (for
        bots that simulate it), ``device`` where a network runs.  Most bots take options only."""
        return cls(seed=seed, **options)

    @classmethod
    def check_available(cls) -> None:
        """``ValueError`` saying what to install where the bot needs an optional extra that is
        missing; called when a spec naming the bot is checked, before any game."""
        return None  # most bots need nothing beyond the package

    @classmethod
    def check_checkpoint(cls, path: str) -> None:
        """``ValueError`` in one line where the spec's ``ckpt`` cannot be loaded (a hanamikoji-env
        policy unless the bot takes others); called when a spec is checked, before any game."""
        from hanamikoji_env.nn import load_policy

        load_policy(path)

    @classmethod
    def check_files(cls, options: dict[str, Any]) -> None:
        """``ValueError`` in one line where a file the spec's ``options`` name (other than its
        ``ckpt``, checked by the parser) cannot be loaded; called when a spec is checked, before
        any game.  Most bots name no file."""
        return None

    @classmethod
    def check_option(cls, key: str, value: object) -> None:
        """``ValueError`` unless ``value`` is within the declared bounds of option ``key``."""
        option = cls.options[key]
        assert option.low is not None and option.high is not None, (
            f"int option {key} of {cls.name} has no bounds"
        )
        if isinstance(value, bool) or not isinstance(value, int) or not option.low <= value <= option.high:
            raise ValueError(
                f"option {key} of {cls.name} must be an int in [{option.low}, {option.high}], got {short(value)}"
            )

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
            raise ValueError(f"{type(self).__name__} keeps no game state, got {short(state)}")

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """How the bot plays each row of a batch, as probabilities (``[N, 23]``, 0 on illegal
        moves): what exact evaluation (:mod:`hanamikoji_env.exact`) needs at every information
        state.  Only a bot whose move is a function of its observation can say; the others
        raise ``ValueError`` saying why (:attr:`no_probabilities`)."""
        raise ValueError(f"{self.name} cannot give its move probabilities: {self.no_probabilities}")

    no_probabilities = "its moves come from simulations or memory, not from its observation alone"
    """Why :meth:`play_probabilities` is refused (for a bot that does not implement it)."""

    def check_modelled(self, variant: str) -> None:
        """``ValueError`` in one line where a best response cannot model this bot on ``variant``
        (``exact``, ``lbr``): it gives no move probabilities, or it is a network trained on
        another variant."""
        if type(self).play_probabilities is Bot.play_probabilities:
            raise ValueError(f"{self.name} cannot give its move probabilities: {self.no_probabilities}")
        trained = getattr(getattr(self, "model", None), "variant", None)
        if trained is not None and trained != variant:
            raise ValueError(
                f"the target was trained on the {trained} game, not the {variant} variant measured here"
            )

    def move_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
        """The bot's distribution over the moves of a batch (``[N, 23]``), where it has one (a
        policy network); ``None`` for a bot that only picks moves.  Imitation learns from it."""
        return None

    def act(self, obs: dict[str, np.ndarray]) -> int:
        """The action for the acting agent's observation dict."""
        vector, mask = _unpack(obs)
        action = self._act(vector, mask)
        if not mask[action]:  # a bot bug must never become an illegal move silently
            raise RuntimeError(
                f"{type(self).__name__} chose illegal action {action}; legal {np.flatnonzero(mask)}"
            )
        return int(action)

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        """Actions for a batch (``[N, 109]``, ``[N, 23]``), e.g. from the batch engine: row ``i``
        with the generator ``rngs[i]`` and the game state ``states[i]`` (updated in place)."""
        obs, mask = check_batch(obs, mask)
        own = self.rng
        out = np.empty(len(obs), dtype=np.int64)
        try:
            for i in range(len(obs)):
                if rngs is not None:
                    self.rng = rngs[i]
                if states is not None:
                    self.set_game_state(states[i])
                out[i] = self.act({"observation": obs[i], "action_mask": mask[i]})
                if states is not None:
                    states[i] = self.game_state()
        finally:
            self.rng = own
        return out

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


_DECISION_PHASES = 5
"""Phases 0..4 of the observation's one-hot are decisions (token, select, split, answers)."""
_PHASES = 7
"""The observation starts with the one-hot of its 7 phases."""
_BAD_ENTRY, _NO_PHASE = 1, 2


@njit(cache=True)
def _bad_rows(obs, high):  # pragma: no cover - compiled
    """Per row: ``_BAD_ENTRY`` if an entry is not a whole number in ``[0, high]`` (NaN and inf
    included), else ``_NO_PHASE`` if its phase one-hot is not exactly one decision phase, else 0."""
    out = np.zeros(obs.shape[0], np.int8)
    for i in range(obs.shape[0]):
        for j in range(obs.shape[1]):
            x = obs[i, j]
            if not (x >= 0 and x <= high[j] and x == np.floor(x)):  # NaN fails every comparison
                out[i] = _BAD_ENTRY
                break
        if out[i] == 0:
            ones = 0
            for j in range(_PHASES):
                ones += obs[i, j] == 1
                if j >= _DECISION_PHASES and obs[i, j] != 0:
                    ones = -1
                    break
            if ones != 1:
                out[i] = _NO_PHASE
    return out


def check_batch(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A batch of observations and masks as contiguous float32 / int8 arrays, or ``ValueError``
    naming the first bad row: shapes ``[N, 109]`` and ``[N, 23]``, numeric dtypes, every entry a
    whole number within the layout's bounds, a decision phase, a 0/1 mask with a legal move."""
    obs, mask = np.asarray(obs), np.asarray(mask)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape [N, {OBS_SIZE}], got {obs.shape}")
    if mask.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(f"masks must have shape [{obs.shape[0]}, {NUM_ACTIONS}], got {mask.shape}")
    if obs.dtype.kind not in "fiu" or mask.dtype.kind not in "biu":
        raise ValueError(
            f"observations must be numbers and masks ints or bools, got {obs.dtype}, {mask.dtype}"
        )
    rows = _bad_rows(np.ascontiguousarray(obs), OBS_HIGH)  # one compiled pass: a trainer calls it every step
    bad_mask = ((mask != 0) & (mask != 1)).any(1) | ~mask.any(1)
    for bad, what in (
        (rows == _BAD_ENTRY, "an observation entry that is not a whole number within the layout's bounds"),
        (rows == _NO_PHASE, "no decision phase"),
        (bad_mask, "a mask that is not 0/1 with at least one legal move"),
    ):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"row {i} of the batch has {what}")
    return np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(mask, dtype=np.int8)


def network_batch(
    name: str, version: int, obs: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A network bot's batch (the file ``name``, reading observation ``version``): ``obs`` as
    ``[N, size]`` float32 and ``mask`` as ``[N, 23]``, every row with a legal move, or ``ValueError``
    saying what the network reads."""
    obs, mask = np.atleast_2d(np.asarray(obs, dtype=np.float32)), np.atleast_2d(mask)
    size = VERSIONS[version].size
    if obs.shape[1] != size or mask.shape != (len(obs), NUM_ACTIONS) or not mask.any(axis=1).all():
        raise ValueError(
            f"{name} reads [N, {size}] observations (version {version}) "
            f"and [N, {NUM_ACTIONS}] masks with a legal move, got {obs.shape} and {mask.shape}"
        )
    return obs, mask


_POOL: ThreadPoolExecutor | None = None


def run_rows(
    kernel: Callable[..., None], rows: tuple[np.ndarray, ...], *args: Any, min_rows: int = 2
) -> None:
    """``kernel(*rows, *args)`` for a compiled row kernel (``nogil=True``, rows independent,
    results written into one of ``rows``), spread over numba's thread count
    (``numba.get_num_threads()``) in contiguous slices when there are at least ``min_rows``
    rows per thread.  Threads rather than a ``parallel=True`` kernel: the same results, and no
    thread-pool kernel to compile on a first run (about a fifth of a bot's compilation)."""
    global _POOL
    n = len(rows[0])
    threads = min(numba.get_num_threads(), n // max(min_rows, 1))
    if threads <= 1:
        kernel(*rows, *args)
        return
    if _POOL is None or _POOL._max_workers < threads:  # grown only when numba's count rises
        _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hanamikoji-rows")
    bounds = np.linspace(0, n, threads + 1).astype(int)
    jobs = [_POOL.submit(kernel, *(r[a:b] for r in rows), *args) for a, b in itertools.pairwise(bounds)]
    for job in jobs:
        job.result()


def pick(
    logits: np.ndarray, greedy: bool, rng: np.random.Generator, rngs: list[np.random.Generator] | None
) -> np.ndarray:
    """A network bot's moves from its masked ``[N, 23]`` logits: the likeliest (``greedy``), or a
    sample of each row's softmax, row ``i`` drawing its uniform from ``rngs[i]`` (or all from
    ``rng``, the bot's own)."""
    from hanamikoji_env.nn import masked_probs, sample_actions

    if greedy:
        return logits.argmax(axis=1)
    uniforms = rng.random(len(logits)) if rngs is None else np.array([g.random() for g in rngs])
    return sample_actions(masked_probs(logits), uniforms)


def certain(actions: np.ndarray) -> np.ndarray:
    """``[N, 23]`` float64 probabilities: 1 on each row's action (a deterministic bot's play)."""
    out = np.zeros((len(actions), NUM_ACTIONS), dtype=np.float64)
    out[np.arange(len(actions)), np.asarray(actions, dtype=np.int64)] = 1.0
    return out
