"""A sampled local best response on the full game: how much a target leaves to a player that
knows its policy.

Local best response (Lisý and Bowling, 2017, "Equilibrium approximation quality of current
no-limit poker bots") measures any player at once, without training: a player that knows the
target's policy keeps a belief over what the target holds, values each of its legal moves by
what follows when the target plays on, and plays the best.  Its score against the target is a
lower bound on the target's exploitability.  On the mini variant :mod:`hanamikoji_env.exact`
computes it with exact beliefs and values; here, on the full game, both are sampled:

**The belief** is a particle filter over full games (engine rows, the true seats) consistent
with what the LBR player has seen, stepped in lockstep with the real game:

* at a round's deal (or when the filter has lost every particle, at the LBR player's next
  decision) the cards it has not seen are dealt at random into the opponent's hand, its
  face-down Secret and Trade-off, the removed card and the rest of the pile (:func:`redeal`,
  from :func:`public_row`: the real row with everything hidden from the player blanked);
* a move of the target's the LBR player sees (a token, a Gift's or Competition's cards, a split,
  an answer) multiplies each particle's weight by the target's probability of that move in the
  particle (0 where it could not have made it); a card it plays face down (Secret, Trade-off) is
  drawn in each particle from the target's own probabilities, which leaves the weights as they
  are;
* the LBR player's own draw: the rest of the pile and the removed card are still in random order
  in every particle, so a particle is weighed by the share of that drawn card among them and
  made to hold it there (exact, not a rejection);
* when the effective number of particles falls under half, they are resampled by weight, and
  each copy's unseen pile and removed card are shuffled again (their order is independent of
  everything seen).

**The values**: at each decision with a choice, ``samples`` particles are drawn by weight; every
candidate is played in each and the round is played out with the target making **both**
players' moves, or, given ``own`` (a player that gives probabilities, e.g. the shipped agent),
the target its own and ``own`` the LBR player's later ones, as the original LBR plays its own
later moves by a fixed policy (sampled from their probabilities, the same random numbers for
every candidate); a
round's end is valued like the search bots' (:func:`~hanamikoji_env.simulate.round_values`:
±1 where the game ends, otherwise half the favour markers' lead).  The best mean wins.  The
candidates are the legal moves, except at a token decision, where a move of the rules (a token
and its cards; no one else moves between them) is chosen whole: the ``plans`` whole moves the
heuristic ranks best (:func:`turn_plans`), whose cards it then plays as they are asked for.
Valued one decision at a time (``plans=0``), a token would be valued with its cards chosen by the
target, which loses to the whole move (0.905 against 0.940 versus the heuristic, 400 games).

:func:`play_games` plays it against the target, half the games in each seat on the same deals;
``hanamikoji-exploit --method lbr --variant full`` (``training/exploit.py``) reports it.  The target must
give its move probabilities (:meth:`~hanamikoji_env.bots.base.Bot.play_probabilities`) from
observation version 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from hanamikoji_env.actions import CARD_BASE, NUM_ACTIONS, NUM_TOKENS, SECRET, TOKEN_SIZES, TRADEOFF
from hanamikoji_env.bots.heuristic import MAX_PLANS
from hanamikoji_env.bots.search import candidate_plans, plan_sequence
from hanamikoji_env.engine import (
    C_HANDS,
    C_PHASE,
    C_PILE,
    C_PILE_POS,
    C_REMOVED,
    C_SECRETS,
    C_SELECTION,
    C_TO_MOVE,
    C_TOKEN,
    C_TRADEOFFS,
    GAME_OVER,
    GAME_WIDTH,
    MAX_SELECTION,
    ROUND_OVER,
    SELECT_PHASE,
    Dealer,
    blank_row,
    final_returns_of,
)
from hanamikoji_env.excerpt import short
from hanamikoji_env.nn import sample_actions
from hanamikoji_env.observation import OBS_SIZE, OFFSETS, encode_rows
from hanamikoji_env.rules import DRAW_PILE_SIZE, NUM_GEISHAS
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequences, play_out, round_values
from hanamikoji_env.stats import wilson

UNSEEN = OFFSETS["unseen"]
SIZES = OFFSETS["sizes"]
SPENT_OPP = OFFSETS["spent_opp"]
_S = DRAW_PILE_SIZE + 1
"""The still-unseen slots of a particle, as one window: the pile, then the removed card."""


@dataclass(frozen=True)
class Budget:
    """What one decision may spend: ``particles`` in the belief, ``samples`` of them played out
    per candidate, ``plans`` whole moves as the candidates at a token decision (0: its legal
    tokens, the cards chosen one decision at a time)."""

    particles: int = 1024
    samples: int = 256
    plans: int = 10

    def __post_init__(self) -> None:
        for name in ("particles", "samples", "plans"):
            value = getattr(self, name)
            low = 0 if name == "plans" else 1
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 100_000:
                raise ValueError(f"--{name} must be an int in [{low}, 100000], got {short(value)}")


def hidden_from_other(row: np.ndarray, action: int) -> bool:
    """Whether the other player does not see ``action`` made in ``row``: a card chosen for a
    Secret or a Trade-off (the token itself is public)."""
    return (
        int(row[C_PHASE]) == SELECT_PHASE
        and int(row[C_TOKEN]) in (SECRET, TRADEOFF)
        and CARD_BASE <= action < CARD_BASE + NUM_GEISHAS
    )


def public_row(row: np.ndarray, seat: int) -> np.ndarray:
    """A copy of the position ``row`` with everything ``seat`` cannot see blanked: the other
    player's hand, Secret and Trade-off, the removed card, the pile (the cards to come, and the
    cards drawn: the other player's among them) and the log.  What :func:`redeal` fills in again.  Refused while the other player is
    choosing the cards of a Secret or Trade-off (the selection is hidden then)."""
    if (
        int(row[C_PHASE]) == SELECT_PHASE
        and int(row[C_TO_MOVE]) != seat
        and int(row[C_TOKEN]) in (SECRET, TRADEOFF)
    ):
        raise ValueError("the other player is choosing face-down cards: its selection is hidden")
    out = np.array(row[:GAME_WIDTH], dtype=np.int32, copy=True)
    out = np.concatenate([out, np.zeros(len(row) - GAME_WIDTH, dtype=np.int32)])
    opp = 1 - seat
    out[C_HANDS + NUM_GEISHAS * opp : C_HANDS + NUM_GEISHAS * (opp + 1)] = 0
    out[C_TRADEOFFS + NUM_GEISHAS * opp : C_TRADEOFFS + NUM_GEISHAS * (opp + 1)] = 0
    out[C_SECRETS + opp] = -1
    out[C_REMOVED] = 0
    out[C_PILE : C_PILE + DRAW_PILE_SIZE] = 0  # the cards still to draw, and who drew what
    if not (int(row[C_PHASE]) == SELECT_PHASE and int(row[C_TO_MOVE]) == seat):
        out[C_SELECTION : C_SELECTION + MAX_SELECTION] = 0  # a past selection: a Secret's card, say
    return out


def redeal(public: np.ndarray, seat: int, obs: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` full games consistent with what ``seat`` knows (``public`` from :func:`public_row`,
    ``obs`` its observation vector): the cards it has not seen (the observation's ``unseen``
    counts) shuffled into the other player's hand, its Secret and Trade-off (where played), the
    removed card and the rest of the pile."""
    unseen = np.rint(obs[UNSEEN]).astype(np.int64)
    hand = round(float(obs[SIZES.start + 1]))
    secret = round(float(obs[SPENT_OPP.start + SECRET])) * TOKEN_SIZES[SECRET]
    trade = round(float(obs[SPENT_OPP.start + TRADEOFF])) * TOKEN_SIZES[TRADEOFF]
    pos = int(public[C_PILE_POS])
    if unseen.sum() != hand + secret + trade + 1 + DRAW_PILE_SIZE - pos:
        raise ValueError("the observation's unseen cards do not fill the places its player cannot see")
    pool = np.repeat(np.arange(NUM_GEISHAS), unseen)
    order = np.argsort(rng.random((n, len(pool))), axis=1)
    cards = pool[order]  # [n, unseen]: hand, Secret, Trade-off, removed, pile
    rows = np.tile(public, (n, 1))
    opp, at = 1 - seat, np.arange(n)
    for k in range(hand):
        np.add.at(rows, (at, C_HANDS + NUM_GEISHAS * opp + cards[:, k]), 1)
    if secret:
        rows[:, C_SECRETS + opp] = cards[:, hand]
    for k in range(hand + secret, hand + secret + trade):
        np.add.at(rows, (at, C_TRADEOFFS + NUM_GEISHAS * opp + cards[:, k]), 1)
    rest = hand + secret + trade
    rows[:, C_REMOVED] = cards[:, rest]
    rows[:, C_PILE + pos : C_PILE + DRAW_PILE_SIZE] = cards[:, rest + 1 :]
    return rows


