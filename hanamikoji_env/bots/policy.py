"""PolicyBot: plays a trained checkpoint through the bot interface (needs torch, not the training code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from hanamikoji_env.bots.base import Bot, Option, certain, pick
from hanamikoji_env.nn import (
    PolicyNet,
    load_policy,
    policy_probs,
    resolve_device,
)


class PolicyBot(Bot):
    """``PolicyBot(path, seed=0, greedy=True, device="cpu")``: the checkpoint's most likely legal
    action, or (``greedy=False``) a sample from its masked policy drawn with the bot's generator.
    ``device``: where the network runs (``auto``, ``cpu``, ``cuda``, ``cuda:N``); a checkpoint
    saved on either loads on either."""

    name = "policy"
    batched = True
    """``act_batch`` is one network call for the whole batch (trainers use it for many games)."""

    def __init__(
        self, path: str | Path, seed: int | None = 0, greedy: bool = True, device: str = "cpu"
    ) -> None:
        super().__init__(seed)
        self.path = Path(path)
        self.greedy = greedy
        self.device = resolve_device(device)
        self.model = load_policy(self.path).to(self.device)
        self.observation_version = self.model.observation_version
        """The checkpoint's observation version: what an env feeding this bot encodes."""

    def _act(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(vector[None], mask[None])[0])

    def play_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """As it plays: probability 1 on its most likely move (greedy), else its masked policy."""
        if not self.greedy:
            return policy_probs(self.model, obs, mask)
        return certain(self.act_batch(obs, mask))

    def move_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The checkpoint's masked policy over the batch's moves (``[N, 23]``)."""
        return policy_probs(self.model, obs, mask)

    @torch.no_grad()
    def act_batch(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        rngs: list[np.random.Generator] | None = None,
        states: list[tuple[int, ...]] | None = None,
    ) -> np.ndarray:
        """One network call for the batch; a sampling bot draws row ``i``'s uniform from
        ``rngs[i]`` (or all from its own generator)."""
        logits, _ = self.model(
            torch.as_tensor(obs, dtype=torch.float32, device=self.device),
            torch.as_tensor(mask, device=self.device),
        )
        return pick(logits.cpu().numpy().astype(np.float64), self.greedy, self.rng, rngs)

    def __repr__(self) -> str:
        return f"PolicyBot({str(self.path)!r}, seed={self._seed}, greedy={self.greedy})"


class SampledPolicyBot(PolicyBot):
    """``sampled:ckpt=PATH``: a checkpoint that samples its moves (``PolicyBot(greedy=False)``),
    a ``.mlp`` network of OpenSpiel's learners sampled (``MLPBot(greedy=False)``: their
    average policies are defined so), or an SB3 zip (``SB3Bot(deterministic=False)``)."""

    name = "sampled"
    options = {"ckpt": Option(str)}

    @classmethod
    def from_spec(cls, options: dict[str, Any], seed: int, round_limit: int | None, device: str) -> Bot:
        if str(options["ckpt"]).endswith(".mlp"):
            from hanamikoji_env.bots.mlp import MLPBot

            return MLPBot(options["ckpt"], seed=seed, greedy=False, device=device)
        if str(options["ckpt"]).endswith(".zip"):
            from hanamikoji_env.bots.sb3 import SB3Bot

            return SB3Bot(options["ckpt"], seed=seed, deterministic=False, device=device)
        return cls(options["ckpt"], seed=seed, greedy=False, device=device)

    @classmethod
    def check_checkpoint(cls, path: str) -> None:
        if path.endswith(".mlp"):
            from hanamikoji_env.bots.mlp import load_mlp

            load_mlp(path)
        elif path.endswith(".zip"):
            from hanamikoji_env.bots.sb3 import SB3Bot

            SB3Bot(path)  # its checks, then SB3's load
        else:
            super().check_checkpoint(path)


class PolicyGuidedBot(Bot):
    """The shared opening of the bots that search with a trained policy (``RolloutBot``,
    ``PolicySearchBot``): the spec ``name:ckpt=PATH[,samples=N,...]``, and a constructor that
    takes the policy (a checkpoint path or a :class:`~hanamikoji_env.nn.PolicyNet`), the seed,
    the checked ``samples`` budget and the game's ``round_limit``."""

    fast = False

    @classmethod
    def from_spec(cls, options: dict[str, Any], seed: int, round_limit: int | None, device: str) -> Bot:
        rest = {k: v for k, v in options.items() if k != "ckpt"}
        return cls(options["ckpt"], seed=seed, round_limit=round_limit, **rest)

    def __init__(
        self, policy: str | Path | PolicyNet, seed: int | None, samples: int, round_limit: int | None
    ) -> None:
        super().__init__(seed)
        self.check_option("samples", samples)
        self.model = policy if isinstance(policy, PolicyNet) else load_policy(policy)
        if self.model.observation_version != 1:  # its playouts encode version 1 (the engine's kernels)
            raise ValueError(
                f"{self.name} searches with observation version 1; this policy reads version "
                f"{self.model.observation_version}: train it with observation_version: 1"
            )
        self.samples = samples
        self.round_limit = round_limit
