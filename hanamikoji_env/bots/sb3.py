"""SB3Bot: plays a Stable-Baselines3 ``MaskablePPO`` zip, loaded without running pickled code.

An SB3 zip stores some entries (spaces, schedules, the policy class, buffers)
as cloudpickle, which could run code on load.  SB3Bot never unpickles them:
it replaces every such entry with a known-safe value before loading (SB3's
``custom_objects``) and refuses a zip with any other pickled entry.  The
weights themselves are read by SB3 with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import io
import itertools
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.bots.base import Bot, certain, network_batch, pick
from hanamikoji_env.excerpt import clip
from hanamikoji_env.files import check_untrusted, check_zip
from hanamikoji_env.nn import check_torch_stream, masked_probs, resolve_device
from hanamikoji_env.observation import OBS_SIZE, VERSIONS, observation_space
from hanamikoji_env.rules import FULL, VARIANTS

VARIANT_KEY = "hanamikoji_variant"
"""The entry of a zip's ``data`` naming the game it was trained on (``model.hanamikoji_variant``
before ``save``: SB3 keeps a model's attributes there as JSON); absent, the full game."""


def _constant(_: float) -> float:
    return 0.0


def safe_custom_objects(observation_version: int = 1) -> dict[str, Any]:
    """Replacements for the pickled entries of a MaskablePPO zip (inference needs none of them)."""
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    return {
        "policy_class": MaskableActorCriticPolicy,
        "observation_space": observation_space(observation_version)["observation"],
        "action_space": spaces.Discrete(NUM_ACTIONS),
        "rollout_buffer_class": MaskableRolloutBuffer,
        "clip_range": _constant,
        "lr_schedule": _constant,
        "_last_obs": None,
        "_last_episode_starts": None,
        "ep_info_buffer": None,
        "ep_success_buffer": None,
    }


MAX_UNPACKED_BYTES = 256 * 2**20
MAX_DATA_BYTES = 2**20
MAX_PARAMETERS = 20_000_000
"""The largest network an SB3 zip may declare (80 MB of float32 weights, each for policy and value)."""
MAX_ROLLOUT_ROWS = 2**18
"""The most rollout-buffer rows (``n_steps`` x ``n_envs``) a zip may declare: SB3 allocates the buffer
at load (about 1 KiB a row here), and SB3's own defaults use 2,048 x a few envs."""
SIZE_KEYS = ("n_steps", "n_envs", "batch_size", "n_epochs")
SB3_ENTRIES = ("data", "_stable_baselines3_version", "system_info.txt")
"""What ``save_to_zip_file`` writes besides its ``NAME.pth`` files (weights, optimizer states)."""


def _not_sb3_layout(names: list[str]) -> str | None:
    """Why entry names are not what SB3 writes (:data:`SB3_ENTRIES` and ``.pth`` files, ``data``
    among them), or ``None``: an entry SB3 never reads can only be there to mislead a check."""
    if "data" not in names:
        return "its archive has no 'data' entry: it is not a Stable-Baselines3 zip"
    odd = next((n for n in names if n not in SB3_ENTRIES and not n.endswith(".pth")), None)
    if odd is not None:
        return f"its archive holds {clip(odd, 80)!r}, which Stable-Baselines3 does not write (a crafted file)"
    return None


def _check_sizes(path: Path, data: dict[str, Any]) -> None:
    """Every size SB3 allocates by at load is a positive int, and the rollout buffer it makes is
    at most :data:`MAX_ROLLOUT_ROWS` rows: checked on the zip's JSON, before SB3 sees it."""
    for key in SIZE_KEYS:
        value = data.get(key, 1)
        if type(value) is not int or not 1 <= value <= MAX_ROLLOUT_ROWS:
            shown = value if type(value) is int else type(value).__name__
            raise ValueError(f"{path} declares {key}={shown}: want an int in [1, {MAX_ROLLOUT_ROWS:,}]")
    rows = data.get("n_steps", 1) * data.get("n_envs", 1)
    if rows > MAX_ROLLOUT_ROWS:
        raise ValueError(
            f"{path} declares a rollout buffer of {rows:,} rows (n_steps x n_envs), more than an SB3 model "
            f"here may hold ({MAX_ROLLOUT_ROWS:,}): refused before building it"
        )


