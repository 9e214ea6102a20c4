"""A batch engine: many Hanamikoji games stepped at once, for training and evaluation.

:class:`VectorHanamikoji` plays ``num_envs`` games with the same rules, action
ids, masks and observation vectors as the AEC env (``tests/test_vector.py``
proves it identical over thousands of games; ``benchmarks/vector_diff.py`` over
100,000).  The per-game logic is compiled with numba; each game is one row of
an int32 state matrix.  Finished games reset themselves.

Two-player self-play: each step's ``obs``, ``mask`` belong to the seat in
``to_play``; feed them to the policy of that seat and pass its actions back::

    venv = VectorHanamikoji(4096, seed=0)
    obs, mask, to_play = venv.reset()
    for _ in range(1000):
        actions = random_actions(mask, rng)          # or policy[to_play](obs, mask)
        obs, mask, to_play, rewards, done, info = venv.step(actions)
        # rewards[i] = (seat 0, seat 1), non-zero only where done[i];
        # info["winner"][i] / info["rounds"][i] describe game i that just ended,
        # and obs[i] is already the first decision of its next game.

:class:`HanamikojiVectorEnv` wraps it in Gymnasium's ``VectorEnv`` API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from numba import njit

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.observation import MAX_ROUND, OBS_HIGH, OBS_SIZE, OFFSETS
from hanamikoji_env.rules import FULL_DECK, NUM_CARDS, VALUES, State, validate_deck

# ----------------------------------------------------- the state matrix ---
# one row per game; columns:
ROUND, STARTER, TURN, CURRENT, TO_MOVE, PHASE, TOKEN = 0, 1, 2, 3, 4, 5, 6
SEL_LEN, OFFER_LEN, PILE_POS, REMOVED, WINNER, SECRET = 7, 8, 9, 10, 11, 12  # SECRET: 12, 13
HANDS, TRADE, PLACED = 14, 28, 42  # 2 x 7 each, seat-major
MARKERS = 56  # 7, -1 centre
SPENT = 63  # 2 x 4
SEL, OFFER, PILE = 71, 75, 79  # 4, 4, 8
WIDTH = 87

NO_WINNER = -2
DRAW = -1
_TOKEN, _SELECT, _SPLIT, _GIFT, _COMP, _ROUND_OVER, _GAME_OVER = 0, 1, 2, 3, 4, 5, 6
_SIZES = np.array([1, 2, 3, 4], dtype=np.int32)
_VALUES = np.array(VALUES, dtype=np.int32)
_SPLITS = np.array([[0, 1, 2, 3], [0, 2, 1, 3], [0, 3, 1, 2]], dtype=np.int32)
_FULL_DECK = np.array(FULL_DECK, dtype=np.int8)

# observation offsets (compile-time constants for numba)
O_PHASE = OFFSETS["phase"].start
O_MINE = OFFSETS["my_decision"].start
O_HAND = OFFSETS["hand"].start
O_SECRET = OFFSETS["secret"].start
O_TRADE = OFFSETS["tradeoff"].start
O_TOKEN = OFFSETS["token"].start
O_SEL = OFFSETS["selection"].start
O_OFFER = OFFSETS["offer"].start
O_SET_A = OFFSETS["set_a"].start
O_SET_B = OFFSETS["set_b"].start
O_P_ME = OFFSETS["placed_me"].start
O_P_OPP = OFFSETS["placed_opp"].start
O_M_ME = OFFSETS["marker_me"].start
O_M_OPP = OFFSETS["marker_opp"].start
O_S_ME = OFFSETS["spent_me"].start
O_S_OPP = OFFSETS["spent_opp"].start
O_SIZES = OFFSETS["sizes"].start
O_ROUND = OFFSETS["round"].start
O_STARTED = OFFSETS["i_started"].start
O_UNSEEN = OFFSETS["unseen"].start


# ------------------------------------------------------------- kernels ---


@njit(cache=True)
def _deal(s, i, deck, new_game):
    """Deal a round (or the first round of a new game) from ``deck`` into row ``i``."""
    if new_game:
        s[i, ROUND] = 0
        s[i, STARTER] = 1
        s[i, WINNER] = NO_WINNER
        for g in range(7):
            s[i, MARKERS + g] = -1
    s[i, ROUND] += 1
    starter = 1 - s[i, STARTER]
    s[i, STARTER] = starter
    s[i, TURN] = 0
    s[i, TOKEN] = -1
    s[i, SEL_LEN] = 0
    s[i, OFFER_LEN] = 0
    s[i, SECRET] = -1
    s[i, SECRET + 1] = -1
    for k in range(14):
        s[i, HANDS + k] = 0
        s[i, TRADE + k] = 0
        s[i, PLACED + k] = 0
    for k in range(8):
        s[i, SPENT + k] = 0
    s[i, REMOVED] = deck[0]
    for k in range(6):
        s[i, HANDS + deck[1 + k]] += 1
        s[i, HANDS + 7 + deck[7 + k]] += 1
    for k in range(8):
        s[i, PILE + k] = deck[13 + k]
    s[i, PILE_POS] = 0
    _start_turn(s, i, starter)


@njit(cache=True)
def _start_turn(s, i, seat):
    top = s[i, PILE + s[i, PILE_POS]]
    s[i, PILE_POS] += 1
    s[i, HANDS + 7 * seat + top] += 1
    s[i, CURRENT] = seat
    s[i, TO_MOVE] = seat
    s[i, PHASE] = _TOKEN


@njit(cache=True)
def _split_key(s, i, k):
    """The unordered pair of sets of split ``k`` as one comparable int."""
    a0 = s[i, OFFER + _SPLITS[k, 0]]
    a1 = s[i, OFFER + _SPLITS[k, 1]]
    b0 = s[i, OFFER + _SPLITS[k, 2]]
    b1 = s[i, OFFER + _SPLITS[k, 3]]
    a = a0 * 8 + a1
    b = b0 * 8 + b1
    return a * 64 + b if a <= b else b * 64 + a


@njit(cache=True)
def _legal(s, i, m):
    """Write row ``i``'s legal mask into ``m`` (length 23), mirroring rules.legal_mask."""
    for a in range(23):
        m[a] = 0
    phase = s[i, PHASE]
    cur = s[i, CURRENT]
    if phase == _TOKEN:
        for t in range(4):
            if s[i, SPENT + 4 * cur + t] == 0:
                m[t] = 1
    elif phase == _SELECT:
        n = s[i, SEL_LEN]
        need = _SIZES[s[i, TOKEN]] - n
        lo = s[i, SEL + n - 1] if n > 0 else 0
        suffix = 0
        for g in range(6, lo - 1, -1):
            avail = s[i, HANDS + 7 * cur + g]
            for k in range(n):
                if s[i, SEL + k] == g:
                    avail -= 1
            suffix += avail
            if avail > 0 and suffix >= need:
                m[4 + g] = 1
    elif phase == _SPLIT:
        k0 = _split_key(s, i, 0)
        k1 = _split_key(s, i, 1)
        k2 = _split_key(s, i, 2)
        m[11] = 1
        if k1 != k0:
            m[12] = 1
        if k2 != k0 and k2 != k1:
            m[13] = 1
    elif phase == _GIFT:
        for k in range(3):
            m[14 + s[i, OFFER + k]] = 1
    elif phase == _COMP:
        m[21] = 1
        if s[i, OFFER] != s[i, OFFER + 2] or s[i, OFFER + 1] != s[i, OFFER + 3]:
            m[22] = 1


