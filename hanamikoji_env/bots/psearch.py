"""PolicySearchBot: information-set search with a trained policy for both players' moves.

At each decision that has a choice, the bot

1. asks the policy (a hanamikoji-env checkpoint) for its move probabilities
   ``p`` from the bot's observation and keeps the ``candidates`` most likely
   legal actions;
2. samples ``samples`` determinizations of what it cannot see
   (:func:`~hanamikoji_env.infoset.determinize`: its observation and
   nothing else);
3. plays every candidate in every determinization, then plays the round to its
   end with the policy making **both** players' moves, each from that
   player's own observation of the determinized game, sampled from the
   policy's probabilities; all rows step together, one network call per step
   on the engine's compiled kernels (:mod:`hanamikoji_env.simulate`);
4. uses common random numbers: every candidate sees the same determinizations
   and the same uniforms (the ``t``-th move after the candidate in
   determinization ``i`` uses ``u[i, t]``);
5. scores the round's end like :class:`~hanamikoji_env.bots.search.SearchBot`
   (:func:`~hanamikoji_env.simulate.round_values`) and plays the candidate with
   the best ``mean value + prior * log p``.

The prior term keeps the policy's choice unless the playouts find a clearly
better one: with a few dozen samples the playouts' estimates are noisy.  When
it was tuned (samples 32, candidates 4, against SearchBot, 200 mirrored games
on the same deals): prior 0 scored 0.47 (100 games, other deals), 0.05 0.64,
0.1 0.715, 0.2 0.705; 64 samples at 0.05 scored 0.685 at 1.7x the time;
playing out to the game's end instead of the round's was 2.5x slower and no
stronger (without the prior, 100 games: 0.40 against 0.47).  ``samples`` is the budget.
With ``belief`` (a :mod:`hanamikoji_env.belief` model) step 2 deals the opponent's hand by
the belief's chances instead of uniformly.  With ``exact=1``, step 2 takes **every** distinct
deal of the unseen cards once there are at most ``samples`` of them (late in a round), each
``samples // count`` times with its own playout uniforms
(:func:`~hanamikoji_env.infoset.every_deal`): the deal's part of the estimate is then exact,
and only the playouts are sampled.  (A belief's weights have no exact form here: with both,
the exact deal applies where it can, uniformly.)
With ``value=1``, step 5 values a round that does not end the game by the whole game's
expected result instead of the markers alone (:func:`continuation_values`): the markers'
lead potential plus the policy's value head at the next round's first decision (one fresh
deal a row; the next round is a full reshuffle, so the deal hides nothing), half the
difference of the two players' heads, each from its own view.  The value head learned with
potential-based shaping (``shaping`` in the checkpoint's config), so it estimates the final
result minus the potential already paid, which is added back; and it learned against its
training opponents, which the agent mostly beats, so each player's own estimate runs high
(in self-play the shipped agent's first mover expects +0.35 of a game that is even): the
difference cancels that shared bias.
Tournament spec: ``psearch:ckpt=PATH[,samples=N,candidates=K,belief=PATH,exact=0|1,value=0|1]``;
needs torch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.belief import BeliefNet, hand_odds, load_belief
from hanamikoji_env.bots.base import Option
from hanamikoji_env.bots.policy import PolicyGuidedBot
from hanamikoji_env.engine import C_PHASE, ROUND_OVER, Dealer
from hanamikoji_env.excerpt import short
from hanamikoji_env.infoset import determinized_rows, every_deal
from hanamikoji_env.nn import (
    CheckpointError,
    PolicyNet,
    load_checkpoint,
    policy_from,
    policy_probs,
    policy_values,
    sample_actions,
)
from hanamikoji_env.observation import OBS_SIZE, encode_rows
from hanamikoji_env.rules import lead
from hanamikoji_env.simulate import PLAYOUT_STEPS, apply_sequences, play_out, round_values, row_outcomes


class PolicySearchBot(PolicyGuidedBot):
    """``PolicySearchBot(policy, seed=0, samples=32, candidates=4, prior=0.1, round_limit=None,
    belief=None, exact=0, value=0, shaping=None)``; see the module docstring.  ``policy`` is a
    checkpoint path or a :class:`~hanamikoji_env.nn.PolicyNet`; ``round_limit`` is the game's;
    ``shaping`` (with ``value=1`` and a ``PolicyNet``) the shaping its value head learned with
    (a checkpoint path records it)."""

    name = "psearch"
    options = {
        "ckpt": Option(str),
        "samples": Option(int, 1, 4096),
        "candidates": Option(int, 1, 23),
        "belief": Option(str),
        "exact": Option(int, 0, 1),
        "value": Option(int, 0, 1),
    }

    @classmethod
    def check_files(cls, options: dict[str, Any]) -> None:
        if "belief" in options:
            load_belief(options["belief"])  # a bad belief file fails the spec, before any game

    def __init__(
        self,
        policy: str | Path | PolicyNet,
        seed: int | None = 0,
        samples: int = 32,
        candidates: int = 4,
        prior: float = 0.1,
        round_limit: int | None = None,
        belief: str | Path | BeliefNet | None = None,
        exact: int = 0,
        value: int = 0,
        shaping: float | None = None,
    ) -> None:
        self.check_option("candidates", candidates)
        if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0 <= prior < float("inf"):
            raise ValueError(f"prior must be a finite number >= 0, got {short(prior)}")
        self.check_option("value", value)
        if value and not isinstance(policy, PolicyNet):
            data = load_checkpoint(policy)
            shaping = value_shaping(data.get("config"), policy)
            policy = policy_from(data, policy)
        elif value and not _is_shaping(shaping):
            raise ValueError(
                "value=1 with a PolicyNet needs shaping=S, the shaping its value head learned with "
                f"(a number in [0, 100]), got {short(shaping)}"
            )
        super().__init__(policy, seed, samples, round_limit)
        self.check_option("exact", exact)
        self.candidates = candidates
        self.prior = float(prior)
        self.exact = bool(exact)
        """Every deal of the unseen cards where there are at most ``samples``."""
        self.shaping = float(shaping) if value and shaping is not None else None
        """With ``value=1``: the shaping the value head learned with; None: rounds valued by markers."""
        self.belief = belief if belief is None or isinstance(belief, BeliefNet) else load_belief(belief)
        """Deals the opponent's hand by this belief (:mod:`hanamikoji_env.belief`); None: uniformly."""

    def probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's move probabilities per row (0 where illegal), float64."""
        return policy_probs(self.model, obs, mask)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        p = self.probs(vector[None], mask[None])[0]
        candidates = candidate_moves(p, mask, self.candidates)
        if len(candidates) == 1:
            return int(candidates[0])
        score = self.q_values(vector, candidates) + self.prior * np.log(p[candidates])
        return int(candidates[self._argmax(score, tol=1e-12)])

    def q_values(self, vector: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Mean round-end value (:func:`~hanamikoji_env.simulate.round_values`) of each candidate
        action for the player to move, over the same determinizations and uniforms."""
        every = every_deal(vector, self.samples) if self.exact else None
        deal: Deal = determinized_rows
        if every is not None:  # the belief's network is not asked: its odds would go unused
            deal = lambda vector, rng, n: every  # noqa: E731
        elif self.belief is not None:
            deal = partial(determinized_rows, hand_odds=hand_odds(self.belief, vector))
        score = round_values
        if self.shaping is not None:
            score = partial(continuation_values, model=self.model, shaping=self.shaping, rng=self.rng)
        return search_values(
            self.probs, vector[None], [candidates], self.rng, self.samples, self.round_limit, deal, score
        )[0]

    def __repr__(self) -> str:
        return (
            f"PolicySearchBot(samples={self.samples}, candidates={self.candidates}, "
            f"prior={self.prior}, belief={self.belief is not None}, exact={int(self.exact)}, "
            f"value={int(self.shaping is not None)}, seed={self._seed})"
        )


def value_shaping(config: object, path: str | Path) -> float:
    """The shaping a checkpoint's value head learned with, from its training ``config``; a
    one-line error where its value head is not an estimate of the game's result to go (an
    oracle critic, discounting, or no config recorded)."""
    if not isinstance(config, dict):
        raise CheckpointError(
            f"{path}: value=1 needs the training config the checkpoint records; it has none"
        )
    critic, gamma, shaping = config.get("critic", "policy"), config.get("gamma"), config.get("shaping", 0.0)
    if critic != "policy":
        raise CheckpointError(
            f"{path}: value=1 needs the policy's own value head; it trained with critic {short(critic)}"
        )
    if gamma != 1:
        raise CheckpointError(
            f"{path}: value=1 needs values of the whole game (gamma 1); it trained with gamma {short(gamma)}"
        )
    if not _is_shaping(shaping):
        raise CheckpointError(
            f"{path}: its config's shaping must be a number in [0, 100], got {short(shaping)}"
        )
    return float(shaping)


def _is_shaping(shaping: object) -> bool:
    return not isinstance(shaping, bool) and isinstance(shaping, (int, float)) and 0 <= shaping <= 100


def continuation_values(
    rows: np.ndarray, model: PolicyNet, shaping: float, rng: np.random.Generator
) -> np.ndarray:
    """Seat 0's expected final result of ``rows`` just scored (consumed): a game over keeps its
    result (+1, -1, 0); a game going on is worth its markers' lead potential,
    ``shaping * lead / 2`` (:func:`~hanamikoji_env.rules.lead`, seat 0's), plus half the
    difference of the two seats' value heads at the next round's first decision (dealt from
    ``rng``), each read from its own view; clipped to [-1, 1].  (A value head trained with
    shaping learns the final result minus the potential already paid out: training's collector
    pays each scoring's change of potential and takes it back at the game's end.)"""
    out = round_values(rows)
    going = np.flatnonzero(rows[:, C_PHASE] == ROUND_OVER)
    if going.size == 0:
        return out
    nxt = rows[going]
    _, points, geishas = row_outcomes(nxt)
    potential = 0.5 * shaping * lead(points[:, 0] - points[:, 1], geishas[:, 0] - geishas[:, 1])
    n = len(nxt)
    Dealer(n, rng, "sort").deal(nxt, np.arange(n), np.zeros(n, dtype=np.bool_))
    seats = np.repeat(np.array([0, 1], dtype=np.int8), n)  # seat 0's views, then seat 1's
    obs = np.zeros((2 * n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((2 * n, NUM_ACTIONS), dtype=np.int8)
    encode_rows(np.concatenate([nxt, nxt]), seats, obs, mask)
    heads = policy_values(model, obs, mask)
    out[going] = np.clip((heads[:n] - heads[n:]) / 2 + potential, -1.0, 1.0)
    return out


Probs = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``probs(obs, mask)``: move probabilities per row (0 where illegal)."""
Deal = Callable[[np.ndarray, np.random.Generator, int], np.ndarray]
"""``deal(vector, rng, n)``: at most ``n`` engine rows consistent with the observation
``vector`` (:func:`~hanamikoji_env.infoset.determinized_rows`: ``n`` drawn;
:func:`~hanamikoji_env.infoset.every_deal`: every deal, where there are few)."""


def candidate_moves(p: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` legal moves the policy ``p`` (one position's probabilities) likes best, most
    likely first; a move the policy rules out (probability 0 by underflow) is not tried."""
    legal = np.flatnonzero(mask)
    best = legal[np.argsort(-p[legal], kind="stable")][:k]
    return best[p[best] > 0]


def search_values(
    probs: Probs,
    vectors: np.ndarray,
    candidates: list[np.ndarray],
    rng: np.random.Generator,
    samples: int,
    round_limit: int | None,
    deal: Deal = determinized_rows,
    score: Callable[[np.ndarray], np.ndarray] = round_values,
) -> list[np.ndarray]:
    """:meth:`PolicySearchBot.q_values` of many positions at once (``vectors[b]`` with its
    ``candidates[b]``): every position's determinizations and uniforms are drawn in turn, then
    all rows play out together, one policy call per step for all of them.  For search targets
    (expert iteration), where one position at a time would leave the network's batch small.
    ``deal(vector, rng, n)`` draws the determinizations (``benchmarks/belief_headroom.py``
    passes one that knows the opponent's cards); ``score`` values the rows whose round is over
    (:func:`~hanamikoji_env.simulate.play_out`)."""
    rows, draws, uniforms, bounds, dealt = [], [], [], [0], 0
    for vector, cands in zip(vectors, candidates, strict=True):
        base = deal(vector, rng, samples)  # n <= samples determinizations
        n = len(base)
        block = np.tile(base, (len(cands), 1))  # row c * n + j: candidate c in determinization j
        apply_sequences(
            block, np.repeat(cands, n)[:, None], np.ones(len(cands) * n, dtype=np.int64), round_limit
        )
        draws.append(dealt + np.tile(np.arange(n), len(cands)))  # row -> its determinization's uniforms
        uniforms.append(rng.random((n, PLAYOUT_STEPS)))
        rows.append(block)
        bounds.append(bounds[-1] + len(block))
        dealt += n
    draw, u = np.concatenate(draws), np.concatenate(uniforms)

    def choose(
        ids: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray, step: int
    ) -> np.ndarray:
        return sample_actions(probs(obs, mask), u[draw[ids], step])  # both seats: the policy

    values = play_out(np.concatenate(rows), choose, round_limit, score=score)
    return [
        values[lo:hi].reshape(len(cands), -1).mean(axis=1)
        for (lo, hi), cands in zip(itertools.pairwise(bounds), candidates, strict=True)
    ]
