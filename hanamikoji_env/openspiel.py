"""Hanamikoji as an OpenSpiel game, ``python_hanamikoji`` (needs the ``openspiel`` extra).

    import pyspiel
    import hanamikoji_env.openspiel  # registers the game
    game = pyspiel.load_game("python_hanamikoji")           # or "python_hanamikoji(round_limit=3)"
    # parameters: round_limit (default 12), observation_version (default 1), variant (default "full")
    mini = pyspiel.load_game("python_hanamikoji(variant=mini)")  # small enough to solve exactly

The game plays on the engine of record (:mod:`hanamikoji_env.engine`, one row
per state) and shows each player the env's own observation, so OpenSpiel's
algorithms (ISMCTS, MCTS, CFR-family, NFSP, policy evaluation) see exactly the
game our env plays; ``tests/test_openspiel.py`` proves it on 1,000 random games
against the AEC env.

- **Decisions**: the env's 23 action ids and decision structure (token, cards
  one at a time, split, the opponent's answer), legal actions from its masks.
- **Chance**: explicit chance nodes deal each round card by card (the removed
  card, player 0's six, player 1's six, then the starting player's draw) and
  every later draw.  An outcome is a geisha id 0..6 with probability
  (cards of it not yet dealt this round) / (cards not yet dealt).  A deck
  ``[removed, hand 0, hand 1, pile...]`` of the env is exactly that sequence of
  outcomes.
- **Variants**: ``variant=mini`` (:data:`hanamikoji_env.rules.MINI`: three geishas, Secret
  and Gift, one round; its own round limit of 1) deals its 9 cards the same way; OpenSpiel's
  exact tools (``exploitability.nash_conv``, CFR, CFR+) walk its whole tree in minutes.
- **Returns**: +1 / -1, or 0 / 0 for a draw, at the end only.
- **Length**: OpenSpiel needs a finite game.  ``round_limit`` (default
  :data:`DEFAULT_ROUND_LIMIT` = 12) ends the game after that many scorings with
  the env's tie-breaks (more charm points, then more geishas, else a draw).  The
  longest of 100,000 random games lasted 7 rounds, so the cap almost never
  binds; ``round_limit=N`` gives the env's short variant.
- **Observations**: ``observation_tensor(p)`` is the env's observation vector of
  ``p`` in the game's ``observation_version`` (version 1: 109 floats,
  "me"/"opponent" perspective, layout in :mod:`hanamikoji_env.observation`).
  ``observation_string`` is the same view as text.
- **Information states** (perfect recall): ``information_state_tensor(p)`` is
  ``p``'s observation version 2 (669 floats, whatever ``observation_version``
  says): version 1, then everything ``p`` observed in each of the last 4 rounds
  (the round cap of version 2: in a game of more rounds the oldest drops out).
  ``information_state_string`` is the player and a chained digest of every view
  ``p`` has had so far in the game (each change of its view, its own choices
  included), with no cap.  ``tests/test_recall.py`` checks that two histories
  get the same tensor and string exactly when they showed ``p`` the same views.
  Nothing the player may not know enters any of them: the same no-leak test as
  the env's.
- **Clone, serialize**: states copy their row; serialization is OpenSpiel's
  own (the history of actions, replayed).
- **Resampling** (for ISMCTS): ``resample_from_infostate(player, sampler)``
  deals what ``player`` has not seen again at random; the player's information
  state (string and tensor), observation and legal actions stay the same.  The
  round is played again from its deal with the opponent's first hand, draws,
  Secret and Trade-off made the new deal's, so every view of it, the opponent's
  and those after a scoring included, is that of one deal (``history()`` stays
  the game's).  Earlier rounds are as they were.
- **From a position**: ``HanamikojiState.from_position(game, state)`` starts at a
  :class:`~hanamikoji_env.rules.State`'s decision; a State has no past, so its
  information-state tensor recalls nothing before it.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

import numpy as np
import pyspiel

from hanamikoji_env import engine
from hanamikoji_env.actions import CARD_BASE, NUM_ACTIONS, SECRET, TRADEOFF, action_name
from hanamikoji_env.engine import C_CURRENT, C_PHASE, C_TURN, C_WINNER, GAME_OVER, ROUND_OVER, TOKEN_PHASE
from hanamikoji_env.observation import DEFAULT_VERSION, VERSIONS, ObservationVersion, decode, get_version
from hanamikoji_env.rules import (
    FULL,
    NUM_GEISHAS,
    RETURNS,
    State,
    Variant,
    cards_of,
    check_round_limit,
    check_variant,
    variant_round_limit,
)

RECALL = VERSIONS[2]
"""The information-state tensor's encoding: observation version 2, perfect recall."""
DEFAULT_ROUND_LIMIT = 12
"""Scorings after which a game ends with the round-limit tie-breaks (OpenSpiel needs a finite game)."""