def _window(rows: np.ndarray, start: int = 0) -> np.ndarray:
    """Each row's pile from slot ``start`` on, then its removed card, as one array (a copy)."""
    return np.concatenate(
        [rows[:, C_PILE + start : C_PILE + DRAW_PILE_SIZE], rows[:, C_REMOVED : C_REMOVED + 1]], 1
    )


def _put_window(rows: np.ndarray, window: np.ndarray, start: int = 0) -> None:
    """:func:`_window`'s inverse: ``window`` written back to the pile from ``start`` and the removed card."""
    rows[:, C_PILE + start : C_PILE + DRAW_PILE_SIZE] = window[:, :-1]
    rows[:, C_REMOVED] = window[:, -1]


def shuffle_unseen(rows: np.ndarray, rng: np.random.Generator) -> None:
    """Shuffle each row's cards nobody has seen (the rest of the pile and the removed card) among
    themselves, in place."""
    slot = np.arange(_S)
    seen = slot[None, :] < rows[:, C_PILE_POS : C_PILE_POS + 1]
    keys = np.where(seen, slot - _S, rng.random((len(rows), _S)))  # seen slots stay first, in order
    _put_window(rows, np.take_along_axis(_window(rows), np.argsort(keys, axis=1), axis=1))


class LocalBestResponse:
    """The LBR player of one seat: its particle filter and its move choice.  ``probs(obs, mask)``
    is the target's move probabilities (``[N, 23]``) from observation version 1; ``own``, the
    same of the player making the LBR player's later moves in its playouts (None: the target)."""

    def __init__(
        self, probs: Any, seat: int, budget: Budget, rng: np.random.Generator, own: Any = None
    ) -> None:
        self.probs, self.seat, self.budget, self.rng = probs, seat, budget, rng
        self.own = own
        self.rows = np.zeros((0, 0), dtype=np.int32)
        self.weights = np.zeros(0)
        self.planned: list[int] = []
        """The rest of the move chosen whole at its token (``Budget.plans``): its cards."""
        self.valued = False
        """Whether the last decision valued moves (not a card of a move chosen whole)."""
        self.restarts = 0
        """Times the filter lost every particle and started again from what the player sees."""

    @property
    def lost(self) -> bool:
        return len(self.rows) == 0

    def start(self, public: np.ndarray, obs: np.ndarray) -> None:
        """A fresh belief: every deal of the unseen cards equally likely."""
        self.rows = redeal(public, self.seat, obs, self.budget.particles, self.rng)
        self.weights = np.full(len(self.rows), 1.0 / len(self.rows))

    def _step(self, actions: np.ndarray) -> None:
        apply_sequences(self.rows, actions[:, None], np.ones(len(self.rows), dtype=np.int64), None)

    def opponent_moved(self, action: int | None) -> None:
        """The target moved: ``action`` as the LBR player saw it (None: a card played face down)."""
        if self.lost:
            return
        obs, mask = views(self.rows, np.full(len(self.rows), 1 - self.seat))
        p = self.probs(obs, mask)
        if action is None:  # drawn from the target's own probabilities: weights unchanged
            self._step(sample_actions(p, self.rng.random(len(p))))
            return
        self.weights = self.weights * p[:, action]
        keep = self.weights > 0
        self.rows, self.weights = self.rows[keep], self.weights[keep]
        if self.lost:
            self.restarts += 1
            return
        self._step(np.full(len(self.rows), action))
        self._resample_if_thin()

    def own_draw(self, card: int) -> None:
        """The LBR player just drew ``card``: the top of every particle's unseen window is made
        that card, each particle weighed by the card's share of its window."""
        if self.lost:
            return
        rows, k = self.rows, int(self.rows[0, C_PILE_POS]) - 1
        window = _window(rows, k)
        match = window == card
        self.weights = self.weights * match.mean(axis=1)
        keep = self.weights > 0
        self.rows, self.weights, window, match = rows[keep], self.weights[keep], window[keep], match[keep]
        if self.lost:
            self.restarts += 1
            return
        at = np.arange(len(self.rows))
        j = match.argmax(axis=1)  # a slot holding the card: swap it to the top
        drawn = window[:, 0].copy()
        window[at, 0], window[at, j] = card, drawn
        _put_window(self.rows, window, k)
        hand = C_HANDS + NUM_GEISHAS * self.seat
        np.add.at(self.rows, (at, hand + drawn), -1)
        self.rows[:, hand + card] += 1
        self._resample_if_thin()

    def _resample_if_thin(self) -> None:
        w = self.weights / self.weights.sum()
        if 1.0 / np.square(w).sum() >= self.budget.particles / 2:
            self.weights = w
            return
        self.rows = self._draw(w, self.budget.particles)
        self.weights = np.full(len(self.rows), 1.0 / len(self.rows))

    def _draw(self, w: np.ndarray, n: int) -> np.ndarray:
        """``n`` particles drawn by weight (systematic), their unseen cards shuffled anew."""
        picks = np.searchsorted(np.cumsum(w), (self.rng.random() + np.arange(n)) / n)
        rows = self.rows[np.minimum(picks, len(w) - 1)]
        shuffle_unseen(rows, self.rng)
        return rows

    def values(self, sequences: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Each action sequence's mean round value for the LBR player over ``samples``
        played-out particles (the target in both seats, or ``own`` in the player's; the same
        particles and random numbers for every sequence)."""
        moves = np.arange(len(sequences))
        base = self._draw(self.weights / self.weights.sum(), self.budget.samples)
        n = len(base)
        block = np.tile(base, (len(moves), 1))  # row c * n + j: sequence c in particle j
        apply_sequences(block, np.repeat(sequences, n, axis=0), np.repeat(lengths, n), None)
        u = self.rng.random((n, PLAYOUT_STEPS))
        particle = np.tile(np.arange(n), len(moves))

        def choose(
            ids: np.ndarray, seats: np.ndarray, obs: np.ndarray, m: np.ndarray, step: int
        ) -> np.ndarray:
            if self.own is None:
                return sample_actions(self.probs(obs, m), u[particle[ids], step])
            p = np.zeros(m.shape)
            for mine, probs in ((seats == self.seat, self.own), (seats != self.seat, self.probs)):
                if mine.any():
                    p[mine] = probs(obs[mine], m[mine])
            return sample_actions(p, u[particle[ids], step])

        value = play_out(block, choose, None, score=round_values)
        sign = 1.0 if self.seat == 0 else -1.0
        return sign * value.reshape(len(moves), n).mean(axis=1)

    def act(self, public: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> int:
        """The LBR player's move (``obs``, ``mask``: its own view; ``public``: :func:`public_row`)."""
        if self.lost:
            self.start(public, obs)
        moves = np.flatnonzero(mask)
        self.valued = not self.planned and len(moves) > 1
        if self.planned:
            action = self.planned.pop(0)
        elif len(moves) == 1:
            action = int(moves[0])
        elif self.budget.plans and moves.max() < NUM_TOKENS:  # a token decision
            sequences, lengths = turn_plans(obs, mask, self.budget.plans)
            best = int(np.argmax(self.values(sequences, lengths)))
            action, *self.planned = sequences[best, : lengths[best]].tolist()
        else:
            action = int(
                moves[int(np.argmax(self.values(moves[:, None], np.ones(len(moves), dtype=np.int64))))]
            )
        self._step(np.full(len(self.rows), action))
        return action


class BotPlayer:
    """A bot in :func:`play_games`' seat, for comparison on the same deals: it sees its own
    observation only and ignores the filter's calls."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    def start(self, public: np.ndarray, obs: np.ndarray) -> None: ...

    def opponent_moved(self, action: int | None) -> None: ...

    def own_draw(self, card: int) -> None: ...

    def act(self, public: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.bot.act_batch(obs[None, :], mask[None, :])[0])


Player = LocalBestResponse | BotPlayer
MakePlayer = Callable[[int, np.random.Generator], Player]
"""``make(seat, rng)``: the player of one game, in ``seat``."""


def lbr_player(target: Any, budget: Budget, own: Any = None) -> MakePlayer:
    """:class:`LocalBestResponse` against ``target`` for each game of :func:`play_games`; ``own``
    (a bot, or None: the target) makes the LBR player's later moves in its playouts."""
    check_target(target)
    if own is not None:
        check_target(own, "--own-moves")
    own_probs = None if own is None else own.play_probabilities
    return lambda seat, rng: LocalBestResponse(target.play_probabilities, seat, budget, rng, own_probs)


def check_target(target: Any, role: str = "target") -> None:
    """``ValueError`` in one line for a player the LBR player cannot play out (its ``role``): one
    without move probabilities, or a network of another variant or observation version."""
    try:
        target.check_modelled("full")
    except ValueError as e:
        if role == "target":
            raise
        raise ValueError(f"{role}: {e}") from None
    version = getattr(target, "observation_version", 1)
    if version != 1:
        needs = "this round's and earlier rounds' logs" if version == 2 else "this round's log"
        raise ValueError(
            f"the full game's lbr feeds its {role} observation version 1: a version-{version} {role} "
            f"needs {needs} (its own draws and face-down cards among them), which the particles do not keep"
        )


@dataclass
class Result:
    """:func:`play_games`' outcome: the player's score (win 1, draw 0.5) per game, its time per
    decision with a choice (and whether it valued moves there: a card of a move chosen whole at
    its token costs nothing), and how often its filter lost every particle."""

    scores: np.ndarray
    seconds: np.ndarray
    valued: np.ndarray
    restarts: int

    def as_dict(self) -> dict[str, Any]:
        n, t = len(self.scores), self.seconds
        low, high = wilson(float(self.scores.sum()), n)
        ms = lambda x, q: round(1000 * float(np.quantile(x, q)), 2) if len(x) else None  # noqa: E731
        return {
            "br_score": float(self.scores.mean()),
            "ci95": [low, high],
            "games": n,
            "decision_ms": {
                "median": ms(t, 0.5),
                "p90": ms(t, 0.9),
                "decisions": len(t),
                "valued_median": ms(t[self.valued], 0.5),
                "valued_p90": ms(t[self.valued], 0.9),
                "valued": int(self.valued.sum()),
            },
            "restarts": self.restarts,
        }


def play_games(target: Any, games: int, make: MakePlayer, seed: int = 0, progress: bool = True) -> Result:
    """``games`` full games of ``make``'s player against ``target`` (a bot), the player in seat 0
    in even games and seat 1 in odd ones, each pair on the same deals (game ``g``'s decks come
    from ``seed`` and ``g // 2``, so two players measured with one seed meet the same deals)."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"--games must be a positive even number, got {short(games)}")
    scores, seconds, valued, restarts = np.zeros(games), [], [], 0
    first = np.zeros(1, dtype=np.int64)
    for g in tqdm(range(games), desc="games", unit="game", disable=not progress):
        seat, rng = g % 2, np.random.default_rng([seed, g, 1])
        target.reset(int(rng.integers(2**31)))
        player = make(seat, rng)
        dealer = Dealer(1, np.random.default_rng([seed, g // 2]), "permutation")
        row = blank_row()
        dealer.deal(row, first, np.ones(1, dtype=np.bool_))
        player.start(public_row(row[0], seat), views(row, [seat])[0][0])
        while (phase := int(row[0, C_PHASE])) != GAME_OVER:
            if phase == ROUND_OVER:
                dealer.deal(row, first, np.zeros(1, dtype=np.bool_))
                player.start(public_row(row[0], seat), views(row, [seat])[0][0])
                continue
            mover, pos = int(row[0, C_TO_MOVE]), int(row[0, C_PILE_POS])
            obs, mask = views(row, [mover])
            if mover == seat:
                start = time.perf_counter()
                action = player.act(public_row(row[0], seat), obs[0], mask[0])
                if mask[0].sum() > 1:
                    seconds.append(time.perf_counter() - start)
                    valued.append(getattr(player, "valued", True))
            else:
                action = int(target.act_batch(obs, mask)[0])
                player.opponent_moved(None if hidden_from_other(row[0], action) else action)
            apply_sequences(row, np.array([[action]]), np.ones(1, dtype=np.int64), None)
            drew = int(row[0, C_PILE_POS]) > pos and int(row[0, C_TO_MOVE]) == seat
            if drew and int(row[0, C_PHASE]) < ROUND_OVER:
                player.own_draw(int(row[0, C_PILE + pos]))
        restarts += getattr(player, "restarts", 0)
        scores[g] = (final_returns_of(row)[0, seat] + 1.0) / 2.0
    return Result(scores, np.asarray(seconds), np.asarray(valued, dtype=bool), restarts)


def turn_plans(obs: np.ndarray, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The heuristic's ``k`` best whole-turn plans at a token decision (its token, then its
    cards), as action sequences (``[k, 5]``, padded) and their lengths."""
    o = obs.astype(np.float64)
    tokens = (mask[:NUM_TOKENS] > 0).astype(np.int64)
    plan_token = np.zeros(MAX_PLANS, dtype=np.int64)
    plan_cards = np.zeros((MAX_PLANS, 4), dtype=np.int64)
    plan_score = np.zeros(MAX_PLANS)
    count = candidate_plans(o, tokens, np.zeros(4, dtype=np.int64), 0, plan_token, plan_cards, plan_score)
    if count <= 0:
        raise RuntimeError("the LBR player's own observation is not a consistent decision")
    best = np.argsort(-plan_score[:count], kind="stable")[:k]
    sequences = np.zeros((len(best), 5), dtype=np.int64)
    lengths = np.zeros(len(best), dtype=np.int64)
    for c, j in enumerate(best):
        lengths[c] = plan_sequence(plan_token[j], plan_cards[j], 0, False, sequences[c])
    return sequences, lengths


def views(rows: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's observation and legal mask for the seat ``seats[i]`` (``[N, 109]``, ``[N, 23]``)."""
    obs = np.zeros((len(rows), OBS_SIZE), dtype=np.float32)
    mask = np.zeros((len(rows), NUM_ACTIONS), dtype=np.int8)
    encode_rows(rows, np.asarray(seats, dtype=np.int8), obs, mask)
    return obs, mask
