"""What an RLlib user needs to train on Hanamikoji (Ray itself is optional: imported on use).

RLlib's action-masking RL module (``ActionMaskingTorchRLModule`` in RLlib's
examples) reads observations ``{"observations": ..., "action_mask": ...}``, while
PettingZoo's classic games, and ours, use ``{"observation": ..., "action_mask":
...}``.  :class:`RLlibObservations` renames the key; the mask stays int8 (the
module's ``torch.log`` promotes it, and PettingZoo's ``api_test`` requires int8).  It wraps :func:`hanamikoji_env.env`
(not ``raw_env``): RLlib's environment pre-check samples actions without the
mask, which ``raw_env`` refuses with an error, while ``env()`` ends the game
with -1 for the mover as PettingZoo's classic games do.

    from ray.tune.registry import register_env
    from hanamikoji_env.rllib import env_creator, POLICY_ID, self_play_mapping

    register_env("hanamikoji", env_creator)
    config = (PPOConfig().environment("hanamikoji", env_config={"round_limit": None})
              .multi_agent(policies={POLICY_ID}, policy_mapping_fn=self_play_mapping)
              .rl_module(rl_module_spec=...ActionMaskingTorchRLModule...))

Tianshou's ``PettingZooEnv`` reads PettingZoo's own keys: wrap ``env()`` directly.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from hanamikoji_env.aec import env, raw_env

POLICY_ID = "shared_policy"
"""The one policy both seats map to in self-play."""


class RLlibObservations(BaseWrapper):
    """An AEC env whose observations are ``{"observations": float32 [109] (the env's version's
    size), "action_mask": int8 [23]}``."""

    def __init__(self, wrapped: raw_env) -> None:
        super().__init__(wrapped)
        inner = wrapped.observation_space(wrapped.possible_agents[0])
        self._space = spaces.Dict({"observations": inner["observation"], "action_mask": inner["action_mask"]})

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def rllib_aec_env(**kwargs: Any) -> RLlibObservations:
    """``env(**kwargs)`` with RLlib's observation keys (see the module docstring)."""
    return RLlibObservations(env(**kwargs))


def env_creator(config: dict[str, Any] | None = None) -> Any:
    """For ``ray.tune.registry.register_env``: RLlib's ``PettingZooEnv`` over :func:`rllib_aec_env`;
    ``config`` holds the env's keyword arguments (``round_limit``)."""
    try:
        from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    except ImportError as e:
        raise ImportError(f"env_creator needs RLlib: pip install 'ray[rllib]' ({e})") from None
    return PettingZooEnv(rllib_aec_env(**dict(config or {})))


def self_play_mapping(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn`` for self-play: both seats play :data:`POLICY_ID`."""
    return POLICY_ID