@njit(cache=True)
def _end_turn(s, i, seat, round_limit, rewards, done, winners, rounds):
    s[i, SPENT + 4 * seat + s[i, TOKEN]] = 1
    s[i, TOKEN] = -1
    s[i, SEL_LEN] = 0
    s[i, OFFER_LEN] = 0
    s[i, TURN] += 1
    if s[i, TURN] < 8:
        _start_turn(s, i, 1 - seat)
        return
    # scoring: Secrets revealed onto their sides, Trade-offs never counted
    for p in range(2):
        s[i, PLACED + 7 * p + s[i, SECRET + p]] += 1
        s[i, SECRET + p] = -1
    points0 = points1 = gei0 = gei1 = 0
    for g in range(7):
        c0 = s[i, PLACED + g]
        c1 = s[i, PLACED + 7 + g]
        if c0 > c1:
            s[i, MARKERS + g] = 0
        elif c1 > c0:
            s[i, MARKERS + g] = 1
        owner = s[i, MARKERS + g]
        if owner == 0:
            points0 += _VALUES[g]
            gei0 += 1
        elif owner == 1:
            points1 += _VALUES[g]
            gei1 += 1
    w = NO_WINNER
    if points0 >= 11:
        w = 0
    elif points1 >= 11:
        w = 1
    elif gei0 >= 4:
        w = 0
    elif gei1 >= 4:
        w = 1
    elif round_limit > 0 and s[i, ROUND] >= round_limit:
        if points0 != points1:
            w = 0 if points0 > points1 else 1
        elif gei0 != gei1:
            w = 0 if gei0 > gei1 else 1
        else:
            w = DRAW
    if w == NO_WINNER:
        s[i, PHASE] = _ROUND_OVER
        return
    s[i, PHASE] = _GAME_OVER
    s[i, WINNER] = w
    done[i] = True
    winners[i] = w
    rounds[i] = s[i, ROUND]
    if w == 0:
        rewards[i, 0] = 1.0
        rewards[i, 1] = -1.0
    elif w == 1:
        rewards[i, 0] = -1.0
        rewards[i, 1] = 1.0