def deal_outcomes(variant: Variant = FULL) -> int:
    """Chance outcomes that open a round: the removed card, both hands, the starting player's draw."""
    return variant.num_removed + 2 * variant.hand_size + 1


DEAL_OUTCOMES = deal_outcomes()
DECISIONS_PER_ROUND = 34
"""At most, per round: each player's 4 tokens, 10 cards, 1 split and 2 answers."""
CHANCE_PER_ROUND = DEAL_OUTCOMES + FULL.draw_pile_size - 1

_GAME_TYPE = pyspiel.GameType(
    short_name="python_hanamikoji",
    long_name="Python Hanamikoji",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={
        "round_limit": DEFAULT_ROUND_LIMIT,
        "observation_version": DEFAULT_VERSION,
        "variant": FULL.name,
    },
)


class HanamikojiGame(pyspiel.Game):
    """The game: its facts (:class:`pyspiel.GameType`, :class:`pyspiel.GameInfo`) and its states."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {
            "round_limit": DEFAULT_ROUND_LIMIT,
            "observation_version": DEFAULT_VERSION,
            "variant": FULL.name,
            **(params or {}),
        }
        variant = check_variant(params["variant"])
        limit = params["round_limit"]
        if limit is None:  # the one input the envs take and this game cannot: it must end
            raise ValueError("round_limit must be an int here: OpenSpiel needs a finite game")
        if variant.round_limit is not None:  # the variant's own cap (pyspiel passes the default 12)
            limit = variant_round_limit(None if limit == DEFAULT_ROUND_LIMIT else limit, variant)
        limit = check_round_limit(limit)
        version = get_version(params["observation_version"])
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_GEISHAS,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=limit * (DECISIONS_PER_ROUND + CHANCE_PER_ROUND),
        )
        super().__init__(
            _GAME_TYPE,
            info,
            {"round_limit": limit, "observation_version": version.number, "variant": variant.name},
        )
        self.round_limit = limit
        self.version = version
        self.variant = variant

    def new_initial_state(self) -> HanamikojiState:
        return HanamikojiState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> HanamikojiObserver:
        return HanamikojiObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params, self.version.layout
        )


class HanamikojiState(pyspiel.State):
    """A position: an engine row, plus the round's deal in progress and what each player has seen."""

    def __init__(self, game: HanamikojiGame) -> None:
        super().__init__(game)
        self._limit = game.round_limit
        self._version_number = game.version.number
        """The observation version, by number: a clone (a deep copy) then copies an int, not
        the version's compiled encoders."""
        self._variant = game.variant
        self._row = engine.blank_row(game.variant)  # before the first deal, as rules.new_game starts
        self._dealt: list[int] | None = []
        """The outcomes of the round's opening deal so far (None once it is dealt)."""
        self._pool = np.array(game.variant.values, dtype=np.int64)
        """Cards not dealt yet this round, per geisha: where chance draws from."""
        self._drawing = -1
        """The seat waiting for its draw (a chance node), or -1."""
        self._new_game = True
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._views: list[bytes] = [b"", b""]
        """Each player's latest view."""
        self._digests: list[bytes] = [b"", b""]
        """Each player's chained digest of every change of its view: its perfect recall."""
        self._record_views()
        self._round_start: _RoundStart | None = None
        """The state as this round's deal began (None: from_position, no deal seen)."""

    # ------------------------------------------------------------ OpenSpiel ---

    def current_player(self) -> int:
        if self._dealt is not None or self._drawing >= 0:
            return pyspiel.PlayerId.CHANCE
        if self._row[0, C_PHASE] == GAME_OVER:
            return pyspiel.PlayerId.TERMINAL
        return int(self._row[0, engine.C_TO_MOVE])

    def _legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(self._mask).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        total = int(self._pool.sum())
        return [(g, int(n) / total) for g, n in enumerate(self._pool) if n]

    def _apply_action(self, action: int) -> None:
        if self._dealt == []:  # a round's deal begins: where a resample replays this round from
            self._round_start = _RoundStart(
                self._row.copy(), self._pool.copy(), tuple(self._digests), tuple(self._views),
                self._new_game, len(self.history()),
            )  # fmt: skip
        self._step(action)

    def _step(self, action: int) -> None:
        if self._dealt is not None:
            self._deal(action)
        elif self._drawing >= 0:
            self._draw(action)
        else:
            row = self._row
            turn = row[0, C_TURN]
            phase = engine.apply_one(row, 0, action, self._limit)
            if phase == ROUND_OVER:
                self._dealt, self._pool = [], np.array(self._variant.values, dtype=np.int64)
            elif phase == TOKEN_PHASE and row[0, C_TURN] != turn:  # a new turn: its player drew
                engine.unset_draw(row, 0)  # the placeholder card is taken back: chance draws the real one
                self._drawing = int(row[0, C_CURRENT])
            engine.legal(row, 0, self._mask)
        self._record_views()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal:geisha{action}"
        return action_name(int(action))

    def is_terminal(self) -> bool:
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        return list(RETURNS[int(self._row[0, C_WINNER])])

    def __str__(self) -> str:
        return repr(self.position())

    # ---------------------------------------------------------- the position ---

    def position(self) -> State:
        """The position as a :class:`~hanamikoji_env.rules.State` (full information; during a
        deal, the position before it; the draw pile holds placeholders for cards chance has not drawn)."""
        return engine.state_from_row(self._row[0], self._limit, None)

    def encode(self, player: int, obs: np.ndarray, version: ObservationVersion | None = None) -> None:
        """Write ``player``'s observation vector into ``obs``: of the game's version, or of
        ``version`` (:data:`RECALL` for the information-state tensor)."""
        (version or VERSIONS[self._version_number]).encode_row(
            self._row, 0, player, obs, np.empty(NUM_ACTIONS, dtype=np.int8)
        )

    def history_digest(self, player: int) -> str:
        """A digest of every view ``player`` has had in this game, in order."""
        return self._digests[player].hex()

    def resample(self, player: int, rng: np.random.Generator) -> HanamikojiState:
        """A state ``player`` cannot tell from this one: what it has not seen (the opponent's
        hand, Secret and Trade-off, the removed card, the undealt cards) dealt again at random."""
        from hanamikoji_env.infoset import determinize

        if self.current_player() != player:
            raise ValueError("resampling is for the player to move")
        if self._variant != FULL:
            raise ValueError(
                f"resampling deals the full game's cards, not the {self._variant.name} variant's"
            )
        obs = np.empty(VERSIONS[1].size, dtype=np.float32)
        self.encode(player, obs, VERSIONS[1])  # what determinize reads
        world = determinize(obs, rng, self._limit)  # the player as seat 0
        world = world if player == 0 else swap_seats(world)
        if self._round_start is None:  # from_position: no past this round, nothing to replay
            twin = self.clone()
            twin._set_position(world)
            return twin
        return self._replayed(world, 1 - player, rng)

    def _replayed(self, world: State, seat: int, rng: np.random.Generator) -> HanamikojiState:
        """This round played again from its deal with ``seat``'s hidden cards those of ``world``
        (what :meth:`resample` dealt): the same moves, but ``seat``'s first hand, its draws, the
        cards under its Secret and Trade-off and the removed card such that it holds ``world``'s
        cards now, so every view (and digest) of the copy is that of one deal.  Each of ``seat``'s
        draws is a card it holds now or plays at that turn or later (chosen at random, from its
        last turn back): its first hand is then what it ever held minus its draws, and covers
        each of its plays."""
        start = self._round_start
        assert start is not None
        row = self._row[0]
        at = engine.log_at(int(row[engine.C_ROUND]))
        log = [int(w) for w in row[at : at + engine.TURNS_PER_ROUND]]
        starter = int(row[engine.C_STARTER])
        hidden = {SECRET: [world.secrets[seat]], TRADEOFF: list(cards_of(world.tradeoffs[seat]))}
        held, draws, played = list(cards_of(world.hands[seat])), {}, []
        for t in range(engine.TURNS_PER_ROUND - 1, -1, -1):
            if (starter + t) % 2 != seat or not log[t]:
                continue
            token, count = (
                engine.log_field(log[t], engine.F_TOKEN) - 1,
                engine.log_field(log[t], engine.F_COUNT),
            )
            cards = hidden[token][:count] if token in hidden else [
                engine.log_field(log[t], engine.F_CARDS + 3 * k) for k in range(count)
            ]  # fmt: skip
            held, played = held + cards, played + cards
            if engine.log_field(log[t], engine.F_DRAW):
                draws[t] = held.pop(int(rng.integers(len(held))))
        first = list(cards_of(world.hands[seat])) + played
        for card in draws.values():
            first.remove(card)
        history = self.history()[start.history :]
        size = self._variant.hand_size
        deal = list(history[:DEAL_OUTCOMES])
        deal[0], deal[1 + size * seat : 1 + size * (seat + 1)] = world.removed, sorted(first)
        if starter == seat:
            deal[-1] = draws[0]
        twin = self.clone()
        twin._row, twin._pool = start.row.copy(), start.pool.copy()
        twin._digests, twin._views = list(start.digests), list(start.views)
        twin._dealt, twin._drawing, twin._new_game = [], -1, start.new_game
        for k, action in enumerate(history):
            r = twin._row[0]
            if k < DEAL_OUTCOMES:
                action = deal[k]
            elif twin._drawing == seat:  # its draw of a later turn
                action = draws[int(r[C_TURN])]
            elif twin._drawing < 0 and r[C_CURRENT] == seat and r[C_PHASE] == engine.SELECT_PHASE:
                cards = hidden.get(int(r[engine.C_TOKEN]))
                action = action if cards is None else CARD_BASE + cards[int(r[engine.C_SEL_LEN])]
            twin._step(action)
        return twin

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> HanamikojiState:
        """OpenSpiel's hook (ISMCTS calls it): :meth:`resample` with a generator seeded from
        ``probability_sampler()`` (a uniform in [0, 1))."""
        return self.resample(player, np.random.default_rng(int(probability_sampler() * 2**53)))

    @classmethod
    def from_position(cls, game: HanamikojiGame, state: State) -> HanamikojiState:
        """A state at ``state``'s decision, its draw pile as the cards chance can still deal."""
        if state.phase >= ROUND_OVER:
            raise ValueError("from_position needs a position with a decision to make")
        new = cls(game)
        new._dealt = None
        new._new_game = False
        new._set_position(state)
        new._views, new._digests = [b"", b""], [b"", b""]
        new._record_views()
        return new

    # --------------------------------------------------------------- helpers ---

    def _set_position(self, state: State) -> None:
        log = self._row[0, engine.C_LOG :].copy()
        self._row = engine.rows_from_states([state])
        self._row[0, engine.C_LOG :] = log  # the past as it was (none for from_position's new state)
        self._pool = np.bincount(np.array(state.draw_pile, dtype=np.int64), minlength=NUM_GEISHAS)
        engine.legal(self._row, 0, self._mask)

    def _deal(self, card: int) -> None:
        assert self._dealt is not None
        self._dealt.append(card)
        self._pool[card] -= 1
        if len(self._dealt) == deal_outcomes(self._variant):  # the pile after the first draw: placeholders
            deck = np.array(self._dealt + [0] * (self._variant.draw_pile_size - 1), dtype=np.int64)
            engine.deal(self._row, 0, deck, self._new_game)
            self._dealt, self._new_game = None, False
            engine.legal(self._row, 0, self._mask)

    def _draw(self, card: int) -> None:
        engine.set_draw(self._row, 0, card)
        self._pool[card] -= 1
        self._drawing = -1

    def _record_views(self) -> None:
        obs = np.empty(VERSIONS[self._version_number].size, dtype=np.float32)
        for player in (0, 1):
            self.encode(player, obs)
            view = obs.astype(np.uint8).tobytes()
            if view != self._views[player]:
                self._views[player] = view
                self._digests[player] = hashlib.blake2b(self._digests[player] + view, digest_size=16).digest()


