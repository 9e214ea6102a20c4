"""
# Hanamikoji

| Import             | `from hanamikoji_env import env`                  |
|--------------------|---------------------------------------------------|
| Creation           | `make("aec", "hanamikoji/Hanamikoji-v0")`         |
| Actions            | Discrete                                          |
| Parallel API       | No                                                |
| Agents             | `agents= ['player_0', 'player_1']`                |
| Action Shape       | (1,)                                              |
| Action Values      | Discrete(23)                                      |
| Observation Shape  | (109,) plus a (23,) action mask                   |
| Observation Values | [0, 255]                                          |

Hanamikoji is a two-player card game: seven geishas (charm 2, 2, 2, 3, 3, 4,
5), 21 item cards, and four action tokens each round (Secret, Trade-off,
Gift, Competition).  Whoever owns the favor of geishas worth 11+ charm points,
or else of 4+ geishas, after a round's scoring wins.  The rules are stated in docs/rules.md
(``hanamikoji-docs rules``) and implemented in :mod:`hanamikoji_env.rules`.

### Turns as decisions

Each turn is several AEC steps, each with its own action mask: the turn player
chooses a token (0..3), then the cards one at a time in non-decreasing geisha
order (4..10), then, for a Competition, the split (11..13); for a Gift or a
Competition the opponent then answers (14..20 take a Gift card, 21/22 take a
Competition set), and ``agent_selection`` moves to them for that decision only.
The draw at the start of a turn and the dealing of each round are automatic.
``player_0`` starts round 1; the starting player alternates every round.
See :mod:`hanamikoji_env.actions` for the id table.

### Observation space

A dict: ``"observation"`` is a float32 vector of 109 entries from the observing
player's perspective (layout table in :mod:`hanamikoji_env.observation` and
``docs/environment.md``), holding exactly what that player may know;
``"action_mask"`` is an int8 vector of 23, all zero for the agent not on move.  ``state()`` returns
the full-information global vector (185 entries) for centralized critics.

### Rewards

+1 to the winner and -1 to the loser when the game ends, 0 otherwise; 0 / 0
for a draw, which only a ``round_limit`` can produce.  After each scoring,
``infos[agent]["round_summary"]`` holds the public result of the latest scoring
(round, markers, points, geishas, revealed Secrets, cards on each side).

### Options

- ``round_limit`` (default ``None``, the official game): stop after that many
  scorings; more charm points wins, then more geishas, else a draw.
- ``variant`` (default ``"full"``): the size of the game.  ``"mini"`` is small
  enough to solve exactly: geishas 0, 3 and 5 only (charm 2, 3, 4; 9 cards),
  Secret and Gift only, one card removed, 2 dealt each, 4 in the pile, one
  round; 5 charm points or 2 geishas win, else more points, then more geishas,
  else a draw.  Same action ids and observation layout (a geisha or token not
  in play is never legal; its token shows as spent).
- ``observation_version`` (default 1): which observation layout agents get
  (:data:`hanamikoji_env.observation.VERSIONS`); a checkpoint plays with the
  version it was trained on.
- ``reset(seed=..., options={"decks": [deck_round_1, ...]})`` scripts the
  deals: each deck is 21 geisha ids ``[removed, player_0's 6, player_1's 6,
  draw pile top first (8)]``; later rounds are shuffled from the seed.
- Illegal actions: ``raw_env`` raises ``ValueError`` and leaves the game as it
  was.  ``env()`` follows PettingZoo's classic convention instead: the mover
  gets -1, the other agent 0, and the game ends (terminations all True).
  Non-integer or out-of-range actions are errors in both.

``env()`` gives the behaviour of PettingZoo's classic wrapper stack (order
enforcing, bounds checks, illegal-move termination) natively, without wrapper
layers, so it is as fast as ``raw_env``.

### Engine

The game runs on the compiled engine of record (:mod:`hanamikoji_env.engine`):
one int32 row, stepped by its kernels, observed by the one observation encoder
(:func:`hanamikoji_env.observation.encode_row`).  ``game`` gives the same
position as a readable :class:`~hanamikoji_env.rules.State` (for bots'
tools, renders and tests).

### Version History

The env is ``hanamikoji_v0``; its parts are versioned apart, each changing only
with behaviour:

* rules v1 (:data:`hanamikoji_env.rules.RULES_VERSION`): the rules of
  docs/rules.md, with the optional round limit.  Game records carry it.
* observation v1 (:data:`hanamikoji_env.observation.VERSIONS`): the 109-entry
  layout.  Checkpoints carry their version and its layout hash.
* v0: Initial release (rules v1, observation v1).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from hanamikoji_env import engine, rules
from hanamikoji_env.actions import NUM_ACTIONS, action_name, check_action
from hanamikoji_env.engine import C_PHASE, C_ROUND, C_TO_MOVE, C_WINNER, GAME_OVER, ROUND_OVER, Dealer
from hanamikoji_env.excerpt import short
from hanamikoji_env.observation import DEFAULT_VERSION, STATE_HIGH, encode_state, get_version
from hanamikoji_env.render import render_text
from hanamikoji_env.rules import RETURNS, Phase, RoundSummary, State

AGENTS = ("player_0", "player_1")
_SEATS = {agent: seat for seat, agent in enumerate(AGENTS)}
_NEEDS_RESET = frozenset(
    {"agents", "rewards", "terminations", "truncations", "infos", "agent_selection", "_cumulative_rewards"}
)


def env(
    render_mode: str | None = None,
    round_limit: int | None = None,
    illegal_action: Literal["raise", "terminate"] = "terminate",
    observation_version: int = DEFAULT_VERSION,
    variant: str = "full",
) -> raw_env:
    """The user-facing env: illegal moves end the game (mover -1), as in PettingZoo classic;
    the keywords are :class:`raw_env`'s."""
    return raw_env(render_mode, round_limit, illegal_action, observation_version, variant)