@njit(cache=True)
def _apply_all(s, actions, round_limit, rewards, done, winners, rounds):
    """Apply ``actions[i]`` to every row (all already checked legal)."""
    for i in range(s.shape[0]):
        _apply_one(s, i, actions[i], round_limit, rewards, done, winners, rounds)


@njit(cache=True)
def _apply_one(s, i, a, round_limit, rewards, done, winners, rounds):
    """Apply legal action ``a`` to row ``i``, mirroring rules.apply."""
    phase = s[i, PHASE]
    seat = s[i, CURRENT]
    if phase == _TOKEN:
        s[i, TOKEN] = a
        s[i, SEL_LEN] = 0
        s[i, PHASE] = _SELECT
    elif phase == _SELECT:
        n = s[i, SEL_LEN]
        s[i, SEL + n] = a - 4
        n += 1
        s[i, SEL_LEN] = n
        token = s[i, TOKEN]
        if n == _SIZES[token]:
            for k in range(n):
                s[i, HANDS + 7 * seat + s[i, SEL + k]] -= 1
            s[i, SEL_LEN] = 0
            if token == 0:
                s[i, SECRET + seat] = s[i, SEL]
                _end_turn(s, i, seat, round_limit, rewards, done, winners, rounds)
            elif token == 1:
                for k in range(2):
                    s[i, TRADE + 7 * seat + s[i, SEL + k]] += 1
                _end_turn(s, i, seat, round_limit, rewards, done, winners, rounds)
            else:
                for k in range(n):
                    s[i, OFFER + k] = s[i, SEL + k]
                s[i, OFFER_LEN] = n
                if token == 2:
                    s[i, PHASE] = _GIFT
                    s[i, TO_MOVE] = 1 - seat
                else:
                    s[i, PHASE] = _SPLIT
    elif phase == _SPLIT:
        k = a - 11
        c0 = s[i, OFFER + _SPLITS[k, 0]]
        c1 = s[i, OFFER + _SPLITS[k, 1]]
        c2 = s[i, OFFER + _SPLITS[k, 2]]
        c3 = s[i, OFFER + _SPLITS[k, 3]]
        s[i, OFFER] = c0
        s[i, OFFER + 1] = c1
        s[i, OFFER + 2] = c2
        s[i, OFFER + 3] = c3
        s[i, PHASE] = _COMP
        s[i, TO_MOVE] = 1 - seat
    elif phase == _GIFT:
        taken = a - 14
        gave = False
        for k in range(3):
            g = s[i, OFFER + k]
            if g == taken and not gave:
                s[i, PLACED + 7 * (1 - seat) + g] += 1
                gave = True
            else:
                s[i, PLACED + 7 * seat + g] += 1
        _end_turn(s, i, seat, round_limit, rewards, done, winners, rounds)
    else:  # competition answer
        take_a = a == 21
        for k in range(4):
            to_answerer = (k < 2) == take_a
            side = 1 - seat if to_answerer else seat
            s[i, PLACED + 7 * side + s[i, OFFER + k]] += 1
        _end_turn(s, i, seat, round_limit, rewards, done, winners, rounds)


