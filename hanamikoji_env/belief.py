"""A belief over the opponent's hidden hand: from one player's observation, the chance that
each card it has not seen is in the opponent's hand, geisha by geisha.

A player's unseen cards (its observation's ``unseen`` counts) lie in the opponent's hand, its
face-down Secret and Trade-off, the removed card and the draw pile.  Dealt uniformly (what
:func:`~hanamikoji_env.infoset.determinized_rows` does), an unseen card is in the opponent's
hand with chance ``hand size / unseen``, whatever the opponent has played; but a player keeps
what it means to play, so its moves tell where its cards are.  :class:`BeliefNet` learns that
from games of a policy against itself or other players (:func:`collect`): at every decision,
the mover's observation and the opponent's real hand; the loss is the binomial likelihood of the hand's count of each geisha
among her unseen cards (:func:`nll`, against the uniform deal's as a baseline), and
:func:`calibration` bins the predicted chances against the frequencies seen.
:class:`~hanamikoji_env.bots.psearch.PolicySearchBot` deals the opponent's hand by it
(``psearch:belief=PATH``; :func:`hand_odds`).

    python -m hanamikoji_env.training.belief --policy pretrained --decisions 400000 --out belief.pt
    python -m hanamikoji_env.training.belief --opponents self,search,heuristic --out mixed.pt

trains one (its checkpoint: the weights, loaded with ``weights_only``) and prints its
likelihood and calibration on games it did not train on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from hanamikoji_env.engine import C_HANDS
from hanamikoji_env.excerpt import short
from hanamikoji_env.nn import policy_probs, read_torch_file, sample_actions, write_torch_file
from hanamikoji_env.observation import OBS_HIGH, OBS_SIZE, OFFSETS
from hanamikoji_env.rules import NUM_GEISHAS
from hanamikoji_env.vector import BatchEngine

UNSEEN = OFFSETS["unseen"]
OPP_HAND = OFFSETS["sizes"].start + 1
"""The observation's entry of the opponent's hand size."""
KIND = "hanamikoji-belief/1"


class Player(Protocol):
    """What :func:`collect` needs of a bot (:class:`~hanamikoji_env.bots.base.Bot` is one): its
    moves for a batch, each row with its own generator and game memory."""

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray: ...


class BeliefNet(nn.Module):
    """An MLP from a scaled observation to one logit per geisha: the chance that an unseen card
    of hers is in the opponent's hand."""

    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        if isinstance(hidden, bool) or not isinstance(hidden, int) or not 1 <= hidden <= 4096:
            raise ValueError(f"hidden must be an int in [1, 4096], got {short(hidden)}")
        self.hidden = hidden
        self.register_buffer("scale", torch.as_tensor(1.0 / np.maximum(OBS_HIGH, 1.0)))
        self.body = nn.Sequential(
            nn.Linear(OBS_SIZE, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, NUM_GEISHAS),
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.body(obs * self.scale)


def hand_chances(net: BeliefNet, obs: np.ndarray) -> np.ndarray:
    """Per row of observations ``[N, 109]``: the chance ``[N, 7]`` that an unseen card of each
    geisha is in the opponent's hand."""
    with torch.no_grad():
        return torch.sigmoid(net(torch.as_tensor(obs, dtype=torch.float32))).numpy().astype(np.float64)


def hand_odds(net: BeliefNet, vector: np.ndarray) -> np.ndarray:
    """The weights ``[7]`` a deal gives one observation's unseen cards of each geisha when it
    fills the opponent's hand (:func:`~hanamikoji_env.infoset.determinized_rows`): the odds of
    :func:`hand_chances`, bounded away from 0 and infinity."""
    p = np.clip(hand_chances(net, vector[None])[0], 1e-3, 1 - 1e-3)
    return p / (1 - p)


def uniform_chances(obs: np.ndarray) -> np.ndarray:
    """The chances ``[N, 7]`` a uniform deal gives: the opponent's hand size over the unseen
    cards, the same for every geisha."""
    unseen = obs[:, UNSEEN].sum(axis=1)
    return np.repeat((obs[:, OPP_HAND] / np.maximum(unseen, 1))[:, None], NUM_GEISHAS, axis=1)


def collect(
    policy: nn.Module,
    decisions: int,
    seed: int = 0,
    num_envs: int = 256,
    progress: bool = True,
    opponents: Sequence[Player | None] = (None,),
) -> tuple[np.ndarray, np.ndarray]:
    """``decisions`` decisions of games on the batch engine: each mover's observation ``[D, 109]``
    and the opponent's real hand ``[D, 7]``, both players' decisions alike.  Game row ``i`` is
    ``policy`` (sampling its moves) against ``opponents[i % k]`` in seat ``(i // k) % 2``, where
    ``None`` is the policy itself: so a belief learns how several kinds of player keep their
    cards, not one."""
    if decisions < 1:
        raise ValueError(f"decisions must be positive, got {decisions}")
    if not opponents:
        raise ValueError("opponents must name at least one player (None: the policy itself)")
    rng = np.random.default_rng(seed)
    engine = BatchEngine(num_envs, seed=seed)
    obs, mask, seat = engine.reset()
    k = len(opponents)
    rows = np.arange(num_envs)
    bot_seat = (rows // k) % 2
    played_by = {j: rows[rows % k == j] for j, bot in enumerate(opponents) if bot is not None}
    rngs = [np.random.default_rng([seed, int(i)]) for i in rows]
    states: list[tuple[int, ...]] = [() for _ in rows]
    seen, hands, done = [], [], 0
    bar = tqdm(total=decisions, desc="games", unit="dec", disable=not progress)
    while done < decisions:
        table = engine.get_state()["rows"]
        opponent = (1 - seat.astype(np.int64)) * NUM_GEISHAS + C_HANDS
        seen.append(obs.copy())
        hands.append(table[rows[:, None], opponent[:, None] + np.arange(NUM_GEISHAS)])
        actions = sample_actions(policy_probs(policy, obs, mask), rng.random(num_envs))
        for j, mine in played_by.items():
            moving = mine[seat[mine] == bot_seat[mine]]
            if len(moving):
                row_states = [states[i] for i in moving]
                actions[moving] = opponents[j].act_batch(  # type: ignore[union-attr]
                    obs[moving], mask[moving], [rngs[i] for i in moving], row_states
                )
                for i, state in zip(moving, row_states, strict=True):
                    states[i] = state
        obs, mask, seat, _, ended, _ = engine.step(actions)
        for i in np.flatnonzero(ended):
            states[i] = ()  # a new game: the bot remembers nothing of the last
        done += num_envs
        bar.update(num_envs)
    bar.close()
    return np.concatenate(seen)[:decisions], np.concatenate(hands)[:decisions].astype(np.float32)


def nll(chances: np.ndarray, obs: np.ndarray, hand: np.ndarray) -> float:
    """The mean binomial negative log-likelihood per unseen card of the real hands ``hand``
    under ``chances`` (``[N, 7]``): each geisha's count in the hand among her unseen cards."""
    unseen = obs[:, UNSEEN].astype(np.float64)
    p = np.clip(chances, 1e-6, 1 - 1e-6)
    loss = -(hand * np.log(p) + (unseen - hand) * np.log(1 - p))
    return float(loss.sum() / max(unseen.sum(), 1))


def train(
    obs: np.ndarray, hand: np.ndarray, epochs: int = 8, hidden: int = 128, seed: int = 0, batch: int = 1024
) -> BeliefNet:
    """A :class:`BeliefNet` fitted to ``obs`` and the opponent's real ``hand`` by the binomial
    likelihood (Adam)."""
    torch.manual_seed(seed)
    net = BeliefNet(hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.as_tensor(obs, dtype=torch.float32)
    k = torch.as_tensor(hand, dtype=torch.float32)
    n = x[:, UNSEEN]
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(len(x)))
        for start in range(0, len(x), batch):
            idx = order[start : start + batch]
            logits = net(x[idx])
            loss = -(
                k[idx] * nn.functional.logsigmoid(logits)
                + (n[idx] - k[idx]) * nn.functional.logsigmoid(-logits)
            )
            loss = loss.sum() / n[idx].sum().clamp(min=1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return net.eval()


def calibration(
    chances: np.ndarray, obs: np.ndarray, hand: np.ndarray, bins: int = 10
) -> list[tuple[float, float, int]]:
    """Per bin of predicted chance: (mean chance, fraction of those unseen cards really in the
    opponent's hand, unseen cards in the bin); a calibrated belief has the two equal."""
    unseen = obs[:, UNSEEN].astype(np.float64).ravel()
    p, k = chances.ravel(), hand.astype(np.float64).ravel()
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        weight = unseen * (which == b)
        if weight.sum() > 0:
            out.append(
                (
                    float((p * weight).sum() / weight.sum()),
                    float(k[which == b].sum() / weight.sum()),
                    int(weight.sum()),
                )
            )
    return out


def save_belief(net: BeliefNet, path: str | Path) -> None:
    write_torch_file(path, {"kind": KIND, "hidden": net.hidden, "state_dict": net.state_dict()})


def load_belief(path: str | Path) -> BeliefNet:
    """A :class:`BeliefNet` from :func:`save_belief`'s file: loaded with ``weights_only``, its kind,
    shapes and values checked (``ValueError`` in one line otherwise)."""
    data = read_torch_file(Path(path))
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ValueError(f"{path} is not a belief model (kind {str(data.get('kind'))[:40]!r}, want {KIND!r})")
    net = BeliefNet(data.get("hidden"))  # type: ignore[arg-type]
    state = data.get("state_dict")
    expected = net.state_dict()
    if not isinstance(state, dict) or set(state) != set(expected):
        raise ValueError(f"{path}: a belief model's weights must be {sorted(expected)}")
    for key, tensor in state.items():
        if (
            not isinstance(tensor, torch.Tensor)
            or tensor.shape != expected[key].shape
            or tensor.dtype != torch.float32
        ):
            raise ValueError(f"{path}: {key} must be a float32 tensor of shape {tuple(expected[key].shape)}")
        if not torch.isfinite(tensor).all():
            raise ValueError(f"{path}: {key} holds NaN or infinite values")
    net.load_state_dict(state)
    return net.eval()