class raw_env(AECEnv[str, dict[str, np.ndarray], int]):
    """The Hanamikoji AEC environment (see the module docstring)."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "hanamikoji_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        round_limit: int | None = None,
        illegal_action: Literal["raise", "terminate"] = "raise",
        observation_version: int = DEFAULT_VERSION,
        variant: str = "full",
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {short(render_mode)}"
            )
        self.variant = rules.check_variant(variant)
        """The size of the game (:data:`hanamikoji_env.rules.VARIANTS`)."""
        round_limit = rules.variant_round_limit(round_limit, self.variant)
        self.encoding = get_version(observation_version)
        """The observation version this env encodes: its layout, encoders and spaces."""
        if illegal_action not in ("raise", "terminate"):
            raise ValueError(f"illegal_action must be 'raise' or 'terminate', got {short(illegal_action)}")
        self.render_mode = render_mode
        self.round_limit = round_limit
        self.illegal_action = illegal_action
        self.possible_agents = list(AGENTS)
        obs_space = self.encoding.space()
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self.state_space = spaces.Box(0.0, STATE_HIGH, STATE_HIGH.shape, np.float32)
        self._dealer: Dealer | None = None
        """Where each round's deck comes from (the env's generator and scripted decks)."""
        self._row: np.ndarray | None = None
        """The game: one engine row (``[1, WIDTH]`` int32), None before the first reset."""
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        """The legal mask of the seat to move."""
        self._last_round: RoundSummary | None = None
        self._view: State | None = None
        """``game``, built from the row on demand."""
        self._ahead: tuple[str, np.ndarray, np.ndarray] | None = None
        """The next mover's observation and mask, encoded by the kernel call of ``step``."""
        self._over = False
        """True once the game ended (terminations set): only then can a step be a dead step."""
        self._limit = round_limit or 0
        self._dealt: list[tuple[int, ...]] = []
        """The deck of every round dealt so far (for :meth:`history`)."""
        self._actions: list[tuple[int, int]] = []
        """(seat, action) of every legal decision so far."""
        self._summaries: list[dict[str, Any]] = []
        self._illegal_move: tuple[int, int] | None = None
        self._ended_by: str | None = None
        """What ended the game when it was not a scoring: an illegal move (``env()``)."""

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes that do not exist yet
        if name in _NEEDS_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset()")
        raise AttributeError(f"{short(type(self).__name__)} object has no attribute {short(name)}")

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- API ---

    @property
    def game(self) -> State:
        """The current position as a :class:`~hanamikoji_env.rules.State` (full information:
        for tools and tests, not for agents)."""
        row = self._require_reset("game")
        if self._view is None:
            self._view = engine.state_from_row(row[0], self.round_limit, self._last_round)
        return self._view

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # everything is checked before any state changes: a bad call leaves the env as it was
        seed = rules.check_seed(seed)
        decks = self._parse_options(options)
        if seed is not None or self._dealer is None:
            self._dealer = Dealer(1, np.random.default_rng(seed), "permutation", self.variant)
        self._dealer.script([decks])
        self.agents = list(AGENTS)
        self.rewards = {a: 0 for a in AGENTS}
        self._cumulative_rewards = {a: 0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._skip_agent_selection = None
        self._ended_by = None
        self._over = False
        self._last_round = None
        self._dealt, self._actions, self._summaries, self._illegal_move = [], [], [], None
        self._row = engine.blank_row(self.variant)
        self._deal(new_game=True)
        self._row_changed()

    def step(self, action: int | None) -> None:
        row = self._row
        if row is None:
            self._require_reset("step")
        if not self.agents:
            warnings.warn(
                "step() called after the game ended and every agent was removed; call reset()", stacklevel=2
            )
            return
        agent = self.agent_selection
        if self._over and (self.terminations[agent] or self.truncations[agent]):
            self._was_dead_step(action)
            return
        # the fast path of _as_action: a plain int in range
        a = action if type(action) is int and 0 <= action < NUM_ACTIONS else _as_action(action, agent)
        self._cumulative_rewards[agent] = 0
        code = engine.play(row, a, self._limit, self._mask)
        if code < 0:
            self._illegal(agent, a)
            return
        self._actions.append((_SEATS[agent], a))
        self._view = None
        phase = code >> 1
        if phase >= ROUND_OVER:
            self._last_round = summary = engine.round_summary(row[0])
            self._summaries.append(summary.as_dict())
            self.infos = {a: {"round_summary": summary.as_dict()} for a in self.agents}  # one dict each
            if phase == GAME_OVER:
                r0, r1 = RETURNS[int(row[0, C_WINNER])]
                self._end({AGENTS[0]: r0, AGENTS[1]: r1})
                self._render_human()  # the final scoring and the winner
                return
            self._deal(new_game=False)
            self._row_changed()
        else:
            self.agent_selection = agent = AGENTS[code & 1]
            obs, mask = np.empty(self.encoding.size, np.float32), np.empty(NUM_ACTIONS, np.int8)
            self.encoding.encode_row(row, 0, code & 1, obs, mask)
            self._ahead = (agent, obs, mask)
        if self.render_mode == "human":
            self.render()

    def _illegal(self, agent: str, a: int) -> None:
        """An illegal action: ``raw_env`` raises, ``env()`` ends the game with -1 for the mover."""
        legal = np.flatnonzero(self._mask).tolist()
        phase = Phase(int(self._row[0, C_PHASE]))  # type: ignore[index]
        message = (
            f"illegal action {a} ({action_name(a)}) for {agent} in phase {phase.name}; "
            f"legal action ids: {legal}"
        )
        if self.illegal_action == "raise":
            raise ValueError(message)
        warnings.warn(message + "; the game ends with -1 for the mover", stacklevel=3)
        other = AGENTS[1 - AGENTS.index(agent)]
        self._illegal_move = (_SEATS[agent], a)
        self._ended_by = (
            f"game over: {agent} played illegal action {a} ({action_name(a)}); {agent} -1, {other} 0"
        )
        self._end({agent: -1, other: 0})
        self._render_human()

    def observe(self, agent: str, observation_version: int | None = None) -> dict[str, np.ndarray]:
        """``agent``'s observation and mask; ``observation_version``: another version than the
        env's (for a bot trained on it)."""
        row = self._row
        if row is None:
            self._require_reset("observe")
        ahead = self._ahead
        version = self.encoding
        if observation_version is not None and observation_version != version.number:
            version, ahead = get_version(observation_version), None
        if ahead is not None and ahead[0] == agent:  # encoded by step(): fresh arrays, handed out once
            self._ahead = None
            obs, mask = ahead[1], ahead[2]
        else:
            seat = _SEATS[agent] if agent in _SEATS else _seat(agent)
            obs, mask = np.empty(version.size, np.float32), np.empty(NUM_ACTIONS, np.int8)
            version.encode_row(row, 0, seat, obs, mask)
        if self._over and self.terminations.get(agent, True):
            mask.fill(0)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        self._require_reset("state")
        return encode_state(self.game)

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """PettingZoo's agent iteration, as a generator (less overhead per step)."""
        self._require_reset("agent_iter")
        return _agents(self, max_iter)

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict]:
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def history(self) -> GameHistory:
        """What happened in this game so far (full information, like ``game``: for records and
        tools, never for agents): every deck dealt, every legal action with its seat, the
        scorings, and the result once the game is over.  :func:`hanamikoji_env.records.from_env`
        turns it into a game record."""
        row = self._require_reset("history")
        winner = int(row[0, C_WINNER])
        over = self._over
        if self._illegal_move is not None:
            rewards = (-1.0, 0.0) if self._illegal_move[0] == 0 else (0.0, -1.0)
        else:
            rewards = RETURNS[winner] if over else (0.0, 0.0)
        return GameHistory(
            decks=list(self._dealt),
            actions=list(self._actions),
            round_summaries=[dict(s) for s in self._summaries],
            over=over,
            winner=None if not over or self._illegal_move is not None else winner,
            rewards=rewards,
            round=int(row[0, C_ROUND]),
            illegal=self._illegal_move,
        )

    def render(self) -> str | np.ndarray | None:
        """The public view: ``"ansi"`` returns it as text, ``"human"`` prints it, ``"rgb_array"``
        returns an image (``[H, W, 3]`` uint8) of the table."""
        if self.render_mode is None:
            warnings.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'",
                stacklevel=2,
            )
            return None
        if self.render_mode == "rgb_array":
            return self._image(None)
        text = self._text(None)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def render_for(self, agent: str, mode: Literal["ansi", "rgb_array"] = "ansi") -> str | np.ndarray:
        """The table as ``agent`` sees it: the public view plus its own private cards, as text
        (``"ansi"``) or as an image (``"rgb_array"``)."""
        if mode == "rgb_array":
            return self._image(_seat(agent))
        if mode != "ansi":
            raise ValueError(f"mode must be 'ansi' or 'rgb_array', got {short(mode)}")
        return self._text(_seat(agent))

    def close(self) -> None:
        pass

    # ------------------------------------------------------------ helpers ---

    def _text(self, seat: int | None) -> str:
        self._require_reset("render")
        text = render_text(self.game, seat, AGENTS)
        return text if self._ended_by is None else f"{text}\n{self._ended_by}"

    def _image(self, seat: int | None) -> np.ndarray:
        self._require_reset("render")
        from hanamikoji_env.image import draw_table  # Pillow only when images are asked for

        return draw_table(self.game, seat, AGENTS)

    def _render_human(self) -> None:
        if self.render_mode == "human":
            self.render()

    def _row_changed(self) -> None:
        """After the row changed: the new legal mask and who decides next."""
        self._view = None
        self._ahead = None
        engine.legal(self._row, 0, self._mask)
        self.agent_selection = AGENTS[self._row[0, C_TO_MOVE]]

    def _end(self, rewards: dict[str, float]) -> None:
        self._over = True
        self._ahead = None
        self.rewards = dict(rewards)
        self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()

    def _require_reset(self, what: str) -> np.ndarray:
        if self._row is None:
            raise RuntimeError(f"reset() must be called before {what}()")
        return self._row

    def _deal(self, new_game: bool) -> None:
        """Deal the next round (or the game's first): scripted, else shuffled from the env's generator."""
        assert self._dealer is not None and self._row is not None
        deck = self._dealer.deal(self._row, np.zeros(1, dtype=np.int64), np.array([new_game]))
        self._dealt.append(tuple(deck[0].tolist()))

    def _parse_options(self, options: dict[str, Any] | None) -> list[tuple[int, ...]]:
        if options is None:
            return []
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        # other keys are ignored, as PettingZoo's envs do (its api_test passes {"options": 1}),
        # but a misspelt "decks" must not silently deal random cards
        for key in options:
            if key != "decks" and isinstance(key, str) and difflib.get_close_matches(key, ["decks"], 1, 0.7):
                raise ValueError(f"unknown reset option {short(key)}: did you mean 'decks'?")
        decks = options.get("decks")
        if decks is None:
            return []
        if isinstance(decks, (str, bytes)) or not hasattr(decks, "__len__"):
            raise ValueError(f"options['decks'] must be a list of decks, got {type(decks).__name__}")
        parsed = []
        for i, deck in enumerate(decks):
            try:
                parsed.append(rules.validate_deck(deck, self.variant))
            except ValueError as e:
                raise ValueError(f"options['decks'][{i}] (round {i + 1}): {e}") from None
        return parsed


class GameHistory(NamedTuple):
    """:meth:`raw_env.history`: a game so far, by seat."""

    decks: list[tuple[int, ...]]
    actions: list[tuple[int, int]]
    round_summaries: list[dict[str, Any]]
    over: bool
    winner: int | None
    """0, 1, -1 (a draw); None while playing or after an illegal move."""
    rewards: tuple[float, float]
    round: int
    illegal: tuple[int, int] | None


def _agents(env: raw_env, max_iter: int) -> Iterator[str]:
    left = max_iter
    while left > 0 and env.agents:
        left -= 1
        yield env.agent_selection


def _seat(agent: str) -> int:
    if agent == "player_0":
        return 0
    if agent == "player_1":
        return 1
    raise ValueError(f"unknown agent {short(agent)}; agents are {list(AGENTS)}")


def _as_action(action: object, agent: str) -> int:
    if action is None:
        raise ValueError(f"action None is only valid for a terminated agent; {agent} is still playing")
    return check_action(action, agent)