class _RoundStart(NamedTuple):
    """A state as a round's deal began, and where the game's history was then."""

    row: np.ndarray
    pool: np.ndarray
    digests: tuple[bytes, bytes]
    views: tuple[bytes, bytes]
    new_game: bool
    history: int


def swap_seats(state: State) -> State:
    """The same position with the seats' roles exchanged (seat 0's cards become seat 1's)."""

    def flip(seat: int) -> int:
        return 1 - seat if seat in (0, 1) else seat

    return state._replace(
        starter=1 - state.starter,
        current=1 - state.current,
        to_move=1 - state.to_move,
        hands=state.hands[::-1],
        secrets=state.secrets[::-1],
        tradeoffs=state.tradeoffs[::-1],
        placed=state.placed[::-1],
        markers=tuple(flip(m) for m in state.markers),
        spent=state.spent[::-1],
        winner=None if state.winner is None else flip(state.winner),
    )


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(int(x)) for x in value)
    return value.name if hasattr(value, "name") else str(int(value))


class HanamikojiObserver:
    """What a player observes: the env's observation vector, and as text; with perfect recall,
    observation version 2 and the history digest.  Only a player's own view is offered."""

    def __init__(
        self, iig_obs_type: Any, params: dict | None, layout: tuple = VERSIONS[DEFAULT_VERSION].layout
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                "python_hanamikoji offers each player's own view (public and its private information)"
            )
        self.perfect_recall = iig_obs_type.perfect_recall
        if self.perfect_recall:  # the information state: observation version 2
            layout = RECALL.layout
        self.tensor = np.zeros(sum(f.length for f in layout), np.float32)
        self.dict = {f.name: self.tensor[f.offset : f.offset + f.length] for f in layout}

    def set_from(self, state: HanamikojiState, player: int) -> None:
        state.encode(player, self.tensor, RECALL if self.perfect_recall else None)

    def string_from(self, state: HanamikojiState, player: int) -> str:
        if self.perfect_recall:
            return f"p{player} history={state.history_digest(player)}"
        obs = np.empty(VERSIONS[1].size, dtype=np.float32)
        state.encode(player, obs, VERSIONS[1])  # the readable decoder is version 1's
        fields = decode(obs)._asdict().items()
        return f"p{player} " + " ".join(f"{key}={_text(value)}" for key, value in fields)


pyspiel.register_game(_GAME_TYPE, HanamikojiGame)