@njit(cache=True)
def _deal_rows(s, rows, decks, new_game):
    for j in range(rows.shape[0]):
        _deal(s, rows[j], decks[j], new_game[j])


@njit(cache=True)
def _encode_all(s, obs, mask, to_play):
    """Observation and mask of the seat to move, per row."""
    for i in range(s.shape[0]):
        to_play[i] = s[i, TO_MOVE]
    _encode_rows(s, to_play, obs, mask)


@njit(cache=True)
def _encode_rows(s, seats, obs, mask):
    """Observation and mask of ``seats[i]`` in row ``i``; mirrors observation.encode."""
    for i in range(s.shape[0]):
        o = obs[i]
        o[:] = 0.0
        seat = seats[i]
        opp = 1 - seat
        phase = s[i, PHASE]
        if seat == s[i, TO_MOVE]:
            _legal(s, i, mask[i])
            if phase < _ROUND_OVER:
                o[O_MINE] = 1.0
        else:
            mask[i, :] = 0
        o[O_PHASE + phase] = 1.0
        my_turn = s[i, CURRENT] == seat
        hs = HANDS + 7 * seat
        ho = HANDS + 7 * opp
        sec = s[i, SECRET + seat]
        if sec >= 0:
            o[O_SECRET + sec] = 1.0
        token = s[i, TOKEN]
        if token >= 0 and (phase != _SELECT or my_turn):
            o[O_TOKEN + token] = 1.0
        if phase == _SELECT and my_turn:
            for k in range(s[i, SEL_LEN]):
                o[O_SEL + s[i, SEL + k]] += 1.0
        n_offer = s[i, OFFER_LEN]
        for k in range(n_offer):
            o[O_OFFER + s[i, OFFER + k]] += 1.0
        if phase == _COMP:
            o[O_SET_A + s[i, OFFER]] += 1.0
            o[O_SET_A + s[i, OFFER + 1]] += 1.0
            o[O_SET_B + s[i, OFFER + 2]] += 1.0
            o[O_SET_B + s[i, OFFER + 3]] += 1.0
        size_me = 0
        size_opp = 0
        for g in range(7):
            h = s[i, hs + g]
            size_me += h
            size_opp += s[i, ho + g]
            o[O_HAND + g] = h
            t = s[i, TRADE + 7 * seat + g]
            o[O_TRADE + g] = t
            pm = s[i, PLACED + 7 * seat + g]
            po = s[i, PLACED + 7 * opp + g]
            o[O_P_ME + g] = pm
            o[O_P_OPP + g] = po
            owner = s[i, MARKERS + g]
            if owner == seat:
                o[O_M_ME + g] = 1.0
            elif owner == opp:
                o[O_M_OPP + g] = 1.0
            o[O_UNSEEN + g] = _VALUES[g] - h - t - pm - po - o[O_SECRET + g] - o[O_OFFER + g]
        for t in range(4):
            o[O_S_ME + t] = s[i, SPENT + 4 * seat + t]
            o[O_S_OPP + t] = s[i, SPENT + 4 * opp + t]
        o[O_SIZES] = size_me
        o[O_SIZES + 1] = size_opp
        o[O_SIZES + 2] = 8 - s[i, PILE_POS]
        o[O_ROUND] = min(s[i, ROUND], MAX_ROUND)
        if s[i, STARTER] == seat:
            o[O_STARTED] = 1.0


