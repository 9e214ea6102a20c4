"""MLPBot: a policy network learned elsewhere (OpenSpiel's learners, Tianshou) as a ``ckpt:PATH.mlp`` player.

A ``.mlp`` file holds one MLP for each seat (ReLU or tanh between its layers), from an
observation version's vector (for OpenSpiel's learners version 2, the information-state tensor
of ``python_hanamikoji``) to the 23 action logits, as plain tensors: ``torch.save({"format":
"hanamikoji-mlp", "algo", "observation_version", "activation", "seats": [[(W, b), ...], [(W, b),
...]]})``, read with ``torch.load(weights_only=True)`` after the
checkpoints' pickle gate, its size and shapes checked before anything runs.  The bot plays its
seat's network greedily (the likeliest legal action), or, as ``sampled:ckpt=PATH.mlp``, samples
its softmax over the legal actions (how the average policies of NFSP, Deep CFR and ESCHER are
defined); the seat is read from the observation (seat 0 starts the odd rounds).  The file also
names the game variant it learned (``variant``, ``full`` where absent), so that an exact best
response refuses a network of another variant.  :func:`save_mlp` writes one from ``torch.nn``
modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.base import Bot, certain, network_batch, pick
from hanamikoji_env.excerpt import short
from hanamikoji_env.files import check_untrusted
from hanamikoji_env.nn import CheckpointError, masked_probs, read_torch_file, write_torch_file
from hanamikoji_env.observation import OFFSETS, VERSIONS
from hanamikoji_env.rules import FULL, VARIANTS

FORMAT = "hanamikoji-mlp"
MAX_MLP_BYTES = 64 * 2**20
"""A ``.mlp`` file larger than this is refused unread (ours are a few MB)."""
MAX_MLP_LAYERS = 8
MAX_MLP_WIDTH = 4096


ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}
"""What may come between two layers of a ``.mlp`` network."""


def save_mlp(
    path: str | Path,
    nets: list[nn.Module],
    algo: str,
    observation_version: int = 2,
    activation: str = "relu",
    variant: str = FULL.name,
) -> None:
    """Write one MLP a seat (its ``nn.Linear`` layers in order, ``activation`` between them),
    learned on ``variant``, to ``path``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {short(activation)}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {short(variant)}")
    seats = [
        [
            (m.weight.detach().cpu().clone(), m.bias.detach().cpu().clone())
            for m in net.modules()
            if isinstance(m, nn.Linear)
        ]
        for net in nets
    ]
    payload = {
        "format": FORMAT, "algo": algo, "observation_version": observation_version, "activation": activation,
        "variant": variant, "seats": seats,
    }  # fmt: skip
    write_torch_file(path, payload)


def load_mlp(path: str | Path) -> dict[str, Any]:
    """A ``.mlp`` file, checked; ``ValueError`` in one line for anything but two seats' MLPs from
    the version's observation to the 23 actions."""
    path = Path(path)
    check_untrusted(path, "OpenSpiel policy", MAX_MLP_BYTES, ValueError)
    try:
        payload = read_torch_file(path)  # the checkpoints' gate: kind, unpacked size, pickle walk
    except CheckpointError as e:
        raise ValueError(f"{path} is not a {FORMAT} file ({e})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file")
    version = payload.get("observation_version")
    if type(version) is not int or version not in VERSIONS:  # no hashing of a crafted value
        raise ValueError(f"{path} reads observation version {short(version)}; known are {sorted(VERSIONS)}")
    if payload.get("activation", "relu") not in ACTIVATIONS:
        raise ValueError(f"{path}: activation must be one of {sorted(ACTIVATIONS)}")
    if payload.get("variant", FULL.name) not in VARIANTS:
        raise ValueError(f"{path}: variant must be one of {sorted(VARIANTS)}")
    seats = payload.get("seats")
    if not isinstance(seats, list) or len(seats) != 2:
        raise ValueError(f"{path} must hold one network for each of the 2 seats")
    for seat in seats:
        if not isinstance(seat, list) or not 1 <= len(seat) <= MAX_MLP_LAYERS:
            raise ValueError(f"{path}: a network must have 1..{MAX_MLP_LAYERS} layers")
        width = VERSIONS[version].size
        for k, layer in enumerate(seat):
            w, b = layer if isinstance(layer, (list, tuple)) and len(layer) == 2 else (None, None)
            last = k == len(seat) - 1
            if not (
                isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor) and w.dtype == b.dtype == torch.float32
                and w.ndim == 2 and w.shape[1] == width and b.shape == (w.shape[0],)
                and 1 <= w.shape[0] <= MAX_MLP_WIDTH and (w.shape[0] == NUM_ACTIONS or not last)
            ):  # fmt: skip
                raise ValueError(
                    f"{path}: layer {k} does not chain from {width} inputs to {NUM_ACTIONS} actions"
                )
            if not (torch.isfinite(w).all() and torch.isfinite(b).all()):  # NaN plays nonsense
                raise ValueError(f"{path}: layer {k} holds NaN or infinite values")
            width = w.shape[0]
    return payload


