"""A batch engine: many Hanamikoji games stepped at once, for training and evaluation.

:class:`BatchEngine` plays ``num_envs`` games with the same rules, action
ids, masks and observation vectors as the AEC env (``tests/test_differential.py``
proves it plays the same games over thousands of them; ``benchmarks/vector_diff.py``
over 100,000).  Each game is one row of the engine's int32 state matrix.  Finished games reset themselves.

Two-player self-play: each step's ``obs``, ``mask`` belong to the seat in
``to_play``; feed them to the policy of that seat and pass its actions back::

    venv = BatchEngine(4096, seed=0)
    obs, mask, to_play = venv.reset()
    for _ in range(1000):
        actions = random_actions(mask, rng)          # or policy[to_play](obs, mask)
        obs, mask, to_play, rewards, done, info = venv.step(actions)
        # rewards[i] = (seat 0, seat 1), non-zero only where done[i];
        # info["winner"][i] / info["rounds"][i] describe game i that just ended,
        # and obs[i] is already the first decision of its next game.

:class:`HanamikojiVectorEnv` wraps it in Gymnasium's ``VectorEnv`` API.  The
per-game kernels are the engine of record's (:mod:`hanamikoji_env.engine`);
this module only drives many rows of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from numba import njit

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.engine import (
    C_MARKERS,
    C_PHASE,
    C_ROUND,
    C_TO_MOVE,
    C_VARIANT,
    C_WINNER,
    GAME_OVER,
    GAME_WIDTH,
    NO_WINNER,
    ROUND_OVER,
    WIDTH,
    Dealer,
    apply_one,
    check_rows,
    final_returns,
    pick,
)
from hanamikoji_env.excerpt import short
from hanamikoji_env.observation import DEFAULT_VERSION, get_version, observation_space
from hanamikoji_env.rules import NUM_GEISHAS, check_seed, check_variant, validate_deck, variant_round_limit

# ------------------------------------------------------------- kernels ---


def _autoreset_mode(value: object) -> gymnasium.vector.AutoresetMode:
    """The mode as Gymnasium's enum, its value (``"NextStep"``) or its name (``"NEXT_STEP"``, any case);
    ``ValueError`` lists the accepted strings."""
    modes = (gymnasium.vector.AutoresetMode.NEXT_STEP, gymnasium.vector.AutoresetMode.SAME_STEP)
    for mode in modes:
        if value is mode or (isinstance(value, str) and value.upper() in (mode.name, mode.value.upper())):
            return mode
    accepted = ", ".join(f"{m.name!r} (or {m.value!r})" for m in modes)
    raise ValueError(f"autoreset_mode must be one of {accepted}, got {short(value)}")


@njit(cache=True)
def _apply_all(s, actions, active, round_limit, rewards, done, winners, rounds):
    """Apply ``actions[i]`` to every ``active`` row (all already checked legal); report the games
    that end."""
    for i in range(s.shape[0]):
        if active[i] and apply_one(s, i, actions[i], round_limit) == GAME_OVER:
            done[i] = True
            winners[i] = s[i, C_WINNER]
            rounds[i] = s[i, C_ROUND]
            final_returns(s, i, rewards[i])


@njit(cache=True)
def _uniform_actions(mask, u):
    out = np.empty(mask.shape[0], dtype=np.int64)
    for i in range(mask.shape[0]):
        out[i] = pick(mask[i], u[i])
    return out


def uniform_actions(mask: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """The legal action of each row of ``mask`` (int8 ``[N, 23]``) at the uniform ``uniforms[i]`` in
    [0, 1): each legal action has an equal share of [0, 1).  For callers that bring their own
    random numbers (common random numbers); ``-1`` where a row has no legal action."""
    return _uniform_actions(np.ascontiguousarray(mask, dtype=np.int8), np.asarray(uniforms, dtype=np.float64))


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (int8 ``[N, 23]``); a row with no
    legal action (a finished game that ``autoreset=False`` leaves, whose action the engine
    ignores) gets 0.  One uniform is drawn per row either way."""
    mask = np.ascontiguousarray(mask, dtype=np.int8)
    if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"mask must have shape [N, {NUM_ACTIONS}], got {mask.shape}")
    actions = _uniform_actions(mask, rng.random(mask.shape[0]))
    actions[~mask.any(axis=1)] = 0
    return actions