def _zip_version(path: Path, data: dict[str, Any]) -> int:
    """The observation version whose size the zip's observation space declares (its readable
    ``_shape``; version 1 where a zip does not say)."""
    space = data.get("observation_space")
    shape = space.get("_shape", [OBS_SIZE]) if isinstance(space, dict) else [OBS_SIZE]
    sizes = {v.size: n for n, v in VERSIONS.items()}
    if not (isinstance(shape, list) and len(shape) == 1 and type(shape[0]) is int and shape[0] in sizes):
        known = ", ".join(f"version {n}: ({v.size},)" for n, v in VERSIONS.items())
        raise ValueError(f"{path} was trained on observations of shape {str(shape)[:40]}; known are {known}")
    return sizes[shape[0]]


def _check_network_size(path: Path, data: dict[str, Any], obs_size: int = OBS_SIZE) -> None:
    """``ValueError`` unless the zip's declared ``policy_kwargs.net_arch`` is a few layers of sane
    widths whose weights fit :data:`MAX_PARAMETERS`: checked before MaskablePPO builds anything."""
    kwargs = data.get("policy_kwargs") or {}
    arch = kwargs.get("net_arch", [64, 64]) if isinstance(kwargs, dict) else None
    nets = [arch.get("pi"), arch.get("vf")] if isinstance(arch, dict) else [arch, arch]
    total = 0
    for net, out in zip(nets, (NUM_ACTIONS, 1), strict=True):
        widths = [] if net is None else net
        if (
            not isinstance(widths, list)
            or len(widths) > 16
            or not all(type(w) is int and 1 <= w <= 65536 for w in widths)
        ):
            raise ValueError(
                f"{path} declares a network of {str(arch)[:80]}: want at most 16 layers of 1..65536 units"
            )
        sizes = [obs_size, *widths, out]
        total += sum(a * b + b for a, b in itertools.pairwise(sizes))
    if total > MAX_PARAMETERS:
        raise ValueError(
            f"{path} declares a network of {total:,} weights (net_arch {str(arch)[:60]}), more than an SB3 "
            f"model here may hold ({MAX_PARAMETERS:,}): refused before building it"
        )


def _zip_variant(path: Path, data: dict[str, Any]) -> str:
    """The game the zip was trained on (:data:`VARIANT_KEY`), one of the known variants."""
    variant = data.get(VARIANT_KEY, FULL.name)
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"{path} names the variant {clip(str(variant), 40)!r}; known are {sorted(VARIANTS)}")
    return variant