def seat_of(vector: np.ndarray) -> int:
    """The seat of the player whose observation ``vector`` is: seat 0 starts the odd rounds."""
    started = vector[OFFSETS["i_started"].start] > 0.5
    odd = int(vector[OFFSETS["round"].start] + 0.5) % 2 == 1
    return 0 if started == odd else 1


class MLPBot(Bot):
    """``MLPBot(path, seed=0, greedy=True, device="cpu")``: a ``.mlp`` file's network for its
    seat, greedy or (``greedy=False``) sampled with the bot's generator."""

    name = "mlp"
    batched = True

    def __init__(
        self, path: str | Path, seed: int | None = 0, greedy: bool = True, device: str = "cpu"
    ) -> None:
        super().__init__(seed)
        payload = load_mlp(path)
        self.path = Path(path)
        self.greedy = greedy
        self.algo = str(payload.get("algo", "?"))
        self.variant = str(payload.get("variant", FULL.name))
        self.observation_version = int(payload["observation_version"])
        self.seats = payload["seats"]
        self.activation = ACTIVATIONS[payload.get("activation", "relu")]

    @torch.no_grad()
    def _logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``[N, 23]`` float64 logits of each row's seat's network, illegal moves at -inf."""
        obs, mask = network_batch(self.path.name, self.observation_version, obs, mask)
        seats = np.array([seat_of(v) for v in obs])
        out = np.empty((len(obs), NUM_ACTIONS), dtype=np.float64)
        for seat in (0, 1):
            rows = np.flatnonzero(seats == seat)
            if not len(rows):
                continue
            h = torch.as_tensor(obs[rows])
            layers = self.seats[seat]
            for k, (w, b) in enumerate(layers):
                h = h @ w.T + b
                if k < len(layers) - 1:
                    h = self.activation(h)
            out[rows] = h.numpy()
        out[mask == 0] = -np.inf
        return out

    def move_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The networks' softmax over each row's legal moves (``[N, 23]``)."""
        return masked_probs(self._logits(obs, mask))

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """As it plays: 1 on the likeliest legal move (greedy), else the softmax."""
        if self.greedy:
            return certain(self._logits(obs, mask).argmax(axis=1))
        return self.move_probabilities(obs, mask)

    def check_modelled(self, variant: str) -> None:
        if self.variant != variant:
            raise ValueError(
                f"the target was trained on the {self.variant} game, not the {variant} variant measured here"
            )

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        """The batch's moves; a sampling bot draws row ``i``'s uniform from ``rngs[i]`` (or all
        from its own generator)."""
        return pick(self._logits(obs, mask), self.greedy, self.rng, rngs)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(vector[None], mask[None])[0])

    def __repr__(self) -> str:
        return f"MLPBot({str(self.path)!r}, seed={self._seed}, greedy={self.greedy})"