# ----------------------------------------------------------- the class ---


class BatchEngine:
    """``num_envs`` games stepped together; see the module docstring."""

    def __init__(
        self,
        num_envs: int,
        seed: int | None = None,
        round_limit: int | None = None,
        observation_version: int = DEFAULT_VERSION,
        autoreset: bool = True,
        variant: str = "full",
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {short(num_envs)}")
        self.variant = check_variant(variant)
        """The size of the game every row plays (:data:`hanamikoji_env.rules.VARIANTS`)."""
        self.round_limit = variant_round_limit(round_limit, self.variant)
        self.autoreset = bool(autoreset)
        """True: a finished game's row starts a new game in the same step.  False: it stays
        finished (its mask all zero, its actions ignored) until :meth:`reset_games`."""
        self.encoding = get_version(observation_version)
        """The observation version the rows are encoded in: its layout, encoders and spaces."""
        self.num_envs = int(num_envs)
        n = self.num_envs
        self._dealer = Dealer(n, np.random.default_rng(check_seed(seed)), "sort", self.variant)
        self._s = np.zeros((n, WIDTH), dtype=np.int32)
        self._obs = np.zeros((n, self.encoding.size), dtype=np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self._to_play = np.zeros(n, dtype=np.int8)
        self._reset_done = False

    def reset(
        self, seed: int | None = None, decks: Sequence[Sequence[Sequence[int]]] | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new game in every env; ``decks[i]`` scripts the rounds of env ``i``'s game."""
        parsed = self._parse_decks(decks)  # checked before any state changes
        if check_seed(seed) is not None:
            self._dealer.rng = np.random.default_rng(seed)
        self._dealer.script(parsed)
        self._dealer.deal(self._s, np.arange(self.num_envs), np.ones(self.num_envs, dtype=np.bool_))
        self._reset_done = True
        self._encode_to_move()
        return self._obs, self._mask.copy(), self._to_play.copy()

    def step(
        self,
        actions: np.ndarray | Sequence[int],
        restart: np.ndarray | None = None,
        final_view: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Apply one action per env; returns ``(obs, mask, to_play, rewards, done, info)``.
        ``restart`` (bool per env): those envs start a new game instead (their actions are
        ignored), as do those of finished games left by ``autoreset=False``.  ``final_view`` (a
        seat per env): ``info["final_obs"]`` holds that seat's observation of each game that
        ended, taken before its row starts a new game (zeros elsewhere)."""
        if not self._reset_done:
            raise RuntimeError("reset() must be called before step()")
        given = np.asarray(actions)
        if given.shape != (self.num_envs,) or given.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an int array of shape ({self.num_envs},), got {given.dtype} {given.shape}"
            )
        live = self._s[:, C_PHASE] != GAME_OVER
        if restart is not None:
            restart = np.asarray(restart)
            if restart.shape != (self.num_envs,) or restart.dtype != np.bool_:
                raise ValueError(f"restart must be a bool array of shape ({self.num_envs},)")
            if restart.any():
                self._new_games(np.flatnonzero(restart))
            live &= ~restart
        # range first, in the given dtype: a cast of np.uint64(2**63) to int64 would wrap around
        in_range = (given >= 0) & (given < NUM_ACTIONS)
        a = np.where(in_range, given, 0).astype(np.int64)
        legal = ~live | (in_range & (self._mask[np.arange(self.num_envs), a] == 1))
        if not legal.all():
            bad = np.flatnonzero(~legal)
            shown = ", ".join(
                f"env {i}: action {given[i]} (legal {np.flatnonzero(self._mask[i]).tolist()})"
                for i in bad[:10]
            )
            more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
            raise ValueError(f"illegal actions in {len(bad)} envs, nothing was stepped: {shown}{more}")
        n = self.num_envs
        rewards = np.zeros((n, 2), dtype=np.float32)
        done = np.zeros(n, dtype=np.bool_)
        winners = np.full(n, NO_WINNER, dtype=np.int8)  # per env: the winner of a game that just ended
        rounds = np.zeros(n, dtype=np.int32)
        _apply_all(self._s, a, live, self.round_limit or 0, rewards, done, winners, rounds)
        info = {"winner": winners, "rounds": rounds}
        if final_view is not None:  # encoded for the finished rows only, before they are dealt again
            info["final_obs"] = np.zeros_like(self._obs)
            if done.any():
                seats = np.asarray(final_view, dtype=np.int8)[done]
                views = np.zeros((len(seats), self.encoding.size), dtype=np.float32)
                masks = np.zeros((len(seats), NUM_ACTIONS), dtype=np.int8)
                self.encoding.encode_rows(self._s[done], seats, views, masks)
                info["final_obs"][done] = views
        phase = self._s[:, C_PHASE]
        rows = np.flatnonzero((phase == ROUND_OVER) | ((phase == GAME_OVER) & self.autoreset))
        if rows.size:
            self._dealer.game_ended(done)
            self._dealer.deal(self._s, rows, phase[rows] == GAME_OVER)
        self._encode_to_move()
        return self._obs, self._mask.copy(), self._to_play.copy(), rewards, done, info

    def reset_games(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new game in the envs ``rows`` (indices), shuffled from the engine's generator
        (their scripted decks are spent); returns every env's ``(obs, mask, to_play)``."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.ndim != 1 or ((rows < 0) | (rows >= self.num_envs)).any():
            raise ValueError(f"rows must be env indices in [0, {self.num_envs})")
        if rows.size:
            self._new_games(rows)
            self._encode_to_move()
        return self._obs, self._mask.copy(), self._to_play.copy()

    def observe(
        self, seats: np.ndarray, observation_version: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Observation and mask of any seat per env (all-zero mask where it is not on move);
        ``observation_version``: another version than the engine's (for a bot that reads it)."""
        seats = np.asarray(seats)
        if seats.shape != (self.num_envs,) or not np.isin(seats, (0, 1)).all():
            raise ValueError(f"seats must be {self.num_envs} values of 0 or 1")
        version = self.encoding if observation_version is None else get_version(observation_version)
        obs = np.zeros((self.num_envs, version.size), dtype=np.float32)
        mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        version.encode_rows(self._s, seats.astype(np.int8), obs, mask)
        return obs, mask

    def to_play(self) -> np.ndarray:
        """The seat to move per env."""
        return self._s[:, C_TO_MOVE].astype(np.int8)

    def markers(self) -> tuple[np.ndarray, np.ndarray]:
        """Public board facts per env: the round number ``[N]`` and marker owners ``[N, 7]``
        (0, 1 by seat, -1 centre), e.g. for reward shaping at each scoring."""
        return self._s[:, C_ROUND].copy(), self._s[:, C_MARKERS : C_MARKERS + NUM_GEISHAS].copy()

    def get_state(self) -> dict[str, Any]:
        """Everything needed to continue identically (for training checkpoints)."""
        return {
            "rows": self._s.copy(),
            "decks": self._dealer.decks.copy(),
            "n_decks": self._dealer.n_decks.copy(),
            "rng": self._dealer.rng.bit_generator.state,
            "reset_done": self._reset_done,
        }

    def set_state(self, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Restore :meth:`get_state`; returns the current ``(obs, mask, to_play)``."""
        rows = np.asarray(state["rows"], dtype=np.int32)
        if rows.ndim == 2 and rows.shape[1] in (GAME_WIDTH - 1, WIDTH - 1):  # saved before variants:
            rows = np.insert(rows, C_VARIANT, 0, axis=1)  # the full game's
        if rows.shape == (self.num_envs, GAME_WIDTH):  # saved before rows kept a log: an empty one
            rows = np.concatenate([rows, np.zeros((self.num_envs, WIDTH - GAME_WIDTH), np.int32)], axis=1)
        if rows.shape != (self.num_envs, WIDTH):
            raise ValueError(f"state rows must have shape ({self.num_envs}, {WIDTH}), got {rows.shape}")
        check_rows(rows)  # from a file: the kernels index with these values
        if (rows[:, C_VARIANT] != self.variant.index).any():
            raise ValueError(f"state rows are not all of this engine's variant ({self.variant.name})")
        self._s = rows.copy()
        self._dealer.decks = np.asarray(state["decks"], dtype=np.int8).copy()
        self._dealer.n_decks = np.asarray(state["n_decks"], dtype=np.int64).copy()
        self._dealer.rng = np.random.default_rng()
        self._dealer.rng.bit_generator.state = state["rng"]
        self._reset_done = bool(state["reset_done"])
        self._encode_to_move()
        return self._obs, self._mask.copy(), self._to_play.copy()

    # --------------------------------------------------------- helpers ---

    def _new_games(self, rows: np.ndarray) -> None:
        """Deal a new game into ``rows`` (their scripted decks spent)."""
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        ended[rows] = True
        self._dealer.game_ended(ended)
        self._dealer.deal(self._s, rows, np.ones(rows.size, dtype=np.bool_))

    def _encode_to_move(self) -> None:
        """Observation and mask of the seat to move, per row.  The observations go to a new array
        each time (every row is written whole), which the caller then owns: no copy of the
        largest array on the way out (version 2's rows are 669 floats)."""
        self._to_play[:] = self._s[:, C_TO_MOVE]
        self._obs = np.empty_like(self._obs)
        self.encoding.encode_rows(self._s, self._to_play, self._obs, self._mask)

    def _parse_decks(self, decks: object) -> list[list[tuple[int, ...]]]:
        """``decks[i]`` is env ``i``'s list of decks (rounds 1, 2, ...), each checked by
        :func:`rules.validate_deck`; lists may differ in length (ragged) or be empty."""
        n = self.num_envs
        if decks is None:
            return [[] for _ in range(n)]
        if isinstance(decks, (str, bytes)) or not isinstance(decks, (Sequence, np.ndarray)):
            raise ValueError(f"decks must be a list of {n} lists of decks, got {type(decks).__name__}")
        if len(decks) != n:
            raise ValueError(f"decks must hold one list of decks per env ({n}), got {len(decks)}")
        parsed: list[list[tuple[int, ...]]] = []
        for i, env_decks in enumerate(decks):
            if isinstance(env_decks, (str, bytes)) or not isinstance(env_decks, (Sequence, np.ndarray)):
                raise ValueError(
                    f"decks[{i}] must be a list of decks (each {self.variant.num_cards} geisha ids), "
                    f"got {type(env_decks).__name__}"
                )
            rows = []
            for r, deck in enumerate(env_decks):
                try:
                    rows.append(validate_deck(deck, self.variant))
                except ValueError as e:
                    raise ValueError(f"decks[{i}][{r}] (round {r + 1}): {e}") from None
            parsed.append(rows)
        return parsed


def __getattr__(name: str) -> Any:
    if name == "VectorHanamikoji":  # the engine's name before 0.2: kept working, with a warning
        import warnings

        warnings.warn(
            "VectorHanamikoji is now BatchEngine (the same class)", DeprecationWarning, stacklevel=2
        )
        return BatchEngine
    raise AttributeError(f"module {__name__!r} has no attribute {short(name)}")


class HanamikojiVectorEnv(gymnasium.vector.VectorEnv):
    """:class:`BatchEngine` behind Gymnasium's ``VectorEnv`` API, for two-player self-play.

    Observations are dicts of batched arrays: ``"observation"`` ``[N, 109]``,
    ``"action_mask"`` ``[N, 23]`` and ``"to_play"`` ``[N]`` (the seat each row
    belongs to); with ``flat=True`` they are the ``[N, 109]`` observation
    ``Box`` alone, and the mask and seat are in ``infos["action_mask"]`` and
    ``infos["to_play"]``, so Gymnasium's observation wrappers apply.  ``rewards``
    is ``[N]``, as the API requires: the reward of the seat that made this step's
    decision in that row (non-zero only on the step that ends a game).  Both
    seats' rewards are in ``infos["rewards"]`` (``[N, 2]`` by seat) and the acting
    seat in ``infos["acting_seat"]``; ``winner`` and ``rounds`` of the games that
    ended, with Gymnasium's ``_winner`` / ``_rounds`` masks.  Nothing is truncated.

    ``autoreset_mode`` follows Gymnasium's conventions:

    - ``NEXT_STEP`` (the default, as ``SyncVectorEnv``): the step that ends a game
      returns the acting seat's view of the final position (``terminated`` True,
      a mask of all ones: any action, since the next step ignores it); the next
      step starts a new game in that row, ignores its action and returns reward 0.
    - ``SAME_STEP``: the new game starts in the same step; the final view is in
      ``infos["final_obs"]`` and its info in ``infos["final_info"]`` (with their
      ``_final_obs`` / ``_final_info`` masks).

    docs/environment.md lists which of Gymnasium's vector wrappers run in each mode.
    """

    def __init__(
        self,
        num_envs: int,
        seed: int | None = None,
        round_limit: int | None = None,
        observation_version: int = DEFAULT_VERSION,
        autoreset_mode: gymnasium.vector.AutoresetMode | str = gymnasium.vector.AutoresetMode.NEXT_STEP,
        flat: bool = False,
        variant: str = "full",
    ) -> None:
        mode = _autoreset_mode(autoreset_mode)
        self.metadata = {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self.flat = bool(flat)
        same_step = mode == gymnasium.vector.AutoresetMode.SAME_STEP
        self.engine = BatchEngine(
            num_envs, seed, round_limit, observation_version, autoreset=same_step, variant=variant
        )
        self.num_envs = self.engine.num_envs
        space = observation_space(observation_version, to_play=True)
        self.single_observation_space = space["observation"] if self.flat else space
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._to_play = np.zeros(self.num_envs, dtype=np.int8)
        self._ended = np.zeros(self.num_envs, dtype=np.bool_)
        """NEXT_STEP: the rows whose game ended at the previous step (they restart now)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        obs, mask, self._to_play = self.engine.reset(seed=seed, decks=(options or {}).get("decks"))
        self._ended[:] = False
        batch, infos = self._batch(obs, mask, self._to_play)
        return batch, infos

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray] | np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acting = self._to_play
        everywhere = np.ones(self.num_envs, dtype=np.bool_)
        next_step = self.autoreset_mode == gymnasium.vector.AutoresetMode.NEXT_STEP
        obs, mask, to_play, rewards, done, info = self.engine.step(
            actions, restart=self._ended if next_step else None, final_view=acting
        )
        if next_step:  # the acting seat's view of the final position now; any action will do next
            obs[done] = info.pop("final_obs")[done]
            mask[done] = 1
            to_play[done] = acting[done]
            self._ended = done
        self._to_play = to_play
        batch, infos = self._batch(obs, mask, to_play)
        infos |= {
            "winner": info["winner"],
            "_winner": done,
            "rounds": info["rounds"],
            "_rounds": done,
            "rewards": rewards,
            "_rewards": everywhere,
            "acting_seat": acting.astype(np.int64),
            "_acting_seat": everywhere,
        }
        if "final_obs" in info and done.any():
            final = {"winner": info["winner"], "rounds": info["rounds"], "rewards": rewards}
            for i in np.flatnonzero(done):
                final_obs = info["final_obs"][i]
                if not self.flat:
                    final_obs = {"observation": final_obs, "action_mask": np.ones(NUM_ACTIONS, np.int8),
                                 "to_play": np.int64(acting[i])}  # fmt: skip
                one = {key: value[i] for key, value in final.items()}
                infos = self._add_info(infos, {"final_obs": final_obs, "final_info": one}, i)
        own = rewards[np.arange(self.num_envs), acting].astype(np.float64)
        return batch, own, done, np.zeros_like(done), infos

    def _batch(
        self, obs: np.ndarray, mask: np.ndarray, to_play: np.ndarray
    ) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        """The observation batch and the infos that carry what a flat observation leaves out."""
        if not self.flat:
            return {"observation": obs, "action_mask": mask, "to_play": to_play.astype(np.int64)}, {}
        everywhere = np.ones(self.num_envs, dtype=np.bool_)
        info = {"action_mask": mask, "_action_mask": everywhere, "to_play": to_play.astype(np.int64)}
        return obs, info | {"_to_play": everywhere}