class SB3Bot(Bot):
    """``SB3Bot(path, seed=0, deterministic=True, device="cpu")`` for a ``MaskablePPO`` zip trained
    on SingleAgentEnv (``device``: where its network runs, as :class:`PolicyBot`'s), with any
    observation version (read from the zip's declared observation shape) and game variant (its
    ``hanamikoji_variant``).  ``deterministic``: the policy's likeliest legal move (as SB3's
    ``predict``), else a sample (``sampled:ckpt=PATH.zip``)."""

    name = "sb3"
    batched = True

    def __init__(
        self, path: str | Path, seed: int | None = 0, deterministic: bool = True, device: str = "cpu"
    ) -> None:
        super().__init__(seed)
        self.device = resolve_device(device)
        self.path = Path(path)
        self.deterministic = deterministic
        check_untrusted(self.path, "Stable-Baselines3 model", MAX_UNPACKED_BYTES, ValueError)
        names = check_zip(
            self.path,
            str(self.path),
            "Stable-Baselines3 model",
            MAX_UNPACKED_BYTES,
            _not_sb3_layout,
            ValueError,
        )
        if names is None:
            raise ValueError(f"{self.path} is not a Stable-Baselines3 zip (not a zip archive)")
        try:
            with zipfile.ZipFile(self.path) as z:
                if z.getinfo("data").file_size > MAX_DATA_BYTES:
                    raise ValueError(
                        f"{self.path}: its 'data' entry unpacks to {z.getinfo('data').file_size / 2**20:,.1f} MiB, "
                        f"more than a Stable-Baselines3 model's may ({MAX_DATA_BYTES / 2**20:.0f} MiB): refused unread"
                    )
                data = json.loads(z.read("data"))
        except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, OSError, RecursionError) as e:
            raise ValueError(f"{self.path} is not a Stable-Baselines3 zip ({type(e).__name__})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{self.path} is not a Stable-Baselines3 zip (its data is not a mapping)")
        _check_sizes(self.path, data)
        self.variant = _zip_variant(self.path, data)
        self.observation_version = _zip_version(self.path, data)
        _check_network_size(self.path, data, VERSIONS[self.observation_version].size)
        overrides = safe_custom_objects(self.observation_version)
        pickled = {k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
        unknown = sorted(pickled - set(overrides))
        if unknown:
            raise ValueError(
                f"{self.path} holds pickled entries {unknown} that could run code; refusing to load"
            )
        with zipfile.ZipFile(self.path) as z:  # every torch file inside, through the checkpoints' gate
            for entry in (n for n in z.namelist() if n.endswith(".pth")):
                check_torch_stream(io.BytesIO(z.read(entry)), f"{self.path}:{entry}")
        from sb3_contrib import MaskablePPO

        try:
            self.model = MaskablePPO.load(self.path, custom_objects=overrides, device=self.device)
        except Exception as e:
            raise ValueError(f"{self.path}: cannot load the model ({type(e).__name__}: {e})") from None
        if self.model.observation_space.shape != (VERSIONS[self.observation_version].size,):
            raise ValueError(f"{self.path} was trained on another observation layout")
        for name, tensor in self.model.policy.state_dict().items():  # NaN plays nonsense, or fails mid-game
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                raise ValueError(f"{self.path}: the policy's {clip(name, 80)} holds NaN or infinite values")

    @property
    def greedy(self) -> bool:
        """Plays its likeliest move (as the other checkpoint bots' ``greedy``)."""
        return self.deterministic

    @torch.no_grad()
    def _logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``[N, 23]`` float64 logits SB3 samples from, illegal moves at -inf."""
        obs, mask = network_batch(self.path.name, self.observation_version, obs, mask)
        tensor, _ = self.model.policy.obs_to_tensor(obs)
        logits = self.model.policy.get_distribution(tensor).distribution.logits.cpu().numpy()
        return np.where(mask, logits.astype(np.float64), -np.inf)

    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        """The batch's moves in one network call: the likeliest legal move (``deterministic``, as
        SB3's ``predict``), or a sample drawn from row ``i``'s ``rngs[i]`` (or the bot's own
        generator, never torch's global one)."""
        return pick(self._logits(obs, mask), self.deterministic, self.rng, rngs)

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(vector[None], mask[None])[0])

    def move_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's distribution over each row's legal moves (``[N, 23]``, exactly 0 on the
        illegal ones)."""
        return masked_probs(self._logits(obs, mask))

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """As it plays: 1 on the likeliest legal move (``deterministic``), else the distribution."""
        probs = self.move_probabilities(obs, mask)
        return certain(probs.argmax(axis=1)) if self.deterministic else probs

    def check_modelled(self, variant: str) -> None:
        if self.variant != variant:
            raise ValueError(
                f"the target was trained on the {self.variant} game, not the {variant} variant measured here"
            )

    def __repr__(self) -> str:
        return f"SB3Bot({str(self.path)!r})"
