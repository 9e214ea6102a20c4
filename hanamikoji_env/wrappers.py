"""Single-agent Gymnasium view of the game, for Stable-Baselines3 and other single-agent code.

``SingleAgentEnv(opponent=..., learner_seat="random" | 0 | 1, **env_kwargs)``:
the learner plays one seat; the opponent plays the other seat inside
``step`` (and ``reset``, when it moves first).  The opponent may be

- a player spec (:mod:`hanamikoji_env.bots.spec`): ``"random"``, ``"heuristic"``,
  ``"search:samples=100"``, ``"ckpt:PATH"`` (a hanamikoji-env ``.pt`` policy or an SB3 ``.zip``);
- any bot object (``act(obs) -> int``, optionally ``reset(seed)``);
- a callable ``f(obs_dict) -> int``;
- a (frozen) Stable-Baselines3 model with ``predict``, e.g. a ``MaskablePPO``.

Observations are the learner's 109-float vector (669 with ``observation_version=2``,
perfect recall), actions ``Discrete(23)``,
and ``action_masks()`` gives the legal actions for sb3-contrib's
``MaskablePPO``.  The reward is the learner's own: 0 until the game ends,
then +1 / -1 (0 / 0 for a round-limit draw), whoever made the last move.  An
illegal learner action ends the episode with -1 (PettingZoo's classic
convention), says so in ``info["illegal_action"]`` and warns once per env;
``illegal_action="raise"`` raises instead.  Train and evaluate with the mask:
sb3-contrib's ``MaskablePPO`` and its ``MaskableEvalCallback`` (SB3's own
``EvalCallback`` ignores the mask, so its policy's illegal moves score -1).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hanamikoji_env.actions import NUM_ACTIONS, check_action
from hanamikoji_env.aec import AGENTS, raw_env
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import check_seed

Opponent = Any


class OpponentError(RuntimeError):
    """The opponent inside :class:`SingleAgentEnv` raised or chose an illegal move."""


class SingleAgentEnv(gymnasium.Env):
    """The learner's seat of a Hanamikoji game; see the module docstring."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        opponent: Opponent = "random",
        learner_seat: str | int = "random",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        **env_kwargs: Any,
    ) -> None:
        seat_ok = (
            learner_seat == "random"
            if isinstance(learner_seat, str)
            else (type(learner_seat) is int or isinstance(learner_seat, np.integer))
            and learner_seat in (0, 1)
        )
        if not seat_ok:  # True == 1 and 0.0 == 0 in Python: refuse them explicitly
            raise ValueError(f"learner_seat must be 'random', 0 or 1, got {short(learner_seat)}")
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {short(illegal_action)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        self.env = raw_env(**env_kwargs)
        self.learner_seat = learner_seat
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self._warned_illegal = False
        self.opponent = opponent
        self._act, self._reset_opponent, self._opponent_version = as_policy(opponent, self.env.round_limit)
        self.observation_space = self.env.observation_space(AGENTS[0])["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.learner = AGENTS[0]
        self._done = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=check_seed(seed))
        seat = int(self.np_random.integers(2)) if self.learner_seat == "random" else int(self.learner_seat)
        self.learner = AGENTS[seat]
        self.env.reset(seed=int(self.np_random.integers(2**31)), options=options)
        self._reset_opponent(int(self.np_random.integers(2**31)))
        self._done = False
        reward = self._opponent_moves()
        assert reward == 0.0  # the learner always has a decision before the game can end
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done:
            raise RuntimeError("step() after the episode ended: call reset()")
        mask = self.action_masks()
        a = check_action(action, self.learner)
        if not mask[a]:
            if self.illegal_action == "raise":
                raise ValueError(f"illegal action {a}; legal: {np.flatnonzero(mask).tolist()}")
            self._done = True
            if not self._warned_illegal:
                self._warned_illegal = True
                warnings.warn(
                    f"illegal action {a} ended the game with -1 (legal: {np.flatnonzero(mask).tolist()}); "
                    "pass action_masks() to the policy (sb3-contrib's MaskablePPO and "
                    "MaskableEvalCallback), or illegal_action='raise' to stop at the first one",
                    stacklevel=2,
                )
            return self._observation(), -1.0, True, False, {**self._info(), "illegal_action": True}
        self.env.step(a)
        reward = float(self.env.rewards[self.learner]) + self._opponent_moves()
        terminated = self._done = all(self.env.terminations.values())
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool), for ``MaskablePPO`` and masked policies.  Once the
        episode is over every action is allowed: a vector env's autoreset step ignores it, and a
        masked policy must be able to sample there (an all-false mask gives NaN logits)."""
        if self._done or self.env.agent_selection != self.learner or self.env.terminations[self.learner]:
            return np.ones(NUM_ACTIONS, dtype=bool)
        return self.env.observe(self.learner)["action_mask"].astype(bool)  # the env's own mask

    def render(self) -> str | None:
        text = self.env.render_for(self.learner)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _opponent_moves(self) -> float:
        """Let the opponent play until it is the learner's turn or the game is over."""
        reward = 0.0
        env = self.env
        while not all(env.terminations.values()) and env.agent_selection != self.learner:
            agent = env.agent_selection
            try:
                env.step(self._act(env.observe(agent, self._opponent_version)))
            except Exception as e:
                # the opponent's failure is not the learner's move: no reward, no next step
                self._done = True
                raise OpponentError(
                    f"the opponent {short(self.opponent)} failed ({type(e).__name__}: {e}); "
                    "the episode cannot go on: call reset()"
                ) from e
            reward += float(env.rewards[self.learner])
        self._done = all(env.terminations.values())
        return reward

    def _observation(self) -> np.ndarray:
        return self.env.observe(self.learner)["observation"]

    def _info(self) -> dict[str, Any]:
        info = dict(self.env.infos.get(self.learner, {}))
        info["action_mask"] = self.action_masks()
        info["learner_seat"] = self.learner
        return info


def as_policy(
    opponent: Opponent, round_limit: int | None = None
) -> tuple[Callable[[dict], int], Callable[[int], None], int | None]:
    """``(act, reset, observation_version)`` for any supported kind of opponent: its move and
    reset functions, and the observation version it reads (None: the env's)."""
    if isinstance(opponent, str):
        from hanamikoji_env.bots.spec import parse_player

        opponent = parse_player(opponent, load=False).make(seed=0, round_limit=round_limit)
    if hasattr(opponent, "act"):
        reset = getattr(opponent, "reset", None)
        version = getattr(opponent, "observation_version", None)
        return opponent.act, (lambda seed: reset(seed=seed)) if reset else (lambda seed: None), version
    if hasattr(opponent, "predict"):  # a Stable-Baselines3 model
        model = opponent
        maskable = "action_masks" in inspect.signature(model.predict).parameters

        def act(obs: dict) -> int:
            kwargs = {"action_masks": obs["action_mask"].astype(bool)} if maskable else {}
            action, _ = model.predict(obs["observation"], deterministic=True, **kwargs)
            if not obs["action_mask"][int(action)]:
                raise ValueError(f"the SB3 opponent chose illegal action {int(action)} (use MaskablePPO)")
            return int(action)

        return act, lambda seed: None, None
    if callable(opponent):
        return opponent, lambda seed: None, None
    raise ValueError(
        f"opponent must be a bot name or spec, a bot, a callable or an SB3 model, got {type(opponent).__name__}"
    )