@njit(cache=True)
def _pick(m, u):
    """The legal action of mask row ``m`` at uniform ``u`` in [0, 1)."""
    count = 0
    for a in range(m.shape[0]):
        count += m[a]
    pick = int(u * count)
    for a in range(m.shape[0]):
        if m[a]:
            if pick == 0:
                return a
            pick -= 1
    return -1


@njit(cache=True)
def _random_actions(mask, u):
    """Uniform legal action per row, from uniforms ``u`` in [0, 1)."""
    out = np.empty(mask.shape[0], dtype=np.int64)
    for i in range(mask.shape[0]):
        out[i] = _pick(mask[i], u[i])
    return out


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (int8 ``[N, 23]``)."""
    mask = np.ascontiguousarray(mask, dtype=np.int8)
    if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"mask must have shape [N, {NUM_ACTIONS}], got {mask.shape}")
    if not mask.any(axis=1).all():
        raise ValueError(
            f"rows {np.flatnonzero(~mask.any(axis=1)).tolist()} of the mask have no legal action"
        )
    return _random_actions(mask, rng.random(mask.shape[0]))


# ------------------------------------------- simulation (search bots) ---


def rows_from_states(states: Sequence[State]) -> np.ndarray:
    """The state-matrix rows of engine states, to simulate them with the compiled kernels."""
    rows = np.zeros((len(states), WIDTH), dtype=np.int32)
    for i, st in enumerate(states):
        r = rows[i]
        r[ROUND], r[STARTER], r[TURN], r[CURRENT], r[TO_MOVE] = (
            st.round,
            st.starter,
            st.turn,
            st.current,
            st.to_move,
        )
        r[PHASE], r[TOKEN] = int(st.phase), st.token
        r[SEL_LEN], r[OFFER_LEN] = len(st.selection), len(st.offer)
        r[PILE_POS] = 8 - len(st.draw_pile)
        r[REMOVED] = st.removed
        r[WINNER] = NO_WINNER if st.winner is None else st.winner
        r[SECRET : SECRET + 2] = st.secrets
        r[HANDS : HANDS + 14] = st.hands[0] + st.hands[1]
        r[TRADE : TRADE + 14] = st.tradeoffs[0] + st.tradeoffs[1]
        r[PLACED : PLACED + 14] = st.placed[0] + st.placed[1]
        r[MARKERS : MARKERS + 7] = st.markers
        r[SPENT : SPENT + 8] = st.spent[0] + st.spent[1]
        r[SEL : SEL + len(st.selection)] = st.selection
        r[OFFER : OFFER + len(st.offer)] = st.offer
        r[PILE + r[PILE_POS] : PILE + 8] = st.draw_pile
    return rows


@njit(cache=True)
def _outcome_buffers(n):
    """Scratch outputs of _apply_one for simulations that do not report outcomes."""
    rewards = np.zeros((n, 2), dtype=np.float32)
    return rewards, np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int32)


@njit(cache=True)
def _apply_sequences(s, actions, lengths, round_limit):
    """Apply ``actions[i, :lengths[i]]`` to row ``i`` (each legal in turn, or the row is marked)."""
    rewards, done, winners, rounds = _outcome_buffers(s.shape[0])
    m = np.zeros(23, dtype=np.int8)
    ok = np.ones(s.shape[0], dtype=np.bool_)
    for i in range(s.shape[0]):
        for k in range(lengths[i]):
            _legal(s, i, m)
            if m[actions[i, k]] == 0:
                ok[i] = False
                break
            _apply_one(s, i, actions[i, k], round_limit, rewards, done, winners, rounds)
    return ok


@njit(cache=True)
def _rollout(s, u, round_limit):
    """Play every row to the end of its round with uniform random legal actions from ``u``."""
    rewards, done, winners, rounds = _outcome_buffers(s.shape[0])
    m = np.zeros(23, dtype=np.int8)
    for i in range(s.shape[0]):
        k = 0
        while s[i, PHASE] < _ROUND_OVER:
            _legal(s, i, m)
            _apply_one(s, i, _pick(m, u[i, k]), round_limit, rewards, done, winners, rounds)
            k += 1


ROLLOUT_STEPS = 64
"""Uniforms needed per row by :func:`rollout` (a round has at most 56 decisions)."""


def apply_sequences(
    rows: np.ndarray, actions: np.ndarray, lengths: np.ndarray, round_limit: int | None
) -> None:
    """Apply per-row action sequences in place; ``ValueError`` if one is illegal."""
    ok = _apply_sequences(rows, actions.astype(np.int64), lengths.astype(np.int64), round_limit or 0)
    if not ok.all():
        raise ValueError(f"illegal action sequence in rows {np.flatnonzero(~ok)[:10].tolist()}")


def rollout(rows: np.ndarray, uniforms: np.ndarray, round_limit: int | None) -> None:
    """Play every row to the end of its round, in place: uniform random legal actions drawn
    from ``uniforms`` (``[N, ROLLOUT_STEPS]`` in [0, 1), e.g. ``rng.random(...)``)."""
    if uniforms.shape != (rows.shape[0], ROLLOUT_STEPS):
        raise ValueError(f"uniforms must have shape ({rows.shape[0]}, {ROLLOUT_STEPS}), got {uniforms.shape}")
    _rollout(rows, uniforms, round_limit or 0)


def row_outcomes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row after a round: winner (-2 none, -1 draw, 0, 1), points ``[N, 2]``, geishas ``[N, 2]``."""
    markers = rows[:, MARKERS : MARKERS + 7]
    points = np.stack([((markers == p) * _VALUES).sum(1) for p in (0, 1)], axis=1)
    geishas = np.stack([(markers == p).sum(1) for p in (0, 1)], axis=1)
    return rows[:, WINNER], points, geishas


# ----------------------------------------------------------- the class ---


class VectorHanamikoji:
    """``num_envs`` games stepped together; see the module docstring."""

    def __init__(self, num_envs: int, seed: int | None = None, round_limit: int | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if round_limit is not None and (
            isinstance(round_limit, bool) or not isinstance(round_limit, int) or round_limit < 1
        ):
            raise ValueError(f"round_limit must be None or a positive int, got {round_limit!r}")
        self.num_envs = int(num_envs)
        self.round_limit = round_limit
        self._seed = seed
        self._rng = _make_rng(seed)
        n = self.num_envs
        self._s = np.zeros((n, WIDTH), dtype=np.int32)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self._to_play = np.zeros(n, dtype=np.int8)
        self._decks = np.zeros((n, 0, NUM_CARDS), dtype=np.int8)  # scripted decks per env
        self._n_decks = np.zeros(n, dtype=np.int64)
        self._reset_done = False

    def reset(
        self, seed: int | None = None, decks: Sequence[Sequence[Sequence[int]]] | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new game in every env; ``decks[i]`` scripts the rounds of env ``i``'s game."""
        parsed = self._parse_decks(decks)  # checked before any state changes
        if seed is not None:
            self._rng = _make_rng(seed)
        self._decks, self._n_decks = parsed
        rows = np.arange(self.num_envs)
        self._deal(rows, np.ones(self.num_envs, dtype=np.bool_))
        self._reset_done = True
        _encode_all(self._s, self._obs, self._mask, self._to_play)
        return self._obs.copy(), self._mask.copy(), self._to_play.copy()

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Apply one action per env; returns ``(obs, mask, to_play, rewards, done, info)``."""
        if not self._reset_done:
            raise RuntimeError("reset() must be called before step()")
        given = np.asarray(actions)
        if given.shape != (self.num_envs,) or given.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an int array of shape ({self.num_envs},), got {given.dtype} {given.shape}"
            )
        # range first, in the given dtype: a cast of np.uint64(2**63) to int64 would wrap around
        in_range = (given >= 0) & (given < NUM_ACTIONS)
        a = np.where(in_range, given, 0).astype(np.int64)
        legal = in_range & (self._mask[np.arange(self.num_envs), a] == 1)
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
        winners = np.full(n, NO_WINNER, dtype=np.int8)
        rounds = np.zeros(n, dtype=np.int32)
        _apply_all(self._s, a, self.round_limit or 0, rewards, done, winners, rounds)
        phase = self._s[:, PHASE]
        rows = np.flatnonzero(phase >= _ROUND_OVER)
        if rows.size:
            self._n_decks[done] = 0  # scripted decks belong to the game that just ended
            self._deal(rows, phase[rows] == _GAME_OVER)
        _encode_all(self._s, self._obs, self._mask, self._to_play)
        info = {"winner": winners, "rounds": rounds}
        return self._obs.copy(), self._mask.copy(), self._to_play.copy(), rewards, done, info

    def observe(self, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observation and mask of any seat per env (all-zero mask where it is not on move)."""
        seats = np.asarray(seats)
        if seats.shape != (self.num_envs,) or not np.isin(seats, (0, 1)).all():
            raise ValueError(f"seats must be {self.num_envs} values of 0 or 1")
        obs = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        _encode_rows(self._s, seats.astype(np.int8), obs, mask)
        return obs, mask

    def markers(self) -> tuple[np.ndarray, np.ndarray]:
        """Public board facts per env: the round number ``[N]`` and marker owners ``[N, 7]``
        (0, 1 by seat, -1 centre), e.g. for reward shaping at each scoring."""
        return self._s[:, ROUND].copy(), self._s[:, MARKERS : MARKERS + 7].copy()

    def get_state(self) -> dict[str, Any]:
        """Everything needed to continue identically (for training checkpoints)."""
        return {
            "rows": self._s.copy(),
            "decks": self._decks.copy(),
            "n_decks": self._n_decks.copy(),
            "rng": self._rng.bit_generator.state,
            "reset_done": self._reset_done,
        }

    def set_state(self, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Restore :meth:`get_state`; returns the current ``(obs, mask, to_play)``."""
        rows = np.asarray(state["rows"], dtype=np.int32)
        if rows.shape != (self.num_envs, WIDTH):
            raise ValueError(f"state rows must have shape ({self.num_envs}, {WIDTH}), got {rows.shape}")
        self._s = rows.copy()
        self._decks = np.asarray(state["decks"], dtype=np.int8).copy()
        self._n_decks = np.asarray(state["n_decks"], dtype=np.int64).copy()
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["rng"]
        self._reset_done = bool(state["reset_done"])
        _encode_all(self._s, self._obs, self._mask, self._to_play)
        return self._obs.copy(), self._mask.copy(), self._to_play.copy()

    # --------------------------------------------------------- helpers ---

    def _deal(self, rows: np.ndarray, new_game: np.ndarray) -> None:
        """Deal the next round (or a new game's first) for ``rows``: scripted or shuffled."""
        next_round = np.where(new_game, 1, self._s[rows, ROUND] + 1)
        scripted = next_round <= self._n_decks[rows]
        decks = np.empty((rows.size, NUM_CARDS), dtype=np.int8)
        if scripted.any():
            decks[scripted] = self._decks[rows[scripted], next_round[scripted] - 1]
        k = int((~scripted).sum())
        if k:
            decks[~scripted] = _FULL_DECK[np.argsort(self._rng.random((k, NUM_CARDS)), axis=1)]
        _deal_rows(self._s, rows.astype(np.int64), decks, new_game.astype(np.bool_))

    def _parse_decks(self, decks: object) -> tuple[np.ndarray, np.ndarray]:
        """``decks[i]`` is env ``i``'s list of decks (rounds 1, 2, ...), each checked by
        :func:`rules.validate_deck`; lists may differ in length (ragged) or be empty."""
        n = self.num_envs
        if decks is None:
            return np.zeros((n, 0, NUM_CARDS), dtype=np.int8), np.zeros(n, dtype=np.int64)
        if isinstance(decks, (str, bytes)) or not isinstance(decks, (Sequence, np.ndarray)):
            raise ValueError(f"decks must be a list of {n} lists of decks, got {type(decks).__name__}")
        if len(decks) != n:
            raise ValueError(f"decks must hold one list of decks per env ({n}), got {len(decks)}")
        parsed: list[list[tuple[int, ...]]] = []
        for i, env_decks in enumerate(decks):
            if isinstance(env_decks, (str, bytes)) or not isinstance(env_decks, (Sequence, np.ndarray)):
                raise ValueError(
                    f"decks[{i}] must be a list of decks (each 21 geisha ids), got {type(env_decks).__name__}"
                )
            rows = []
            for r, deck in enumerate(env_decks):
                try:
                    rows.append(validate_deck(deck))
                except ValueError as e:
                    raise ValueError(f"decks[{i}][{r}] (round {r + 1}): {e}") from None
            parsed.append(rows)
        counts = np.array([len(rows) for rows in parsed], dtype=np.int64)
        out = np.zeros((n, int(counts.max(initial=0)), NUM_CARDS), dtype=np.int8)
        for i, rows in enumerate(parsed):
            if rows:
                out[i, : len(rows)] = rows
        return out, counts


def _make_rng(seed: int | None) -> np.random.Generator:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be None or a non-negative int, got {seed!r}")
    return np.random.default_rng(seed)


class HanamikojiVectorEnv(gymnasium.vector.VectorEnv):
    """:class:`VectorHanamikoji` behind Gymnasium's ``VectorEnv`` API, for two-player self-play.

    Observations are dicts of batched arrays: ``"observation"`` ``[N, 109]``,
    ``"action_mask"`` ``[N, 23]`` and ``"to_play"`` ``[N]`` (the seat each row
    belongs to).  ``rewards`` is ``[N]``, as the API requires: the reward of the
    seat that made this step's decision in that row (non-zero only on the step
    that ends a game).  Both seats' rewards are in ``infos["rewards"]``
    (``[N, 2]`` by seat) and the acting seat in ``infos["acting_seat"]``.
    Finished games reset in the same step (``AutoresetMode.SAME_STEP``);
    ``infos`` holds ``winner`` and ``rounds`` of the games that ended, with
    Gymnasium's ``_winner`` / ``_rounds`` masks.  Nothing is truncated.  It
    works under Gymnasium's vector wrappers (``RecordEpisodeStatistics``,
    ``NormalizeReward``, ...).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, seed: int | None = None, round_limit: int | None = None) -> None:
        self.engine = VectorHanamikoji(num_envs, seed=seed, round_limit=round_limit)
        self.num_envs = self.engine.num_envs
        self.single_observation_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                "to_play": gymnasium.spaces.Discrete(2),
            }
        )
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._to_play = np.zeros(self.num_envs, dtype=np.int8)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        obs, mask, self._to_play = self.engine.reset(seed=seed, decks=(options or {}).get("decks"))
        return {"observation": obs, "action_mask": mask, "to_play": self._to_play.astype(np.int64)}, {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        acting = self._to_play
        obs, mask, self._to_play, rewards, done, info = self.engine.step(actions)
        batch = {"observation": obs, "action_mask": mask, "to_play": self._to_play.astype(np.int64)}
        everywhere = np.ones(self.num_envs, dtype=np.bool_)
        infos = {
            "winner": info["winner"],
            "_winner": done,
            "rounds": info["rounds"],
            "_rounds": done,
            "rewards": rewards,
            "_rewards": everywhere,
            "acting_seat": acting.astype(np.int64),
            "_acting_seat": everywhere,
        }
        own = rewards[np.arange(self.num_envs), acting].astype(np.float64)
        return batch, own, done, np.zeros_like(done), infos
